//! Shared helpers for bashgate's end-to-end tests.
//!
//! Tests here run the real `bashgate` binary (built once per test process
//! with the same profile) and real programs around it. Each area keeps its
//! own module; integration tests live in `tests/tests/`.

// The helpers of tests: a set-up step that cannot be done ends the test
// with its panic, as `unwrap` in a test does.
#![allow(clippy::unwrap_used)]

pub mod agent_e2e;
pub mod choices;
pub mod claude_code;
pub mod daemon;
pub mod gate;
pub mod gate_http;
pub mod gen;
pub mod gen_programs;
pub mod gen_scripts;
pub mod gen_words;
pub mod http;
pub mod oracle;
pub mod oracle_check;
pub mod oracle_minimize;
pub mod postgres;
pub mod require;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root (the directory holding the top-level Cargo.toml).
/// From the manifest directory cargo gives the running test, when it does:
/// a build shared between two checkouts (one `CARGO_TARGET_DIR`) can carry
/// the other checkout's compile-time path, and then build and test that
/// checkout's binary instead of this one.
pub fn workspace_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        // This crate's own manifest directory, as cargo gives it at run time.
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .filter(|d| {
                std::fs::read_to_string(d.join("Cargo.toml"))
                    .is_ok_and(|t| t.contains("name = \"bashgate-tests\""))
            })
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        manifest
            .parent()
            .expect("tests/ sits inside the workspace")
            .to_path_buf()
    })
}

/// Path to a freshly built `bashgate` binary, with `bashgate-hook` built
/// beside it (`bashgate init` writes that into the clients' settings). The
/// first call runs `cargo build -p bashgate`; a failed build panics with
/// cargo's output.
pub fn bashgate_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let release = !cfg!(debug_assertions);
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root())
            .args(["build", "-q", "-p", "bashgate", "--bin", "bashgate"])
            .args(["--bin", HOOK_BIN, "--bin", SHELL_BIN]);
        if release {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("cargo can be run");
        assert!(
            out.status.success(),
            "building bashgate failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        let bin = target
            .join(if release { "release" } else { "debug" })
            .join("bashgate");
        assert!(
            bin.exists(),
            "bashgate binary not found at {}",
            bin.display()
        );
        for other in [HOOK_BIN, SHELL_BIN] {
            assert!(
                bin.with_file_name(other).exists(),
                "{other} was not built beside {}",
                bin.display()
            );
        }
        bin
    })
}

/// The program that runs the hooks alone (gate/cli/src/bin/bashgate-hook.rs).
pub const HOOK_BIN: &str = "bashgate-hook";

/// A client's shell wrapper (gate/cli/src/bin/bashgate-shell.rs).
pub const SHELL_BIN: &str = "bashgate-shell";

/// Path to the freshly built `bashgate-shell`, beside [`bashgate_bin`].
pub fn shell_bin() -> PathBuf {
    bashgate_bin().with_file_name(SHELL_BIN)
}

/// Path to the freshly built `bashgate-hook`, beside [`bashgate_bin`].
pub fn hook_bin() -> PathBuf {
    bashgate_bin().with_file_name(HOOK_BIN)
}

/// Where a one-off `bashgate hook json` call runs: the person's home,
/// bashgate's state directory and configuration, and the working
/// directory (the project).
pub struct HookPlace<'a> {
    pub home: &'a Path,
    pub state: &'a Path,
    pub config: &'a Path,
    pub cwd: &'a Path,
}

/// The built `bashgate hook json`'s answer for one Bash command in its own
/// session, run with nothing of this process's environment but `PATH`.
pub fn hook_json(at: &HookPlace, command: &str, session: &str) -> serde_json::Value {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(bashgate_bin())
        .args(["hook", "json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", at.home)
        .env("BASHGATE_STATE_DIR", at.state)
        .env("BASHGATE_CONFIG", at.config)
        .current_dir(at.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let req = serde_json::json!({
        "tool_input": {"command": command},
        "session_id": session,
        "cwd": at.cwd,
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{command}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}
