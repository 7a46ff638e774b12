//! One harness for the end-to-end tests against real agent clients run
//! headless (`tests/tests/agent_clients.rs`), parameterised by [`Client`]:
//! what differs from one client to the next is data and four functions
//! there; the scratch world, the run and the reading back are written once.
//!
//! A [`Session`] is a scratch world for one headless run: a project whose
//! hook settings come from `bashgate init CLIENT`, a HOME whose client
//! settings point the client at a scripted stand-in for its model API,
//! allow every command and trust the project, a bashgate state directory,
//! and the scripted model's tool calls. [`Session::run`] hands it to the
//! client's `run-session.sh`, which runs the client inside `unshare -rn`
//! against the stand-in; the [`Run`] reads back what happened.
//!
//! Claude Code's own scenarios (the reviewer, tool servers, the shell
//! wrapper, its permission modes) use the fuller `claude_code.rs`, on the
//! same runner.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::workspace_root;

/// What the harness needs to know of one client.
pub struct Client {
    /// Its key in the client table, as in `bashgate init KEY`.
    pub key: &'static str,
    /// Its name in messages.
    pub name: &'static str,
    /// The npm package its `.ci` script installs.
    package: &'static str,
    /// The variable that names its executable to the runner (and, set,
    /// instead of the cached copy).
    bin_env: &'static str,
    /// The variable that names the cache the copy is installed in.
    home_env: &'static str,
    /// Its executable (see [`Client::bin`]).
    bin: fn() -> PathBuf,
    /// Its session runner, relative to the workspace.
    runner: &'static str,
    /// Where the stand-in listens inside the namespace; it also serves the
    /// files a network command in the test fetches.
    pub model_port: u16,
    /// The audit's names for its before-tool and after-tool events.
    pub pre_event: &'static str,
    pub post_event: &'static str,
    /// What every session adds to the client's command line: the person
    /// has allowed every command, so bashgate is all that stands in the
    /// way.
    pub args: &'static [&'static str],
    /// Writes its settings in the session's HOME: the stand-in as its
    /// model, the project trusted.
    setup_home: fn(&Session),
    /// One scripted shell command, as the stand-in takes it.
    step: fn(&str) -> Value,
    /// What the model read back from each tool call, in order, from the
    /// stand-in's last model request.
    results: fn(&Value) -> Vec<String>,
}

