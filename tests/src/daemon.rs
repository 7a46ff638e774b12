//! A harness for the host daemon's end-to-end tests: the real
//! `bashgate serve` on a loopback port or a temporary unix socket, the real
//! admin CLI, and the real `bashgate hook json --remote` as a container
//! would run it (its own state directory and configuration, the token in
//! its environment).

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::gate::Sandbox;
use crate::http::{self, Addr, Reply};

/// Generous bound for waits that only guard against deadlocks.
pub const GUARD: Duration = Duration::from_secs(120);

/// Where the container API listens.
pub enum Listen {
    /// A free loopback port.
    Tcp,
    /// A unix socket in the sandbox (stable across restarts).
    Unix,
}

pub struct Daemon {
    pub sandbox: Sandbox,
    child: Option<(Child, ChildStdout)>,
    listen: String,
    /// The container API as a client names it.
    pub url: String,
    pub admin_socket: PathBuf,
    log: PathBuf,
    /// The container side's configuration file.
    pub container_config: PathBuf,
}

impl Daemon {
    /// Starts a daemon whose configuration holds `config`; the container
    /// side's configuration holds `container_config`.
    pub fn start(config: &str, container_config: &str, listen: Listen) -> Daemon {
        match default_store() {
            Some(url) => Daemon::start_on(&url, config, container_config, listen),
            None => Daemon::start_with(config, container_config, listen),
        }
    }

    /// Starts a daemon whose state is in the PostgreSQL database at `url`
    /// (several daemons started on one url act as one gate).
    pub fn start_on(url: &str, config: &str, container_config: &str, listen: Listen) -> Daemon {
        Daemon::start_with(&with_store(config, url), container_config, listen)
    }

    fn start_with(config: &str, container_config: &str, listen: Listen) -> Daemon {
        let sandbox = Sandbox::with_config(config);
        let dir = sandbox.dir.path().to_path_buf();
        let listen = match listen {
            Listen::Tcp => "127.0.0.1:0".to_string(),
            Listen::Unix => format!("unix:{}", dir.join("ctr").join("bashgate.sock").display()),
        };
        let cc = dir.join("container.toml");
        std::fs::write(&cc, container_config).unwrap();
        let mut d = Daemon {
            admin_socket: dir.join("admin").join("admin.sock"),
            log: dir.join("daemon.log"),
            sandbox,
            child: None,
            listen,
            url: String::new(),
            container_config: cc,
        };
        d.spawn();
        d
    }

    fn spawn(&mut self) {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let mut child = self
            .sandbox
            .command()
            .args(["serve", "--listen", &self.listen, "--admin-socket"])
            .arg(&self.admin_socket)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("bashgate serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let url = line
            .split("container API on ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("the daemon did not start: {line}\n{}", self.log())
            });
        self.url = url.to_string();
        self.child = Some((child, out.into_inner()));
    }

