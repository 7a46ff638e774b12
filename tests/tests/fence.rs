//! `bashgate run`'s fence with real processes and real sockets (issue 13):
//! every attempt is first made without the fence (it must work, or the test
//! proves nothing), then under `bashgate run`, where it must fail.
//!
//! Sockets are on loopback only; the DNS case runs inside its own network
//! namespace with its own resolver on 127.0.0.1. HOME, the config and the
//! state directory point into a scratch directory.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
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

    /// `bash -c script`, unfenced: the control.
    fn plain(&self, script: &str) -> Output {
        let mut c = Command::new("bash");
        c.args(["-c", script]);
        self.env(&mut c);
        c.stdin(Stdio::null()).output().unwrap()
    }

    /// `bashgate run -- script`.
    fn fenced(&self, script: &str) -> Output {
        let mut c = Command::new(bashgate_bin());
        c.args(["run", "--", script]);
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
    let out = Command::new(bashgate_bin()).arg("doctor").output().unwrap();
    if !out.status.success() {
        println!(
            "skipped: `bashgate doctor` says this machine cannot confine:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    out.status.success()
}

/// Connections a listener accepted within a short wait.
fn accepted(l: &TcpListener) -> usize {
    l.set_nonblocking(true).unwrap();
    let mut n = 0;
    for _ in 0..20 {
        if l.accept().is_ok() {
            n += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    n
}

#[test]
fn doctor_names_each_layer() {
    let out = Command::new(bashgate_bin()).arg("doctor").output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    for layer in [
        "namespaces",
        "seccomp",
        "Landlock",
        "bashgate run --profile default",
    ] {
        assert!(s.contains(layer), "{s}");
    }
}

#[test]
fn no_tcp_and_no_dev_tcp() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let dev_tcp = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let py = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3); print(\"connected\")'"
    );
    for attempt in [&dev_tcp, &py] {
        let control = w.plain(attempt);
        assert!(text(&control).contains("connected"), "{}", text(&control));
        assert_eq!(accepted(&l), 1);
        let out = w.fenced(attempt);
        assert!(!out.status.success(), "{}", text(&out));
        assert!(!String::from_utf8_lossy(&out.stdout).contains("connected"));
        assert_eq!(accepted(&l), 0, "the fence let a connection through");
    }
}

#[test]
fn no_udp() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = u.local_addr().unwrap().port();
    let send = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"leak\", (\"127.0.0.1\", {port}))'"
    );
    let mut buf = [0u8; 16];
    assert!(w.plain(&send).status.success());
    assert_eq!(u.recv(&mut buf).unwrap(), 4);
    let out = w.fenced(&send);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(u.recv(&mut buf).is_err(), "a datagram left the fence");
}

#[test]
fn no_unix_socket_daemons() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let path = w.dir.path().join("docker.sock");
    let l = UnixListener::bind(&path).unwrap();
    let connect = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"connected\")'",
        path.display()
    );
    assert!(text(&w.plain(&connect)).contains("connected"));
    l.set_nonblocking(true).unwrap();
    assert!(l.accept().is_ok());
    let out = w.fenced(&connect);
    assert!(!out.status.success(), "{}", text(&out));
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        l.accept().is_err(),
        "the fence let a unix connection through"
    );
    // Pipes and socketpairs work as usual.
    let local = "python3 -c 'import socket; a,b=socket.socketpair(); a.send(b\"ok\"); print(b.recv(2).decode())' | cat";
    let out = w.fenced(local);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok",
        "{}",
        text(&out)
    );
}

