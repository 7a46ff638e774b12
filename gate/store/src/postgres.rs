//! The daemon's state in PostgreSQL, for a fleet: every daemon pointed at
//! the same database reads and writes the same sessions, approvals and
//! audit, so no host is special.
//!
//! - Each operation is one statement or one transaction, bounded by
//!   `[serve] store_timeout_ms`; a connection that failed or timed out is
//!   dropped, and the next operation connects afresh (the daemon reconnects
//!   by itself after the database restarts).
//! - A session's state is changed under `SELECT … FOR UPDATE`, so taint
//!   added through two daemons at once is never lost.
//! - A change to an approval is announced with `NOTIFY bashgate_approvals`;
//!   each daemon LISTENs and wakes its long polls at once.
//! - The schema is [`MIGRATIONS`], applied in order under an advisory lock
//!   (daemons starting together migrate once); `bashgate_schema` records
//!   how many are applied.
//!
//! The connections are driven by a small runtime of the store's own, so
//! the store works the same from the daemon's blocking pool and from a
//! command-line process that has no runtime.

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{AsyncMessage, Client, Config as PgConfig, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{
    parse_state, short_id, state_text, Answered, Approval, DaemonStore, OnChange, SessionRow,
    StoreError, Warn,
};
use bashgate::audit::{Filter, Record};
use bashgate::config::ServeConfig;
use bashgate::taint::{self, SessionState};

/// The schema's migrations, in order; append, never edit. The schema is
/// described in docs/containers.md (Fleets).
pub const MIGRATIONS: &[&str] = &["
CREATE TABLE sessions (
    name        TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    created_ms  BIGINT NOT NULL,
    state       TEXT NOT NULL
);
CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    session     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    command     TEXT,
    cwd         TEXT,
    reason      TEXT NOT NULL,
    created_ms  BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    status      TEXT NOT NULL,
    answered_ms BIGINT,
    answer      TEXT
);
CREATE INDEX approvals_by_status ON approvals (status, expires_ms);
CREATE TABLE decisions (
    id         BIGSERIAL PRIMARY KEY,
    uid        TEXT NOT NULL UNIQUE,
    time       TEXT NOT NULL,
    unix_ms    BIGINT NOT NULL,
    session    TEXT NOT NULL,
    event      TEXT NOT NULL,
    tool       TEXT NOT NULL,
    command    TEXT,
    cwd        TEXT,
    verdict    TEXT,
    findings   TEXT,
    corruption BOOLEAN,
    secret     BOOLEAN,
    layer      TEXT NOT NULL,
    rule       TEXT,
    decision   TEXT NOT NULL,
    reason     TEXT NOT NULL
);
CREATE INDEX decisions_by_session ON decisions (session, id);
"];

/// The channel approval changes are announced on.
const CHANNEL: &str = "bashgate_approvals";

/// The advisory lock key migrations hold ("bashgate" in ASCII).
const MIGRATION_LOCK: i64 = 0x6261_7368_6761_7465;

/// At most this many connections are open at once, and kept idle. A new
/// connection costs the server a process (milliseconds), so the pool
/// covers the daemon's blocking threads under load; an operation past the
/// limit waits for a connection (within its deadline), so two daemons stay
/// inside PostgreSQL's default 100 connections however many requests
/// arrive.
const POOL: usize = 32;

/// How to reach the server, besides the connection string.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub password: Password,
    /// The longest one operation may take.
    pub timeout: Duration,
    /// PEM certificates of the authorities trusted for the server's TLS
    /// certificate; without it, the public web's roots.
    pub ca_file: Option<PathBuf>,
}

impl Options {
    pub fn of(serve: &ServeConfig) -> Options {
        Options {
            password: Password::of(serve),
            timeout: Duration::from_millis(serve.store_timeout_ms),
            ca_file: serve.store_ca_file.clone(),
        }
    }

