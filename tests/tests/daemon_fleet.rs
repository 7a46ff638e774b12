//! A fleet: several `bashgate serve` processes on one PostgreSQL database
//! act as one gate. Real daemons, the real admin CLI and hooks, a real
//! PostgreSQL server the harness starts (`bashgate_tests::postgres`).
//! Waits are bounded only to guard against deadlocks, except where a
//! bound is the behaviour (a notification, not a poll, wakes a waiter).
#![cfg(feature = "postgres")]
// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use bashgate_store::postgres::{Options, PgStore};
use bashgate_store::{self as store, DaemonStore};
use bashgate_tests::daemon::{bash, Daemon, Listen, GUARD};
use bashgate_tests::http;
use bashgate_tests::postgres::PgServer;
use serde_json::{json, Value};

const HOST: &str = "[cop]\napi_key_env = \"BASHGATE_TEST_UNSET_KEY\"\n";
const CONTAINER: &str = "on_error = \"deny\"\n";

fn open(url: &str) -> PgStore {
    PgStore::open(url, &Options::plain()).expect("the store opens")
}

#[test]
fn the_store_behaves_the_same_on_postgresql() {
    let s = open(&PgServer::shared().database());
    store::exercise(&s).unwrap();
    assert_eq!(s.count_pending().unwrap(), 0);
}

#[test]
fn a_change_through_one_store_wakes_the_other_at_once() {
    let url = PgServer::shared().database();
    let (a, b) = (open(&url), open(&url));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    b.watch(
        Arc::new(move || {
            let _ = tx.lock().unwrap().send(());
        }),
        Arc::new(|w| panic!("unexpected warning: {w}")),
    )
    .unwrap();
    // The first call says "whatever changed while not listening".
    rx.recv_timeout(GUARD).expect("the watcher starts");
    assert!(a.create_session("s", "h").unwrap());
    let mut ap = store::Approval {
        id: String::new(),
        session: "s".into(),
        tool: "Bash".into(),
        command: Some("curl x\0y".into()),
        cwd: None,
        reason: "r".into(),
        created_ms: 0,
        expires_ms: i64::MAX,
        status: "pending".into(),
        answered_ms: None,
        answer: None,
    };
    a.insert_approval(&mut ap).unwrap();
    rx.recv_timeout(GUARD).expect("b hears the new approval");
    // Text PostgreSQL cannot hold is stored marked, not refused.
    assert_eq!(
        b.approval(&ap.id).unwrap().unwrap().command.as_deref(),
        Some("curl x\u{FFFD}y")
    );
    assert!(matches!(
        a.answer(&ap.id, true, None).unwrap(),
        store::Answered::Done(_)
    ));
    rx.recv_timeout(GUARD).expect("b hears the answer");
    assert_eq!(b.approval(&ap.id).unwrap().unwrap().status, "approved");
}

#[test]
fn check_store_says_whether_the_store_is_ready_and_refuses_a_password_in_the_config() {
    let pg = PgServer::shared();
    let url = pg.database();
    let d = Daemon::start(HOST, CONTAINER, Listen::Tcp);
    let check = |config: &str| {
        let path = d.sandbox.dir.path().join("check.toml");
        std::fs::write(&path, config).unwrap();
        d.sandbox
            .command()
            .env("BASHGATE_CONFIG", &path)
            .args(["serve", "--check-store"])
            .output()
            .unwrap()
    };
    let fresh = check(&format!("[serve]\nstore = \"{url}\"\n"));
    assert_eq!(fresh.status.code(), Some(1), "{fresh:?}");
    assert!(
        String::from_utf8_lossy(&fresh.stderr).contains("schema is at version 0"),
        "{fresh:?}"
    );
    drop(open(&url));
    let ready = check(&format!("[serve]\nstore = \"{url}\"\n"));
    assert!(ready.status.success(), "{ready:?}");
    assert!(
        String::from_utf8_lossy(&ready.stdout).contains("reachable, schema at version 1 (current)"),
        "{ready:?}"
    );
    let with_password = check(&format!(
        "[serve]\nstore = \"postgres://bashgate:hunter2@127.0.0.1:{}/x\"\n",
        pg.port
    ));
    // A configuration error: the daemon would not start either.
    assert!(!with_password.status.success(), "{with_password:?}");
    let err = String::from_utf8_lossy(&with_password.stderr);
    assert!(err.contains("holds a password"), "{err}");
    assert!(
        !err.contains("hunter2"),
        "the error repeats the password: {err}"
    );
    // Nothing listens on this port: not ready, said at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = check(&format!(
        "[serve]\nstore = \"postgres://bashgate@127.0.0.1:{port}/x\"\n"
    ));
    assert_eq!(down.status.code(), Some(1), "{down:?}");
    assert!(
        String::from_utf8_lossy(&down.stderr).contains("not ready"),
        "{down:?}"
    );
}

