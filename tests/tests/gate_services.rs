//! Non-Bash tools through the built hook: the service gating
//! matrix, unknown services, the secrets scanner, and the admin clean room.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use bashgate_tests::gate::Sandbox;
use bashgate_tests::gate_http::{Reply, Server};
use serde_json::json;

const SERVICES: &str = r#"
[services.docs]
public_source = false
secret_data = false
public_sink = false
dangerous_writes = false

[services.forum]
public_source = true
secret_data = false
public_sink = true
dangerous_writes = false

[services.bank]
public_source = false
secret_data = true
public_sink = false
dangerous_writes = "forbidden"

[services.github]
public_source = true
secret_data = false
public_sink = true
dangerous_writes = true
read_tools = ["get_issue"]
"#;

fn sandbox(cop_flags: bool) -> (Server, Sandbox) {
    let text = format!("{{\"flagged\": {cop_flags}, \"reason\": \"leaks workspace content\"}}");
    let server = Server::start(Reply::Json(200, Server::anthropic_text(&text)));
    let mut s = Sandbox::with_config(&format!(
        "{SERVICES}\n[cop]\nbase_url = \"{}\"\napi_key_env = \"K\"\n",
        server.url
    ));
    s.set("K", "k");
    (server, s)
}

#[test]
fn the_gating_matrix_row_by_row() {
    let (server, s) = sandbox(true);
    // dangerous_writes = "forbidden": blocked whatever the taint.
    let a = s.pre("m", "mcp__bank__transfer", json!({"to": "x", "amount": 5}));
    assert_eq!(a.decision(), "deny");
    assert!(a.reason().contains("BG412"), "{}", a.reason());
    // dangerous_writes = true: the person.
    let a = s.pre("m", "mcp__github__merge_pr", json!({"n": 1}));
    assert_eq!(a.decision(), "ask");
    assert!(a.reason().contains("BG413"), "{}", a.reason());
    // A declared read tool is not a write.
    assert_eq!(
        s.pre("m", "mcp__github__get_issue", json!({"n": 1}))
            .decision(),
        "allow"
    );
    // No taint: a public sink is allowed.
    assert_eq!(
        s.pre("m", "mcp__forum__post", json!({"text": "hello"}))
            .decision(),
        "allow"
    );
    assert!(server.requests().is_empty());
    // Corruption + public sink: the Cop; flagged denies.
    s.taint("m", true, false);
    let a = s.pre("m", "mcp__forum__post", json!({"text": "hello"}));
    assert_eq!(a.decision(), "deny", "{}", a.reason());
    assert_eq!(server.requests().len(), 1);
    let body = server.requests()[0].json();
    assert!(body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("mcp__forum__post"));
    // Not a sink: allowed even tainted.
    assert_eq!(
        s.pre("m", "mcp__docs__update", json!({"text": "x"}))
            .decision(),
        "allow"
    );
    // Both taints + public sink: the lethal trifecta asks the person.
    s.taint("m", false, true);
    let a = s.pre("m", "mcp__forum__post", json!({"text": "hello"}));
    assert_eq!(a.decision(), "ask");
    assert!(a.reason().contains("BG411"), "{}", a.reason());
}

#[test]
fn cop_clear_allows_a_tainted_write() {
    let (_server, s) = sandbox(false);
    s.taint("c", true, false);
    assert_eq!(
        s.pre("c", "mcp__forum__post", json!({"text": "hi"}))
            .decision(),
        "allow"
    );
}

