//! The host daemon's state: sessions (name, token hash, taint and
//! remembered answers), approvals, and the daemon's audit of decisions.
//!
//! One interface, two engines:
//! - [`sqlite::SqliteStore`], the embedded default for one machine;
//! - [`postgres::PgStore`], for a fleet: several daemons on several hosts
//!   share one database and act as one gate (a session's taint follows it
//!   to whichever daemon answers next, an approval can be answered through
//!   any daemon, and the audit is one table).
//!
//! Every call blocks; the daemon runs them on its blocking pool. Every
//! change is one transaction, committed before the call returns, so what
//! the daemon has acknowledged survives a crash of the daemon or a restart
//! of the database.

thread_local! {
    /// When the request this thread serves must be answered by (see
    /// [`within`]).
    static REQUEST_ENDS: std::cell::Cell<Option<std::time::Instant>> =
        const { std::cell::Cell::new(None) };
}

/// Runs `f` with every store operation it makes on this thread sharing one
/// deadline, `budget` from now: the operations of one request together end
/// (or fail) within it, so a store that hangs cannot make the daemon answer
/// after the hook waiting for it has given up.
pub fn within<T>(budget: std::time::Duration, f: impl FnOnce() -> T) -> T {
    let before = REQUEST_ENDS.replace(Some(std::time::Instant::now() + budget));
    let out = f();
    REQUEST_ENDS.set(before);
    out
}

/// What is left of the deadline [`within`] set on this thread, if any.
pub fn time_left() -> Option<std::time::Duration> {
    REQUEST_ENDS
        .get()
        .map(|end| end.saturating_duration_since(std::time::Instant::now()))
}

/// How long one operation may take now: its own limit, or what is left of
/// the request's, whichever is less.
pub(crate) fn operation_limit(own: std::time::Duration) -> std::time::Duration {
    match REQUEST_ENDS.get() {
        Some(end) => own.min(end.saturating_duration_since(std::time::Instant::now())),
        None => own,
    }
}

pub mod postgres;
pub mod sqlite;

/// Why the daemon's store could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The configuration names no store bashgate can use (`[serve] store`,
    /// its password, its certificates).
    #[error("{0}")]
    Config(String),
    /// The database could not be reached or refused a statement.
    #[error("{0}")]
    Database(String),
    /// The database did not answer within the store's deadline.
    #[error("{store}: no answer within {ms} ms")]
    TimedOut { store: String, ms: u128 },
    /// The database's schema is not one this bashgate can use as it is.
    #[error("{0}")]
    Schema(String),
    /// The machine failed it: a file, the random source, the store's own
    /// runtime.
    #[error("{0}")]
    System(String),
    /// Every approval id tried was taken.
    #[error("cannot find a free approval id")]
    NoFreeId,
    /// The audit log, which the SQLite store keeps in a database of its own.
    #[error(transparent)]
    Audit(#[from] bashgate::audit::AuditError),
    /// What the store's own check found wrong (see [`exercise`]).
    #[error("store check failed: {0}")]
    Check(String),
}

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use bashgate::audit::{Filter, Record};
use bashgate::config::Config;
use bashgate::taint::{self, SessionState, SessionStore, Source, StateError, Taint};

/// A pending or answered approval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Approval {
    pub id: String,
    pub session: String,
    pub tool: String,
    pub command: Option<String>,
    pub cwd: Option<String>,
    /// Why the gate asked.
    pub reason: String,
    pub created_ms: i64,
    pub expires_ms: i64,
    /// pending, approved, denied or expired.
    pub status: String,
    pub answered_ms: Option<i64>,
    /// The person's note, if any.
    pub answer: Option<String>,
}

impl Approval {
    /// A pending approval past its expiry reads as expired even before a
    /// sweeper has marked it.
    fn settle(mut self) -> Approval {
        if self.status == "pending" && self.expires_ms <= taint::now_ms() as i64 {
            self.status = "expired".into();
        }
        self
    }
}

/// A session as the admin API lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SessionRow {
    pub name: String,
    pub created_ms: i64,
    pub taint: Taint,
    pub sources: Vec<Source>,
}

/// The outcome of answering an approval.
pub enum Answered {
    Done(Approval),
    NotFound,
    /// Already answered or expired.
    Closed(Approval),
}

/// Called when an approval may have changed, in this process or another.
pub type OnChange = Arc<dyn Fn() + Send + Sync>;

/// Told what the store could not do that answers nobody (the daemon logs
/// it): an announcement not sent, the listening connection lost.
pub type Warn = Arc<dyn Fn(String) + Send + Sync>;