/// A resolver of our own on 127.0.0.1:53 in a namespace of its own: the
/// lookup reaches it unfenced, and not fenced.
#[test]
fn no_dns() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let seen = w.dir.path().join("dns-queries");
    let conf = w.dir.path().join("resolv.conf");
    std::fs::write(
        &conf,
        "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
    )
    .unwrap();
    let script = format!(
        r#"set -u
ip link set lo up
mount --bind {conf} /etc/resolv.conf
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
while True:
    data, _ = s.recvfrom(512)
    open(sys.argv[1], "a").write("query\n")
' {seen} &
sleep 0.3
getent hosts example.test; echo "control done"
cp {seen} {seen}.control 2>/dev/null || true
rm -f {seen}
{bin} run -- 'getent hosts example.test; echo fenced done'
echo "fenced status $?"
sleep 0.3
kill %1
"#,
        conf = conf.display(),
        seen = seen.display(),
        bin = bashgate_bin().display(),
    );
    let mut c = Command::new("unshare");
    c.args(["-rnm", "bash", "-c", &script]);
    w.env(&mut c);
    let out = match c.output() {
        Ok(o) => o,
        Err(e) => {
            println!("skipped: unshare -rnm cannot run here ({e})");
            return;
        }
    };
    let t = text(&out);
    assert!(t.contains("fenced done"), "{t}");
    let control =
        std::fs::read_to_string(format!("{}.control", seen.display())).unwrap_or_default();
    assert!(
        control.contains("query"),
        "the control lookup never reached the resolver: {t}"
    );
    assert!(!seen.exists(), "a DNS query left the fence: {t}");
}

#[test]
fn the_fence_cannot_be_undone_from_inside() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let attempts = format!(
        r#"
unshare -rn true && echo "escaped: unshare"
umount .git/hooks && echo "escaped: umount"
mount -o remount,rw,bind .git/hooks && echo "escaped: remount"
nsenter -t 1 -n true && echo "escaped: nsenter"
python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x40000000 | 0x10000000) == 0: print("escaped: unshare(2)")
fd = os.open("/proc/1/ns/net", os.O_RDONLY)
if libc.setns(fd, 0) == 0: print("escaped: setns(2)")
'
echo x > .git/hooks/pre-commit && echo "escaped: write"
exec 3<>/dev/tcp/127.0.0.1/{port} && echo "escaped: connect"
echo attempts done
"#
    );
    let out = w.fenced(&attempts);
    let t = text(&out);
    assert!(t.contains("attempts done"), "{t}");
    assert!(!t.contains("escaped"), "{t}");
    assert_eq!(accepted(&l), 0);
    assert!(!w.proj().join(".git/hooks/pre-commit").exists());
}

#[test]
fn protected_paths_stay_as_they_were() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let writes = [
        "echo x > .git/hooks/pre-commit".to_string(),
        "echo '[core]' >> .git/config".to_string(),
        "echo '{\"hooks\":{}}' > .claude/settings.json".to_string(),
        "echo 'curl x | sh' >> ~/.bashrc".to_string(),
        "echo key >> ~/.ssh/authorized_keys".to_string(),
        // Each world's own (the control runs in a world of its own).
        "echo x > \"$BASHGATE_STATE_DIR/taint.json\"".to_string(),
        "printf '#!/bin/sh\\n' > \"${PATH%%:*}/ls\"".to_string(),
        "rm -rf .git/hooks".to_string(),
        "mv .git .git-old".to_string(),
        "mv .git/config .git/config.old".to_string(),
    ];
    let before = snapshot(&w);
    for script in &writes {
        // The control writes into a copy of the world.
        let control = World::new();
        assert!(
            control.plain(script).status.success(),
            "the control failed, so this proves nothing: {script}"
        );
        let out = w.fenced(script);
        assert!(!out.status.success(), "{script}: {}", text(&out));
        assert_eq!(snapshot(&w), before, "{script} changed a protected path");
    }
    // Through a symlink made before the run, and a backup suffix.
    std::os::unix::fs::symlink(w.proj().join(".git/config"), w.proj().join("innocent")).unwrap();
    std::fs::write(w.proj().join("new-config"), "[core]\n").unwrap();
    for script in [
        "echo '[alias] x = !sh' >> innocent",
        "cp --backup=numbered new-config .git/config",
        "cp --backup=numbered new-config .git/hooks/pre-commit",
    ] {
        let out = w.fenced(script);
        assert!(!out.status.success(), "{script}: {}", text(&out));
        assert_eq!(snapshot(&w), before, "{script} changed a protected path");
    }
    let out = w.fenced("echo x >> innocent");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    // Ordinary files beside them are written as usual.
    let out = w.fenced("echo built > out.txt && mkdir -p target && touch target/x");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(w.proj().join("out.txt")).unwrap(),
        "built\n"
    );
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

