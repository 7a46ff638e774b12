//! What a test needs of the machine that not every machine has (the
//! fence's kernel layers, root, a program), and what happens when it is
//! missing: the test is skipped loudly, never in silence.
//!
//! A skip is a line on the test's standard error and a line in the skip
//! log (`BASHGATE_SKIP_LOG`, by default `target/bashgate-skipped.log`),
//! which `.ci/skips` counts after a run (under `cargo test` or `cargo
//! nextest`, whose tests run in processes of their own, the log is the one
//! place they all reach). Where `BASHGATE_REQUIRE` is `all` (as `.ci/run`
//! sets it) a missing need fails the test instead: CI has them all.
//!
//! PostgreSQL and network namespaces are the test features `postgres` and
//! `namespaces` (left out by `--no-default-features`, and said so by
//! `left_out.rs`); the real clients' tests are `#[ignore]`d, which the test
//! runner counts.

use std::io::Write;
use std::path::PathBuf;

/// The skip log.
pub fn skip_log() -> PathBuf {
    if let Some(p) = std::env::var_os("BASHGATE_SKIP_LOG") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    target.join("bashgate-skipped.log")
}

/// Whether a missing need fails the test (`BASHGATE_REQUIRE=all`).
fn required() -> bool {
    std::env::var("BASHGATE_REQUIRE").is_ok_and(|v| v.split(',').any(|k| k.trim() == "all"))
}

/// Says that the running test (or a part of it) did not run because the
/// machine lacks `need` (`why`: what says so), records it in the skip log,
/// and returns; panics instead where everything is required.
pub fn skipped(need: &str, why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let why = why.lines().next().unwrap_or("").trim();
    let line = format!("SKIPPED {test}: needs {need} ({why})\n");
    assert!(
        !required(),
        "{}BASHGATE_REQUIRE=all: every need is required here",
        line
    );
    // Straight to the process's standard error, which the test harness
    // does not capture: the skip shows in a passing run's output.
    let _ = std::io::stderr().write_all(line.as_bytes());
    let log = skip_log();
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One appended write per line: whole lines even from processes side by
    // side.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Whether `program` is on PATH; otherwise the skip is recorded.
pub fn program(program: &str) -> bool {
    let found = std::process::Command::new("bash")
        .args(["-c", &format!("command -v {program}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        skipped(&format!("`{program}`"), "not on PATH");
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_logged_and_a_required_need_fails() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips.log");
        // Run as a child test process so the environment is its own.
        let exe = std::env::current_exe().unwrap();
        let run = |require: &str| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "require::tests::skip_in_a_child",
                    "--include-ignored",
                    "--nocapture",
                ])
                .env("BASHGATE_SKIP_LOG", &log)
                .env("BASHGATE_REQUIRE", require)
                .output()
                .unwrap()
        };
        let out = run("");
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("SKIPPED require::tests::skip_in_a_child: needs a unicorn (none here)"),
            "{text}"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("SKIPPED"));
        let out = run("all");
        assert!(!out.status.success(), "a required need must fail the test");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), text);
    }

    #[test]
    #[ignore = "run by a_skip_is_logged_and_a_required_need_fails"]
    fn skip_in_a_child() {
        skipped("a unicorn", "none here\nsecond line");
    }
}