/// The daemon's state, whichever engine holds it.
pub trait DaemonStore: Send + Sync {
    /// Where the state lives, for logs (no password).
    fn describe(&self) -> String;

    /// Creates a session; `false` when the name is taken.
    fn create_session(&self, name: &str, token_hash: &str) -> Result<bool, StoreError>;
    /// The session a token hash belongs to.
    fn session_for(&self, token_hash: &str) -> Result<Option<String>, StoreError>;
    fn sessions(&self) -> Result<Vec<SessionRow>, StoreError>;
    /// Deletes a session (its token stops working) and denies its pending
    /// approvals; `false` when there is no such session.
    fn delete_session(&self, name: &str) -> Result<bool, StoreError>;
    fn load_state(&self, name: &str) -> Result<Option<SessionState>, StoreError>;
    /// The session a token hash belongs to and its state: what every
    /// check reads first (PostgreSQL reads both in one statement).
    fn session_state_for(
        &self,
        token_hash: &str,
    ) -> Result<Option<(String, SessionState)>, StoreError> {
        let Some(name) = self.session_for(token_hash)? else {
            return Ok(None);
        };
        Ok(self.load_state(&name)?.map(|s| (name, s)))
    }
    /// Applies `f` to a session's state in one transaction that holds the
    /// session's row, so concurrent changes through other daemons are not
    /// lost; `false` when the session does not exist.
    fn update(&self, name: &str, f: &mut dyn FnMut(&mut SessionState)) -> Result<bool, StoreError>;

    /// Stores a new pending approval under a fresh short id.
    fn insert_approval(&self, a: &mut Approval) -> Result<(), StoreError>;
    fn approval(&self, id: &str) -> Result<Option<Approval>, StoreError>;
    /// Approvals, newest first; only pending ones unless `all`.
    fn approvals(&self, all: bool, limit: usize) -> Result<Vec<Approval>, StoreError>;
    /// Approves or denies a pending approval that has not expired.
    fn answer(&self, id: &str, approve: bool, note: Option<&str>) -> Result<Answered, StoreError>;
    /// Marks pending approvals past their expiry as expired and returns
    /// them; each is returned to exactly one caller, even with several
    /// daemons sweeping.
    fn expire_due(&self) -> Result<Vec<Approval>, StoreError>;
    fn count_pending(&self) -> Result<i64, StoreError>;

    /// Writes the daemon's audit records in one transaction. A record with
    /// a `uid` already stored is skipped (a batch re-sent after a failure).
    fn write_audit(&self, records: &[(String, Record)]) -> Result<(), StoreError>;
    /// Audit records matching a filter, newest first.
    fn query_audit(&self, f: &Filter) -> Result<Vec<Record>, StoreError>;

    /// Calls `f` when another daemon changes an approval, so long polls
    /// here wake at once (PostgreSQL: LISTEN/NOTIFY). One process on
    /// SQLite has no other daemon to hear.
    fn watch(&self, f: OnChange, warn: Warn) -> Result<(), StoreError>;

    /// Opens connections ahead of the first requests, where the engine
    /// has any to open (the daemon calls it once it has started).
    fn warm(&self) {}
}

impl dyn DaemonStore + '_ {
    /// Applies `f` to a session's state; `None` when there is no session.
    pub fn update_state<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut SessionState) -> T,
    ) -> Result<Option<T>, StoreError> {
        let mut f = Some(f);
        let mut out = None;
        let found = self.update(name, &mut |s| {
            if let Some(f) = f.take() {
                out = Some(f(s));
            }
        })?;
        Ok(if found { out } else { None })
    }
}

/// Which engine holds the daemon's state.
#[derive(Debug, Clone, PartialEq)]
pub enum Engine {
    /// SQLite files: the daemon's database and the audit database.
    Sqlite { database: PathBuf, audit: PathBuf },
    /// A PostgreSQL connection string (without its password) and where
    /// the password comes from.
    Postgres {
        url: String,
        options: postgres::Options,
    },
}

