//! Load test of the host daemon: starts the real `bashgate serve` on a
//! loopback port, creates a session, and sends checks to its container API
//! from many concurrent clients (one connection per check, as the hooks
//! do). Prints p50 / p90 / p99 / max latency and the throughput; exits 1
//! if any check failed. Clients share sessions, up to 16 clients each.
//!
//! `--daemons N --postgres` runs N daemons that share one PostgreSQL
//! database on a throwaway server the tool starts (a fleet acting as one
//! gate); clients spread across them, sessions created through the first.
//!
//! `--hostile N` adds a hostile client while the load runs: N connections
//! from a session of its own that send a request's headers and half its
//! body and then stall, reopened as the daemon closes them. The
//! well-behaved clients' figures then show what that costs them.
//!
//! ```text
//! cargo build --release -p bashgate -p bashgate-tests --bin bashgate --bin bashgate-load
//! target/release/bashgate-load --checks 1000 --clients 50
//! target/release/bashgate-load --checks 1000 --clients 50 --unix
//! target/release/bashgate-load --checks 1000 --clients 50 --hostile 1100
//! target/release/bashgate-load --checks 1000 --clients 50 --daemons 2 --postgres
//! ```

// A measurement tool: a step that fails ends the run with its panic.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use bashgate_tests::http::{self, Addr};
use serde_json::{json, Value};

/// Commands the checks rotate through: none is `safe`, so each is decided
/// by the daemon's full engine (policy layers, taint, audit).
const COMMANDS: &[&str] = &[
    "curl -s https://example.com/api",
    "npm install left-pad",
    "./configure && make -j4",
    "python3 -c 'print(1)'",
    "git fetch origin && git status",
];

struct Args {
    bashgate: PathBuf,
    checks: usize,
    clients: usize,
    /// Listen on a unix socket instead of loopback TCP.
    unix: bool,
    /// Stalled connections held open by a hostile client during the load.
    hostile: usize,
    /// How many daemons share the state.
    daemons: usize,
    /// State on a throwaway PostgreSQL server instead of SQLite.
    postgres: bool,
}

