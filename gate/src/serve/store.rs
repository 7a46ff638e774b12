//! The daemon's database: sessions (name, token hash, taint state) and
//! approvals, in SQLite (WAL, synchronous=FULL: a committed approval or
//! taint survives a crash of the daemon). Every change is one transaction.
//! Connections are pooled; every call blocks, so async code runs it on the
//! blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::Serialize;
use sha2::{Digest, Sha256};

use bashgate::taint::{self, SessionState, SessionStore, Source, StateError, Taint};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    name        TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    created_ms  INTEGER NOT NULL,
    state       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
    id          TEXT PRIMARY KEY,
    session     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    command     TEXT,
    cwd         TEXT,
    reason      TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL,
    status      TEXT NOT NULL,
    answered_ms INTEGER,
    answer      TEXT
);
CREATE INDEX IF NOT EXISTS approvals_by_status ON approvals (status, expires_ms);
";

/// At most this many idle connections are kept.
const POOL: usize = 16;

pub struct Db {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
}

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

pub fn token_hash(token: &str) -> String {
    taint::hex(&Sha256::digest(token.as_bytes()))
}

/// `n` bytes from the system's random source.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(buf)
}

/// A short approval id: 6 characters a person can type (no 0/o, 1/l).
pub fn short_id() -> Result<String, String> {
    const ALPHABET: &[u8] = b"23456789abcdefghijkmnpqrstuvwxyz";
    Ok(random_bytes(6)?
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect())
}

fn err(path: &Path) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("daemon database {}: {e}", path.display())
}

/// An approval row; a pending one past its expiry reads as expired even
/// before the sweeper has marked it.
fn approval(r: &rusqlite::Row) -> rusqlite::Result<Approval> {
    let mut a = Approval {
        id: r.get(0)?,
        session: r.get(1)?,
        tool: r.get(2)?,
        command: r.get(3)?,
        cwd: r.get(4)?,
        reason: r.get(5)?,
        created_ms: r.get(6)?,
        expires_ms: r.get(7)?,
        status: r.get(8)?,
        answered_ms: r.get(9)?,
        answer: r.get(10)?,
    };
    if a.status == "pending" && a.expires_ms <= taint::now_ms() as i64 {
        a.status = "expired".into();
    }
    Ok(a)
}

const APPROVAL_COLS: &str =
    "id, session, tool, command, cwd, reason, created_ms, expires_ms, status, answered_ms, answer";

impl Db {
    pub fn open(path: &Path) -> Result<Db, String> {
        if let Some(dir) = path.parent().filter(|d| !d.exists()) {
            // Owner-only: it holds taint, approvals and (by default) the
            // admin socket.
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let db = Db {
            path: path.to_path_buf(),
            pool: Mutex::new(Vec::new()),
        };
        let c = db.connect()?;
        c.pragma_update(None, "journal_mode", "WAL")
            .map_err(err(path))?;
        c.execute_batch(SCHEMA).map_err(err(path))?;
        db.put(c);
        Ok(db)
    }

    fn connect(&self) -> Result<Connection, String> {
        let c = Connection::open(&self.path).map_err(err(&self.path))?;
        c.busy_timeout(Duration::from_secs(10))
            .map_err(err(&self.path))?;
        c.pragma_update(None, "synchronous", "FULL")
            .map_err(err(&self.path))?;
        Ok(c)
    }

    fn put(&self, c: Connection) {
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < POOL {
                p.push(c);
            }
        }
    }

