//! Helpers for the gate's end-to-end tests: a sandbox (state directory,
//! project directory, configuration) and the built `bashgate hook claude`
//! fed real Claude Code event JSON.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::{bashgate_bin, hook_bin, shell_bin};

/// Whether `bashgate run` can confine on this machine (`bashgate doctor
/// --json` says so): then a tainted session's commands are answered
/// `allow-confined` instead of `allow` or `ask`.
pub fn fence_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let can = Command::new(bashgate_bin())
            .args(["doctor", "--json"])
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            .is_some_and(|v| v["fence"]["can_confine"] == true);
        // The project's CI machines can confine: there, a test that would
        // skip its fence half has lost its way of telling, not the kernel.
        assert!(
            can || std::env::var_os("CI").is_none(),
            "`bashgate doctor --json` says this machine cannot confine; under CI that is a failure, not a skip"
        );
        can
    })
}

/// Whether this machine has the fence for writes (`bashgate doctor --json`).
/// Whether this machine can confine (see [`fence_available`]); where it
/// cannot, the skip of what follows is recorded (`require.rs`).
pub fn fence_here() -> bool {
    let can = fence_available();
    if !can {
        let out = Command::new(bashgate_bin()).arg("doctor").output();
        let why = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let why = why
            .lines()
            .find(|l| l.contains("NOT available") || l.contains("cannot"))
            .unwrap_or("`bashgate doctor` says it cannot confine here");
        crate::require::skipped("the fence (`bashgate doctor`: can_confine)", why);
    }
    can
}

pub fn writes_fence_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new(bashgate_bin())
            .args(["doctor", "--json"])
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            .is_some_and(|v| v["fence"]["can_bound_writes"] == true)
    })
}

/// What an untainted session answers for `command` when no layer stops
/// it: `allow` when it is provably local; otherwise it runs in the fence
/// for writes (`allow-confined`) where this machine has it.
pub fn untainted_allow(command: &str) -> &'static str {
    let safe = bashgate_analyzer::analyze(command).verdict == bashgate_analyzer::Verdict::Safe;
    if !safe && writes_fence_available() {
        "allow-confined"
    } else {
        "allow"
    }
}

/// What a tainted session answers for a command bashgate lets through.
pub fn tainted_allow() -> &'static str {
    if fence_available() {
        "allow-confined"
    } else {
        "allow"
    }
}

/// A throwaway world for one test: its own state directory, project
/// directory and configuration, and no inherited keys or configs.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

/// What the hook answered.
#[derive(Debug)]
pub struct Answer {
    pub status: i32,
    pub json: Value,
    pub stdout: String,
    pub stderr: String,
    /// The hook left the client's shell wrapper a decision to run the
    /// command fenced (`bashgate::runs`).
    pub fenced: bool,
}

impl Answer {
    /// bashgate's decision. An answer of exactly `{}` is its "no
    /// objection": the call is left to Claude Code's own permission rules,
    /// and the gate's decision (as the audit log records it) was `allow`.
    /// `allow-confined` for a command left to run fenced through the
    /// client's shell wrapper, or rewritten to run under `bashgate run`
    /// (an `updatedInput`), with no decision of its own.
    pub fn decision(&self) -> &str {
        let out = &self.json["hookSpecificOutput"];
        match out["permissionDecision"].as_str() {
            Some(d) => d,
            None if self.fenced || out["updatedInput"].is_object() => "allow-confined",
            None if self.json == json!({}) => "allow",
            None => "",
        }
    }

    /// The command the client runs instead of the agent's, when the answer
    /// rewrote it.
    pub fn rewritten(&self) -> Option<&str> {
        self.json["hookSpecificOutput"]["updatedInput"]["command"].as_str()
    }

