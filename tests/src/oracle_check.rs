//! The oracle's verdict on one command: does what bash did agree with what
//! the analyzer claimed?
//!
//! Soundness is the only thing checked. A command the analyzer calls
//! `safe` must not start a program missing from its invocations, must not
//! start a program with arguments other than the ones the analyzer
//! resolved (where it resolved them fully), and must not open a socket.
//! `unknown` and `network` verdicts promise nothing, so they always pass.

use bashgate_analyzer::{Analysis, Invocation, Verdict};

use crate::oracle::{Exec, Run};

/// One way a `safe` verdict was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// bash started a program the analyzer did not list.
    Missing(Exec),
    /// bash started a listed program, with arguments the analyzer did not
    /// resolve for any invocation of it.
    Argv(Exec),
    /// bash opened a `/dev/tcp` or `/dev/udp` socket.
    Socket,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Missing(e) if e.not_found => {
                write!(
                    f,
                    "bash looked up `{}` {:?}, which the analyzer does not list",
                    e.program, e.args
                )
            }
            Mismatch::Missing(e) => {
                write!(
                    f,
                    "bash ran `{}` {:?}, which the analyzer does not list",
                    e.program, e.args
                )
            }
            Mismatch::Argv(e) => write!(
                f,
                "bash ran `{}` with {:?}, arguments no invocation of it has",
                e.program, e.args
            ),
            Mismatch::Socket => f.write_str("bash opened a /dev/tcp or /dev/udp socket"),
        }
    }
}

/// Wrappers that add arguments of their own (file names, input lines).
fn adds_arguments(inv: &Invocation) -> bool {
    inv.via.iter().any(|v| {
        let w = v.split_whitespace().next().unwrap_or("");
        matches!(w, "xargs" | "find" | "parallel")
    })
}

/// Whether the analyzer's view of an argument is what the program got.
/// `~` and `~/...` stand for `$HOME`, which the analyzer leaves unexpanded.
fn same_arg(resolved: &str, real: &str, home: &str) -> bool {
    if resolved == real {
        return true;
    }
    match resolved.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            real.strip_prefix(home) == Some(rest)
        }
        _ => false,
    }
}

/// Whether an invocation accounts for a program bash started.
fn accounts_for(inv: &Invocation, exec: &Exec, home: &str) -> Option<bool> {
    if inv.program.as_deref() != Some(exec.program.as_str()) {
        return None;
    }
    if adds_arguments(inv) || inv.args.iter().any(Option::is_none) {
        return Some(true);
    }
    Some(
        inv.args.len() == exec.args.len()
            && inv
                .args
                .iter()
                .zip(&exec.args)
                .all(|(a, b)| a.as_deref().is_some_and(|a| same_arg(a, b, home))),
    )
}

/// The mismatches between an analysis and a run of the same command.
pub fn check(analysis: &Analysis, run: &Run) -> Vec<Mismatch> {
    if analysis.verdict != Verdict::Safe {
        return Vec::new();
    }
    let mut out = Vec::new();
    for exec in &run.execs {
        let verdicts: Vec<bool> = analysis
            .invocations
            .iter()
            .filter_map(|inv| accounts_for(inv, exec, &run.home))
            .collect();
        if verdicts.is_empty() {
            out.push(Mismatch::Missing(exec.clone()));
        } else if !verdicts.contains(&true) {
            out.push(Mismatch::Argv(exec.clone()));
        }
    }
    if run.opened_socket() {
        out.push(Mismatch::Socket);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    fn run(command: &str, execs: &[(&str, &[&str])], stderr: &str) -> Run {
        Run {
            command: command.into(),
            execs: execs
                .iter()
                .map(|(p, a)| Exec {
                    program: p.to_string(),
                    args: a.iter().map(|s| s.to_string()).collect(),
                    not_found: false,
                })
                .collect(),
            stderr: stderr.into(),
            status: Some(0),
            home: "/home/u".into(),
            reaped: false,
        }
    }

    #[test]
    fn a_program_the_analyzer_missed_is_a_mismatch() {
        let a = analyze("ls -l");
        let r = run("ls -l", &[("ls", &["-l"]), ("curl", &["x"])], "");
        assert_eq!(check(&a, &r).len(), 1);
        assert!(matches!(&check(&a, &r)[0], Mismatch::Missing(e) if e.program == "curl"));
    }

    #[test]
    fn listed_programs_with_their_arguments_pass() {
        let a = analyze("ls -l | grep x");
        let r = run("", &[("ls", &["-l"]), ("grep", &["x"])], "");
        assert!(check(&a, &r).is_empty());
    }

    #[test]
    fn other_arguments_are_a_mismatch() {
        let a = analyze("ls -l");
        let r = run("", &[("ls", &["-exec", "x"])], "");
        assert!(matches!(&check(&a, &r)[..], [Mismatch::Argv(_)]));
        // Unless the analyzer said it did not know them.
        let a = analyze("ls $x");
        assert!(check(&a, &r).is_empty());
        // `~` and `~/` are the home directory; `~x` is not.
        let r = run("", &[("ls", &["/home/u/x"])], "");
        assert!(check(&analyze("ls ~/x"), &r).is_empty());
        let r = run("", &[("ls", &["/home/ux"])], "");
        assert!(!check(&analyze("ls '~x'"), &r).is_empty());
    }

    #[test]
    fn sockets_are_mismatches_and_unsafe_verdicts_promise_nothing() {
        let a = analyze("echo hi");
        let r = run("", &[], "bash: connect: Network is unreachable\n");
        assert_eq!(check(&a, &r), vec![Mismatch::Socket]);
        let a = analyze("curl x");
        let r = run(
            "",
            &[("nc", &[])],
            "bash: connect: Network is unreachable\n",
        );
        assert!(check(&a, &r).is_empty());
    }
}
