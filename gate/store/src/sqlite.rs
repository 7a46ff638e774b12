//! The daemon's state in SQLite, for one machine: sessions and approvals
//! in the daemon's database (WAL, synchronous=FULL: a committed approval or
//! taint survives a crash of the daemon), its audit in the audit database.
//! Every change is one transaction. Connections are pooled.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::Warn;
use super::{
    parse_state, short_id, state_text, Answered, Approval, DaemonStore, OnChange, SessionRow,
    StoreError,
};
use bashgate::audit::{Audit, Filter, Record};
use bashgate::taint::{self, SessionState};

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

pub struct SqliteStore {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
    /// The daemon's audit records go to the audit database, beside the
    /// hooks' own.
    audit: Audit,
}

fn err(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Database(format!("daemon database {}: {e}", path.display()))
}

/// An approval row; a pending one past its expiry reads as expired even
/// before the sweeper has marked it.
fn approval(r: &rusqlite::Row) -> rusqlite::Result<Approval> {
    Ok(Approval {
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
    }
    .settle())
}

const APPROVAL_COLS: &str =
    "id, session, tool, command, cwd, reason, created_ms, expires_ms, status, answered_ms, answer";

impl SqliteStore {
    pub fn open(path: &Path, audit: PathBuf) -> Result<SqliteStore, StoreError> {
        // Owner-only: it holds taint, approvals and (by default) the
        // admin socket's directory.
        bashgate::private::prepare_file(path)
            .map_err(|e| StoreError::System(format!("cannot create {}: {e}", path.display())))?;
        let db = SqliteStore {
            path: path.to_path_buf(),
            pool: Mutex::new(Vec::new()),
            audit: Audit::new(audit),
        };
        let c = db.connect()?;
        c.pragma_update(None, "journal_mode", "WAL")
            .map_err(err(path))?;
        c.execute_batch(SCHEMA).map_err(err(path))?;
        db.put(c);
        Ok(db)
    }

    fn connect(&self) -> Result<Connection, StoreError> {
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
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
        let mut c = match pooled {
            Some(c) => c,
            None => self.connect()?,
        };
        let out = f(&mut c).map_err(err(&self.path));
        self.put(c);
        out
    }
}

impl DaemonStore for SqliteStore {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    /// Creates a session; `false` when the name is taken.
    fn create_session(&self, name: &str, token_hash: &str) -> Result<bool, StoreError> {
        let state = state_text(&SessionState::default());
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO sessions (name, token_hash, created_ms, state) VALUES (?1, ?2, ?3, ?4)",
                params![name, token_hash, taint::now_ms() as i64, state],
            )
            .map(|n| n == 1)
        })
    }

    /// The session a token hash belongs to.
    fn session_for(&self, token_hash: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT name FROM sessions WHERE token_hash = ?1",
                params![token_hash],
                |r| r.get(0),
            )
            .optional()
        })
    }

    fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
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
    fn delete_session(&self, name: &str) -> Result<bool, StoreError> {
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

    fn update(&self, name: &str, f: &mut dyn FnMut(&mut SessionState)) -> Result<bool, StoreError> {
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
                return Ok(false);
            };
            let mut state = parse_state(&text);
            f(&mut state);
            tx.execute(
                "UPDATE sessions SET state = ?2 WHERE name = ?1",
                params![name, state_text(&state)],
            )?;
            tx.commit()?;
            Ok(true)
        })
    }

    fn load_state(&self, name: &str) -> Result<Option<SessionState>, StoreError> {
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
    fn insert_approval(&self, a: &mut Approval) -> Result<(), StoreError> {
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
        Err(StoreError::NoFreeId)
    }

    fn approval(&self, id: &str) -> Result<Option<Approval>, StoreError> {
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
    fn approvals(&self, all: bool, limit: usize) -> Result<Vec<Approval>, StoreError> {
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
    fn answer(&self, id: &str, approve: bool, note: Option<&str>) -> Result<Answered, StoreError> {
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
    fn expire_due(&self) -> Result<Vec<Approval>, StoreError> {
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

    fn count_pending(&self) -> Result<i64, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM approvals WHERE status = 'pending'",
                [],
                |r| r.get(0),
            )
        })
    }

    fn write_audit(&self, records: &[(String, Record)]) -> Result<(), StoreError> {
        Ok(self.audit.write_with_ids(records)?)
    }

    fn query_audit(&self, f: &Filter) -> Result<Vec<Record>, StoreError> {
        Ok(self.audit.query(f)?)
    }

    fn watch(&self, _: OnChange, _: Warn) -> Result<(), StoreError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_behaves_and_persists() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("d.db");
        let db = SqliteStore::open(&path, t.path().join("audit.db")).unwrap();
        super::super::exercise(&db).unwrap();
        assert!(db.create_session("kept", "h").unwrap());
        drop(db);
        let db = SqliteStore::open(&path, t.path().join("audit.db")).unwrap();
        assert_eq!(db.session_for("h").unwrap().as_deref(), Some("kept"));
        assert_eq!(db.count_pending().unwrap(), 0);
    }

    #[test]
    fn the_state_read_with_the_token_serves_one_decision_only() {
        use bashgate::taint::SessionStore;
        let t = tempfile::tempdir().unwrap();
        let db: std::sync::Arc<dyn DaemonStore> = std::sync::Arc::new(
            SqliteStore::open(&t.path().join("d.db"), t.path().join("a.db")).unwrap(),
        );
        assert!(db.create_session("s", "h").unwrap());
        let sessions = crate::DaemonSessions(db.clone());
        let taint = |s: &mut SessionState| {
            s.taint.corruption = true;
        };
        db.update_state("s", taint).unwrap();
        let (name, read) = db.session_state_for("h").unwrap().unwrap();
        assert_eq!(name, "s");
        assert!(read.taint.corruption);
        // The decision reads what came with the token, not the store again.
        let handed = SessionState::default();
        let (got, unchanged) =
            crate::DaemonSessions::read_with("s", handed, || sessions.load("s").unwrap());
        assert!(!got.taint.corruption);
        // Nothing changed: the state it decided with comes back.
        assert!(unchanged.is_some_and(|s| !s.taint.corruption));
        // Afterwards, and after a panic inside, the store is read.
        assert!(sessions.load("s").unwrap().taint.corruption);
        let _ = std::panic::catch_unwind(|| {
            crate::DaemonSessions::read_with("s", SessionState::default(), || panic!("a bug"))
        });
        assert!(sessions.load("s").unwrap().taint.corruption);
        // A change within the decision is made in the store and read back.
        let (after, unchanged) =
            crate::DaemonSessions::read_with("s", SessionState::default(), || {
                sessions
                    .update_with("s", Box::new(|s: &mut SessionState| s.taint.secret = true))
                    .unwrap();
                sessions.load("s").unwrap()
            });
        assert!(after.taint.corruption && after.taint.secret);
        // What was handed is no longer the state, and is not returned.
        assert!(unchanged.is_none());
    }
}