    /// No password, the default deadline, the public roots.
    pub fn plain() -> Options {
        Options {
            password: Password::None,
            timeout: Duration::from_secs(2),
            ca_file: None,
        }
    }
}

/// Where the password comes from; never the configuration's text.
#[derive(Debug, Clone, PartialEq)]
pub enum Password {
    None,
    File(PathBuf),
    Env(String),
}

impl Password {
    pub fn of(serve: &ServeConfig) -> Password {
        if let Some(f) = &serve.store_password_file {
            return Password::File(f.clone());
        }
        match &serve.store_password_env {
            Some(v) => Password::Env(v.clone()),
            None if std::env::var_os("BASHGATE_STORE_PASSWORD").is_some() => {
                Password::Env("BASHGATE_STORE_PASSWORD".into())
            }
            None => Password::None,
        }
    }

    fn read(&self) -> Result<Option<String>, StoreError> {
        match self {
            Password::None => Ok(None),
            Password::File(p) => std::fs::read_to_string(p)
                .map(|t| Some(t.lines().next().unwrap_or("").to_string()))
                .map_err(|e| {
                    StoreError::Config(format!(
                        "cannot read the store password file {}: {e}",
                        p.display()
                    ))
                }),
            Password::Env(v) => std::env::var(v).map(Some).map_err(|_| {
                StoreError::Config(format!("the store password variable {v} is not set"))
            }),
        }
    }
}

/// A connection string the store accepts: it parses, and carries no
/// password (configuration files are read by many and copied around).
pub fn check_url(url: &str) -> Result<PgConfig, StoreError> {
    let cfg = PgConfig::from_str(url).map_err(|e| {
        StoreError::Config(format!(
            "[serve] store is not a PostgreSQL connection string: {e}"
        ))
    })?;
    if cfg.get_password().is_some() {
        return Err(StoreError::Config(
            "[serve] store holds a password: take it out, and put it in a file named by \
             store_password_file or a variable named by store_password_env"
                .into(),
        ));
    }
    Ok(cfg)
}

/// The connection string without user information, for logs.
fn describe(cfg: &PgConfig) -> String {
    let hosts: Vec<String> = cfg
        .get_hosts()
        .iter()
        .zip(cfg.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, p)| match h {
            Host::Tcp(h) => format!("{h}:{p}"),
            Host::Unix(d) => format!("{}:{p}", d.display()),
        })
        .collect();
    format!(
        "postgres://{}/{}",
        hosts.join(","),
        cfg.get_dbname().unwrap_or("")
    )
}