impl Engine {
    /// The engine the configuration names: `[serve] store`.
    pub fn of(config: &Config) -> Result<Engine, StoreError> {
        match config.serve.store.as_deref().map(str::trim) {
            None | Some("") | Some("sqlite") => Ok(Engine::Sqlite {
                database: config.database(),
                audit: config.audit_path(),
            }),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                postgres::check_url(url)?;
                Ok(Engine::Postgres {
                    url: url.to_string(),
                    options: postgres::Options::of(&config.serve),
                })
            }
            Some(other) => Err(StoreError::Config(format!(
                "[serve] store = `{other}`: use \"sqlite\" (the default) or a \
                 postgres://USER@HOST:PORT/DATABASE connection string"
            ))),
        }
    }

    /// Opens the store (PostgreSQL: connects and applies migrations).
    pub fn open(&self) -> Result<Arc<dyn DaemonStore>, StoreError> {
        Ok(match self {
            Engine::Sqlite { database, audit } => {
                Arc::new(sqlite::SqliteStore::open(database, audit.clone())?)
            }
            Engine::Postgres { url, options } => Arc::new(postgres::PgStore::open(url, options)?),
        })
    }

    /// Whether the store is reachable and its schema current, changing
    /// nothing: a line saying so, or why not.
    pub fn check(&self) -> Result<String, StoreError> {
        match self {
            Engine::Sqlite { database, .. } => Ok(format!(
                "sqlite:{} ({})",
                database.display(),
                if database.exists() {
                    "exists"
                } else {
                    "created when the daemon starts"
                }
            )),
            Engine::Postgres { url, options } => {
                let s = postgres::PgStore::connect_only(url, options)?;
                let (have, know) = s.schema_version()?;
                let what = s.describe();
                match have.cmp(&know) {
                    std::cmp::Ordering::Equal => {
                        Ok(format!("{what}: reachable, schema at version {have} (current)"))
                    }
                    std::cmp::Ordering::Less => Err(StoreError::Schema(format!(
                        "{what}: reachable, but its schema is at version {have} of {know}; \
                         `bashgate serve` migrates it when it starts"
                    ))),
                    std::cmp::Ordering::Greater => Err(StoreError::Schema(format!(
                        "{what}: its schema is at version {have}, newer than this bashgate knows ({know}); upgrade bashgate"
                    ))),
                }
            }
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Engine::Postgres { .. })
    }
}

pub fn token_hash(token: &str) -> String {
    taint::hex(&Sha256::digest(token.as_bytes()))
}

/// `n` bytes from the system's random source.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, StoreError> {
    use std::io::Read;
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| StoreError::System(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buf)
}

/// A short approval id: 6 characters a person can type (no 0/o, 1/l).
pub fn short_id() -> Result<String, StoreError> {
    const ALPHABET: &[u8] = b"23456789abcdefghijkmnpqrstuvwxyz";
    Ok(random_bytes(6)?
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect())
}

/// A state column that does not parse is read as fully tainted (taint is
/// never lost by accident).
pub(crate) fn parse_state(text: &str) -> SessionState {
    serde_json::from_str(text).unwrap_or_else(|_| SessionState {
        taint: Taint {
            corruption: true,
            secret: true,
        },
        ..Default::default()
    })
}

pub(crate) fn state_text(s: &SessionState) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The engine's view of the daemon's sessions.
pub struct DaemonSessions(pub Arc<dyn DaemonStore>);

thread_local! {
    /// The state read with the request's token, for the decision the same
    /// thread makes next (see [`DaemonSessions::read_with`]).
    static READ_WITH_TOKEN: std::cell::RefCell<Option<(String, SessionState)>> =
        const { std::cell::RefCell::new(None) };
}

impl DaemonSessions {
    /// Runs `f` (a decision for `session`) with the session's state as it
    /// was read with the request's token, so the decision does not read it
    /// again. Changes still go to the store, in a transaction of their own.
    /// Returns what `f` returned and, when `f` changed nothing, the state it
    /// ran with (still the session's state as of the read).
    pub fn read_with<T>(
        session: &str,
        state: SessionState,
        f: impl FnOnce() -> T,
    ) -> (T, Option<SessionState>) {
        /// Forgets the state however `f` ends (a panic too): a later
        /// request on this thread must not decide with it.
        struct Forget;
        impl Drop for Forget {
            fn drop(&mut self) {
                READ_WITH_TOKEN.set(None);
            }
        }
        READ_WITH_TOKEN.set(Some((session.to_string(), state)));
        let _forget = Forget;
        let out = f();
        // A change made during `f` took the state away (`update_with`).
        let unchanged = READ_WITH_TOKEN.take().map(|(_, s)| s);
        (out, unchanged)
    }
}

impl SessionStore for DaemonSessions {
    fn runs_are_answers(&self) -> bool {
        false
    }

    fn load(&self, session: &str) -> Result<SessionState, StateError> {
        let read = READ_WITH_TOKEN.with_borrow(|r| {
            r.as_ref()
                .filter(|(name, _)| name == session)
                .map(|(_, s)| s.clone())
        });
        if let Some(s) = read {
            return Ok(s);
        }
        match self.0.load_state(session) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(StateError::Db(format!("no session `{session}`"))),
            Err(e) => Err(StateError::Db(e.to_string())),
        }
    }

    fn update_with(
        &self,
        session: &str,
        f: Box<dyn FnOnce(&mut SessionState) + '_>,
    ) -> Result<(), StateError> {
        // What was read with the token is no longer the state.
        READ_WITH_TOKEN.set(None);
        match self.0.update_state(session, f) {
            Ok(Some(())) => Ok(()),
            Ok(None) => Err(StateError::Db(format!("no session `{session}`"))),
            Err(e) => Err(StateError::Db(e.to_string())),
        }
    }
}

