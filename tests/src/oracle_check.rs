//! The oracle's verdict on one command: does what bash did agree with what
//! the analyzer claimed?
//!
//! Soundness is the only thing checked. A command the analyzer calls
//! `safe` must not start a program missing from its invocations, must not
//! start a program with arguments other than the ones the analyzer
//! resolved (where it resolved them fully), must not open a socket, and
//! must not change anything outside the work: the project's ordinary files
//! (the command starts in `$HOME/proj`, and the control places inside it,
//! `.git` at any depth, hidden names, agent clients' files, are not
//! ordinary) and the scratch places (the only other place the commands can
//! write is `/tmp`). `unknown` and `network` verdicts promise nothing, so
//! they always pass.

use bashgate_analyzer::places::{Known, Place};
use bashgate_analyzer::{Analysis, Catalog, Invocation, Verdict};

use crate::oracle::{Exec, Run, PROJECT};

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
    /// The command created or changed `path` (relative to its `$HOME`),
    /// which lies outside the project's ordinary files (`place` says where).
    WroteOutside { path: String, place: String },
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
            Mismatch::WroteOutside { path, place } if path.starts_with('/') => {
                write!(f, "the command wrote `{path}`, {place}")
            }
            Mismatch::WroteOutside { path, place } => {
                write!(f, "the command wrote `~/{path}`, {place}")
            }
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

/// Where a written path (relative to the command's `$HOME`) lies when it
/// is not one of the project's ordinary files; `None` when it is.
pub fn outside_the_work(rel: &str) -> Option<String> {
    if rel == PROJECT {
        // The project directory itself: its times change with its entries.
        return None;
    }
    let Some(inside) = rel.strip_prefix(PROJECT).and_then(|r| r.strip_prefix('/')) else {
        return Some("outside the working tree".into());
    };
    match Catalog::builtin().places.place(inside, Known::Fully) {
        Place::Work | Place::Scratch => None,
        Place::Control { name, kind } => {
            Some(format!("a control place ({name}: {})", kind.describe()))
        }
        Place::Outside(why) => Some(format!("not in the work ({why:?})")),
    }
}

/// The analyzer's documented limit (docs/analyzer.md, "Writes, judged by
/// place"): a tree copied within the work (`cp -r src build`) carries the
/// names it holds, a nested `.git` included; the proof covers where the
/// tree lands, not what it holds. A control place below an ordinary first
/// directory of the project, written by such a command, is not a mismatch.
fn inside_a_copied_tree(analysis: &Analysis, rel: &str) -> bool {
    let recursive = |a: &str| {
        matches!(a, "--recursive" | "--archive")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R', 'a']))
    };
    let copies_trees = analysis.invocations.iter().any(|inv| {
        inv.program.as_deref() == Some("cp") && inv.args.iter().flatten().any(|a| recursive(a))
    });
    let Some(inside) = rel.strip_prefix(PROJECT).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    let Some((first, _)) = inside.split_once('/') else {
        return false;
    };
    copies_trees && outside_the_work(&format!("{PROJECT}/{first}")).is_none()
}

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
    for path in &run.written {
        if inside_a_copied_tree(analysis, path) {
            continue;
        }
        if let Some(place) = outside_the_work(path) {
            out.push(Mismatch::WroteOutside {
                path: path.clone(),
                place,
            });
        }
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
            written: Vec::new(),
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

    #[test]
    fn writing_outside_the_work_is_a_mismatch() {
        let mut a = analyze("cp a.txt out.txt");
        assert_eq!(a.verdict, Verdict::Safe);
        let mut r = run("", &[("cp", &["a.txt", "out.txt"])], "");
        r.written = vec![
            "proj".into(),
            "proj/build".into(),
            "proj/build/x".into(),
            "proj/out.txt".into(),
            "proj/.gitignore".into(),
        ];
        assert!(check(&a, &r).is_empty());
        r.written = vec![
            ".bashrc".into(),
            "notes.txt".into(),
            "proj/.git/hooks".into(),
            "proj/.git/commondir".into(),
            "proj/sub/.git".into(),
            "proj/CLAUDE.md".into(),
            "proj/.envrc".into(),
            "proj/notes.txt".into(),
        ];
        let wrote: Vec<_> = check(&a, &r)
            .into_iter()
            .map(|m| match m {
                Mismatch::WroteOutside { path, .. } => path,
                m => panic!("{m}"),
            })
            .collect();
        assert_eq!(
            wrote,
            [
                ".bashrc",
                "notes.txt",
                "proj/.git/hooks",
                "proj/.git/commondir",
                "proj/sub/.git",
                "proj/CLAUDE.md",
                "proj/.envrc",
            ]
        );
        // Only `safe` verdicts promise anything.
        a.verdict = Verdict::Unknown;
        assert!(check(&a, &r).is_empty());
    }

    #[test]
    fn a_tree_copied_within_the_work_carries_what_it_holds() {
        let a = analyze("cp -r src build");
        assert_eq!(a.verdict, Verdict::Safe);
        let mut r = run("", &[("cp", &["-r", "src", "build"])], "");
        r.written = vec!["proj/build/src/.git/hooks/pre-commit".into()];
        assert!(check(&a, &r).is_empty());
        r.written = vec!["proj/.git/hooks/pre-commit".into()];
        assert_eq!(check(&a, &r).len(), 1);
    }
}