/// Claude Code (`claude -p`) against a Messages API stand-in.
pub static CLAUDE: Client = Client {
    key: "claude",
    name: "Claude Code CLI",
    package: "@anthropic-ai/claude-code",
    bin_env: "CLAUDE_BIN",
    home_env: "BASHGATE_CLAUDE_HOME",
    bin: crate::claude_code::claude_bin,
    runner: "tests/claude-code/run-session.sh",
    model_port: crate::claude_code::MODEL_PORT,
    pre_event: "PreToolUse",
    post_event: "PostToolUse",
    // The runner gives its own flags (`--permission-mode default`).
    args: &[],
    setup_home: |s| {
        // The person allows every shell command: bashgate is all that
        // stands in the way.
        s.write_work(
            "home/.claude/settings.json",
            r#"{"permissions": {"allow": ["Bash"]}}"#,
        );
    },
    step: crate::claude_code::bash,
    results: |last| {
        last["body"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    },
};

/// Codex CLI (`codex exec`) against a Responses API stand-in.
pub static CODEX: Client = Client {
    key: "codex",
    name: "Codex CLI",
    package: "@openai/codex",
    bin_env: "CODEX_BIN",
    home_env: "BASHGATE_CODEX_HOME",
    bin: || CODEX.cached(),
    runner: "tests/codex-cli/run-session.sh",
    model_port: 18095,
    pre_event: "codex:PreToolUse",
    post_event: "codex:PostToolUse",
    // Codex's automation switches: no approvals or sandbox of its own, and
    // the hooks trusted as a person would trust them interactively.
    args: &[
        "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust",
    ],
    setup_home: |s| {
        let proj = s.proj().canonicalize().unwrap();
        // The model provider is the stand-in; the project is trusted (Codex
        // loads an untrusted project's .codex/ disabled).
        s.write_work(
            "home/.codex/config.toml",
            &format!(
                "model = \"gpt-5.1-codex\"\nmodel_provider = \"loopback\"\n\n\
                 [model_providers.loopback]\nname = \"loopback\"\n\
                 base_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\n\
                 env_key = \"LOOPBACK_API_KEY\"\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                CODEX.model_port,
                proj.display()
            ),
        );
    },
    step: |command| json!({ "command": command }),
    results: |last| {
        last["body"]["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
            .map(|i| match &i["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    },
};

/// Gemini CLI (`gemini -p`) against a Gemini API stand-in.
pub static GEMINI: Client = Client {
    key: "gemini",
    name: "Gemini CLI",
    package: "@google/gemini-cli",
    bin_env: "GEMINI_BIN",
    home_env: "BASHGATE_GEMINI_HOME",
    bin: || GEMINI.cached(),
    runner: "tests/gemini-cli/run-session.sh",
    model_port: 18090,
    pre_event: "gemini:BeforeTool",
    post_event: "gemini:AfterTool",
    // Headless Gemini CLI runs no shell command without yolo mode ("requires
    // user confirmation, which is not supported in non-interactive mode").
    args: &["--approval-mode", "yolo"],
    setup_home: |s| {
        // API-key auth (the base URL points at the stand-in), and the
        // project trusted: Gemini CLI refuses to run headless elsewhere.
        s.write_work(
            "home/.gemini/settings.json",
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
        );
        let proj = s.proj().canonicalize().unwrap();
        s.write_work(
            "home/.gemini/trustedFolders.json",
            &json!({ proj.display().to_string(): "TRUST_FOLDER" }).to_string(),
        );
    },
    step: |command| json!({"tool": "run_shell_command", "args": {"command": command, "description": "scripted by the test"}}),
    results: |last| {
        last["body"]["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p.get("functionResponse").map(|f| f["response"].to_string()))
            .collect()
    },
};

impl Client {
    /// The client's executable. Missing, it panics: these tests never
    /// skip.
    pub fn bin(&self) -> PathBuf {
        (self.bin)()
    }

    /// `$BIN_ENV`, else the copy `.ci/CLIENT-cli.sh` caches under
    /// `$HOME_ENV` (default `${XDG_CACHE_HOME:-~/.cache}/bashgate-CLIENT-cli`).
    fn cached(&self) -> PathBuf {
        let bin = crate::claude_code::cached_install(
            self.bin_env,
            self.home_env,
            &format!("bashgate-{}-cli", self.key),
            &format!("node_modules/.bin/{}", self.key),
        );
        assert!(
            bin.exists(),
            "the {} is not at {}: run .ci/{}-cli.sh (it installs {} and runs these tests) or set {}",
            self.name,
            bin.display(),
            self.key,
            self.package,
            self.bin_env
        );
        bin
    }
}

pub struct Session {
    pub client: &'static Client,
    pub dir: tempfile::TempDir,
}

impl Session {
    pub fn new(client: &'static Client) -> Session {
        let keep = std::env::var_os("BASHGATE_E2E_KEEP").is_some();
        let dir = tempfile::Builder::new()
            .prefix(&format!("bashgate-{}-", client.key))
            .disable_cleanup(keep)
            .tempdir()
            .expect("tempdir");
        if keep {
            eprintln!("{}: keeping {}", client.key, dir.path().display());
        }
        for d in [
            "proj".to_string(),
            format!("home/.{}", client.key),
            "state".into(),
        ] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let s = Session { client, dir };
        (client.setup_home)(&s);
        s.write_work("prompt.txt", "Follow the project's instructions.\n");
        s
    }

    pub fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// Writes `text` at `rel` in the session's world (beside the project:
    /// `home/...` is its HOME).
    pub fn write_work(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Writes `text` at `rel` in the project.
    pub fn write(&self, rel: &str, text: &str) {
        self.write_work(&format!("proj/{rel}"), text);
    }

    /// `bashgate ARGS` in the project with this session's state directory
    /// and HOME.
    pub fn bashgate(&self, args: &[&str]) -> Output {
        let mut c = Command::new(crate::claude_code::bashgate());
        c.args(args).current_dir(self.proj());
        for k in ["BASHGATE_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME"] {
            c.env_remove(k);
        }
        c.env("BASHGATE_STATE_DIR", self.dir.path().join("state"));
        c.env("HOME", self.dir.path().join("home"));
        c.output().expect("bashgate runs")
    }

    /// `bashgate init CLIENT --dir PROJ`; returns what it printed.
    pub fn init(&self) -> String {
        let proj = self.proj().display().to_string();
        let out = self.bashgate(&["init", self.client.key, "--dir", &proj]);
        assert!(
            out.status.success(),
            "bashgate init {} failed: {}",
            self.client.key,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the client headless with the model scripted to run
    /// `commands` one after another, the stand-in serving `files`.
    pub fn run(&self, commands: &[&str], files: Value) -> Run {
        let steps: Vec<Value> = commands.iter().map(|c| (self.client.step)(c)).collect();
        let model = json!({"steps": steps, "final": "finished", "files": files});
        self.write_work("model.json", &model.to_string());
        self.write_work("args.txt", &self.client.args.join("\n"));
        let out = Command::new("bash")
            .arg(workspace_root().join(self.client.runner))
            .arg(self.dir.path())
            .env(self.client.bin_env, self.client.bin())
            .env("MODEL_PORT", self.client.model_port.to_string())
            .env("BASHGATE_STATE_DIR", self.dir.path().join("state"))
            .env_remove("BASHGATE_CONFIG")
            .env_remove("XDG_STATE_HOME")
            .output()
            .expect("run-session.sh runs");
        assert!(
            out.status.success(),
            "run-session.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let w = self.dir.path();
        let read = |f: &str| std::fs::read_to_string(w.join(f)).unwrap_or_default();
        let key = self.client.key;
        let stdout = [format!("{key}.out"), format!("{key}.json")]
            .iter()
            .map(|f| read(f))
            .find(|t| !t.is_empty())
            .unwrap_or_default();
        Run {
            client: self.client,
            rc: read(&format!("{key}.rc")).trim().parse().unwrap_or(-1),
            stdout,
            stderr: read(&format!("{key}.err")),
            requests: read("model-requests.jsonl")
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
        }
    }

    /// Every audit record of this session's state directory, oldest first.
    pub fn audit(&self) -> Vec<Value> {
        let out = self.bashgate(&["audit", "--limit", "1000", "--json"]);
        let mut v: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        v.reverse();
        v
    }

    /// The before-tool record of the command holding `needle`.
    pub fn audited(&self, audit: &[Value], needle: &str) -> Value {
        audit
            .iter()
            .find(|r| {
                r["event"] == self.client.pre_event
                    && r["command"].as_str().is_some_and(|c| c.contains(needle))
            })
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "no {} record for {needle}: {audit:#?}",
                    self.client.pre_event
                )
            })
    }
}

/// What one session did.
pub struct Run {
    client: &'static Client,
    pub rc: i32,
    /// What the client printed (its answer, as text or JSON).
    pub stdout: String,
    pub stderr: String,
    /// Every request the stand-in received (model calls and GETs).
    pub requests: Vec<Value>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("client", &self.client.key)
            .field("rc", &self.rc)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .field("requests", &self.requests)
            .finish()
    }
}

impl Run {
    /// What the model read back from each tool call, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.requests
            .iter()
            .rev()
            .find(|r| r["body"].is_object() && !(self.client.results)(r).is_empty())
            .map(|last| (self.client.results)(last))
            .unwrap_or_default()
    }

    /// Requests for `path` (a network command reaching the stand-in).
    pub fn fetched(&self, path: &str) -> usize {
        self.requests
            .iter()
            .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with(path)))
            .count()
    }
}
