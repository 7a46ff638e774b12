//! Compares a case's label with what the analyzer answered.

use std::fmt::Write;

use bashgate_analyzer::Analysis;

use crate::case::Case;

/// What is wrong with the analyzer's answer for a case: empty when it
/// matches the label.
pub fn problems(case: &Case, analysis: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    if analysis.verdict != case.expect {
        out.push(format!(
            "verdict: expected {}, got {}",
            case.expect, analysis.verdict
        ));
    }
    for id in &case.rules {
        if !analysis.findings.iter().any(|f| f.rule.id() == id) {
            out.push(format!("missing rule {id}"));
        }
    }
    out
}

/// A readable account of one mismatch: where the case is, what it says,
/// what went wrong and the findings the analyzer gave.
pub fn describe(file: &str, case: &Case, analysis: &Analysis, problems: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "[{file}] {}", one_line(&case.command));
    let _ = writeln!(s, "    note: {}", case.note);
    for p in problems {
        let _ = writeln!(s, "    {p}");
    }
    if analysis.findings.is_empty() {
        let _ = writeln!(s, "    findings: none");
    }
    for f in &analysis.findings {
        let _ = writeln!(
            s,
            "    finding {} {} [{}..{}]: {}",
            f.rule.id(),
            f.verdict(),
            f.span.start,
            f.span.end,
            f.message
        );
    }
    s
}

/// The command on one line, newlines shown as `⏎`.
pub fn one_line(command: &str) -> String {
    command.replace('\n', "⏎")
}