    /// Runs `f` on a pooled connection.
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
        let mut c = match pooled {
            Some(c) => c,
            None => self.connect()?,
        };
        let out = f(&mut c).map_err(err(&self.path));
        self.put(c);
        out
    }

    /// Creates a session; `false` when the name is taken.
    pub fn create_session(&self, name: &str, token_hash: &str) -> Result<bool, String> {
        let state = serde_json::to_string(&SessionState::default()).unwrap_or_default();
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO sessions (name, token_hash, created_ms, state) VALUES (?1, ?2, ?3, ?4)",
                params![name, token_hash, taint::now_ms() as i64, state],
            )
            .map(|n| n == 1)
        })
    }

    /// The session a token hash belongs to.
    pub fn session_for(&self, token_hash: &str) -> Result<Option<String>, String> {
        self.with(|c| {
            c.query_row(
                "SELECT name FROM sessions WHERE token_hash = ?1",
                params![token_hash],
                |r| r.get(0),
            )
            .optional()
        })
    }

    pub fn sessions(&self) -> Result<Vec<SessionRow>, String> {
        let rows: Vec<(String, i64, String)> = self.with(|c| {
            let mut st = c.prepare("SELECT name, created_ms, state FROM sessions ORDER BY name")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
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

    /// Deletes a session (its token stops working) and denies its pending
    /// approvals; `false` when there is no such session.
    pub fn delete_session(&self, name: &str) -> Result<bool, String> {
        let now = taint::now_ms() as i64;
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = tx.execute("DELETE FROM sessions WHERE name = ?1", params![name])?;
            tx.execute(
                "UPDATE approvals SET status = 'denied', answered_ms = ?2, answer = 'the session was deleted'
                 WHERE session = ?1 AND status = 'pending'",
                params![name, now],
            )?;
            tx.commit()?;
            Ok(n == 1)
        })
    }

    /// Applies `f` to a session's state in one transaction; `None` when
    /// the session does not exist.
    pub fn update_state<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut SessionState) -> T,
    ) -> Result<Option<T>, String> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(text) = tx
                .query_row(
                    "SELECT state FROM sessions WHERE name = ?1",
                    params![name],
                    |r| r.get::<_, String>(0),
                )
                .optional()?
            else {
                return Ok(None);
            };
            let mut state = parse_state(&text);
            let out = f(&mut state);
            let text = serde_json::to_string(&state).unwrap_or_default();
            tx.execute(
                "UPDATE sessions SET state = ?2 WHERE name = ?1",
                params![name, text],
            )?;
            tx.commit()?;
            Ok(Some(out))
        })
    }

    pub fn load_state(&self, name: &str) -> Result<Option<SessionState>, String> {
        self.with(|c| {
            c.query_row(
                "SELECT state FROM sessions WHERE name = ?1",
                params![name],
                |r| r.get::<_, String>(0),
            )
            .optional()
        })
        .map(|o| o.map(|t| parse_state(&t)))
    }

    /// Stores a new pending approval under a fresh short id.
    pub fn insert_approval(&self, a: &mut Approval) -> Result<(), String> {
        for _ in 0..16 {
            a.id = short_id()?;
            let inserted = self.with(|c| {
                c.execute(
                    &format!(
                        "INSERT OR IGNORE INTO approvals ({APPROVAL_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                    ),
                    params![
                        a.id, a.session, a.tool, a.command, a.cwd, a.reason, a.created_ms,
                        a.expires_ms, a.status, a.answered_ms, a.answer
                    ],
                )
            })?;
            if inserted == 1 {
                return Ok(());
            }
        }
        Err("cannot find a free approval id".into())
    }

    pub fn approval(&self, id: &str) -> Result<Option<Approval>, String> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {APPROVAL_COLS} FROM approvals WHERE id = ?1"),
                params![id],
                approval,
            )
            .optional()
        })
    }

    /// Approvals, newest first; only pending ones unless `all`.
    pub fn approvals(&self, all: bool, limit: usize) -> Result<Vec<Approval>, String> {
        let filter = if all { "" } else { "WHERE status = 'pending'" };
        self.with(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {APPROVAL_COLS} FROM approvals {filter} ORDER BY created_ms DESC LIMIT ?1"
            ))?;
            let rows = st.query_map(params![limit as i64], approval)?;
            rows.collect()
        })
    }

    /// Approves or denies a pending approval that has not expired.
    pub fn answer(&self, id: &str, approve: bool, note: Option<&str>) -> Result<Answered, String> {
        let now = taint::now_ms() as i64;
        let status = if approve { "approved" } else { "denied" };
        let changed = self.with(|c| {
            c.execute(
                "UPDATE approvals SET status = ?2, answered_ms = ?3, answer = ?4
                 WHERE id = ?1 AND status = 'pending' AND expires_ms > ?3",
                params![id, status, now, note],
            )
        })?;
        match self.approval(id)? {
            None => Ok(Answered::NotFound),
            Some(a) if changed == 1 => Ok(Answered::Done(a)),
            Some(a) => Ok(Answered::Closed(a)),
        }
    }

    /// Marks pending approvals past their expiry as expired; returns them.
    pub fn expire_due(&self) -> Result<Vec<Approval>, String> {
        let now = taint::now_ms() as i64;
        self.with(|c| {
            // Most sweeps find nothing: look before taking the write lock.
            let any: Option<i64> = c
                .query_row(
                    "SELECT 1 FROM approvals WHERE status = 'pending' AND expires_ms <= ?1 LIMIT 1",
                    params![now],
                    |r| r.get(0),
                )
                .optional()?;
            if any.is_none() {
                return Ok(Vec::new());
            }
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let due: Vec<Approval> = {
                let mut st = tx.prepare(&format!(
                    "SELECT {APPROVAL_COLS} FROM approvals WHERE status = 'pending' AND expires_ms <= ?1"
                ))?;
                let rows = st.query_map(params![now], approval)?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            if !due.is_empty() {
                tx.execute(
                    "UPDATE approvals SET status = 'expired', answered_ms = ?1
                     WHERE status = 'pending' AND expires_ms <= ?1",
                    params![now],
                )?;
            }
            tx.commit()?;
            Ok(due)
        })
    }

    pub fn count_pending(&self) -> Result<i64, String> {
        self.with(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM approvals WHERE status = 'pending'",
                [],
                |r| r.get(0),
            )
        })
    }
}