fn args() -> Result<Args, String> {
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("bashgate")));
    let mut a = Args {
        bashgate: sibling.unwrap_or_else(|| PathBuf::from("bashgate")),
        checks: 1000,
        clients: 50,
        unix: false,
        hostile: 0,
        daemons: 1,
        postgres: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--bashgate" => a.bashgate = PathBuf::from(value()?),
            "--checks" => a.checks = value()?.parse().map_err(|e| format!("--checks: {e}"))?,
            "--clients" => a.clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--unix" => a.unix = true,
            "--hostile" => a.hostile = value()?.parse().map_err(|e| format!("--hostile: {e}"))?,
            "--daemons" => a.daemons = value()?.parse().map_err(|e| format!("--daemons: {e}"))?,
            "--postgres" => a.postgres = true,
            "-h" | "--help" => {
                return Err(
                    "usage: bashgate-load [--bashgate PATH] [--checks N] [--clients N] [--unix] [--hostile N] [--daemons N --postgres]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if a.daemons == 0 || (a.daemons > 1 && !a.postgres) {
        return Err(
            "--daemons N needs at least 1, and more than 1 needs --postgres (a shared store)"
                .into(),
        );
    }
    if a.clients == 0 || a.checks < a.clients {
        return Err("need at least one client and one check per client".into());
    }
    Ok(a)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--hostile-child") && argv.len() == 7 {
        let api = Addr::parse(&argv[2]);
        let n: usize = argv[4].parse().unwrap_or(0);
        let (stop_file, status_file) = (PathBuf::from(&argv[5]), PathBuf::from(&argv[6]));
        let stop = Arc::new(AtomicBool::new(false));
        let refused = Arc::new(AtomicUsize::new(0));
        let watcher = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop_file.exists() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                stop.store(true, Ordering::SeqCst);
            })
        };
        let most = hostile_client(&api, &argv[3], n, &stop, &refused);
        let _ = watcher.join();
        let _ = std::fs::write(
            status_file,
            format!(
                "{most} stalled connections held open at most, {} answered 429 or 408 or closed by the daemon",
                refused.load(Ordering::SeqCst)
            ),
        );
        return;
    }
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bashgate-load: {e}");
            std::process::exit(2);
        }
    };
    let dir = tempfile::tempdir().expect("tempdir");
    // Durable like the SQLite store it is compared with.
    let pg = a
        .postgres
        .then(bashgate_tests::postgres::PgServer::start_durable);
    let mut config_text = "[cop]\napi_key_env = \"BASHGATE_LOAD_NO_KEY\"\n".to_string();
    if let Some(pg) = &pg {
        config_text += &format!("[serve]\nstore = \"{}\"\n", pg.database());
    }
    let config = dir.path().join("bashgate.toml");
    std::fs::write(&config, config_text).unwrap();
    let mut daemons = Vec::new();
    let mut urls = Vec::new();
    for n in 0..a.daemons {
        let (child, url) = start_daemon(&a, &dir.path().join(format!("d{n}")), &config);
        daemons.push(child);
        urls.push(url);
    }
    let admin = dir.path().join("d0").join("admin").join("admin.sock");
    let session = |name: String| {
        let created = http::json(
            &Addr::Unix(admin.clone()),
            "POST",
            "/admin/sessions",
            None,
            &json!({ "name": name }),
        )
        .expect("admin socket");
        created.body["token"].as_str().unwrap().to_string()
    };
    let tokens: Vec<String> = (0..a.clients.div_ceil(16))
        .map(|i| session(format!("load-{i}")))
        .collect();
    let apis: Vec<Addr> = urls.iter().map(|u| Addr::parse(u)).collect();
    let api = apis[0].clone();
    // The hostile client is a process of its own, as a hostile container
    // would be (the daemon counts a unix socket's connections per process).
    let stop_file = dir.path().join("hostile.stop");
    let status_file = dir.path().join("hostile.status");
    let hostile = (a.hostile > 0).then(|| {
        let token = session("hostile".into());
        Command::new(std::env::current_exe().expect("own path"))
            .args([
                "--hostile-child",
                &api.url(),
                &token,
                &a.hostile.to_string(),
            ])
            .arg(&stop_file)
            .arg(&status_file)
            .spawn()
            .expect("the hostile client starts")
    });
    if hostile.is_some() {
        // Let it fill its connections first.
        std::thread::sleep(Duration::from_millis(500));
    }

    let per_client = a.checks / a.clients;
    let extra = a.checks % a.clients;
    let barrier = Arc::new(Barrier::new(a.clients));
    let start = Instant::now();
    let handles: Vec<_> = (0..a.clients)
        .map(|c| {
            let api = apis[c % apis.len()].clone();
            let (token, barrier) = (tokens[c / 16].clone(), barrier.clone());
            let n = per_client + usize::from(c < extra);
            std::thread::spawn(move || {
                barrier.wait();
                let mut lat = Vec::with_capacity(n);
                let mut errors = Vec::new();
                for i in 0..n {
                    let cmd = COMMANDS[(c + i) % COMMANDS.len()];
                    let body = json!({"tool_name": "Bash", "tool_input": {"command": cmd}, "cwd": "/work"});
                    let t = Instant::now();
                    let r = http::json(&api, "POST", "/v1/check", Some(&token), &body);
                    lat.push(t.elapsed());
                    match r {
                        Ok(r) if r.status == 200 && r.body["decision"] == "allow" => {}
                        Ok(r) => errors.push(format!("{} {}", r.status, r.body)),
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                (lat, errors)
            })
        })
        .collect();
    let mut lat = Vec::new();
    let mut errors = Vec::new();
    for h in handles {
        let (l, e) = h.join().expect("client thread");
        lat.extend(l);
        errors.extend(e);
    }
    let wall = start.elapsed();
    let held = hostile.map(|mut child| {
        let _ = std::fs::write(&stop_file, "");
        let _ = child.wait();
        std::fs::read_to_string(&status_file).unwrap_or_default()
    });
    let stats: Value = http::json(
        &Addr::Unix(admin),
        "GET",
        "/admin/stats",
        None,
        &Value::Null,
    )
    .map(|r| r.body)
    .unwrap_or(Value::Null);
    for mut d in daemons {
        let _ = d.kill();
        let _ = d.wait();
    }
    drop(pg);
    lat.sort();
    let mut report = String::new();
    report += &format!(
        "{} daemon(s) on {}\n",
        a.daemons,
        if a.postgres {
            "one PostgreSQL database"
        } else {
            "SQLite"
        }
    );
    report += &format!(
        "{} checks from {} concurrent clients over {} in {:.2} s ({:.0} checks/s)\n",
        lat.len(),
        a.clients,
        if a.unix {
            "a unix socket"
        } else {
            "loopback TCP"
        },
        wall.as_secs_f64(),
        lat.len() as f64 / wall.as_secs_f64()
    );
    report += &format!(
        "latency: p50 {}  p90 {}  p99 {}  max {}\n",
        ms(percentile(&lat, 0.50)),
        ms(percentile(&lat, 0.90)),
        ms(percentile(&lat, 0.99)),
        ms(*lat.last().unwrap())
    );
    if let Some(held) = held {
        report += &format!("hostile client: {}\n", held.trim());
    }
    report += &format!("daemon counters: {stats}\n");
    report += &format!("errors: {}\n", errors.len());
    for e in errors.iter().take(10) {
        report += &format!("  {e}\n");
    }
    // A closed stdout (piped into `head`) is not an error of the load.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), report.as_bytes());
    if !errors.is_empty() {
        std::process::exit(1);
    }
}

/// Starts one daemon with its state directory under `dir`; returns it and
/// its container API's address.
fn start_daemon(
    a: &Args,
    dir: &std::path::Path,
    config: &std::path::Path,
) -> (std::process::Child, String) {
    let admin = dir.join("admin").join("admin.sock");
    let listen = if a.unix {
        format!("unix:{}", dir.join("ctr").join("bashgate.sock").display())
    } else {
        "127.0.0.1:0".to_string()
    };
    let mut daemon = Command::new(&a.bashgate)
        .args(["serve", "--listen", &listen, "--admin-socket"])
        .arg(&admin)
        .env("BASHGATE_CONFIG", config)
        .env("BASHGATE_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!(
                "bashgate-load: cannot run {}: {e} (build it, or pass --bashgate PATH)",
                a.bashgate.display()
            );
            std::process::exit(2);
        });
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split("container API on ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .unwrap_or_else(|| {
            let _ = daemon.kill();
            eprintln!("bashgate-load: the daemon did not start: {line}");
            std::process::exit(1);
        })
        .to_string();
    (daemon, url)
}

