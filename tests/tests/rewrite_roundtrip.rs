//! The command line the hook writes to run a command fenced hands `bashgate
//! run` exactly the agent's command, keeps its exit status, and leaves the
//! shell where the command's shell ended (issue 13). Proven with real bash
//! over every command of the labeled corpus and over arbitrary strings.
//!
//! `bashgate` is replaced here by a stand-in that prints the command it was
//! given instead of running it; bash runs as `nobody` in a fresh network
//! namespace, in a scratch directory, should a quoting bug ever run one.
#![cfg(feature = "namespaces")]
// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use bashgate::rewrite;
use proptest::prelude::*;

const STAND_IN: &str = r#"#!/bin/sh
# run --profile P --tree T --state-dir S --no-config --cwd-file F -- COMMAND:
# prints COMMAND, reports / as the final directory, exits 7.
[ "$1" = run ] || exit 99
shift
[ "$1" = --profile ] || exit 98
shift 2
[ "$1" = --tree ] || exit 94
shift 2
[ "$1" = --state-dir ] || exit 93
shift 2
[ "$1" = --no-config ] || exit 92
shift
[ "$1" = --cwd-file ] || exit 97
f=$2
shift 2
[ "$1" = -c ] || exit 96
shift
[ $# -eq 1 ] || exit 95
printf '%s' "$1"
printf '/' > "$f"
exit 7
"#;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    stand_in: PathBuf,
    prefix: Vec<String>,
}

fn world() -> &'static World {
    static WORLD: std::sync::LazyLock<World> = std::sync::LazyLock::new(make_world);
    &WORLD
}

fn make_world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stand_in = root.join("bash gate's stand-in");
    std::fs::write(&stand_in, STAND_IN).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prefix = bashgate_tests::oracle::unshare_prefix()
        .expect("a fresh network namespace for bash (unshare, setpriv)");
    World {
        _dir: dir,
        root,
        stand_in,
        prefix,
    }
}

fn how(tree: &Path) -> rewrite::Fencing<'_> {
    rewrite::Fencing {
        profile: "default",
        tree: Some(tree),
        state_dir: Path::new("/nonexistent/state"),
        config: None,
    }
}

/// What the wrapped `command` hands the stand-in, its status, and where
/// the shell is afterwards.
fn through_bash(w: &World, command: &str) -> (String, String, String) {
    let line = rewrite::fenced(&w.stand_in, &how(&w.root), command);
    let script = format!("{line}\nprintf '\\0%s\\0%s' \"$?\" \"$PWD\"");
    let out = Command::new(&w.prefix[0])
        .args(&w.prefix[1..])
        .args(["/bin/bash", "-s"])
        .current_dir(&w.root)
        .env("TMPDIR", &w.root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(script.as_bytes())?;
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts = text.rsplitn(3, '\0');
    let pwd = parts.next().unwrap_or("").to_string();
    let status = parts.next().unwrap_or("").to_string();
    let given = parts.next().unwrap_or("").to_string();
    (given, status, pwd)
}

fn check(w: &World, command: &str) {
    let (given, status, pwd) = through_bash(w, command);
    assert_eq!(given, command, "the command arrived changed");
    assert_eq!(
        status, "7",
        "the exit status did not pass through: {command:?}"
    );
    assert_eq!(
        pwd, "/",
        "the shell did not follow the command's cd: {command:?}"
    );
    assert_eq!(
        rewrite::original(&rewrite::fenced(
            Path::new("/b/bashgate"),
            &how(Path::new("/p 'q'")),
            command
        ))
        .as_deref(),
        Some(command)
    );
}

#[test]
fn every_corpus_command_round_trips_through_bash() {
    let w = world();
    let files = bashgate_corpus::case::load_all().unwrap();
    let mut n = 0;
    for f in &files {
        for c in &f.cases {
            // One argument longer than the kernel's MAX_ARG_STRLEN (128
            // KiB) cannot be passed to any program, the client's own shell
            // included; `bashgate run` then fails to start (nothing runs).
            if c.command.contains('\0') || c.command.len() > 100_000 {
                continue;
            }
            check(w, &c.command);
            n += 1;
        }
    }
    assert!(n > 1000, "only {n} corpus commands");
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&w.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("bashgate-cwd"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_strings_round_trip(command in "[^\\x00]{0,80}") {
        let w = world();
        check(w, &command);
    }

    #[test]
    fn quote_heavy_strings_round_trip(command in "['\"\\\\$`!;&|(){}<> \\n\\ta-z*?~#%-]{0,40}") {
        let w = world();
        check(w, &command);
    }
}
