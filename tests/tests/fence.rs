//! `bashgate run` beyond tests/tests/confine.rs (which attacks the fence
//! with real sockets and files): the quarantine of protected paths created
//! during a run, including by a process the command left behind, and a
//! profile that does not exist.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use bashgate_tests::bashgate_bin;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        for d in ["proj", "home/.ssh", "xdg", "state", "bin", "proj/.claude"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let w = World { dir };
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(w.proj())
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::write(w.home().join(".bashrc"), "# rc\n").unwrap();
        std::fs::write(w.home().join(".ssh/authorized_keys"), "").unwrap();
        std::fs::write(w.proj().join(".claude/settings.json"), "{}\n").unwrap();
        w
    }

    fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    fn env(&self, c: &mut Command) {
        let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let path = format!(
            "{}:{}",
            self.bin().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.current_dir(self.proj())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env("BASHGATE_STATE_DIR", self.dir.path().join("state"))
            .env_remove("BASHGATE_CONFIG")
            .env("PATH", path)
            // The toolchain stays where it is installed.
            .env(
                "RUSTUP_HOME",
                std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup")),
            )
            .env(
                "CARGO_HOME",
                std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo")),
            );
    }

    /// `bashgate run -- script`.
    fn fenced(&self, script: &str) -> Output {
        let mut c = Command::new(bashgate_bin());
        c.args(["run", "-c", script]);
        self.env(&mut c);
        c.stdin(Stdio::null()).output().unwrap()
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether this machine can confine; tests that need it say so and stop
/// where it cannot (on this project's CI machines it can).
fn can_confine() -> bool {
    bashgate_tests::gate::fence_here()
}

/// A protected path that did not exist cannot be mounted over: if the
/// command creates it, it is moved aside when the command ends.
#[test]
fn protected_paths_created_during_the_run_are_quarantined() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let out = w.fenced("echo 'profile = \"minimal\"' > .bashgate.toml; echo '{}' > .mcp.json; (sleep 0.2; echo late > .bashgate.local.toml) & disown; true");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".bashgate.toml"), "{}", text(&out));
    assert!(!w.proj().join(".bashgate.toml").exists());
    assert!(!w.proj().join(".mcp.json").exists());
    let aside: Vec<String> = std::fs::read_dir(w.proj())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("bashgate-quarantine"))
        .collect();
    assert_eq!(aside.len(), 2, "{aside:?}");
    // The background writer died with the command: nothing appears later.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!w.proj().join(".bashgate.local.toml").exists());
}

#[test]
fn an_unknown_profile_runs_nothing() {
    let w = World::new();
    let mut c = Command::new(bashgate_bin());
    c.args(["run", "--profile", "lax", "-c", "touch ran"]);
    w.env(&mut c);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(126), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot confine"));
    assert!(!w.proj().join("ran").exists());
}