    pub fn reason(&self) -> &str {
        self.json["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("xdg")).unwrap();
        let env = vec![
            (
                "BASHGATE_STATE_DIR".to_string(),
                dir.path().join("state").display().to_string(),
            ),
            (
                "HOME".to_string(),
                dir.path().join("home").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".to_string(),
                dir.path().join("xdg").display().to_string(),
            ),
            // Claude Code runs its commands through bashgate's shell
            // wrapper, as `bashgate init claude` sets it.
            (
                "CLAUDE_CODE_SHELL_PREFIX".to_string(),
                shell_bin().display().to_string(),
            ),
        ];
        let s = Sandbox { dir, env };
        // The person installed bashgate in this project (`bashgate init`
        // trusts it); `untrusted` makes one they have not.
        s.trust_project();
        s
    }

    /// A sandbox whose project the person has not trusted (a repository
    /// they cloned).
    pub fn untrusted() -> Sandbox {
        let s = Sandbox::new();
        let out = s.run(&["trust", "--revoke", &s.project().display().to_string()]);
        assert!(out.status.success(), "{out:?}");
        s
    }

    /// Trusts the project with its configuration files as they are now.
    pub fn trust_project(&self) {
        let out = self.run(&["trust", &self.project().display().to_string()]);
        assert!(out.status.success(), "{out:?}");
    }

    /// A sandbox whose configuration file holds `toml`.
    pub fn with_config(toml: &str) -> Sandbox {
        let mut s = Sandbox::new();
        let p = s.dir.path().join("bashgate.toml");
        std::fs::write(&p, toml).unwrap();
        s.set("BASHGATE_CONFIG", &p.display().to_string());
        s
    }

    pub fn set(&mut self, k: &str, v: &str) {
        self.env.retain(|(a, _)| a != k);
        self.env.push((k.to_string(), v.to_string()));
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// A `bashgate` command with the sandbox's environment.
    pub fn command(&self) -> Command {
        self.command_of(bashgate_bin())
    }

    /// `program` (`bashgate` or `bashgate-hook`) with the sandbox's
    /// environment.
    pub fn command_of(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        for k in [
            "BASHGATE_CONFIG",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "XDG_STATE_HOME",
            "RUST_BACKTRACE",
        ] {
            c.env_remove(k);
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.current_dir(self.project());
        c
    }

    /// Runs `bashgate ARGS`.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("bashgate runs")
    }

    /// Feeds raw bytes to `bashgate hook claude`.
    pub fn hook_raw(&self, input: &[u8]) -> Answer {
        self.hook_client("claude", input)
    }

    /// Feeds raw bytes to the hook for CLIENT as `bashgate init` installs
    /// it: `bashgate-hook CLIENT` (see [`Sandbox::hook_via_cli`] for
    /// `bashgate hook CLIENT`, the same code behind the full CLI).
    pub fn hook_client(&self, client: &str, input: &[u8]) -> Answer {
        let a = Self::answer(self.command_of(&hook_bin()).arg(client), input);
        self.with_ticket(a, input)
    }

    /// Feeds raw bytes to `bashgate hook CLIENT`.
    pub fn hook_via_cli(&self, client: &str, input: &[u8]) -> Answer {
        let a = Self::answer(self.command().args(["hook", client]), input);
        self.with_ticket(a, input)
    }

    /// The answer, marked fenced when the hook left the shell wrapper a
    /// decision to fence the event's command.
    fn with_ticket(&self, mut a: Answer, input: &[u8]) -> Answer {
        let event: Value = serde_json::from_slice(input).unwrap_or(Value::Null);
        let (Some(session), Some(command)) = (
            event["session_id"].as_str(),
            event["tool_input"]["command"].as_str(),
        ) else {
            return a;
        };
        let left = bashgate::runs::Tickets::new(&self.state()).peek(session, command);
        a.fenced = matches!(left, Ok(Some(bashgate::runs::HowToRun::Fenced(_))));
        a
    }

    /// Runs `command` with `input` on stdin and reads its answer.
    fn answer(command: &mut Command, input: &[u8]) -> Answer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bashgate starts");
        let mut stdin = child.stdin.take().unwrap();
        let data = input.to_vec();
        let w = std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        let _ = w.join();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        Answer {
            status: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            fenced: false,
        }
    }

    pub fn hook(&self, event: &Value) -> Answer {
        self.hook_raw(event.to_string().as_bytes())
    }

    /// A PreToolUse event as Claude Code sends it.
    pub fn pre_event(&self, session: &str, tool: &str, input: Value) -> Value {
        json!({
            "session_id": session,
            "transcript_path": self.dir.path().join("t.jsonl").display().to_string(),
            "cwd": self.project().display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
        })
    }

    /// A PostToolUse event as Claude Code sends it.
    pub fn post_event(&self, session: &str, tool: &str, input: Value) -> Value {
        json!({
            "session_id": session,
            "transcript_path": self.dir.path().join("t.jsonl").display().to_string(),
            "cwd": self.project().display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_response": {"ok": true},
        })
    }

    pub fn pre(&self, session: &str, tool: &str, input: Value) -> Answer {
        let a = self.hook(&self.pre_event(session, tool, input));
        assert_eq!(a.status, 0, "the hook must exit 0: {a:?}");
        a
    }

    pub fn bash(&self, session: &str, command: &str) -> Answer {
        self.pre(
            session,
            "Bash",
            json!({ "command": command, "description": "test" }),
        )
    }

    pub fn post(&self, session: &str, tool: &str, input: Value) -> Answer {
        let a = self.hook(&self.post_event(session, tool, input));
        assert_eq!(a.status, 0, "the hook must exit 0: {a:?}");
        a
    }

    /// Sets a session's taint the way an agent would: by reading.
    pub fn taint(&self, session: &str, corruption: bool, secret: bool) {
        if corruption {
            self.post(
                session,
                "WebFetch",
                json!({"url": "https://example.com/page", "prompt": "summarize"}),
            );
        }
        if secret {
            self.post(
                session,
                "Read",
                json!({"file_path": self.project().join(".env").display().to_string()}),
            );
        }
    }

    /// The reason behind an answer: the hook's own, or for a call bashgate
    /// had no objection to (answered `{}`, no reason shown to Claude Code)
    /// the one the audit log recorded for the newest decision.
    pub fn reason_of(&self, a: &Answer) -> String {
        if a.json != json!({}) {
            return a.reason().to_string();
        }
        let newest = self.audit(&["--limit", "1"]);
        newest[0]["reason"].as_str().unwrap_or("").to_string()
    }

    /// `bashgate audit --json` lines.
    pub fn audit(&self, args: &[&str]) -> Vec<Value> {
        let mut a = vec!["audit", "--json"];
        if !args.contains(&"--limit") {
            a.extend_from_slice(&["--limit", "1000"]);
        }
        a.extend_from_slice(args);
        let out = self.run(&a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("audit --json lines are JSON"))
            .collect()
    }
}

/// The path of an example configuration in docs/examples.
pub fn example(name: &str) -> PathBuf {
    crate::workspace_root()
        .join("docs")
        .join("examples")
        .join(name)
}

/// Writes an executable script.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Each client's event file before a shell command runs (`tests/events/`).
pub const PRE_EVENTS: [(&str, &str); 4] = [
    ("codex", "codex/pre-bash.json"),
    ("gemini", "gemini/before-shell.json"),
    ("copilot", "copilot/pre-bash.json"),
    ("cursor", "cursor/before-shell.json"),
];

/// Each client's event file after a call that reads untrusted content,
/// with the command it ran where the event holds one.
pub const POST_EVENTS: [(&str, &str, &str); 4] = [
    (
        "codex",
        "codex/post-bash.json",
        "curl -s https://example.com/readme",
    ),
    ("gemini", "gemini/after-web-fetch.json", ""),
    ("copilot", "copilot/post-web-fetch.json", ""),
    ("cursor", "cursor/after-mcp.json", ""),
];

/// A client's event file (`tests/events/`) with its placeholders filled
/// in: the sandbox's project as the working directory, `session`, and
/// `command`.
pub fn client_event(s: &Sandbox, file: &str, session: &str, command: &str) -> Vec<u8> {
    let path = crate::workspace_root()
        .join("tests")
        .join("events")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let cwd = s.project().display().to_string();
    fill(&mut v, &cwd, session, command);
    v.to_string().into_bytes()
}

fn fill(v: &mut Value, cwd: &str, session: &str, command: &str) {
    match v {
        Value::String(t) => {
            // A command inside JSON text (Copilot's toolArgs) is escaped once
            // more.
            let inner = serde_json::to_string(command).unwrap();
            *t = t
                .replace("\"{COMMAND}\"", &inner)
                .replace("{COMMAND}", command)
                .replace("{CWD}", cwd)
                .replace("{SESSION}", session);
        }
        Value::Array(a) => a.iter_mut().for_each(|x| fill(x, cwd, session, command)),
        Value::Object(o) => o.values_mut().for_each(|x| fill(x, cwd, session, command)),
        _ => {}
    }
}
