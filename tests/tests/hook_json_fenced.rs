//! `bashgate hook json` and confinement (issue 13): the answer for a
//! command that may run only fenced is `allow-confined` with the command
//! line to run instead, which no caller can take for a plain `allow`, and
//! running that line really runs the command fenced.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};

use bashgate_tests::gate::{fence_here, Sandbox};
use serde_json::{json, Value};

/// The JSON hook as `bashgate init` would install it: `bashgate-hook json`,
/// whose rewritten line must name `bashgate` (the hook binary has no `run`).
fn hook_json(s: &Sandbox, request: &Value) -> Value {
    let mut child = s
        .command_of(&bashgate_tests::hook_bin())
        .arg("json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A repository: a fenced command may write in its tree.
fn git_init(s: &Sandbox) {
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(s.project())
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn allow_confined_carries_the_command_to_run_and_it_runs_fenced() {
    let s = Sandbox::with_config("[confine]\nwhen = \"always\"\n");
    git_init(&s);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let command = format!(
        "echo built > out.txt; cat out.txt; python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2)' 2>/dev/null && echo reached || echo 'no network'"
    );
    let a = hook_json(
        &s,
        &json!({"tool_name": "Bash", "tool_input": {"command": command}, "session_id": "j"}),
    );
    if !fence_here() {
        assert_eq!(a["decision"], "allow", "{a}");
        return;
    }
    assert_eq!(a["decision"], "allow-confined", "{a}");
    assert_eq!(a["tool_input"]["command"], a["command"], "{a}");
    let line = a["command"].as_str().unwrap();
    let gate = bashgate_tests::bashgate_bin().display().to_string();
    assert!(
        line.contains(&format!("{gate}' run")) && !line.contains("bashgate-hook"),
        "{line}"
    );
    // Run as a caller would: the line in the project's shell.
    let out = Command::new("bash")
        .args(["-c", line])
        .current_dir(s.project())
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text, "built\nno network\n");
    assert!(s.project().join("out.txt").exists());
    l.set_nonblocking(true).unwrap();
    assert!(l.accept().is_err(), "the command reached the listener");
    // Network commands are not given the full fence (there they could
    // only fail): untainted, they keep the network with their writes
    // bounded.
    let curl = "curl https://example.com";
    let a = hook_json(
        &s,
        &json!({"tool_input": {"command": curl}, "session_id": "j"}),
    );
    assert_eq!(
        a["decision"],
        bashgate_tests::gate::untainted_allow(curl),
        "{a}"
    );
    if a["decision"] == "allow-confined" {
        let line = a["command"].as_str().unwrap();
        assert!(line.contains("--profile 'writes'"), "{line}");
    }
}

/// The audit log keeps both sides: the hook's `allow-confined` decision,
/// and `bashgate run`'s own record of the layers that were in force.
#[test]
fn a_fenced_run_is_audited_with_its_layers() {
    if !fence_here() {
        return;
    }
    let s = Sandbox::with_config("[confine]\nwhen = \"always\"\n");
    git_init(&s);
    let a = hook_json(
        &s,
        &json!({"tool_input": {"command": "make -v"}, "session_id": "au"}),
    );
    assert_eq!(a["decision"], "allow-confined", "{a}");
    let out = Command::new("bash")
        .args(["-c", a["command"].as_str().unwrap()])
        .current_dir(s.project())
        .envs(s.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = s.audit(&[]);
    let decided = records
        .iter()
        .find(|r| r["event"] == "hook-json")
        .expect("the hook's record");
    assert_eq!(decided["decision"], "allow-confined", "{decided}");
    let ran = records
        .iter()
        .find(|r| r["event"] == "run")
        .expect("bashgate run's record");
    assert_eq!(ran["command"], "make -v", "{ran}");
    let reason = ran["reason"].as_str().unwrap();
    for layer in ["namespaces", "seccomp", "capabilities"] {
        assert!(reason.contains(layer), "{reason}");
    }
}
