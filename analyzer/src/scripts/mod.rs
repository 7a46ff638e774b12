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

/// Checks the script arguments of a `sed` or `awk` invocation.
pub fn check(lang: ScriptLang, args: &[Arg]) -> Vec<ScriptFinding> {
    match lang {
        ScriptLang::Sed => sed::check(args),
        ScriptLang::Awk => awk::check(args),
        ScriptLang::Dc => dc::check(args),
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