fn sessions(d: &Daemon) -> Vec<Value> {
    let r = d.admin("GET", "/admin/sessions", &Value::Null);
    assert_eq!(r.status, 200, "{r:?}");
    r.body["sessions"].as_array().cloned().unwrap_or_default()
}

#[test]
fn two_daemons_on_one_database_act_as_one_gate() {
    let url = PgServer::shared().database();
    let a = Daemon::start_on(&url, HOST, CONTAINER, Listen::Tcp);
    let b = Daemon::start_on(&url, HOST, CONTAINER, Listen::Tcp);

    // A session created through B: its token works on A.
    let tok = b.session("fleet");
    let r = http::json(
        &a.container(),
        "GET",
        "/v1/session",
        Some(&tok),
        &Value::Null,
    )
    .unwrap();
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body["session"], "fleet");

    // Taint reported through A is seen through B.
    let r = http::json(
        &a.container(),
        "POST",
        "/v1/taint",
        Some(&tok),
        &json!({"flag": "corruption", "detail": "read a web page"}),
    )
    .unwrap();
    assert_eq!(r.status, 200, "{r:?}");
    let seen = sessions(&b);
    assert_eq!(seen[0]["taint"]["corruption"], true, "{seen:?}");
    a.taint("fleet", false, true);
    assert_eq!(sessions(&b)[0]["taint"]["secret"], true);

    // An approval raised on A, listed and answered through B; a long poll
    // on A is woken by the answer, long before its own wait runs out.
    let hook = a.hook_json(Some(&tok), &bash("curl https://example.com/f"));
    let pending = b.wait_pending(1);
    let id = pending[0]["id"].as_str().unwrap().to_string();
    let (api, tok2, id2) = (a.container(), tok.clone(), id.clone());
    let poll = std::thread::spawn(move || {
        let start = Instant::now();
        let r = http::json(
            &api,
            "GET",
            &format!("/v1/approvals/{id2}?wait_ms=60000"),
            Some(&tok2),
            &Value::Null,
        )
        .unwrap();
        (r, start.elapsed())
    });
    // Let the poll reach A and start waiting.
    std::thread::sleep(Duration::from_millis(500));
    let out = b.cli(&["approve", &id, "--note", "ok from b"]);
    assert!(out.status.success(), "{out:?}");
    let (r, took) = poll.join().unwrap();
    assert_eq!(r.body["decision"], "allow", "{r:?}");
    assert!(
        took < Duration::from_secs(30),
        "the poll on A ended after {took:?}: it was not woken by B's answer"
    );
    let answer = hook.finish();
    assert_eq!(answer.decision(), "allow", "{answer:?}\n{}", a.log());
    assert!(answer.reason().contains("ok from b"), "{answer:?}");

    // The person's answer is remembered for the session on every daemon:
    // the same command through B is not asked about again.
    let again = b
        .hook_json(Some(&tok), &bash("curl https://example.com/f"))
        .finish();
    assert_eq!(again.decision(), "allow", "{again:?}\n{}", b.log());

    // One audit: B's command-line reads A's check and B's answer.
    let rows = b.sandbox.audit(&["--session", "fleet", "--limit", "100"]);
    assert!(
        rows.iter()
            .any(|r| r["event"] == "daemon-check" && r["decision"] == "ask"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r["event"] == "approval" && r["decision"] == "allow"),
        "{rows:?}"
    );

    // Deleting the session through A ends its token on B.
    let out = a.cli(&["session", "delete", "fleet"]);
    assert!(out.status.success(), "{out:?}");
    let r = http::json(
        &b.container(),
        "GET",
        "/v1/session",
        Some(&tok),
        &Value::Null,
    )
    .unwrap();
    assert_eq!(r.status, 401, "{r:?}");
}

