//! Helpers for the end-to-end tests against the real Codex CLI
//! (`tests/tests/codex_cli.rs`), as `gemini_cli.rs` is for Gemini CLI: a
//! [`Session`] (project with `.codex/hooks.json` from `bashgate init codex`,
//! a CODEX_HOME whose config points at the stand-in and trusts the
//! project), run by `tests/codex-cli/run-session.sh` inside `unshare -rn`
//! against `tests/codex-cli/fake_openai.py`.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::workspace_root;

/// Where the Responses API stand-in listens; it also serves the files a
/// network command in the test fetches.
pub const MODEL_PORT: u16 = 18095;

const DEFAULT_INSTALL: &str = "bashgate-codex-cli";
const BIN_IN_INSTALL: &str = "node_modules/.bin/codex";

/// `$CODEX_BIN`, else the copy `.ci/codex-cli.sh` caches under
/// `$BASHGATE_CODEX_HOME` (default `${XDG_CACHE_HOME:-~/.cache}/bashgate-codex-cli`).
pub fn codex_bin() -> PathBuf {
    let bin = match std::env::var_os("CODEX_BIN") {
        Some(b) => PathBuf::from(b),
        None => std::env::var_os("BASHGATE_CODEX_HOME")
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
        "the Codex CLI is not at {}: run .ci/codex-cli.sh (it installs @openai/codex \
         and runs these tests) or set CODEX_BIN",
        bin.display()
    );
    bin
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
            .prefix("bashgate-codex-")
            .disable_cleanup(keep)
            .tempdir()
            .expect("tempdir");
        if keep {
            eprintln!("codex_cli: keeping {}", dir.path().display());
        }
        for d in ["proj", "home/.codex", "state"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let s = Session { dir };
        let proj = s.proj().canonicalize().unwrap();
        // The model provider is the stand-in; the project is trusted (Codex
        // loads an untrusted project's .codex/ disabled).
        s.write_work(
            "home/.codex/config.toml",
            &format!(
                "model = \"gpt-5.1-codex\"\nmodel_provider = \"loopback\"\n\n\
                 [model_providers.loopback]\nname = \"loopback\"\n\
                 base_url = \"http://127.0.0.1:{MODEL_PORT}/v1\"\nwire_api = \"responses\"\n\
                 env_key = \"LOOPBACK_API_KEY\"\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                proj.display()
            ),
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

    /// `bashgate init codex --dir PROJ`; returns what it printed.
    pub fn init(&self) -> String {
        let proj = self.proj().display().to_string();
        let out = self.bashgate(&["init", "codex", "--dir", &proj]);
        assert!(
            out.status.success(),
            "bashgate init codex failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `codex exec` with the scripted shell commands.
    pub fn run(&self, commands: &[&str], files: Value, args: &[&str]) -> Run {
        let steps: Vec<Value> = commands.iter().map(|c| json!({"command": c})).collect();
        let model = json!({"steps": steps, "final": "finished", "files": files});
        self.write_work("model.json", &model.to_string());
        self.write_work("args.txt", &args.join("\n"));
        let out = Command::new("bash")
            .arg(workspace_root().join("tests/codex-cli/run-session.sh"))
            .arg(self.dir.path())
            .env("CODEX_BIN", codex_bin())
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
            rc: read("codex.rc").trim().parse().unwrap_or(-1),
            stdout: read("codex.out"),
            stderr: read("codex.err"),
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

#[derive(Debug)]
pub struct Run {
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
    pub requests: Vec<Value>,
}

impl Run {
    /// The tool outputs the model received, in order.
    pub fn tool_outputs(&self) -> Vec<String> {
        let Some(last) = self
            .requests
            .iter()
            .rev()
            .find(|r| r["body"]["input"].is_array())
        else {
            return vec![];
        };
        last["body"]["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
            .map(|i| match &i["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    }

    /// Requests for `path` (a network command reaching the stand-in).
    pub fn fetched(&self, path: &str) -> usize {
        self.requests
            .iter()
            .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with(path)))
            .count()
    }
}