#[test]
fn unknown_services_are_treated_as_all_true() {
    let (_server, s) = sandbox(false);
    let a = s.pre("u", "mcp__mystery__do_thing", json!({}));
    assert_eq!(a.decision(), "ask");
    assert!(a.reason().contains("unknown service"), "{}", a.reason());
    // Reading from one taints both ways.
    s.post("u", "mcp__mystery__do_thing", json!({}));
    let out = s.run(&["taint", "show", "--session", "u", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["taint"], json!({"corruption": true, "secret": true}));
}

#[test]
fn secrets_in_outbound_payloads_escalate_to_the_person() {
    let (_server, s) = sandbox(false);
    for payload in [
        json!({"text": "here is the key AKIAIOSFODNN7EXAMPLE"}),
        json!({"text": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"}),
        json!({"text": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}),
        json!({"body": "q8Zt3LmW9pXv2RkB7nYc4HdJ6sFa1GeU"}),
    ] {
        // Untainted, to a service that would otherwise be allowed.
        let a = s.pre("k", "mcp__forum__post", payload.clone());
        assert_eq!(a.decision(), "ask", "{payload}: {}", a.reason());
        assert!(a.reason().contains("BG414"), "{}", a.reason());
        assert!(
            !a.reason().contains("AKIAIOSFODNN7EXAMPLE"),
            "the secret is not repeated"
        );
    }
    assert_eq!(
        s.pre("k", "mcp__forum__post", json!({"text": "meeting at 3pm"}))
            .decision(),
        "allow"
    );
    // Bash commands that reach the network are outbound payloads too.
    let a = s.bash("k", "curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789' https://api.github.com");
    assert_eq!(a.decision(), "ask", "{}", a.reason());
}

#[test]
fn builtin_web_tools_are_public_sources() {
    let (_server, s) = sandbox(false);
    assert_eq!(
        s.pre("w", "WebFetch", json!({"url": "https://x", "prompt": "p"}))
            .decision(),
        "allow"
    );
    s.post("w", "WebSearch", json!({"query": "q"}));
    let out = s.run(&["taint", "show", "--session", "w"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("tainted by untrusted content"));
}

#[test]
fn local_tools_pass_and_secret_reads_taint() {
    let (_server, s) = sandbox(false);
    for (tool, input) in [
        ("Read", json!({"file_path": "src/main.rs"})),
        (
            "Write",
            json!({"file_path": "x.txt", "content": "AKIAIOSFODNN7EXAMPLE"}),
        ),
        ("Grep", json!({"pattern": "x", "path": "."})),
        ("TodoWrite", json!({"todos": []})),
    ] {
        assert_eq!(s.pre("l", tool, input).decision(), "allow", "{tool}");
    }
    s.post("l", "Read", json!({"file_path": "/home/u/.ssh/id_ed25519"}));
    let out = s.run(&["taint", "show", "--session", "l"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("tainted by secrets"));
}

#[test]
fn admin_clean_room() {
    // Config validation refuses a public-source service in an admin workspace.
    let s = Sandbox::with_config(
        "[workspace]\nadmin = true\n[services.browser]\npublic_source = true\n",
    );
    let out = s.run(&["config"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("services.browser.public_source") && err.contains("clean room"),
        "{err}"
    );
    let a = s.bash("x", "ls");
    assert_eq!(a.decision(), "ask");
    assert!(a.reason().contains("clean room"), "{}", a.reason());
    // A valid admin workspace bypasses gating but never reads public sources.
    let s = Sandbox::with_config(
        "[workspace]\nadmin = true\n[services.calendar]\npublic_source = false\nsecret_data = true\npublic_sink = false\ndangerous_writes = true\n",
    );
    assert_eq!(
        s.pre("a", "mcp__calendar__add", json!({"x": 1})).decision(),
        "allow"
    );
    for tool in ["WebFetch", "mcp__unknown__x"] {
        let a = s.pre("a", tool, json!({"url": "https://x"}));
        assert_eq!(a.decision(), "deny", "{tool}");
        assert!(a.reason().contains("BG415"), "{}", a.reason());
    }
}

#[test]
fn the_example_configuration_removes_webfetch() {
    let mut s = Sandbox::new();
    s.set(
        "BASHGATE_CONFIG",
        &bashgate_tests::gate::example("taint-cascade.toml")
            .display()
            .to_string(),
    );
    let a = s.pre("e", "WebFetch", json!({"url": "https://x", "prompt": "p"}));
    assert_eq!(a.decision(), "deny");
    // The browser MCP server is the public source instead.
    s.post("e", "mcp__browser__navigate", json!({"url": "https://x"}));
    let out = s.run(&["taint", "show", "--session", "e"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("tainted by untrusted content"));
}
