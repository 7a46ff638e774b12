//! Checkers for the small languages local tools run: sed scripts and awk
//! programs can execute commands, so their text is read, not trusted.

mod awk;
mod dc;
mod sed;

use crate::args::Arg;
use crate::catalog::{OptionTable, ScriptLang};
use crate::option_table::Reading;
use crate::rules::Rule;
use crate::span::Span;

pub struct ScriptFinding {
    pub rule: Rule,
    pub span: Span,
    pub message: String,
}

/// What reading a program's scripts found: why they may run code, and
/// the files they write (sed's `w`, awk's `print > "file"`), each with the
/// argument it is written in, for the write model to judge by place.
#[derive(Default)]
pub struct Checked {
    pub findings: Vec<ScriptFinding>,
    pub writes: Vec<(Span, String)>,
}

/// Checks the script arguments of a `sed`, `awk` or `dc` invocation. The
/// arguments are read once, by the program's option table (the one reader
/// of arguments); the checkers take the scripts from that reading.
pub fn check(lang: ScriptLang, table: Option<&OptionTable>, args: &[Arg]) -> Checked {
    let reading = match table {
        Some(t) => crate::option_table::read(t, args, false),
        None => {
            return Checked {
                findings: vec![ScriptFinding {
                    rule: Rule::EscapeOption,
                    span: args.first().map(|a| a.span).unwrap_or_default(),
                    message: "this script runner has no reviewed option table".into(),
                }],
                writes: Vec::new(),
            }
        }
    };
    match lang {
        ScriptLang::Sed => sed::check(&reading, args),
        ScriptLang::Awk => awk::check(&reading, args),
        ScriptLang::Dc => Checked {
            findings: dc::check(args),
            writes: Vec::new(),
        },
    }
}

/// A script given as an option's value: the argument holding it, and its
/// text there (its shape: whole only when the argument is static).
struct Given<'a> {
    arg: &'a Arg,
    text: String,
}

/// The values the reading found for `options`, with their arguments.
fn values_of<'a>(reading: &Reading, args: &'a [Arg], options: &[&str]) -> Vec<Given<'a>> {
    reading
        .values_of(options, args)
        .into_iter()
        .map(|(at, text)| Given {
            arg: &args[at],
            text,
        })
        .collect()
}

/// Whether the reading gave any of `options`.
fn gave(reading: &Reading, options: &[&str]) -> bool {
    reading
        .given
        .iter()
        .any(|(_, o)| options.contains(&o.as_str()))
}