/// What a worker saw: checks and taint reports the daemons acknowledged,
/// and requests they answered with an error while the database was down.
#[derive(Default)]
struct Seen {
    checks: AtomicUsize,
    taints: Mutex<Vec<String>>,
    errors: AtomicUsize,
}

#[test]
fn postgresql_stopped_mid_load_and_restarted_loses_nothing_acknowledged() {
    // A server of this test's own: it is stopped and started again.
    let pg = PgServer::start();
    let url = pg.database();
    let a = Daemon::start_on(&url, HOST, CONTAINER, Listen::Tcp);
    let b = Daemon::start_on(&url, HOST, CONTAINER, Listen::Tcp);
    let tok = a.session("load");
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = [a.container(), b.container()]
        .into_iter()
        .flat_map(|api| (0..3).map(move |n| (api.clone(), n)))
        .enumerate()
        .map(|(w, (api, _))| {
            let (tok, seen, stop) = (tok.clone(), seen.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let check = json!({ "command": format!("echo w{w}-{i}") });
                    match http::json(&api, "POST", "/v1/check", Some(&tok), &check) {
                        Ok(r) if r.status == 200 => {
                            seen.checks.fetch_add(1, Ordering::SeqCst);
                        }
                        _ => {
                            seen.errors.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    if i % 4 != 0 {
                        continue;
                    }
                    let detail = format!("w{w}-{i}");
                    let report = json!({ "flag": "corruption", "detail": detail });
                    match http::json(&api, "POST", "/v1/taint", Some(&tok), &report) {
                        Ok(r) if r.status == 200 => seen.taints.lock().unwrap().push(detail),
                        _ => {
                            seen.errors.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
            })
        })
        .collect();
    let progress = |what: &str, past: usize| {
        let start = Instant::now();
        while seen.checks.load(Ordering::SeqCst) <= past {
            assert!(start.elapsed() < GUARD, "no check answered {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    progress("before the stop", 20);
    // Two approvals raised through A, one answered through B: all
    // acknowledged before the database stops.
    let held = a.session("held");
    a.taint("held", true, true);
    let raise = |url: &str| {
        let r = http::json(
            &a.container(),
            "POST",
            "/v1/check",
            Some(&held),
            &json!({ "command": format!("curl -s {url}") }),
        )
        .unwrap();
        assert_eq!(r.body["decision"], "pending", "{r:?}");
        r.body["approval"]["id"].as_str().unwrap().to_string()
    };
    let (answered, waiting) = (
        raise("https://example.com/1"),
        raise("https://example.com/2"),
    );
    let out = b.cli(&["approve", &answered]);
    assert!(out.status.success(), "{out:?}");
    pg.stop();
    // While the database is down every request is answered, as an error
    // (the container's hook then follows on_error).
    let errors = seen.errors.load(Ordering::SeqCst);
    let start = Instant::now();
    while seen.errors.load(Ordering::SeqCst) < errors + 6 {
        assert!(
            start.elapsed() < GUARD,
            "requests went unanswered while the database was down"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A container's hook gets its on_error answer (deny) meanwhile.
    let hook = a.hook_json(Some(&tok), &bash("make test")).finish();
    assert_eq!(hook.decision(), "deny", "{hook:?}");
    pg.resume();
    // Both daemons reconnect by themselves.
    let past = seen.checks.load(Ordering::SeqCst);
    progress("after the restart", past + 20);
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    assert!(seen.errors.load(Ordering::SeqCst) > 0);

    // The approvals are as they were acknowledged, and the one still
    // pending is answered through either daemon once the database is back.
    let status = |id: &str| {
        let out = b.cli(&["pending", "--all", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        v["approvals"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|x| x["id"] == id)
            .map(|x| x["status"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(status(&answered).as_deref(), Some("approved"));
    assert_eq!(status(&waiting).as_deref(), Some("pending"));
    let out = a.cli(&["deny", &waiting]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(status(&waiting).as_deref(), Some("denied"));

    // Every acknowledged taint report is in the session.
    let r = a.admin("GET", "/admin/sessions", &Value::Null);
    let load = r.body["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "load")
        .unwrap();
    let sources: Vec<String> = load["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["detail"].as_str().unwrap_or("").to_string())
        .collect();
    let acknowledged = seen.taints.lock().unwrap().clone();
    // A session keeps at most MAX_SOURCES sources: stay under it.
    assert!(acknowledged.len() < bashgate::taint::MAX_SOURCES);
    for d in &acknowledged {
        assert!(sources.contains(d), "acknowledged taint {d} was lost");
    }
    // Every acknowledged check has its audit row, once the daemons have
    // sent what they kept locally while the database was down.
    let checks = seen.checks.load(Ordering::SeqCst);
    let start = Instant::now();
    loop {
        let rows = a
            .sandbox
            .audit(&["--limit", "1000000", "--session", "load"])
            .into_iter()
            .filter(|r| r["event"] == "daemon-check")
            .count();
        if rows >= checks {
            break;
        }
        assert!(
            start.elapsed() < GUARD,
            "{checks} checks acknowledged, {rows} audited\n{}\n{}",
            a.log(),
            b.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How many of this server's connections from bashgate use TLS.
fn tls_connections(pg: &PgServer) -> usize {
    pg.sql(
        "postgres",
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
         WHERE a.application_name = 'bashgate' AND s.ssl",
    )
    .parse()
    .unwrap()
}

#[test]
fn a_database_reached_over_tls_has_its_certificate_verified() {
    let pg = PgServer::start_tls();
    let url = format!("{}?sslmode=require", pg.database());
    let trusted = Options {
        ca_file: pg.ca.clone(),
        ..Options::plain()
    };
    let s = PgStore::open(&url, &trusted).expect("the store opens over TLS");
    assert_eq!(s.count_pending().unwrap(), 0);
    assert!(tls_connections(&pg) > 0, "no TLS connection on the server");
    drop(s);
    // The same server, its authority not trusted (the public roots):
    // refused, not continued in plain text.
    let err = PgStore::open(&url, &Options::plain())
        .err()
        .expect("an untrusted certificate is refused");
    assert!(matches!(err, store::StoreError::Database(_)), "{err}");
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "{err}"
    );
    // A server without TLS, where TLS is required: refused.
    let plain = PgServer::shared();
    let err = PgStore::open(
        &format!("{}?sslmode=require", plain.database()),
        &Options::plain(),
    )
    .err()
    .expect("no TLS where it is required is refused");
    assert!(matches!(err, store::StoreError::Database(_)), "{err}");
    assert!(!err.to_string().is_empty());
}

/// Issue 33: a database that hangs (connections open, nothing answered)
/// costs one request at most `store_timeout_ms` in all (its operations
/// share it), so the daemon's error reaches the container's hook before the
/// hook's own deadline (`[remote] timeout_ms`, 5 s): the answer says what
/// failed, and is the person's `on_error`.
#[test]
fn a_frozen_database_is_answered_before_the_hooks_deadline() {
    let pg = PgServer::start();
    let d = Daemon::start_on(&pg.database(), HOST, CONTAINER, Listen::Tcp);
    let tok = d.session("frozen");
    d.taint("frozen", true, false);
    // A first check fills the daemon's connection pool.
    let a = d.hook_json(Some(&tok), &bash("echo warm")).finish();
    assert_eq!(a.decision(), "allow", "{a:?}");
    pg.freeze();
    let a = d
        .hook_json(Some(&tok), &bash("curl https://example.com/x"))
        .finish();
    pg.thaw();
    assert_eq!(a.decision(), "deny", "{a:?}");
    // The daemon's own answer (an error about its store), not the hook
    // giving up on a daemon that said nothing.
    assert!(!a.reason().contains("did not answer within"), "{a:?}");
    assert!(a.reason().contains("no answer within"), "{a:?}");
}
