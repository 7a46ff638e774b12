//! Human-readable output: the command, a caret line under each finding's
//! span, the rule and its message. Colour only on a terminal, never with
//! NO_COLOR set.

use std::fmt::Write as _;
use std::io::IsTerminal;

use bashgate_analyzer::{Analysis, RuleInfo, Verdict};

pub fn color_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

struct Style(bool);

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn verdict(&self, v: Verdict) -> String {
        let code = match v {
            Verdict::Safe => "1;32",
            Verdict::Unknown => "1;33",
            Verdict::Network => "1;31",
        };
        self.paint(code, v.as_str())
    }
}

pub fn report(command: &str, analysis: &Analysis, color: bool) -> String {
    let st = Style(color);
    let mut out = String::new();
    let lines = line_starts(command);
    for f in &analysis.findings {
        let (line_no, line_start) = lines
            .iter()
            .enumerate()
            .rev()
            .find(|(_, &s)| s <= f.span.start)
            .map(|(i, &s)| (i, s))
            .unwrap_or((0, 0));
        let line_end = command[line_start..]
            .find('\n')
            .map(|e| line_start + e)
            .unwrap_or(command.len());
        let line = &command[line_start..line_end];
        let prefix = if lines.len() > 1 {
            format!("{:>4} | ", line_no + 1)
        } else {
            String::new()
        };
        let shown = line.replace('\t', " ");
        // Spans are byte offsets; never slice inside a character.
        let start = floor_char_boundary(command, f.span.start.min(line_end));
        let end = floor_char_boundary(command, f.span.end.clamp(start, line_end));
        let pad = char_width(&command[line_start..start]);
        let width = char_width(&command[start..end]).max(1);
        let _ = writeln!(out, "{prefix}{shown}");
        let carets = st.paint(
            if f.verdict() == Verdict::Network {
                "31"
            } else {
                "33"
            },
            &"^".repeat(width),
        );
        let _ = writeln!(
            out,
            "{}{}{} {} {}: {}",
            " ".repeat(prefix.chars().count()),
            " ".repeat(pad),
            carets,
            st.paint("1", f.rule.id()),
            f.rule.info().name,
            f.message
        );
        out.push('\n');
    }
    // Every finding shown is counted, those that do not raise the verdict
    // (a note about deletion) too.
    let reasons = analysis.findings.len();
    let programs: Vec<String> = analysis
        .invocations
        .iter()
        .map(|i| i.program.clone().unwrap_or_else(|| "?".into()))
        .collect();
    let _ = writeln!(
        out,
        "verdict: {}  ({} finding{}; runs: {})",
        st.verdict(analysis.verdict),
        reasons,
        if reasons == 1 { "" } else { "s" },
        if programs.is_empty() {
            "nothing".into()
        } else {
            programs.join(", ")
        }
    );
    out
}

pub fn explain(info: &RuleInfo) -> String {
    format!(
        "{} {} ({})\n\n{}\n\n{}\n\nTriggers:     {}\nDoes not:     {}\n",
        info.id,
        info.name,
        info.verdict,
        info.summary,
        info.why,
        info.example,
        info.counter_example
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn line_starts(s: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(s.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn char_width(s: &str) -> usize {
    s.chars().count()
}

/// `bashgate approvals`: one line per remembered answer.
pub fn remembered(session: &str, rows: &[bashgate::remember::Listed]) -> String {
    if rows.is_empty() {
        return format!("session {session}: no remembered answers\n");
    }
    let mut out = String::new();
    for r in rows {
        let said = if r.approved { "approved" } else { "refused " };
        let _ = writeln!(out, "{}  {said}  {}", r.id, r.command);
    }
    let _ = writeln!(
        out,
        "(`bashgate approvals --session {session} --revoke ID` forgets one; --forget forgets all)"
    );
    out
}

/// `bashgate approvals --forget/--revoke`: what was forgotten.
pub fn forgotten(session: &str, n: usize) -> String {
    match n {
        1 => format!("bashgate approvals: session {session}: 1 answer forgotten; that command will be asked about again"),
        n => format!("bashgate approvals: session {session}: {n} answers forgotten; those commands will be asked about again"),
    }
}