/// Holds up to `n` connections that send headers and half a body, then
/// stall; counts the ones the daemon answers (429 or 408) and reopens them
/// until `stop`. Returns the most held open at once.
fn hostile_client(
    api: &Addr,
    token: &str,
    n: usize,
    stop: &AtomicBool,
    refused: &AtomicUsize,
) -> usize {
    use std::io::{Read, Write};
    let head = format!(
        "POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"command\": \"ls"
    );
    let open = || -> Option<Box<dyn ReadWrite>> {
        let mut s: Box<dyn ReadWrite> = match api {
            Addr::Tcp(a) => Box::new(std::net::TcpStream::connect(a).ok()?),
            Addr::Unix(p) => Box::new(std::os::unix::net::UnixStream::connect(p).ok()?),
        };
        s.write_all(head.as_bytes()).ok()?;
        s.set_nonblocking().ok()?;
        Some(s)
    };
    let mut conns: Vec<Box<dyn ReadWrite>> = Vec::new();
    let mut most = 0;
    while !stop.load(Ordering::SeqCst) {
        while conns.len() < n {
            match open() {
                Some(c) => conns.push(c),
                None => break,
            }
        }
        most = most.max(conns.len());
        let mut buf = [0u8; 256];
        conns.retain_mut(|c| match c.read(&mut buf) {
            Ok(0) => {
                refused.fetch_add(1, Ordering::SeqCst);
                false
            }
            Ok(_) => {
                refused.fetch_add(1, Ordering::SeqCst);
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            Err(_) => false,
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    most
}

trait ReadWrite: std::io::Read + std::io::Write + Send {
    fn set_nonblocking(&self) -> std::io::Result<()>;
}

impl ReadWrite for std::net::TcpStream {
    fn set_nonblocking(&self) -> std::io::Result<()> {
        std::net::TcpStream::set_nonblocking(self, true)
    }
}

impl ReadWrite for std::os::unix::net::UnixStream {
    fn set_nonblocking(&self) -> std::io::Result<()> {
        std::os::unix::net::UnixStream::set_nonblocking(self, true)
    }
}