/// A state column that does not parse is read as fully tainted (taint is
/// never lost by accident).
fn parse_state(text: &str) -> SessionState {
    serde_json::from_str(text).unwrap_or_else(|_| SessionState {
        taint: Taint {
            corruption: true,
            secret: true,
        },
        ..Default::default()
    })
}

/// The engine's view of the daemon's sessions.
pub struct DbStore(pub Arc<Db>);

impl SessionStore for DbStore {
    fn load(&self, session: &str) -> Result<SessionState, StateError> {
        match self.0.load_state(session) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(StateError::Db(format!("no session `{session}`"))),
            Err(e) => Err(StateError::Db(e)),
        }
    }

    fn update_with(
        &self,
        session: &str,
        f: Box<dyn FnOnce(&mut SessionState) + '_>,
    ) -> Result<(), StateError> {
        match self.0.update_state(session, f) {
            Ok(Some(())) => Ok(()),
            Ok(None) => Err(StateError::Db(format!("no session `{session}`"))),
            Err(e) => Err(StateError::Db(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_and_approvals_persist() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("d.db");
        let db = Db::open(&path).unwrap();
        assert!(db.create_session("a", &token_hash("tok")).unwrap());
        assert!(!db.create_session("a", &token_hash("other")).unwrap());
        assert_eq!(
            db.session_for(&token_hash("tok")).unwrap().as_deref(),
            Some("a")
        );
        assert_eq!(db.session_for(&token_hash("nope")).unwrap(), None);
        db.update_state("a", |s| {
            s.add_source(Source {
                flag: "secret".into(),
                tool: "t".into(),
                detail: "d".into(),
                at_ms: 1,
            })
        })
        .unwrap()
        .unwrap();
        assert!(db.update_state("zz", |_| ()).unwrap().is_none());
        let mut a = Approval {
            id: String::new(),
            session: "a".into(),
            tool: "Bash".into(),
            command: Some("curl x".into()),
            cwd: None,
            reason: "r".into(),
            created_ms: 0,
            expires_ms: i64::MAX,
            status: "pending".into(),
            answered_ms: None,
            answer: None,
        };
        db.insert_approval(&mut a).unwrap();
        assert_eq!(a.id.len(), 6);
        drop(db);
        let db = Db::open(&path).unwrap();
        assert!(db.load_state("a").unwrap().unwrap().taint.secret);
        assert_eq!(db.approvals(false, 10).unwrap().len(), 1);
        assert!(matches!(
            db.answer(&a.id, true, None).unwrap(),
            Answered::Done(x) if x.status == "approved"
        ));
        assert!(matches!(
            db.answer(&a.id, false, None).unwrap(),
            Answered::Closed(_)
        ));
        assert!(matches!(
            db.answer("nope", true, None).unwrap(),
            Answered::NotFound
        ));
        assert_eq!(db.count_pending().unwrap(), 0);
    }
}
