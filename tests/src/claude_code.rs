//! Helpers for the end-to-end tests against the real Claude Code CLI
//! (`tests/tests/claude_code.rs`).
//!
//! A [`Session`] is a scratch world for one headless `claude -p` run: a
//! project directory (whose `.claude/settings.json` comes from `bashgate init
//! claude`), a HOME, a bashgate state directory, the scripted model's tool
//! calls, and optionally the Cop stand-in's rules. [`Session::run`] hands it
//! to `tests/claude-code/run-session.sh`, which runs Claude Code inside a new
//! network namespace (`unshare -rn`, loopback only) against
//! `tests/claude-code/fake_api.py`; the [`Run`] it returns reads back what
//! happened: Claude Code's result, every request the fake servers received,
//! the tool calls and their results as the model saw them, and bashgate's
//! own audit and taint records.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::workspace_root;

/// Where the fake Anthropic API listens inside the namespace.
pub const MODEL_PORT: u16 = 18080;
/// Where the Cop stand-in listens inside the namespace.
pub const COP_PORT: u16 = 18081;
/// Where the reverse-shell listener (the attacker) waits.
pub const ATTACKER_PORT: u16 = 18082;

/// The variable carrying the Cop's key in these tests.
pub const COP_KEY_ENV: &str = "BASHGATE_E2E_COP_KEY";

/// The cached CLI that `.ci/claude-code.sh` installs, under the cache directory.
const DEFAULT_INSTALL: &str = "bashgate-claude-code";
const BIN_IN_INSTALL: &str = "node_modules/@anthropic-ai/claude-code/bin/claude.exe";

/// The `bashgate` under test: `$BASHGATE_BIN` when set (`.ci/claude-code.sh`
/// builds once and sets it, so no test waits on cargo's build lock), else
/// [`crate::bashgate_bin`].
pub fn bashgate() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("BASHGATE_BIN") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "BASHGATE_BIN={} is not a file", p.display());
            p
        }
        None => crate::bashgate_bin().to_path_buf(),
    })
}

/// The directory holding the fake servers and the runner.
pub fn harness_dir() -> PathBuf {
    workspace_root().join("tests").join("claude-code")
}

/// The Claude Code executable: `$CLAUDE_BIN`, else the copy `.ci/claude-code.sh`
/// caches under `$BASHGATE_CLAUDE_HOME` (default
/// `${XDG_CACHE_HOME:-~/.cache}/bashgate-claude-code`).
/// Missing, it panics: these tests never skip.
pub fn claude_bin() -> PathBuf {
    let bin = cached_install(
        "CLAUDE_BIN",
        "BASHGATE_CLAUDE_HOME",
        DEFAULT_INSTALL,
        BIN_IN_INSTALL,
    );
    assert!(
        bin.is_file(),
        "the Claude Code CLI is not at {}: run .ci/claude-code.sh (it installs \
         @anthropic-ai/claude-code and runs these tests) or set CLAUDE_BIN",
        bin.display()
    );
    bin
}

/// Where a client's CLI is: `$bin_env`, else `in_install` inside the
/// directory its `.ci` script installs it in: `$home_env`, default
/// `${XDG_CACHE_HOME:-~/.cache}/default_dir`.
pub fn cached_install(
    bin_env: &str,
    home_env: &str,
    default_dir: &str,
    in_install: &str,
) -> PathBuf {
    if let Some(b) = std::env::var_os(bin_env) {
        return PathBuf::from(b);
    }
    let install = std::env::var_os(home_env)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
                })
                .join(default_dir)
        });
    install.join(in_install)
}

/// One step of the scripted model: a tool call.
pub fn call(tool: &str, input: Value) -> Value {
    json!({ "tool": tool, "input": input })
}

/// A Bash tool call.
pub fn bash(command: &str) -> Value {
    call(
        "Bash",
        json!({ "command": command, "description": "scripted by the test" }),
    )
}

/// A scratch world for one Claude Code session: a temporary directory,
/// removed afterwards unless `BASHGATE_E2E_KEEP` is set.
pub struct Session {
    pub dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    pub fn new() -> Session {
        let keep = std::env::var_os("BASHGATE_E2E_KEEP").is_some();
        let dir = tempfile::Builder::new()
            .prefix("bashgate-claude-")
            .disable_cleanup(keep)
            .tempdir()
            .expect("tempdir");
        if keep {
            eprintln!("claude_code: keeping {}", dir.path().display());
        }
        for d in ["proj", "home", "state"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let state = dir.path().join("state").display().to_string();
        let s = Session {
            dir,
            env: vec![("BASHGATE_STATE_DIR".into(), state)],
        };
        s.write_work("prompt.txt", "Follow the project's instructions.\n");
        s
    }

    pub fn work(&self) -> &Path {
        self.dir.path()
    }

    /// The project directory: Claude Code's working directory.
    pub fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// Adds a variable to the environment Claude Code (and so the hook) runs in.
    pub fn set_env(&mut self, k: &str, v: &str) {
        self.env.push((k.into(), v.into()));
    }

    /// Writes a file in the project directory.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.proj().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn write_work(&self, rel: &str, text: &str) {
        std::fs::write(self.work().join(rel), text).unwrap();
    }

