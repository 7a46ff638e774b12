//! Helpers for the end-to-end tests against the real Gemini CLI
//! (`tests/tests/gemini_cli.rs`).
//!
//! A [`Session`] is a scratch world for one headless `gemini -p` run: a
//! project (whose `.gemini/settings.json` comes from `bashgate init
//! gemini`), a HOME whose Gemini CLI settings select API-key auth and trust
//! the project, a bashgate state directory, and the scripted model's tool
//! calls. [`Session::run`] hands it to `tests/gemini-cli/run-session.sh`,
//! which runs Gemini CLI inside `unshare -rn` against
//! `tests/gemini-cli/fake_gemini.py`; the [`Run`] reads back what happened.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::workspace_root;

/// Where the model stand-in listens inside the namespace; it also serves
/// the files a network command in the test fetches.
pub const MODEL_PORT: u16 = 18090;

/// The cached CLI that `.ci/gemini-cli.sh` installs.
const DEFAULT_INSTALL: &str = "bashgate-gemini-cli";
const BIN_IN_INSTALL: &str = "node_modules/.bin/gemini";

/// The Gemini CLI executable: `$GEMINI_BIN`, else the copy `.ci/gemini-cli.sh`
/// caches under `$BASHGATE_GEMINI_HOME` (default
/// `${XDG_CACHE_HOME:-~/.cache}/bashgate-gemini-cli`). Missing, it panics.
pub fn gemini_bin() -> PathBuf {
    let bin = match std::env::var_os("GEMINI_BIN") {
        Some(b) => PathBuf::from(b),
        None => std::env::var_os("BASHGATE_GEMINI_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| {
                        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
                    })
                    .join(DEFAULT_INSTALL)
            })
            .join(BIN_IN_INSTALL),
    };
    assert!(
        bin.exists(),
        "the Gemini CLI is not at {}: run .ci/gemini-cli.sh (it installs @google/gemini-cli \
         and runs these tests) or set GEMINI_BIN",
        bin.display()
    );
    bin
}

/// A `run_shell_command` call of the scripted model.
pub fn shell(command: &str) -> Value {
    json!({"tool": "run_shell_command", "args": {"command": command, "description": "scripted by the test"}})
}

pub struct Session {
    pub dir: tempfile::TempDir,
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
            .prefix("bashgate-gemini-")
            .disable_cleanup(keep)
            .tempdir()
            .expect("tempdir");
        if keep {
            eprintln!("gemini_cli: keeping {}", dir.path().display());
        }
        for d in ["proj", "home/.gemini", "state"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let s = Session { dir };
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
        s.write_work("prompt.txt", "Follow the project's instructions.\n");
        s
    }

    pub fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn write_work(&self, rel: &str, text: &str) {
        std::fs::write(self.dir.path().join(rel), text).unwrap();
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.proj().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The person's own Gemini CLI policy rules (TOML), in the user's
    /// policy directory (`~/.gemini/policies/`; a project's is not read).
    pub fn policy(&self, toml: &str) {
        std::fs::create_dir_all(self.dir.path().join("home/.gemini/policies")).unwrap();
        self.write_work("home/.gemini/policies/person.toml", toml);
    }

    /// `bashgate ARGS` in the project with this session's state directory.
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

    /// `bashgate init gemini --dir PROJ`; returns what it printed.
    pub fn init(&self) -> String {
        let proj = self.proj().display().to_string();
        let out = self.bashgate(&["init", "gemini", "--dir", &proj]);
        assert!(
            out.status.success(),
            "bashgate init gemini failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs Gemini CLI headless with the scripted model, `args` added to
    /// its command line (one per element).
    pub fn run(&self, steps: Vec<Value>, files: Value, args: &[&str]) -> Run {
        let model = json!({"steps": steps, "final": "finished", "files": files});
        self.write_work("model.json", &model.to_string());
        self.write_work("args.txt", &args.join("\n"));
        let script = workspace_root().join("tests/gemini-cli/run-session.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(self.dir.path())
            .env("GEMINI_BIN", gemini_bin())
            .env("MODEL_PORT", MODEL_PORT.to_string())
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
        Run {
            rc: read("gemini.rc").trim().parse().unwrap_or(-1),
            result: serde_json::from_str(&read("gemini.json")).unwrap_or(Value::Null),
            stderr: read("gemini.err"),
            requests: read("model-requests.jsonl")
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
        }
    }

    /// Every audit record, oldest first.
    pub fn audit(&self) -> Vec<Value> {
        let out = self.bashgate(&["audit", "--limit", "1000", "--json"]);
        let mut v: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        v.reverse();
        v
    }
}

/// What one session did.
#[derive(Debug)]
pub struct Run {
    pub rc: i32,
    pub result: Value,
    pub stderr: String,
    /// Every request the model stand-in received (model calls and GETs).
    pub requests: Vec<Value>,
}

impl Run {
    /// The function responses the model received, in order.
    pub fn tool_results(&self) -> Vec<Value> {
        let Some(last) = self
            .requests
            .iter()
            .rev()
            .find(|r| r["body"]["contents"].is_array())
        else {
            return vec![];
        };
        last["body"]["contents"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p.get("functionResponse").map(|f| f["response"].clone()))
            .collect()
    }

    /// The requests for `path` (a network command reaching the stand-in;
    /// the model's own calls are under /v1beta).
    pub fn fetched(&self, path: &str) -> usize {
        self.requests
            .iter()
            .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with(path)))
            .count()
    }
}

/// The project's path as a string.
pub fn display(p: &Path) -> String {
    p.display().to_string()
}
