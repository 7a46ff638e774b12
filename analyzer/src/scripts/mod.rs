//! Checkers for the small languages local tools run: sed scripts and awk
//! programs can execute commands, so their text is read, not trusted.

mod awk;
mod dc;
mod sed;

use crate::args::Arg;
use crate::catalog::ScriptLang;
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

/// Checks the script arguments of a `sed`, `awk` or `dc` invocation.
pub fn check(lang: ScriptLang, args: &[Arg]) -> Checked {
    match lang {
        ScriptLang::Sed => sed::check(args),
        ScriptLang::Awk => awk::check(args),
        ScriptLang::Dc => Checked {
            findings: dc::check(args),
            writes: Vec::new(),
        },
    }
}

/// Matches `name` against GNU long options, abbreviations included.
/// Returns the full option, or `None` when unknown or ambiguous.
fn long_option<'a>(name: &str, options: &[&'a str]) -> Option<&'a str> {
    if let Some(exact) = options.iter().find(|o| **o == name) {
        return Some(exact);
    }
    let mut matches = options.iter().filter(|o| o.starts_with(name));
    let first = matches.next()?;
    matches.next().is_none().then_some(*first)
}