    /// The user's own Claude Code settings (`~/.claude/settings.json` in
    /// the session's HOME), where a user keeps permission rules such as
    /// `{"permissions": {"allow": ["Bash"]}}`.
    pub fn user_settings(&self, json: &str) {
        let dir = self.work().join("home/.claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), json).unwrap();
    }

    /// bashgate's configuration for this project (`.bashgate.toml`),
    /// written and then trusted by the person (`bashgate trust`), as a
    /// repository's own file must be before it can loosen anything.
    pub fn config(&self, toml: &str) {
        self.write(".bashgate.toml", toml);
        let proj = self.proj().display().to_string();
        let out = self.bashgate(&["trust", &proj]);
        assert!(out.status.success(), "bashgate trust failed: {out:?}");
    }

    /// Runs `bashgate ARGS` in the project directory with this session's
    /// state directory and no inherited configuration.
    pub fn bashgate(&self, args: &[&str]) -> Output {
        let mut c = Command::new(bashgate());
        c.args(args).current_dir(self.proj());
        scrub(&mut c);
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.output().expect("bashgate runs")
    }

    /// `bashgate init claude --dir PROJ`: the settings Claude Code will use.
    /// Returns what it printed.
    pub fn init_claude(&self) -> String {
        let proj = self.proj().display().to_string();
        let out = self.bashgate(&["init", "claude", "--dir", &proj]);
        assert!(
            out.status.success(),
            "bashgate init claude failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The project's `.claude/settings.json`, parsed.
    pub fn settings(&self) -> Value {
        let p = self.proj().join(".claude/settings.json");
        let text = std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
        serde_json::from_str(&text).expect("settings.json is JSON")
    }

    /// Declares the stdio MCP server `wiki` (tool `mcp__wiki__fetch_page`,
    /// attacker-controlled pages) in the project's `.mcp.json`. Its JSON-RPC
    /// traffic is logged to `mcp-wiki.jsonl` in the work directory.
    pub fn mcp_wiki(&self) {
        let server = harness_dir().join("mcp_public_source.py");
        let mcp = json!({"mcpServers": {"wiki": {
            "type": "stdio",
            "command": "python3",
            "args": [server, self.work().join("mcp-wiki.jsonl")],
        }}});
        self.write(".mcp.json", &serde_json::to_string_pretty(&mcp).unwrap());
    }

    /// The model's script: tool calls in order, then a final text.
    /// `files` are served by the model server to GET requests.
    pub fn script(&self, steps: Vec<Value>, files: Value) {
        let s = json!({"steps": steps, "files": files, "final": "Done."});
        self.write_work("model.json", &s.to_string());
    }

    /// Runs the Cop stand-in: it flags commands containing one of `flag`.
    pub fn cop(&self, flag: &[&str]) {
        self.write_work("cop.json", &json!({ "flag_if_contains": flag }).to_string());
    }

    /// Runs Claude Code headless on this session, in a new network namespace.
    pub fn run(&self) -> Run {
        let mut c = Command::new("bash");
        c.arg(harness_dir().join("run-session.sh"))
            .arg(self.work())
            .env("CLAUDE_BIN", claude_bin())
            .env("MODEL_PORT", MODEL_PORT.to_string())
            .env("COP_PORT", COP_PORT.to_string())
            .env("ATTACKER_PORT", ATTACKER_PORT.to_string());
        scrub(&mut c);
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        let out = c.output().expect("bash runs");
        assert!(
            out.status.success(),
            "run-session.sh failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Run {
            dir: self.work().to_path_buf(),
            proj: self.proj(),
            env: self.env.clone(),
            result: read_json(&self.work().join("claude.json")),
            requests: read_jsonl(&self.work().join("model-requests.jsonl")),
            cop_requests: read_jsonl(&self.work().join("cop-requests.jsonl")),
            attacker: read_jsonl(&self.work().join("attacker-connections.jsonl")),
        };
        let rc = std::fs::read_to_string(self.work().join("claude.rc")).unwrap_or_default();
        assert_eq!(
            rc.trim(),
            "0",
            "claude exited with {rc}; stderr:\n{}\nresult:\n{}",
            std::fs::read_to_string(self.work().join("claude.err")).unwrap_or_default(),
            run.result
        );
        run
    }
}

/// Keeps the caller's bashgate configuration, keys and XDG directories out.
fn scrub(c: &mut Command) {
    for k in [
        "BASHGATE_CONFIG",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        COP_KEY_ENV,
    ] {
        c.env_remove(k);
    }
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}):\n{text}", p.display()))
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A tool call the model made and the result Claude Code sent back for it.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub tool: String,
    pub input: Value,
    /// The tool_result's text (its blocks joined).
    pub result: String,
    pub is_error: bool,
}

/// What one Claude Code session did.
pub struct Run {
    pub dir: PathBuf,
    pub proj: PathBuf,
    env: Vec<(String, String)>,
    /// Claude Code's `--output-format json` result.
    pub result: Value,
    /// Every request the fake Anthropic API received, in order.
    pub requests: Vec<Value>,
    /// Every request the Cop stand-in received.
    pub cop_requests: Vec<Value>,
    /// Every connection the reverse-shell listener accepted.
    pub attacker: Vec<Value>,
}

impl Run {
    pub fn session_id(&self) -> &str {
        self.result["session_id"]
            .as_str()
            .expect("the result names its session")
    }