/// A database on another host is reached over TLS: the default `prefer`
/// (which falls back to plain text when the server, or someone between,
/// says no) becomes `require` unless every host is this machine's loopback
/// or a unix socket. An explicit `sslmode=disable` is the operator's word.
fn require_tls_off_this_host(cfg: &mut PgConfig) {
    let local = |h: &Host| match h {
        Host::Unix(_) => true,
        Host::Tcp(name) => {
            name == "localhost"
                || name
                    .trim_matches(|c| c == '[' || c == ']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
    };
    if cfg.get_ssl_mode() == SslMode::Prefer && !cfg.get_hosts().iter().all(local) {
        cfg.ssl_mode(SslMode::Require);
    }
}

/// TLS with the server's certificate verified (chain and host name)
/// against `ca_file`'s authorities, or the public web's roots.
fn tls(ca_file: Option<&std::path::Path>) -> Result<MakeRustlsConnect, StoreError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let bad = |e: &dyn std::fmt::Display| {
                StoreError::Config(format!("[serve] store_ca_file {}: {e}", path.display()))
            };
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
            if roots.is_empty() {
                return Err(bad(&"holds no certificate"));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| StoreError::System(format!("cannot set up TLS: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// PostgreSQL's text type cannot hold NUL; a command could. Replaced by
/// U+FFFD, so the row is still written (and says something was there).
fn text(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

fn opt_text(s: &Option<String>) -> Option<String> {
    s.as_deref().map(text)
}

pub struct PgStore {
    cfg: PgConfig,
    tls: MakeRustlsConnect,
    /// One permit per connection in use (`POOL`).
    slots: tokio::sync::Semaphore,
    /// Where warnings go once the daemon watches (`watch`).
    warn: Mutex<Option<Warn>>,
    describe: String,
    timeout: Duration,
    pool: Mutex<Vec<Conn>>,
    /// Taken on drop (a runtime must not be dropped inside another's
    /// async context, where the daemon may drop the store).
    rt: Option<Runtime>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

const APPROVAL_COLS: &str =
    "id, session, tool, command, cwd, reason, created_ms, expires_ms, status, answered_ms, answer";

fn approval(r: &Row) -> Approval {
    Approval {
        id: r.get(0),
        session: r.get(1),
        tool: r.get(2),
        command: r.get(3),
        cwd: r.get(4),
        reason: r.get(5),
        created_ms: r.get(6),
        expires_ms: r.get(7),
        status: r.get(8),
        answered_ms: r.get(9),
        answer: r.get(10),
    }
    .settle()
}

type PgResult<T> = Result<T, tokio_postgres::Error>;

/// A pooled connection and the statements prepared on it. A statement
/// already prepared costs one round trip (bind and execute); an unprepared
/// one costs two (parse and describe, then bind and execute). The hot
/// statements of a check are prepared once per connection.
struct Conn {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
}

impl Conn {
    async fn prepared(&mut self, sql: &'static str) -> PgResult<Statement> {
        if let Some(st) = self.prepared.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(sql).await?;
        self.prepared.insert(sql, st.clone());
        Ok(st)
    }
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The session a token belongs to, and its state, in one statement.
const SESSION_FOR: &str = "SELECT name, state FROM sessions WHERE token_hash = $1";
/// The session a token belongs to (the other endpoints).
const SESSION_NAME: &str = "SELECT name FROM sessions WHERE token_hash = $1";
const STATE_OF: &str = "SELECT state FROM sessions WHERE name = $1";
const STATE_FOR_UPDATE: &str = "SELECT state FROM sessions WHERE name = $1 FOR UPDATE";
const SET_STATE: &str = "UPDATE sessions SET state = $2 WHERE name = $1";
/// A batch of audit rows as one statement: one array per column.
const INSERT_DECISIONS: &str = "INSERT INTO decisions (uid, time, unix_ms, session, event, tool,
        command, cwd, verdict, findings, corruption, secret, layer, rule, decision, reason)
     SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[],
        $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::BOOLEAN[],
        $12::BOOLEAN[], $13::TEXT[], $14::TEXT[], $15::TEXT[], $16::TEXT[])
     ON CONFLICT (uid) DO NOTHING";

impl PgStore {
    /// Connects, applies the migrations this binary knows, and returns the
    /// store. The password is read now.
    pub fn open(url: &str, options: &Options) -> Result<PgStore, StoreError> {
        let store = Self::connect_only(url, options)?;
        store.migrate()?;
        Ok(store)
    }

    /// The store without touching its schema; nothing is sent until the
    /// first operation.
    pub fn connect_only(url: &str, options: &Options) -> Result<PgStore, StoreError> {
        let mut cfg = check_url(url)?;
        if let Some(p) = options.password.read()? {
            cfg.password(p);
        }
        let timeout = options.timeout;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(timeout);
        }
        if cfg.get_application_name().is_none() {
            cfg.application_name("bashgate");
        }
        require_tls_off_this_host(&mut cfg);
        let tls = tls(options.ca_file.as_deref())?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bashgate-store")
            .enable_all()
            .build()
            .map_err(|e| StoreError::System(format!("cannot start the store's runtime: {e}")))?;
        let store = PgStore {
            describe: describe(&cfg),
            cfg,
            tls,
            slots: tokio::sync::Semaphore::new(POOL),
            warn: Mutex::new(None),
            timeout,
            pool: Mutex::new(Vec::new()),
            rt: Some(rt),
        };
        Ok(store)
    }

    /// The schema version this database is at and the one this binary
    /// knows, without changing anything (`serve --check-store`).
    pub fn schema_version(&self) -> Result<(i64, i64), StoreError> {
        let v = self.run(async |c| {
            let exists: bool = c
                .query_one("SELECT to_regclass('bashgate_schema') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(0);
            }
            let v: Option<i64> = c
                .query_one("SELECT max(version)::BIGINT FROM bashgate_schema", &[])
                .await?
                .get(0);
            Ok(v.unwrap_or(0))
        })?;
        Ok((v, MIGRATIONS.len() as i64))
    }

    fn migrate(&self) -> Result<(), StoreError> {
        self.run(async |c| {
            let tx = c.transaction().await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS bashgate_schema (
                    version    BIGINT PRIMARY KEY,
                    applied_ms BIGINT NOT NULL
                 )",
            )
            .await?;
            let done: Option<i64> = tx
                .query_one("SELECT max(version)::BIGINT FROM bashgate_schema", &[])
                .await?
                .get(0);
            let done = done.unwrap_or(0);
            for (i, m) in MIGRATIONS.iter().enumerate().skip(done.max(0) as usize) {
                tx.batch_execute(m).await?;
                tx.execute(
                    "INSERT INTO bashgate_schema (version, applied_ms) VALUES ($1, $2)",
                    &[&(i as i64 + 1), &(taint::now_ms() as i64)],
                )
                .await?;
            }
            tx.commit().await
        })
        // What failed is the database (not reached, refused); the message
        // says it was while migrating.
        .map_err(|e| match e {
            StoreError::Database(m) => {
                StoreError::Database(format!("cannot migrate the store's schema: {m}"))
            }
            other => other,
        })?;
        let (have, know) = self.schema_version()?;
        if have > know {
            return Err(StoreError::Schema(format!(
                "the store's schema is at version {have}, newer than this bashgate knows ({know}); \
                 upgrade bashgate on this host"
            )));
        }
        Ok(())
    }

    async fn connect(cfg: &PgConfig, tls: &MakeRustlsConnect) -> PgResult<Conn> {
        let (client, conn) = cfg.connect(tls.clone()).await?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the connection breaks;
            // a broken one is noticed by the next query on the client.
            let _ = conn.await;
        });
        Ok(Conn {
            client,
            prepared: HashMap::new(),
        })
    }

    /// Opens `n` connections ahead of the first checks (each costs the
    /// server a process), so a burst of checks after the daemon starts
    /// does not wait for them. A connection that cannot be opened now is
    /// opened when needed.
    fn warm_up(&self, n: usize) {
        let tasks: Vec<_> = (0..n.min(POOL))
            .map(|_| {
                let (cfg, tls, limit) = (self.cfg.clone(), self.tls.clone(), self.timeout);
                self.rt().spawn(async move {
                    tokio::time::timeout(limit, async move {
                        let mut c = Self::connect(&cfg, &tls).await?;
                        for sql in [SESSION_FOR, SESSION_NAME, STATE_OF, INSERT_DECISIONS] {
                            c.prepared(sql).await?;
                        }
                        Ok::<_, tokio_postgres::Error>(c)
                    })
                    .await
                })
            })
            .collect();
        for t in tasks {
            if let Ok(Ok(Ok(c))) = self.rt().block_on(t) {
                self.put(c);
            }
        }
    }

    /// Runs `f` on a pooled connection within the store's deadline. A
    /// connection that failed or timed out is not put back.
    fn run<T>(&self, f: impl AsyncFnOnce(&mut Conn) -> PgResult<T>) -> Result<T, StoreError> {
        let (cfg, tls, slots, pool) = (&self.cfg, &self.tls, &self.slots, &self.pool);
        let deadline = super::operation_limit(self.timeout);
        let out = self.rt().block_on(async move {
            let work = async move {
                // Held until the connection is back in the pool or dropped.
                let slot = slots.acquire().await.ok();
                let pooled = pool.lock().ok().and_then(|mut p| {
                    while let Some(c) = p.pop() {
                        if !c.is_closed() {
                            return Some(c);
                        }
                    }
                    None
                });
                let mut c = match pooled {
                    Some(c) => c,
                    None => Self::connect(cfg, tls).await?,
                };
                let r = f(&mut c).await;
                Ok::<_, tokio_postgres::Error>((c, r, slot))
            };
            tokio::time::timeout(deadline, work).await
        });
        match out {
            Ok(Ok((c, Ok(v), _slot))) => {
                self.put(c);
                Ok(v)
            }
            Ok(Ok((c, Err(e), _slot))) => {
                // A statement's error (a constraint, say) leaves a usable
                // connection; a broken connection is closed.
                if !c.is_closed() {
                    self.put(c);
                }
                Err(self.error(&e))
            }
            Ok(Err(e)) => Err(self.error(&e)),
            Err(_) => Err(StoreError::TimedOut {
                store: self.describe.clone(),
                ms: deadline.as_millis(),
            }),
        }
    }

    fn rt(&self) -> &Runtime {
        self.rt.as_ref().expect("the runtime lives until drop")
    }

    fn error(&self, e: &tokio_postgres::Error) -> StoreError {
        // The source holds the server's message ("connection refused").
        StoreError::Database(match std::error::Error::source(e) {
            Some(s) => format!("{}: {e}: {s}", self.describe),
            None => format!("{}: {e}", self.describe),
        })
    }

    fn put(&self, c: Conn) {
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < POOL {
                p.push(c);
            }
        }
    }

    fn notify(&self) {
        if let Err(e) = self.run(async |c| c.batch_execute(&format!("NOTIFY {CHANNEL}")).await) {
            // The change is committed; other daemons' long polls still end
            // at their deadline and ask again.
            if let Some(w) = self.warn.lock().ok().and_then(|w| w.clone()) {
                w(format!("cannot announce an approval change: {e}"));
            }
        }
    }
}

impl DaemonStore for PgStore {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn warm(&self) {
        // The whole pool: a burst of checks finds its connections open
        // (three daemons' stay inside the server's default limit of 100).
        self.warm_up(POOL);
    }

    fn create_session(&self, name: &str, token_hash: &str) -> Result<bool, StoreError> {
        let state = state_text(&SessionState::default());
        let now = taint::now_ms() as i64;
        self.run(async |c| {
            c.execute(
                "INSERT INTO sessions (name, token_hash, created_ms, state) VALUES ($1, $2, $3, $4)
                 ON CONFLICT DO NOTHING",
                &[&text(name), &token_hash, &now, &state],
            )
            .await
            .map(|n| n == 1)
        })
    }

    fn session_for(&self, token_hash: &str) -> Result<Option<String>, StoreError> {
        self.run(async |c| {
            let st = c.prepared(SESSION_NAME).await?;
            c.query_opt(&st, &[&token_hash])
                .await
                .map(|r| r.map(|r| r.get(0)))
        })
    }

    fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        let rows: Vec<(String, i64, String)> = self.run(async |c| {
            let rows = c
                .query(
                    "SELECT name, created_ms, state FROM sessions ORDER BY name",
                    &[],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect())
        })?;
        Ok(rows
            .into_iter()
            .map(|(name, created_ms, state)| {
                let s = parse_state(&state);
                SessionRow {
                    name,
                    created_ms,
                    taint: s.taint,
                    sources: s.sources,
                }
            })
            .collect())
    }

    fn delete_session(&self, name: &str) -> Result<bool, StoreError> {
        let now = taint::now_ms() as i64;
        let deleted = self.run(async |c| {
            let tx = c.transaction().await?;
            let n = tx
                .execute("DELETE FROM sessions WHERE name = $1", &[&name])
                .await?;
            tx.execute(
                "UPDATE approvals SET status = 'denied', answered_ms = $2, answer = 'the session was deleted'
                 WHERE session = $1 AND status = 'pending'",
                &[&name, &now],
            )
            .await?;
            tx.commit().await?;
            Ok(n == 1)
        })?;
        self.notify();
        Ok(deleted)
    }

    fn session_state_for(
        &self,
        token_hash: &str,
    ) -> Result<Option<(String, SessionState)>, StoreError> {
        self.run(async |c| {
            let st = c.prepared(SESSION_FOR).await?;
            c.query_opt(&st, &[&token_hash])
                .await
                .map(|r| r.map(|r| (r.get(0), parse_state(r.get(1)))))
        })
    }

    fn load_state(&self, name: &str) -> Result<Option<SessionState>, StoreError> {
        self.run(async |c| {
            let st = c.prepared(STATE_OF).await?;
            c.query_opt(&st, &[&name])
                .await
                .map(|r| r.map(|r| parse_state(r.get(0))))
        })
    }

    fn update(&self, name: &str, f: &mut dyn FnMut(&mut SessionState)) -> Result<bool, StoreError> {
        self.run(async |c| {
            let (read, write) = (
                c.prepared(STATE_FOR_UPDATE).await?,
                c.prepared(SET_STATE).await?,
            );
            let tx = c.transaction().await?;
            let Some(row) = tx.query_opt(&read, &[&name]).await? else {
                return Ok(false);
            };
            let mut state = parse_state(row.get(0));
            f(&mut state);
            tx.execute(&write, &[&name, &state_text(&state)]).await?;
            tx.commit().await?;
            Ok(true)
        })
    }

    fn insert_approval(&self, a: &mut Approval) -> Result<(), StoreError> {
        for _ in 0..16 {
            a.id = short_id()?;
            let x = a.clone();
            let inserted = self.run(async |c| {
                c.execute(
                    &format!(
                        "INSERT INTO approvals ({APPROVAL_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                         ON CONFLICT DO NOTHING"
                    ),
                    &[
                        &x.id, &text(&x.session), &text(&x.tool), &opt_text(&x.command),
                        &opt_text(&x.cwd), &text(&x.reason), &x.created_ms, &x.expires_ms,
                        &x.status, &x.answered_ms, &opt_text(&x.answer),
                    ],
                )
                .await
            })?;
            if inserted == 1 {
                // What is stored is what is returned.
                a.command = opt_text(&a.command);
                a.cwd = opt_text(&a.cwd);
                self.notify();
                return Ok(());
            }
        }
        Err(StoreError::NoFreeId)
    }

    fn approval(&self, id: &str) -> Result<Option<Approval>, StoreError> {
        self.run(async |c| {
            c.query_opt(
                &format!("SELECT {APPROVAL_COLS} FROM approvals WHERE id = $1"),
                &[&id],
            )
            .await
            .map(|r| r.as_ref().map(approval))
        })
    }

    fn approvals(&self, all: bool, limit: usize) -> Result<Vec<Approval>, StoreError> {
        let filter = if all { "" } else { "WHERE status = 'pending'" };
        let limit = limit as i64;
        self.run(async |c| {
            let rows = c
                .query(
                    &format!(
                        "SELECT {APPROVAL_COLS} FROM approvals {filter} ORDER BY created_ms DESC LIMIT $1"
                    ),
                    &[&limit],
                )
                .await?;
            Ok(rows.iter().map(approval).collect())
        })
    }

    fn answer(&self, id: &str, approve: bool, note: Option<&str>) -> Result<Answered, StoreError> {
        let now = taint::now_ms() as i64;
        let status = if approve { "approved" } else { "denied" };
        let note = note.map(text);
        let changed = self.run(async |c| {
            c.query_opt(
                &format!(
                    "UPDATE approvals SET status = $2, answered_ms = $3, answer = $4
                     WHERE id = $1 AND status = 'pending' AND expires_ms > $3
                     RETURNING {APPROVAL_COLS}"
                ),
                &[&id, &status, &now, &note],
            )
            .await
            .map(|r| r.as_ref().map(approval))
        })?;
        if let Some(a) = changed {
            self.notify();
            return Ok(Answered::Done(a));
        }
        Ok(match self.approval(id)? {
            None => Answered::NotFound,
            Some(a) => Answered::Closed(a),
        })
    }

    fn expire_due(&self) -> Result<Vec<Approval>, StoreError> {
        let now = taint::now_ms() as i64;
        // One UPDATE … RETURNING: a row expired by another daemon's sweep
        // in the same instant is returned to that daemon only.
        let due = self.run(async |c| {
            let rows = c
                .query(
                    &format!(
                        "UPDATE approvals SET status = 'expired', answered_ms = $1
                         WHERE status = 'pending' AND expires_ms <= $1
                         RETURNING {APPROVAL_COLS}"
                    ),
                    &[&now],
                )
                .await?;
            Ok(rows.iter().map(approval).collect::<Vec<_>>())
        })?;
        if !due.is_empty() {
            self.notify();
        }
        Ok(due)
    }

    fn count_pending(&self) -> Result<i64, StoreError> {
        self.run(async |c| {
            c.query_one(
                "SELECT COUNT(*) FROM approvals WHERE status = 'pending'",
                &[],
            )
            .await
            .map(|r| r.get(0))
        })
    }

    fn write_audit(&self, records: &[(String, Record)]) -> Result<(), StoreError> {
        // One statement, so one round trip and atomic without a
        // transaction of its own.
        let col = |f: &dyn Fn(&Record) -> Option<String>| -> Vec<Option<String>> {
            records.iter().map(|(_, r)| f(r)).collect()
        };
        let uid: Vec<Option<String>> = records.iter().map(|(u, _)| Some(text(u))).collect();
        let time = col(&|r| Some(text(&r.time)));
        let unix_ms: Vec<i64> = records.iter().map(|(_, r)| r.unix_ms).collect();
        let session = col(&|r| Some(text(&r.session)));
        let event = col(&|r| Some(text(&r.event)));
        let tool = col(&|r| Some(text(&r.tool)));
        let command = col(&|r| opt_text(&r.command));
        let cwd = col(&|r| opt_text(&r.cwd));
        let verdict = col(&|r| opt_text(&r.verdict));
        let findings = col(&|r| opt_text(&r.findings));
        let corruption: Vec<Option<bool>> = records.iter().map(|(_, r)| r.corruption).collect();
        let secret: Vec<Option<bool>> = records.iter().map(|(_, r)| r.secret).collect();
        let layer = col(&|r| Some(text(&r.layer)));
        let rule = col(&|r| opt_text(&r.rule));
        let decision = col(&|r| Some(text(&r.decision)));
        let reason = col(&|r| Some(text(&r.reason)));
        self.run(async |c| {
            let st = c.prepared(INSERT_DECISIONS).await?;
            c.execute(
                &st,
                &[
                    &uid,
                    &time,
                    &unix_ms,
                    &session,
                    &event,
                    &tool,
                    &command,
                    &cwd,
                    &verdict,
                    &findings,
                    &corruption,
                    &secret,
                    &layer,
                    &rule,
                    &decision,
                    &reason,
                ],
            )
            .await
            .map(|_| ())
        })
    }

    fn query_audit(&self, f: &Filter) -> Result<Vec<Record>, StoreError> {
        let mut sql = String::from(
            "SELECT time, unix_ms, session, event, tool, command, cwd, verdict, findings,
                    corruption, secret, layer, rule, decision, reason
             FROM decisions WHERE TRUE",
        );
        let mut args: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>> = Vec::new();
        for (col, v) in [
            ("session", &f.session),
            ("tool", &f.tool),
            ("decision", &f.decision),
            ("layer", &f.layer),
            ("rule", &f.rule),
        ] {
            if let Some(v) = v {
                args.push(Box::new(v.clone()));
                sql.push_str(&format!(" AND {col} = ${}", args.len()));
            }
        }
        if let Some(s) = f.since_ms {
            args.push(Box::new(s));
            sql.push_str(&format!(" AND unix_ms >= ${}", args.len()));
        }
        args.push(Box::new(f.limit as i64));
        sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", args.len()));
        self.run(async |c| {
            let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
                .iter()
                .map(|a| a.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                .collect();
            let rows = c.query(&sql, &params).await?;
            Ok(rows
                .iter()
                .map(|r| Record {
                    time: r.get(0),
                    unix_ms: r.get(1),
                    session: r.get(2),
                    event: r.get(3),
                    tool: r.get(4),
                    command: r.get(5),
                    cwd: r.get(6),
                    verdict: r.get(7),
                    findings: r.get(8),
                    corruption: r.get(9),
                    secret: r.get(10),
                    layer: r.get(11),
                    rule: r.get(12),
                    decision: r.get(13),
                    reason: r.get(14),
                })
                .collect())
        })
    }

    fn watch(&self, f: OnChange, warn: Warn) -> Result<(), StoreError> {
        if let Ok(mut w) = self.warn.lock() {
            *w = Some(warn.clone());
        }
        let (cfg, tls) = (self.cfg.clone(), self.tls.clone());
        let describe = self.describe.clone();
        self.rt().spawn(async move {
            let mut said_down = false;
            loop {
                match listen(&cfg, &tls, &f).await {
                    // The connection ended: reconnect.
                    Ok(()) => said_down = false,
                    Err(e) if !said_down => {
                        warn(format!(
                            "not hearing other daemons' approval changes ({describe}: {e}); retrying"
                        ));
                        said_down = true;
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        Ok(())
    }
}

/// LISTENs on one connection and calls `f` for each notification until the
/// connection ends.
async fn listen(cfg: &PgConfig, tls: &MakeRustlsConnect, f: &OnChange) -> PgResult<()> {
    let (client, mut conn) = cfg.connect(tls.clone()).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| conn.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(_))) => {
                    if tx.send(()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    // Whatever changed while this daemon was not listening.
    f();
    while rx.recv().await.is_some() {
        f();
    }
    driver.abort();
    drop(client);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(url: &str) -> SslMode {
        let mut cfg = check_url(url).unwrap();
        require_tls_off_this_host(&mut cfg);
        cfg.get_ssl_mode()
    }

    #[test]
    fn another_host_is_reached_over_tls_unless_the_operator_says_otherwise() {
        assert_eq!(mode("postgres://u@db.internal/b"), SslMode::Require);
        assert_eq!(mode("postgres://u@10.0.0.5:5433/b"), SslMode::Require);
        assert_eq!(
            mode("postgres://u@127.0.0.1,db.internal/b"),
            SslMode::Require
        );
        assert_eq!(mode("postgres://u@127.0.0.1/b"), SslMode::Prefer);
        assert_eq!(mode("postgres://u@localhost/b"), SslMode::Prefer);
        assert_eq!(mode("postgres://u@[::1]/b"), SslMode::Prefer);
        assert_eq!(
            mode("host=/run/postgresql user=u dbname=b"),
            SslMode::Prefer
        );
        assert_eq!(
            mode("postgres://u@db.internal/b?sslmode=disable"),
            SslMode::Disable
        );
    }

    #[test]
    fn a_password_in_the_connection_string_is_refused_without_repeating_it() {
        for url in [
            "postgres://u:sekrit@db/b",
            "host=db user=u password=sekrit dbname=b",
        ] {
            let e = check_url(url).unwrap_err();
            assert!(matches!(e, StoreError::Config(_)), "{e}");
            let e = e.to_string();
            assert!(
                e.contains("holds a password") && !e.contains("sekrit"),
                "{e}"
            );
        }
    }
}