    /// Kills the daemon (SIGKILL: no clean shutdown).
    pub fn kill(&mut self) {
        if let Some((mut c, _)) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills the daemon and starts it again on the same state.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// The daemon's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the daemon's log to contain `needle`. The daemon stores a
    /// row before it logs it, so a reader of the row can be ahead of the log.
    pub fn wait_log(&self, needle: &str) -> bool {
        let start = Instant::now();
        loop {
            if self.log().contains(needle) {
                return true;
            }
            if start.elapsed() >= GUARD {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn container(&self) -> Addr {
        Addr::parse(&self.url)
    }

    /// `GET /v1/session` on the container API with `token`.
    pub fn whoami(&self, token: &str) -> Reply {
        http::json(
            &self.container(),
            "GET",
            "/v1/session",
            Some(token),
            &Value::Null,
        )
        .unwrap()
    }

    pub fn admin_addr(&self) -> Addr {
        Addr::Unix(self.admin_socket.clone())
    }

    /// A raw admin request.
    pub fn admin(&self, method: &str, path: &str, body: &Value) -> Reply {
        http::json(&self.admin_addr(), method, path, None, body).expect("admin socket answers")
    }

    /// `bashgate ARGS` on the host, pointed at the admin socket.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.sandbox
            .command()
            .env("BASHGATE_ADMIN_SOCKET", &self.admin_socket)
            .args(args)
            .output()
            .expect("bashgate runs")
    }

    /// Creates a session with the admin CLI; returns its token.
    pub fn session(&self, name: &str) -> String {
        let out = self.cli(&["session", "create", name, "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["token"].as_str().unwrap().to_string()
    }

    /// Sets a session's taint with the admin CLI.
    pub fn taint(&self, name: &str, corruption: bool, secret: bool) {
        let mut args = vec!["session", "taint", name];
        if corruption {
            args.push("--corruption");
        }
        if secret {
            args.push("--secret");
        }
        let out = self.cli(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stats(&self) -> Value {
        let r = self.admin("GET", "/admin/stats", &Value::Null);
        assert_eq!(r.status, 200, "{r:?}");
        r.body
    }

    /// `bashgate pending --json`.
    pub fn pending(&self) -> Vec<Value> {
        let out = self.cli(&["pending", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["approvals"].as_array().cloned().unwrap_or_default()
    }

    /// Waits (bounded by GUARD) until `n` approvals are pending.
    pub fn wait_pending(&self, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let p = self.pending();
            if p.len() >= n {
                return p;
            }
            assert!(
                start.elapsed() < GUARD,
                "no pending approval appeared\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts `bashgate hook json --remote URL` as a container would.
    pub fn hook_json(&self, token: Option<&str>, request: &Value) -> Hook {
        self.hook_with(&["hook", "json", "--remote", &self.url], token, request)
    }

    /// Starts a hook command (`args`) as a container would.
    pub fn hook_with(&self, args: &[&str], token: Option<&str>, request: &Value) -> Hook {
        self.hook_via(crate::bashgate_bin(), args, token, request)
    }

    /// As [`Daemon::hook_with`], with `program` (`bashgate` or
    /// `bashgate-hook`) given `args`.
    pub fn hook_via(
        &self,
        program: &Path,
        args: &[&str],
        token: Option<&str>,
        request: &Value,
    ) -> Hook {
        let dir = self.sandbox.dir.path();
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env("BASHGATE_STATE_DIR", dir.join("container-state"))
            .env("BASHGATE_CONFIG", &self.container_config)
            // The container's Claude Code runs its commands through
            // bashgate's shell wrapper, as `bashgate init claude` sets it.
            .env("CLAUDE_CODE_SHELL_PREFIX", crate::shell_bin())
            .current_dir(self.sandbox.project())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(t) = token {
            c.env("BASHGATE_TOKEN", t);
        }
        let mut child = c.spawn().expect("the hook starts");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(request.to_string().as_bytes()).unwrap();
        drop(stdin);
        Hook { child }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running hook.
pub struct Hook {
    child: Child,
}

/// A finished hook's answer.
#[derive(Debug)]
pub struct HookAnswer {
    pub status: i32,
    pub json: Value,
    pub stderr: String,
}

impl HookAnswer {
    pub fn decision(&self) -> &str {
        self.json["decision"].as_str().unwrap_or("")
    }

    pub fn reason(&self) -> &str {
        self.json["reason"].as_str().unwrap_or("")
    }
}

impl Hook {
    /// Waits for the answer (bounded by GUARD).
    pub fn finish(mut self) -> HookAnswer {
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            if start.elapsed() > GUARD {
                let _ = self.child.kill();
                panic!("the hook did not answer");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = self.child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        HookAnswer {
            status: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The store this test binary's daemons use: the end-to-end suite compiled
/// a second time as `daemon_e2e_postgres` runs on PostgreSQL (a fresh
/// database for each daemon); every other binary on SQLite.
fn default_store() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_str()?.to_string();
    name.starts_with("daemon_e2e_postgres")
        .then(|| crate::postgres::PgServer::shared().database())
}

/// `config` with `[serve] store = url`.
pub fn with_store(config: &str, url: &str) -> String {
    let line = format!("store = \"{url}\"\n");
    if config.contains("[serve]\n") {
        config.replacen("[serve]\n", &format!("[serve]\n{line}"), 1)
    } else {
        format!("{config}\n[serve]\n{line}")
    }
}

/// A Bash request for `hook json`.
pub fn bash(command: &str) -> Value {
    json!({
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "session_id": "agent-1",
        "cwd": "/work",
    })
}