fn snapshot(w: &World) -> Vec<(String, Option<Vec<u8>>)> {
    let files = [
        w.proj().join(".git/config"),
        w.proj().join(".git/hooks/pre-commit"),
        w.proj().join(".claude/settings.json"),
        w.home().join(".bashrc"),
        w.home().join(".ssh/authorized_keys"),
        w.dir.path().join("state/taint.json"),
        w.bin().join("ls"),
    ];
    let mut out: Vec<_> = files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).ok()))
        .collect();
    let hooks: Vec<String> = std::fs::read_dir(w.proj().join(".git/hooks"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    out.push(("hooks".into(), Some(hooks.join(",").into_bytes())));
    out.push((
        "git dir".into(),
        w.proj().join(".git").is_dir().then(Vec::new),
    ));
    out
}

#[test]
fn what_the_client_sees_passes_through() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let out = w.fenced("echo out; echo err >&2; exit 7");
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("err\n"));
    // A failing command gets one line saying it ran fenced.
    assert!(String::from_utf8_lossy(&out.stderr).contains("ran confined"));
    let ok = w.fenced("echo fine");
    assert!(ok.stderr.is_empty(), "{}", text(&ok));
    // stdin, and the environment.
    let mut c = Command::new(bashgate_bin());
    c.args(["run", "--", "cat; echo \"$MARK\""]);
    w.env(&mut c);
    c.env("MARK", "kept")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"from stdin\n")
            .unwrap();
    }
    let mut s = String::new();
    child.stdout.take().unwrap().read_to_string(&mut s).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(s, "from stdin\nkept\n");
    // The final working directory, for the caller's shell.
    std::fs::create_dir_all(w.proj().join("sub")).unwrap();
    let cwd_file = w.dir.path().join("cwd");
    let mut c = Command::new(bashgate_bin());
    c.args(["run", "--cwd-file"])
        .arg(&cwd_file)
        .args(["--", "cd sub && pwd"]);
    w.env(&mut c);
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let want = std::fs::canonicalize(w.proj().join("sub")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&cwd_file).unwrap().trim(),
        want.to_str().unwrap()
    );
    // A signal death is 128 + the signal.
    assert_eq!(w.fenced("kill -TERM $$").status.code(), Some(128 + 15));
}

#[test]
fn ordinary_builds_and_tests_pass_offline() {
    if !can_confine() {
        return;
    }
    let w = World::new();
    let p = w.proj();
    // A Makefile.
    std::fs::write(p.join("Makefile"), "test:\n\t@echo make-tests-pass\n").unwrap();
    let out = w.fenced("make test");
    assert!(text(&out).contains("make-tests-pass"), "{}", text(&out));
    // A Python unittest suite (pytest when it is installed).
    std::fs::create_dir_all(p.join("pytests")).unwrap();
    std::fs::write(
        p.join("pytests/test_math.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n",
    )
    .unwrap();
    let runner = if w.plain("python3 -c 'import pytest'").status.success() {
        "python3 -m pytest -q pytests"
    } else {
        "python3 -m unittest discover -s pytests -v"
    };
    let out = w.fenced(runner);
    assert!(out.status.success(), "{runner}: {}", text(&out));
    // A small cargo project, offline.
    std::fs::create_dir_all(p.join("crate/src")).unwrap();
    std::fs::write(
        p.join("crate/Cargo.toml"),
        "[package]\nname = \"fenced\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        p.join("crate/src/lib.rs"),
        "pub fn two() -> u32 { 2 }\n#[cfg(test)]\nmod t { #[test] fn two() { assert_eq!(super::two(), 2); } }\n",
    )
    .unwrap();
    let target = w.dir.path().join("cargo-target");
    let out = w.fenced(&format!(
        "cd crate && CARGO_TARGET_DIR={} cargo test --offline -q",
        target.display()
    ));
    assert!(out.status.success(), "cargo test: {}", text(&out));
}

#[test]
fn an_unknown_profile_runs_nothing() {
    let w = World::new();
    let mut c = Command::new(bashgate_bin());
    c.args(["run", "--profile", "lax", "--", "touch ran"]);
    w.env(&mut c);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(126), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot confine"));
    assert!(!w.proj().join("ran").exists());
}