/// The same behaviour, asserted against any engine: the SQLite unit test
/// runs it, and the PostgreSQL end-to-end tests run it on a real server.
pub fn exercise(store: &dyn DaemonStore) -> Result<(), StoreError> {
    let check = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(StoreError::Check(what.to_string()))
        }
    };
    let name = format!("x-{}", taint::hex(&random_bytes(4)?));
    let tok = token_hash(&name);
    check(
        store.create_session(&name, &tok)?,
        "a new session is created",
    )?;
    check(
        !store.create_session(&name, &token_hash("other"))?,
        "a taken name is refused",
    )?;
    check(
        store.session_for(&tok)?.as_deref() == Some(name.as_str()),
        "the token finds its session",
    )?;
    check(
        store.session_for(&token_hash("nope"))?.is_none(),
        "an unknown token finds nothing",
    )?;
    let added = store.update_state(&name, |s| {
        s.add_source(Source {
            flag: "secret".into(),
            tool: "t".into(),
            detail: "d".into(),
            at_ms: 1,
        })
    })?;
    check(added.is_some(), "a session's state is updated")?;
    check(
        store.update_state("no-such-session", |_| ())?.is_none(),
        "a missing session is not updated",
    )?;
    check(
        store.load_state(&name)?.is_some_and(|s| s.taint.secret),
        "taint is kept",
    )?;
    let mut a = Approval {
        id: String::new(),
        session: name.clone(),
        tool: "Bash".into(),
        command: Some("curl x".into()),
        cwd: None,
        reason: "r".into(),
        created_ms: taint::now_ms() as i64,
        expires_ms: i64::MAX,
        status: "pending".into(),
        answered_ms: None,
        answer: None,
    };
    store.insert_approval(&mut a)?;
    check(a.id.len() == 6, "an approval gets a short id")?;
    check(
        store.approval(&a.id)?.as_ref() == Some(&a),
        "an approval reads back as stored",
    )?;
    check(
        store.approvals(false, 1000)?.iter().any(|x| x.id == a.id),
        "a pending approval is listed",
    )?;
    check(
        matches!(store.answer(&a.id, true, Some("ok"))?, Answered::Done(x) if x.status == "approved" && x.answer.as_deref() == Some("ok")),
        "an approval is answered",
    )?;
    check(
        matches!(store.answer(&a.id, false, None)?, Answered::Closed(_)),
        "an answered approval stays answered",
    )?;
    check(
        matches!(store.answer("nope22", true, None)?, Answered::NotFound),
        "a missing approval is not found",
    )?;
    let mut due = a.clone();
    due.expires_ms = taint::now_ms() as i64 - 1;
    due.status = "pending".into();
    store.insert_approval(&mut due)?;
    check(
        store
            .approval(&due.id)?
            .is_some_and(|x| x.status == "expired"),
        "an approval past its expiry reads as expired",
    )?;
    check(
        store.expire_due()?.iter().any(|x| x.id == due.id),
        "the sweep expires it",
    )?;
    check(
        !store.expire_due()?.iter().any(|x| x.id == due.id),
        "and only once",
    )?;
    let mut held = a.clone();
    held.status = "pending".into();
    store.insert_approval(&mut held)?;
    check(store.delete_session(&name)?, "a session is deleted")?;
    check(
        store.session_for(&tok)?.is_none(),
        "a deleted session's token stops working",
    )?;
    check(
        store
            .approval(&held.id)?
            .is_some_and(|x| x.status == "denied"),
        "a deleted session's pending approvals are denied",
    )?;
    let r = Record {
        time: "t".into(),
        unix_ms: 7,
        session: name.clone(),
        event: "daemon-check".into(),
        tool: "Bash".into(),
        command: Some("ls".into()),
        layer: "verdict".into(),
        decision: "allow".into(),
        reason: "r".into(),
        ..Default::default()
    };
    let uid = format!("{name}-1");
    store.write_audit(&[(uid.clone(), r.clone())])?;
    store.write_audit(&[(uid, r.clone())])?;
    let rows = store.query_audit(&Filter {
        session: Some(name.clone()),
        limit: 10,
        ..Default::default()
    })?;
    check(rows == vec![r], "an audit row re-sent is stored once")?;
    Ok(())
}
