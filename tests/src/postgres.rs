//! A throwaway PostgreSQL server for the tests: a new cluster in a
//! temporary directory, listening on a free loopback port and a socket in
//! that directory, run as `nobody` when the tests run as root (the server
//! refuses root). It dies with the test process (the parent-death signal),
//! and nothing here skips: a machine without PostgreSQL fails the test
//! that asks for one, saying how to install it.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The user the server runs as when the tests run as root.
const NOBODY: u32 = 65534;

/// The role every database is owned by (trust authentication: loopback
/// and a private socket only).
pub const USER: &str = "bashgate";

/// Where the server's programs are: `BASHGATE_PG_BIN`, the directory of
/// `initdb` on PATH, or the newest `/usr/lib/postgresql/N/bin`.
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BASHGATE_PG_BIN") {
        return PathBuf::from(d);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            if let Ok(real) = d.join("initdb").canonicalize() {
                return real.parent().unwrap().to_path_buf();
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, b)| b.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!(
            "PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql); \
             install it (Debian: apt-get install postgresql) or set BASHGATE_PG_BIN"
        )
    })
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Programs are started by one thread that lives as long as the process,
/// so a parent-death signal fires when the process ends, not when the
/// test thread that asked for the server does.
type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::spawn(move || {
            for (mut cmd, back) in rx {
                let _ = back.send(cmd.spawn());
            }
            // Keep the thread (the parent of every server) alive.
            loop {
                std::thread::park();
            }
        });
        Mutex::new(tx)
    })
}

/// `cmd` as the server's user, dying (SIGQUIT: immediate shutdown) with
/// this process.
fn as_server_user(cmd: &mut Command) {
    let root = is_root();
    unsafe {
        cmd.pre_exec(move || {
            if root
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(NOBODY) != 0
                    || libc::setuid(NOBODY) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            // After the uid change, which clears it.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT, 0, 0, 0);
            Ok(())
        });
    }
}

fn run_as_server_user(mut cmd: Command, what: &str) {
    as_server_user(&mut cmd);
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    child: Mutex<Option<Child>>,
    /// The authority that signed the server's certificate, when it
    /// serves TLS.
    pub ca: Option<PathBuf>,
    /// Commits synced to disk, as a production server's are.
    durable: bool,
}

impl PgServer {
    /// A new cluster, started.
    pub fn start() -> PgServer {
        PgServer::start_with(false, false)
    }

    /// A new cluster, started, that syncs each commit to disk (fsync on,
    /// the server's default): what a measurement compares with the SQLite
    /// store, which syncs each commit too.
    pub fn start_durable() -> PgServer {
        PgServer::start_with(false, true)
    }

    /// A new cluster serving TLS with a certificate for 127.0.0.1 and
    /// localhost, signed by a throwaway authority (`ca`).
    pub fn start_tls() -> PgServer {
        PgServer::start_with(true, false)
    }

    fn start_with(tls: bool, durable: bool) -> PgServer {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("bashgate-pg-")
            .tempdir()
            .unwrap();
        if is_root() {
            std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let mut init = Command::new(bin.join("initdb"));
        init.args([
            "-A",
            "trust",
            "-U",
            USER,
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
            "-D",
        ])
        .arg(dir.path().join("data"))
        .current_dir(dir.path());
        run_as_server_user(init, "initdb");
        let ca = tls.then(|| make_certificates(dir.path()));
        let s = PgServer {
            dir,
            bin,
            port: free_port(),
            child: Mutex::new(None),
            ca,
            durable,
        };
        s.resume();
        s
    }

    /// The one server this test process shares between its tests. A
    /// static is never dropped, so the server is stopped and its directory
    /// removed when the process exits (a killed process still leaves them).
    pub fn shared() -> &'static PgServer {
        static SHARED: OnceLock<PgServer> = OnceLock::new();
        extern "C" fn at_exit() {
            // Nothing may unwind out of an exit handler.
            let _ = std::panic::catch_unwind(|| {
                if let Some(s) = SHARED.get() {
                    s.stop();
                    let _ = std::fs::remove_dir_all(s.dir.path());
                }
            });
        }
        SHARED.get_or_init(|| {
            let server = PgServer::start();
            // SAFETY: registers a plain function with the C library.
            unsafe { libc::atexit(at_exit) };
            server
        })
    }

    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Starts the server on its data (after `stop`, or at first).
    pub fn resume(&self) {
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(self.dir.path())
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=200",
            ]);
        if !self.durable {
            // Tests lose nothing to a crash of the server with fsync off
            // (the kernel keeps the writes); only the machine's crash
            // would, which no test makes.
            cmd.args(["-c", "fsync=off"]);
        }
        if self.ca.is_some() {
            let file = |name: &str| self.dir.path().join(name).display().to_string();
            cmd.args(["-c", "ssl=on", "-c"])
                .arg(format!("ssl_cert_file={}", file("server.pem")))
                .arg("-c")
                .arg(format!("ssl_key_file={}", file("server.key")));
        }
        cmd.current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(self.dir.path().join("server.log"))
                    .map(Stdio::from)
                    .unwrap_or(Stdio::null()),
            );
        as_server_user(&mut cmd);
        let (back, got) = mpsc::channel();
        spawner().lock().unwrap().send((cmd, back)).unwrap();
        let child = got
            .recv()
            .unwrap()
            .unwrap_or_else(|e| panic!("postgres does not start: {e}"));
        *self.child.lock().unwrap() = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ok = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "postgres did not come up: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server at once (SIGQUIT: no checkpoint, as a crash would).
    pub fn stop(&self) {
        let child = self.child.lock().map(|mut c| c.take());
        if let Ok(Some(mut c)) = child {
            unsafe { libc::kill(c.id() as i32, libc::SIGQUIT) };
            let _ = c.wait();
        }
        // The server's children end soon after; wait for the port.
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Freezes the server and every process it started (SIGSTOP), as a
    /// hung database host would be: connections stay open, nothing answers.
    pub fn freeze(&self) {
        self.signal_all(libc::SIGSTOP);
    }

    /// Lets a frozen server go on (SIGCONT).
    pub fn thaw(&self) {
        self.signal_all(libc::SIGCONT);
    }

    fn signal_all(&self, sig: i32) {
        let Some(main) = self.child.lock().unwrap().as_ref().map(|c| c.id() as i32) else {
            return;
        };
        let mut pids = vec![main];
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // The parent is the second field after the parenthesised name.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(main) {
                pids.push(pid);
            }
        }
        for pid in pids {
            // SAFETY: signalling a process this harness started.
            unsafe { libc::kill(pid, sig) };
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// `psql` on the server's maintenance database.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args([
                "-d",
                db,
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A new, empty database; returns its connection string.
    pub fn database(&self) -> String {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }
}

/// A throwaway authority and a server certificate it signed, in `dir`
/// (the key readable by the server's user only); returns the authority's
/// certificate.
fn make_certificates(dir: &Path) -> PathBuf {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=bashgate test authority",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    let key = dir.join("server.key");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    if is_root() {
        for f in ["server.key", "server.pem"] {
            std::os::unix::fs::chown(dir.join(f), Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }
    dir.join("ca.pem")
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}
