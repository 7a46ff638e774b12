//! The oracle's verdict on one command: does what bash did agree with what
//! the analyzer claimed?
//!
//! Soundness is the only thing checked. A command the analyzer calls
//! `safe` must not start a program missing from its invocations, must not
//! start a program with arguments other than the ones the analyzer
//! resolved (where it resolved them fully), must not open a socket, and
//! must not write a place that decides what later commands run: a file or
//! directory the catalog protects (`persistence_files`, `persistence_dirs`,
//! `system_dirs`, and the hidden directories they start with).
//! `unknown` and `network` verdicts promise nothing, so they always pass.

use bashgate_analyzer::{Analysis, Catalog, Invocation, Verdict};

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
    /// The command created or changed `path` (relative to its `$HOME`),
    /// which is the protected place `place` or lies inside it.
    WroteProtected { path: String, place: String },
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
            Mismatch::WroteProtected { path, place } => write!(
                f,
                "the command wrote `~/{path}`, a protected place (`{place}`)"
            ),
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

/// The protected place a written path is or lies in, per the catalog: the
/// path is tried relative to `$HOME` (`.bashrc`), as `~/...` (`~/bin/x`)
/// and as the absolute path it is; with [`Catalog::names_protected_place`]
/// as written (`.git/x`, `.config/x` lie in directories it protects).
pub fn protected_place(rel: &str, home: &str) -> Option<String> {
    let c = Catalog::builtin();
    let home = home.trim_end_matches('/');
    [rel.to_string(), format!("~/{rel}"), format!("{home}/{rel}")]
        .iter()
        .find_map(|p| c.persistence_target(p))
        .or_else(|| c.names_protected_place(rel).map(str::to_string))
}

/// The mismatches between an analysis and a run of the same command.
/// The analyzer's documented limit (docs/analyzer.md, "Writes the write
/// model cannot place"): a tree copied or extracted into a directory other
/// than the working one or home (`cp -r src build`, `tar -x -C out`)
/// writes whatever names it holds, `.git/hooks` included; the proof covers
/// where the tree lands, not what it holds. A protected place below an
/// ordinary first directory, written by such a command, is not a mismatch.
fn inside_a_copied_tree(analysis: &Analysis, rel: &str, home: &str) -> bool {
    let copies_trees = analysis.invocations.iter().any(|inv| {
        matches!(
            inv.program.as_deref(),
            Some("cp" | "tar" | "unzip" | "cpio" | "7z" | "ar")
        )
    });
    let Some((first, _)) = rel.split_once('/') else {
        return false;
    };
    copies_trees && protected_place(first, home).is_none()
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
        if inside_a_copied_tree(analysis, path, &run.home) {
            continue;
        }
        if let Some(place) = protected_place(path, &run.home) {
            out.push(Mismatch::WroteProtected {
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
    fn writing_a_protected_place_is_a_mismatch() {
        let mut a = analyze("cp a.txt out.txt");
        assert_eq!(a.verdict, Verdict::Safe);
        let mut r = run("", &[("cp", &["a.txt", "out.txt"])], "");
        r.written = vec!["build".into(), "build/x".into(), "out.txt".into()];
        assert!(check(&a, &r).is_empty());
        r.written = vec![
            ".bashrc".into(),
            ".git/hooks".into(),
            ".git/hooks/pre-commit".into(),
            ".git/x".into(),
            ".local/bin/ls".into(),
            "bin/ls".into(),
            "notes.txt".into(),
        ];
        let wrote: Vec<_> = check(&a, &r)
            .into_iter()
            .map(|m| match m {
                Mismatch::WroteProtected { path, place } => format!("{path} {place}"),
                m => panic!("{m}"),
            })
            .collect();
        assert_eq!(
            wrote,
            [
                ".bashrc .bashrc",
                ".git/hooks .git/hooks",
                ".git/hooks/pre-commit .git/hooks",
                ".git/x .git",
                ".local/bin/ls .local/bin",
                "bin/ls ~/bin",
            ]
        );
        // Only `safe` verdicts promise anything.
        a.verdict = Verdict::Unknown;
        assert!(check(&a, &r).is_empty());
    }

    #[test]
    fn protected_places_are_found_however_the_path_reads() {
        let home = "/tmp/bashgate-oracle-1-0/work/7";
        for (rel, place) in [
            (".profile", ".profile"),
            (".envrc", ".envrc"),
            (".bash_aliases", ".bash_aliases"),
            (".git/config", ".git/config"),
            ("repo/.git/hooks/post-merge", ".git/hooks"),
            (".config/fish/config.fish", ".config/fish"),
            (".ssh", ".ssh"),
            ("go/bin/x", "go/bin"),
        ] {
            assert_eq!(protected_place(rel, home).as_deref(), Some(place), "{rel}");
        }
        for rel in [
            "out.txt",
            "build/x",
            ".bashra",
            "sub/bin",
            "xaa",
            "gitconfig",
        ] {
            assert_eq!(protected_place(rel, home), None, "{rel}");
        }
    }
}
