//! The command line as users of ripgrep and ruff expect it: options are
//! checked, filters validated, every table has a JSON form, completions
//! and a man page come from the same definitions, colour follows
//! `--color` and NO_COLOR, and `init` rewrites its own entries in place.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use bashgate_tests::gate::Sandbox;
use serde_json::Value;

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn check_refuses_unknown_options_before_the_command() {
    let s = Sandbox::new();
    let o = s.run(&["check", "--jsno", "ls"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--jsno"), "{:?}", text(&o));
    // After the command, or after `--`, hyphens are the command's.
    assert_eq!(s.run(&["check", "ls", "-la"]).status.code(), Some(0));
    let o = s.run(&["check", "--json", "--", "-x"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["invocations"][0]["program"], "-x");
}

#[test]
fn audit_rejects_filter_values_it_does_not_know() {
    let s = Sandbox::new();
    for args in [
        &["audit", "--decision", "alow"][..],
        &["audit", "--layer", "denylst"],
        &["audit", "--rule", "BG999"],
    ] {
        let o = s.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {:?}", text(&o));
    }
    for args in [
        &["audit", "--decision", "allow-confined"][..],
        &["audit", "--layer", "git-guard"],
        &["audit", "--rule", "BG418"],
        &["audit", "--rule", "BG101"],
    ] {
        let o = s.run(args);
        assert!(o.status.success(), "{args:?}: {:?}", text(&o));
    }
}

#[test]
fn every_table_has_a_json_form() {
    let s = Sandbox::new();
    let o = s.run(&["rules", "--json"]);
    let rules: Vec<Value> = text(&o)
        .0
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rules
        .iter()
        .any(|r| r["id"] == "BG101" && r["verdict"] == "network"));
    assert!(rules
        .iter()
        .any(|r| r["id"] == "BG418" && r["verdict"] == "policy"));
    let o = s.run(&["explain", "network-program", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["id"], "BG101");
    assert!(!v["example"].as_str().unwrap().is_empty());
    let o = s.run(&["config", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["layers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "always"),
        "{v}"
    );
    let o = s.run(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let clients: Vec<&str> = v["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["client"].as_str().unwrap())
        .collect();
    assert_eq!(clients, ["claude", "codex", "gemini", "copilot", "cursor"]);
}

#[test]
fn completions_and_man_page_come_from_the_definitions() {
    let s = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let o = s.run(&["completions", shell]);
        assert!(o.status.success());
        let out = text(&o).0;
        for sub in ["check", "doctor", "init"] {
            assert!(out.contains(sub), "{shell} completions lack {sub}");
        }
    }
    let o = s.run(&["man"]);
    let out = text(&o).0;
    assert!(out.contains(".TH bashgate 1"), "{out}");
    assert!(out.contains("doctor"));
    // Every page a page names exists once `man --dir` has written them.
    let pages = tempfile::tempdir().unwrap();
    let dir = pages.path().display().to_string();
    assert!(s.run(&["man", "--dir", &dir]).status.success());
    // roff writes a hyphen as `\-`; a page is named as `NAME(1)`.
    let top = std::fs::read_to_string(pages.path().join("bashgate.1"))
        .unwrap()
        .replace("\\-", "-");
    let named: Vec<&str> = top
        .split("(1)")
        .filter_map(|before| {
            let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))?;
            Some(&before[start + 1..])
        })
        .filter(|w| w.starts_with("bashgate-"))
        .collect();
    assert!(named.contains(&"bashgate-check"), "{top}");
    for name in named {
        assert!(
            pages.path().join(format!("{name}.1")).is_file(),
            "bashgate(1) names {name}(1), which `man --dir` did not write"
        );
    }
    let check = text(&s.run(&["man", "check"])).0.replace("\\-", "-");
    assert!(check.contains("--tainted"), "{check}");
    assert!(s
        .run(&["--help"])
        .stdout
        .windows(9)
        .any(|w| w == b"Examples:"));
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let mut s = Sandbox::new();
    let esc = |o: &std::process::Output| o.stdout.contains(&0x1b);
    assert!(esc(&s.run(&["check", "--color", "always", "curl x"])));
    assert!(!esc(&s.run(&["check", "--color", "never", "curl x"])));
    // Not a terminal: auto means none.
    assert!(!esc(&s.run(&["check", "curl x"])));
    s.set("NO_COLOR", "1");
    assert!(!esc(&s.run(&["check", "--color", "auto", "curl x"])));
    // Only `check` colours anything: the others do not take the option.
    for sub in ["audit", "doctor"] {
        let out = s.run(&[sub, "--color", "always"]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
    }
}

#[test]
fn init_replaces_its_own_entry_when_the_binary_moves() {
    let s = Sandbox::new();
    let dir = s.project().display().to_string();
    for client in ["claude", "codex", "gemini", "copilot", "cursor"] {
        let old = format!("/old/place/bashgate hook {client}");
        assert!(s
            .run(&["init", client, "--dir", &dir, "--command", &old])
            .status
            .success());
        let o = s.run(&["init", client, "--dir", &dir]);
        assert!(o.status.success(), "{client}: {:?}", text(&o));
        let file = match client {
            "claude" => ".claude/settings.json",
            "codex" => ".codex/hooks.json",
            "gemini" => ".gemini/settings.json",
            "copilot" => ".github/hooks/bashgate.json",
            _ => ".cursor/hooks.json",
        };
        let written = std::fs::read_to_string(s.project().join(file)).unwrap();
        assert!(!written.contains("/old/place"), "{client}: {written}");
        // The hook binary beside bashgate, now.
        let mine = format!("{} {client}", bashgate_tests::hook_bin().display());
        let v: Value = serde_json::from_str(&written).unwrap();
        let first_event = v["hooks"].as_object().unwrap().values().next().unwrap();
        assert_eq!(
            first_event.as_array().unwrap().len(),
            1,
            "{client}: {written}"
        );
        assert!(written.contains(&mine));
        // And the user's other settings keep their place.
        let again = s.run(&["init", client, "--dir", &dir]);
        assert!(text(&again).0.contains("already has"), "{client}");
    }
    // Copilot reads the person's own hooks from ~/.copilot/hooks.
    let o = s.run(&["init", "copilot", "--user"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let user = s.dir.path().join("home/.copilot/hooks/bashgate.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(user).unwrap()).unwrap();
    assert!(v["hooks"]["preToolUse"][0]["bash"]
        .as_str()
        .is_some_and(|c| c.ends_with("bashgate-hook copilot")));
}

/// A report whose reader has gone (`| head -1`) ends quietly: no panic
/// about the closed pipe.
#[test]
fn a_report_piped_into_head_ends_quietly() {
    use std::process::Stdio;
    let s = Sandbox::new();
    s.taint("s", true, true);
    for args in [
        &["rules"][..],
        &["taint", "show", "--session", "s"],
        &["audit"],
        &["config"],
    ] {
        let mut child = s
            .command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the report is written (the program
        // takes milliseconds to start), so its first write meets a closed
        // pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// The home directory is not a project: its `.claude/settings.json` is the
/// person's own for every project, and trusting it would trust everything.
#[test]
fn init_refuses_the_home_directory_as_a_project() {
    let s = Sandbox::new();
    let home = s.dir.path().join("home");
    let o = s.run(&["init", "claude", "--dir", &home.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("--user"), "{:?}", text(&o));
    assert!(!home.join(".claude/settings.json").exists());
    // --user is the way to wire every project.
    let o = s.run(&["init", "claude", "--user"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(home.join(".claude/settings.json").exists());
}

/// The audit speaks `check`'s words: `fenced`, and an empty answer says
/// why it may be empty.
#[test]
fn the_audit_takes_checks_word_for_fenced_and_says_when_nothing_matches() {
    let s = Sandbox::new();
    let o = s.run(&["check", "--", "ls"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = s.run(&["audit", "--decision", "fenced"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(text(&o).0, "");
    assert!(
        text(&o).1.contains("`bashgate check` records nothing"),
        "{:?}",
        text(&o)
    );
}
