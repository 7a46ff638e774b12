//! Issue 13's measurement: of the everyday commands a coding agent runs
//! (corpus/everyday/commands.toml), how many stop for a person in a session
//! that has read untrusted content (a WebFetch) with no reviewer configured.
//! Without confinement that is most of them; with it, only the ones that
//! need the network. Through the built hook, as Claude Code calls it.
//!
//! `cargo test -p bashgate-tests --test everyday -- --nocapture` prints the
//! figures.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use bashgate_tests::gate::Sandbox;
use serde::Deserialize;

#[derive(Deserialize)]
struct List {
    command: Vec<Everyday>,
}

#[derive(Deserialize)]
struct Everyday {
    run: String,
    #[serde(default)]
    network: bool,
}

fn everyday() -> Vec<Everyday> {
    let path = bashgate_tests::workspace_root().join("corpus/everyday/commands.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str::<List>(&text).unwrap().command
}

/// Each command's decision in a corruption-tainted session under `config`.
fn decisions(config: &str) -> Vec<(String, String)> {
    let s = Sandbox::with_config(config);
    s.taint("s", true, false);
    each(&s, "s")
}

/// Each everyday command's decision in `session` of sandbox `s`.
fn each(s: &Sandbox, session: &str) -> Vec<(String, String)> {
    everyday()
        .iter()
        .map(|c| {
            (
                c.run.clone(),
                s.bash(session, &c.run).decision().to_string(),
            )
        })
        .collect()
}

fn fence_available() -> bool {
    bashgate_tests::gate::fence_available()
}

#[test]
fn confinement_leaves_only_the_network_to_the_person() {
    let list = everyday();
    assert!(list.len() >= 45, "the issue asks for at least 45 commands");
    let before = decisions("[confine]\nwhen = \"never\"\n");
    let after = decisions("");
    let asks = |d: &[(String, String)]| d.iter().filter(|(_, x)| x == "ask").count();
    println!(
        "everyday commands in a corruption-tainted session, no reviewer: {} of {} ask without confinement, {} of {} with it",
        asks(&before),
        list.len(),
        asks(&after),
        list.len()
    );
    for (c, d) in &after {
        println!("  {d:15} {c}");
    }
    // The unconfined table: everything that cannot be proven local asks.
    assert!(asks(&before) * 2 > list.len(), "{before:?}");
    if !fence_available() {
        println!("this machine cannot confine (see `bashgate doctor`): the old matrix stays");
        assert_eq!(asks(&after), asks(&before));
        return;
    }
    assert!(asks(&after) <= 10, "{after:?}");
    for (c, (cmd, d)) in list.iter().zip(&after) {
        if c.network {
            // Fenced, it could only fail: the person decides.
            assert_eq!(d, "ask", "{cmd}");
        } else {
            assert!(
                d == "allow-confined" || d == "allow",
                "{cmd} stopped for a person: {d}"
            );
        }
    }
}

/// Issue 33: a session in a project the person has not trusted counts as
/// having read untrusted content from its start. Its friction on the
/// everyday commands is a tainted session's: the same answers, with no
/// untrusted read needed first; trusting the project lifts it.
#[test]
fn an_untrusted_projects_friction_is_a_tainted_sessions() {
    let tainted = decisions("");
    let s = Sandbox::untrusted();
    let untrusted = each(&s, "u");
    let asks = |d: &[(String, String)]| d.iter().filter(|(_, x)| x == "ask").count();
    let fenced = |d: &[(String, String)]| d.iter().filter(|(_, x)| x == "allow-confined").count();
    println!(
        "everyday commands in an untrusted project: {} of {} ask, {} run fenced (a tainted session in a trusted one: {} ask, {} fenced)",
        asks(&untrusted),
        untrusted.len(),
        fenced(&untrusted),
        asks(&tainted),
        fenced(&tainted)
    );
    assert_eq!(untrusted, tainted);
    s.trust_project();
    let trusted: Vec<String> = everyday()
        .iter()
        .map(|c| s.bash("t", &c.run).decision().to_string())
        .collect();
    assert_eq!(
        trusted.iter().filter(|d| *d == "ask").count(),
        0,
        "{trusted:?}"
    );
}

/// Issue 36: in an untainted session nothing new stops, and what cannot
/// be proven local runs with its writes bounded (the network kept), where
/// this machine has the fence for writes.
#[test]
fn an_untainted_session_stops_nothing_and_bounds_the_writes_of_the_rest() {
    let s = Sandbox::new();
    s.trust_project();
    let got = each(&s, "clean");
    let count = |d: &str| got.iter().filter(|(_, x)| x == d).count();
    println!(
        "everyday commands in an untainted session: {} of {} run as they are, {} with their writes bounded, {} stopped",
        count("allow"),
        got.len(),
        count("allow-confined"),
        got.len() - count("allow") - count("allow-confined"),
    );
    for (c, d) in &got {
        println!("  {d:15} {c}");
        assert_eq!(d, bashgate_tests::gate::untainted_allow(c), "{c}");
    }
}

/// Issue 36: `strict` is stronger, not stiffer. An untainted session under
/// `strict` is decided as a tainted one: it denies none of the everyday
/// commands, asks only about those that need the network, and runs the
/// rest fenced where this machine can.
#[test]
fn strict_denies_no_everyday_command_and_asks_only_for_the_network() {
    let s = Sandbox::with_config("profile = \"strict\"\n");
    s.trust_project();
    let list = everyday();
    let got = each(&s, "strict");
    let count = |d: &str| got.iter().filter(|(_, x)| x == d).count();
    println!(
        "everyday commands under strict: {} of {} asked, {} denied, {} fenced, {} as they are",
        count("ask"),
        got.len(),
        count("deny"),
        count("allow-confined"),
        count("allow"),
    );
    for (c, (cmd, d)) in list.iter().zip(&got) {
        assert_ne!(d, "deny", "{cmd}");
        if fence_available() && !c.network {
            assert!(d == "allow-confined" || d == "allow", "{cmd}: {d}");
        }
    }
    if fence_available() {
        assert_eq!(count("ask"), list.iter().filter(|c| c.network).count());
    }
}
