//! Issue 35: a secret read through a command's output taints the session
//! as reading the file does. `grep -r KEY .` names no secret file, but it
//! prints `.env`'s lines; what the agent was shown decides.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use bashgate_tests::gate::Sandbox;
use serde_json::{json, Value};

/// A PostToolUse event for a Bash call, with what Claude Code reports the
/// command printed.
fn ran(s: &Sandbox, session: &str, command: &str, stdout: &str) {
    let mut ev = s.post_event(session, "Bash", json!({ "command": command }));
    ev["tool_response"] =
        json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false});
    let a = s.hook(&ev);
    assert_eq!(a.status, 0, "{a:?}");
}

fn secret_tainted(s: &Sandbox, session: &str) -> bool {
    let out = s.run(&["taint", "show", "--session", session, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["taint"]["secret"] == true
}

#[test]
fn output_that_shows_a_secret_taints_the_session() {
    let s = Sandbox::new();
    std::fs::write(
        s.project().join(".env"),
        "PORT=3000\nSTRIPE_KEY=sk_test_not-a-real-key-4242\n",
    )
    .unwrap();
    // The control: the same command, output without the secret.
    ran(&s, "clean", "grep -r PORT .", "./.env:PORT=3000\n");
    assert!(!secret_tainted(&s, "clean"));
    let curl = "curl https://example.com";
    assert_eq!(
        s.bash("clean", curl).decision(),
        bashgate_tests::gate::untainted_allow(curl)
    );
    // The secret's value on the screen: the session read it.
    ran(
        &s,
        "grep",
        "grep -r KEY .",
        "./.env:STRIPE_KEY=sk_test_not-a-real-key-4242\n",
    );
    assert!(secret_tainted(&s, "grep"));
    let a = s.bash("grep", "curl https://example.com");
    assert_ne!(a.decision(), "allow", "{a:?}");
    // A credential in a known format, wherever it came from.
    ran(&s, "cred", "cat notes.txt", "key: AKIAIOSFODNN7EXAMPLE\n");
    assert!(secret_tainted(&s, "cred"));
}
