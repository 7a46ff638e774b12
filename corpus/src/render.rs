//! The readable form of an analysis that the insta snapshots pin: one
//! block per case with the command, the verdict against the label, what
//! runs, and every finding with its rule, span and message.

use std::fmt::Write;

use bashgate_analyzer::analysis::RedirectUse;
use bashgate_analyzer::{Analysis, Invocation, Span};

use crate::case::Case;
use crate::check;

/// Renders every case of one category file; a case whose analysis
/// panicked shows the panic message instead of an analysis.
pub fn cases(items: &[(&Case, Result<Analysis, String>)]) -> String {
    let mut s = String::new();
    for (i, (case, result)) in items.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        match result {
            Ok(analysis) => s.push_str(&case_block(case, analysis)),
            Err(panic) => s.push_str(&panic_block(case, panic)),
        }
    }
    s
}

/// Renders a case whose analysis panicked.
pub fn panic_block(case: &Case, panic: &str) -> String {
    let mut s = command_lines(&case.command);
    let _ = writeln!(s, "PANIC: {panic}");
    let _ = writeln!(s, "note: {}", case.note);
    s
}

fn command_lines(command: &str) -> String {
    let mut s = String::new();
    for (i, line) in shown(command).split('\n').enumerate() {
        let lead = if i == 0 { "$ " } else { "> " };
        let _ = writeln!(s, "{lead}{line}");
    }
    s
}

/// Renders one case.
pub fn case_block(case: &Case, analysis: &Analysis) -> String {
    let mut s = command_lines(&case.command);
    let problems = check::problems(case, analysis);
    if problems.is_empty() {
        let _ = writeln!(s, "verdict: {}", analysis.verdict);
    } else {
        let _ = writeln!(
            s,
            "verdict: {}   MISMATCH: {}",
            analysis.verdict,
            problems.join("; ")
        );
    }
    let _ = writeln!(s, "note: {}", case.note);
    for inv in &analysis.invocations {
        let _ = writeln!(s, "  run {}", invocation(inv));
    }
    for r in &analysis.redirects {
        let _ = writeln!(s, "  redirect {}", redirect(r));
    }
    for f in &analysis.findings {
        let _ = writeln!(
            s,
            "  {} {} {} {}: {}",
            f.rule.id(),
            f.verdict(),
            span(f.span),
            excerpt(&case.command, f.span),
            f.message
        );
    }
    s
}

/// Commands longer than this are shown by their start and length.
const LONGEST_SHOWN: usize = 400;

/// The command as the snapshot shows it: whole, or its first 200
/// characters and its length when it is very long (the limit cases).
fn shown(command: &str) -> String {
    if command.len() <= LONGEST_SHOWN {
        return command.to_string();
    }
    let head: String = command.chars().take(200).collect();
    format!("{head}… ({} bytes in all)", command.len())
}

fn invocation(inv: &Invocation) -> String {
    let mut s = match &inv.program {
        Some(p) => quote(p),
        None => "‹dynamic›".to_string(),
    };
    for a in inv.args.iter().take(12) {
        s.push(' ');
        match a {
            Some(a) => s.push_str(&quote(&clip(a, 80))),
            None => s.push_str("‹?›"),
        }
    }
    if inv.args.len() > 12 {
        let _ = write!(s, " …({} args)", inv.args.len());
    }
    let _ = write!(s, "  {} {}", span(inv.span), inv.verdict);
    if !inv.via.is_empty() {
        let _ = write!(s, " via {}", inv.via.join(" → "));
    }
    s
}

fn redirect(r: &RedirectUse) -> String {
    let target = r.target.as_deref().map_or("‹?›".to_string(), quote);
    let mut s = format!(
        "{}{} {target}  {}",
        r.fd.as_deref().unwrap_or(""),
        r.op,
        span(r.span)
    );
    if !r.via.is_empty() {
        let _ = write!(s, " via {}", r.via.join(" → "));
    }
    s
}

fn span(sp: Span) -> String {
    format!("[{}..{}]", sp.start, sp.end)
}

/// The text under a span, on one line and at most 40 characters.
pub fn excerpt(command: &str, sp: Span) -> String {
    let text = command.get(sp.start..sp.end).unwrap_or("");
    format!("`{}`", clip(&text.replace('\n', "⏎"), 40))
}

/// At most `n` characters of `s`, with `…` when cut.
fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// An argument as a shell word: bare when plain, single-quoted otherwise.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        word.to_string()
    } else {
        let mut q = String::from("'");
        for c in word.chars() {
            match c {
                '\'' => q.push_str("'\\''"),
                '\n' => q.push_str("'$'\\n''"),
                _ => q.push(c),
            }
        }
        q.push('\'');
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(quote("-la"), "-la");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn long_commands_are_shortened() {
        assert_eq!(shown("ls"), "ls");
        let long = "a".repeat(1000);
        let s = shown(&long);
        assert_eq!(s, format!("{}… (1000 bytes in all)", "a".repeat(200)));
    }

    #[test]
    fn excerpt_is_bounded_and_flat() {
        let cmd = "echo a\nb";
        assert_eq!(excerpt(cmd, Span::new(0, 8)), "`echo a⏎b`");
        let long = "x".repeat(50);
        assert_eq!(excerpt(&long, Span::new(0, 50)).chars().count(), 43);
        assert_eq!(excerpt("abc", Span::new(2, 9)), "``");
    }
}