    /// Claude Code's `permission_denials`: the tool calls it refused.
    pub fn denials(&self) -> Vec<Value> {
        self.result["permission_denials"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Messages API requests from Claude Code's main loop (they offer tools).
    pub fn model_requests(&self) -> Vec<&Value> {
        self.requests
            .iter()
            .filter(|r| r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect()
    }

    /// The paths of the GET requests the model server received: what network
    /// commands run by Claude Code fetched from it.
    pub fn fetched(&self) -> Vec<String> {
        self.requests
            .iter()
            .filter(|r| r["method"] == "GET")
            .filter_map(|r| r["path"].as_str().map(str::to_string))
            .collect()
    }

    /// Requests to paths other than the Messages API (curl posting data, say).
    pub fn other_posts(&self) -> Vec<String> {
        self.requests
            .iter()
            .filter(|r| r["method"] == "POST")
            .filter_map(|r| r["path"].as_str())
            .filter(|p| !p.starts_with("/v1/messages"))
            .map(str::to_string)
            .collect()
    }

    /// Every tool call and its tool_result, from the last conversation the
    /// model was sent (which carries the whole session).
    pub fn exchanges(&self) -> Vec<Exchange> {
        let last = self
            .model_requests()
            .last()
            .copied()
            .expect("Claude Code sent the model at least one request");
        let mut calls: Vec<(String, Exchange)> = Vec::new();
        for m in last["body"]["messages"].as_array().into_iter().flatten() {
            for b in m["content"].as_array().into_iter().flatten() {
                match b["type"].as_str() {
                    Some("tool_use") => calls.push((
                        b["id"].as_str().unwrap_or_default().to_string(),
                        Exchange {
                            tool: b["name"].as_str().unwrap_or_default().to_string(),
                            input: b["input"].clone(),
                            result: String::new(),
                            is_error: false,
                        },
                    )),
                    Some("tool_result") => {
                        let id = b["tool_use_id"].as_str().unwrap_or_default();
                        let e = calls
                            .iter_mut()
                            .find(|(i, _)| i == id)
                            .map(|(_, e)| e)
                            .unwrap_or_else(|| panic!("a tool_result for unknown {id}"));
                        e.result = text_of(&b["content"]);
                        e.is_error = b["is_error"].as_bool().unwrap_or(false);
                    }
                    _ => {}
                }
            }
        }
        calls.into_iter().map(|(_, e)| e).collect()
    }

    /// The exchange for the tool call whose input has this `command`.
    pub fn bash_exchange(&self, command: &str) -> Exchange {
        let all = self.exchanges();
        all.iter()
            .find(|e| e.tool == "Bash" && e.input["command"] == command)
            .cloned()
            .unwrap_or_else(|| panic!("no Bash call `{command}` in {all:#?}"))
    }

    /// bashgate's audit records for this session, oldest first.
    pub fn audit(&self) -> Vec<Value> {
        let out = self.bashgate(&[
            "audit",
            "--session",
            self.session_id(),
            "--limit",
            "1000",
            "--json",
        ]);
        let mut v: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("audit --json lines"))
            .collect();
        v.reverse();
        v
    }

    /// The PreToolUse audit record of a Bash command.
    pub fn audited(&self, command: &str) -> Value {
        let all = self.audit();
        all.iter()
            .find(|r| r["event"] == "PreToolUse" && r["command"] == command)
            .cloned()
            .unwrap_or_else(|| panic!("no audit record for `{command}` in {all:#?}"))
    }

    /// `bashgate taint show --json` for this session.
    pub fn taint(&self) -> Value {
        let out = self.bashgate(&["taint", "show", "--session", self.session_id(), "--json"]);
        assert!(
            out.status.success(),
            "taint show: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("taint show --json")
    }

    fn bashgate(&self, args: &[&str]) -> Output {
        let mut c = Command::new(bashgate());
        c.args(args).current_dir(&self.proj);
        scrub(&mut c);
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.output().expect("bashgate runs")
    }

    /// Whether the project holds this file.
    pub fn exists(&self, rel: &str) -> bool {
        self.proj.join(rel).exists()
    }

    /// Claude Code's stderr, for failure messages.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("claude.err")).unwrap_or_default()
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}
