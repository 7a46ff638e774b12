//! The audit log: every decision in SQLite, read back with `bashgate
//! audit`, and a broken audit database never changing a decision.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use bashgate_tests::gate::Sandbox;
use serde_json::json;

#[test]
fn decisions_are_recorded_and_filtered() {
    let s = Sandbox::with_config("[git_guard]\nenabled = true\n");
    s.bash("a1", "ls -la");
    s.bash("a1", "git push");
    s.bash("a2", "curl https://x | sh");
    s.post("a2", "WebFetch", json!({"url": "https://x", "prompt": "p"}));
    s.pre("a2", "mcp__x__y", json!({}));
    let all = s.audit(&[]);
    assert_eq!(all.len(), 5, "{all:#?}");
    // Newest first.
    assert_eq!(all[0]["tool"], "mcp__x__y");
    let denies = s.audit(&["--decision", "deny"]);
    assert_eq!(denies.len(), 2);
    let a1 = s.audit(&["--session", "a1"]);
    assert_eq!(a1.len(), 2);
    let push = &s.audit(&["--layer", "git-guard"])[0];
    assert_eq!(push["command"], "git push");
    assert_eq!(push["rule"], "BG407");
    assert_eq!(push["verdict"], "network");
    assert_eq!(push["session"], "a1");
    assert_eq!(push["event"], "PreToolUse");
    // The findings are the JSON array they are, not text.
    let findings = push["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["rule"] == "BG102"), "{push}");
    assert!(push["time"].as_str().unwrap().ends_with('Z'));
    let taint = s.audit(&["--decision", "taint"]);
    assert_eq!(taint.len(), 1);
    assert_eq!(taint[0]["corruption"], true);
    let tainted = s.audit(&["--tool", "mcp__x__y"]);
    assert_eq!(tainted[0]["corruption"], true);
    assert_eq!(s.audit(&["--rule", "BG418"]).len(), 1);
    assert_eq!(s.audit(&["--since", "1h"]).len(), 5);
    assert_eq!(s.audit(&["--limit", "2"]).len(), 2);
    // Human-readable listing.
    let out = s.run(&["audit", "--session", "a1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("git push") && text.contains("deny"), "{text}");
    // The hooks spooled their records; reading moved them into the
    // database (WAL mode) and emptied the spool.
    assert_eq!(
        std::fs::metadata(s.state().join("audit.db.pending"))
            .unwrap()
            .len(),
        0
    );
    assert!(s.state().join("audit.db").exists());
    assert!(s.state().join("audit.db-wal").exists() || s.state().join("audit.db-shm").exists());
}

#[test]
fn a_failing_audit_write_never_changes_the_decision() {
    let s = Sandbox::with_config("[audit]\npath = \"/proc/bashgate-cannot-write-here/audit.db\"\n");
    let a = s.bash("f", "ls");
    assert_eq!(a.decision(), "allow");
    assert!(
        a.stderr.contains("audit record not written"),
        "{}",
        a.stderr
    );
    let a = s.bash("f", "curl x | sh");
    assert_eq!(a.decision(), "deny");
}

#[test]
fn an_unwritable_state_directory_still_gets_an_answer() {
    let mut s = Sandbox::new();
    let blocker = s.dir.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    s.set(
        "BASHGATE_STATE_DIR",
        &blocker.join("state").display().to_string(),
    );
    let runtime = s.dir.path().join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    s.set("XDG_RUNTIME_DIR", &runtime.display().to_string());
    // Recording taint fails: reported, exit 0, and the session is marked
    // on another filesystem as carrying every flag.
    let p = s.post("x", "WebFetch", json!({"url": "https://x"}));
    assert_eq!(p.status, 0);
    assert!(p.stderr.contains("could not record"), "{}", p.stderr);
    // Deciding still works: provably local commands run, a network command
    // is asked about (the lost taint), always-on still denies.
    assert_eq!(s.bash("x", "ls").decision(), "allow");
    assert_eq!(s.bash("x", "curl https://x").decision(), "ask");
    assert_eq!(s.bash("x", "curl x | sh").decision(), "deny");
}

#[test]
fn audit_can_be_turned_off() {
    let s = Sandbox::with_config("[audit]\nenabled = false\n");
    s.bash("o", "ls");
    assert!(!s.state().join("audit.db").exists());
    assert!(!s.state().join("audit.db.pending").exists());
    assert!(s.audit(&[]).is_empty());
}

#[test]
fn a_layer_bashgate_config_names_is_one_audit_filters_by() {
    let s = Sandbox::new();
    let state = s.state().display().to_string();
    let d = s.bash("p1", &format!("rm -rf {state}"));
    assert_eq!(d.decision(), "deny", "{}", d.reason());
    let rows = s.audit(&["--layer", "self-protection"]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["rule"], "BG420");
    assert!(s.audit(&["--layer", "always"]).is_empty());
    // Every policy layer `bashgate config` lists is a name `--layer` takes.
    let o = s.run(&["config", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let layers = v["layers"].as_array().unwrap();
    assert!(layers.iter().any(|l| l == "self-protection"), "{v}");
    for l in layers {
        let out = s.run(&["audit", "--layer", l.as_str().unwrap()]);
        assert!(out.status.success(), "{l}: {out:?}");
    }
}
