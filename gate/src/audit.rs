//! The audit log: every decision in an SQLite database (WAL mode) in the
//! state directory, and `bashgate audit` to read it. Opened only when a
//! record is written or read. A failing write is reported on stderr by the
//! caller and never changes a decision.
//!
//! A process that decides once (a hook, `bashgate run`) does not open the
//! database: it appends its record as one JSON line to the spool beside it
//! (`audit.db.pending`), one `write` under a shared lock, and exits. The
//! spool is moved into the database, in one transaction, by the next
//! reader (`bashgate audit`) or by the append that finds it past
//! `SPOOL_DRAIN_BYTES`. Each spooled record carries a unique id, so a
//! drain cut short between its commit and the spool's truncation inserts
//! nothing twice.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{params, params_from_iter, Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::call::ToolCall;
use crate::decision::{excerpt, Decision, Permission};
use crate::engine::Outcome;

/// The spool's size past which an append moves it into the database.
const SPOOL_DRAIN_BYTES: u64 = 256 * 1024;

/// The WAL size past which a write checkpoints the database.
const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;

/// The schema's migrations, in order; `PRAGMA user_version` counts those
/// applied. Append, never edit.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS decisions (
    id         INTEGER PRIMARY KEY,
    time       TEXT    NOT NULL,
    unix_ms    INTEGER NOT NULL,
    session    TEXT    NOT NULL,
    event      TEXT    NOT NULL,
    tool       TEXT    NOT NULL,
    command    TEXT,
    cwd        TEXT,
    verdict    TEXT,
    findings   TEXT,
    corruption INTEGER,
    secret     INTEGER,
    layer      TEXT    NOT NULL,
    rule       TEXT,
    decision   TEXT    NOT NULL,
    reason     TEXT    NOT NULL
);",
    // 2: spooled records' ids (NULL for records written directly).
    "ALTER TABLE decisions ADD COLUMN uid TEXT;
     CREATE UNIQUE INDEX decisions_uid ON decisions(uid);",
];

/// One audited decision.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub time: String,
    pub unix_ms: i64,
    pub session: String,
    pub event: String,
    pub tool: String,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub verdict: Option<String>,
    /// JSON array of the analyzer's findings.
    pub findings: Option<String>,
    pub corruption: Option<bool>,
    pub secret: Option<bool>,
    pub layer: String,
    pub rule: Option<String>,
    pub decision: String,
    pub reason: String,
}

impl Record {
    /// A record of a decision about one call, stamped now.
    pub fn decided(session: &str, event: &str, tool: &str, cwd: &Path, d: &Decision) -> Record {
        let now = crate::taint::now_ms() as i64;
        Record {
            time: rfc3339(now),
            unix_ms: now,
            session: session.to_string(),
            event: event.to_string(),
            tool: tool.to_string(),
            cwd: Some(cwd.display().to_string()),
            layer: d.layer.as_str().to_string(),
            rule: d.rule.map(|r| r.id().to_string()),
            decision: Record::word(d).to_string(),
            reason: d.reason.clone(),
            ..Default::default()
        }
    }

    /// The audit's word for a decision. An allow no person stands behind
    /// is `pass`: bashgate had no objection and the client's own rules
    /// decided. An allow that holds only fenced is its own kind of answer.
    pub fn word(d: &Decision) -> &'static str {
        match d.permission {
            Permission::Allow if d.confined() => "allow-confined",
            Permission::Allow if !d.by_person() => "pass",
            p => p.as_str(),
        }
    }

    /// The record as `bashgate audit --json` prints it: the findings as
    /// the JSON array they are, not the text the database keeps.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(f) = &self.findings {
            v["findings"] = serde_json::from_str(f).unwrap_or_else(|_| f.clone().into());
        }
        v
    }

    /// The record of an engine outcome: the decision with the command, its
    /// verdict and findings, and the taint it was decided under.
    pub fn of_outcome(call: &ToolCall, event: &str, outcome: &Outcome) -> Record {
        let mut r = Record::decided(call.session, event, call.tool, call.cwd, &outcome.decision);
        r.command = outcome
            .command
            .clone()
            .or_else(|| Some(excerpt(&call.input.to_string(), 2000)));
        r.verdict = outcome.verdict.map(|v| v.as_str().to_string());
        r.findings = outcome
            .analysis
            .as_ref()
            .map(|a| serde_json::to_string(&a.findings).unwrap_or_default());
        if let Some(t) = outcome.taint {
            r.corruption = Some(t.corruption);
            r.secret = Some(t.secret);
        }
        r
    }
}

/// The audit database at `path`.
pub struct Audit {
    path: PathBuf,
}

/// A line of the spool.
#[derive(Serialize)]
struct SpoolLine<'a> {
    uid: String,
    #[serde(flatten)]
    record: &'a Record,
}

#[derive(Deserialize)]
struct Spooled {
    uid: String,
    #[serde(flatten)]
    record: Record,
}

/// An id no other record has: process, time and a random part.
pub fn unique_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{:x}-{nanos:x}-{random:016x}", std::process::id())
}

fn lock(f: &File, how: libc::c_int) -> std::io::Result<()> {
    loop {
        if unsafe { libc::flock(f.as_raw_fd(), how) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Filters for `bashgate audit`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub session: Option<String>,
    pub tool: Option<String>,
    pub decision: Option<String>,
    pub layer: Option<String>,
    pub rule: Option<String>,
    /// Only records at or after this time (unix ms).
    pub since_ms: Option<i64>,
    pub limit: usize,
}

/// Why the audit log could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The database refused: opening, writing or reading it.
    #[error("cannot {doing} {}: {source}", path.display())]
    Database {
        doing: &'static str,
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The spool of records on their way to the database.
    #[error("cannot {doing} {}: {source}", path.display())]
    Spool {
        doing: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode an audit record: {0}")]
    Encode(#[from] serde_json::Error),
}

impl AuditError {
    fn database(doing: &'static str, path: &Path) -> impl Fn(rusqlite::Error) -> AuditError {
        let path = path.to_path_buf();
        move |source| AuditError::Database {
            doing,
            path: path.clone(),
            source,
        }
    }

    fn spool(doing: &'static str, path: &Path) -> impl Fn(std::io::Error) -> AuditError {
        let path = path.to_path_buf();
        move |source| AuditError::Spool {
            doing,
            path: path.clone(),
            source,
        }
    }
}

impl Audit {
    pub fn new(path: PathBuf) -> Audit {
        Audit { path }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        // Owner-only: SQLite would make it readable by every local user.
        let _ = crate::private::prepare_file(&self.path);
        let c = Connection::open(&self.path)?;
        c.busy_timeout(Duration::from_secs(5))?;
        // WAL is a property of the file: set it, and the schema, once.
        let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version < MIGRATIONS.len() as i64 {
            c.pragma_update(None, "journal_mode", "WAL")?;
            c.execute_batch("BEGIN IMMEDIATE")?;
            // Read again under the write lock: another process may have
            // migrated in between.
            let migrated = (|| {
                let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                for m in MIGRATIONS.iter().skip(version.max(0) as usize) {
                    c.execute_batch(m)?;
                }
                c.execute_batch(&format!("PRAGMA user_version = {}", MIGRATIONS.len()))
            })();
            match migrated {
                Ok(()) => c.execute_batch("COMMIT")?,
                Err(e) => {
                    let _ = c.execute_batch("ROLLBACK");
                    return Err(e);
                }
            }
        }
        // Commits need no fsync in WAL mode with synchronous=NORMAL; a crash
        // may lose the last records but never corrupts the database.
        c.pragma_update(None, "synchronous", "NORMAL")?;
        // Each hook process opens and closes the database once. Checkpointing
        // on every close costs an fsync per decision; never checkpointing
        // makes every new process rebuild the WAL index from a growing WAL.
        // So: no checkpoint on close, and `write` checkpoints once the WAL
        // passes WAL_CHECKPOINT_BYTES (one fsync per ~60 decisions).
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        Ok(c)
    }

    pub fn write(&self, r: &Record) -> Result<(), AuditError> {
        self.write_all(std::slice::from_ref(r))
    }

    /// Writes records in one transaction (the daemon batches its decisions).
    pub fn write_all(&self, records: &[Record]) -> Result<(), AuditError> {
        let rows: Vec<(Option<&str>, &Record)> = records.iter().map(|r| (None, r)).collect();
        self.insert(&rows)
    }

    /// Writes records that carry their own unique ids, in one transaction;
    /// a record whose id is already stored is skipped (a batch re-sent).
    pub fn write_with_ids(&self, records: &[(String, Record)]) -> Result<(), AuditError> {
        let rows: Vec<(Option<&str>, &Record)> =
            records.iter().map(|(u, r)| (Some(u.as_str()), r)).collect();
        self.insert(&rows)
    }

    /// Inserts rows in one transaction; a row whose id is already there is
    /// skipped (a spool drained twice).
    fn insert(&self, rows: &[(Option<&str>, &Record)]) -> Result<(), AuditError> {
        let mut c = self
            .open()
            .map_err(AuditError::database("open", &self.path))?;
        let failed = AuditError::database("write to", &self.path);
        let tx = c.transaction().map_err(&failed)?;
        for (uid, r) in rows {
            tx.execute(
                "INSERT OR IGNORE INTO decisions (time, unix_ms, session, event, tool, command, cwd,
                    verdict, findings, corruption, secret, layer, rule, decision, reason, uid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    r.time,
                    r.unix_ms,
                    r.session,
                    r.event,
                    r.tool,
                    r.command,
                    r.cwd,
                    r.verdict,
                    r.findings,
                    r.corruption,
                    r.secret,
                    r.layer,
                    r.rule,
                    r.decision,
                    r.reason,
                    uid
                ],
            )
            .map_err(&failed)?;
        }
        tx.commit().map_err(&failed)?;
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_CHECKPOINT_BYTES) {
            // Best effort: a busy database is checkpointed by a later write.
            let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        Ok(())
    }

    fn spool_path(&self) -> PathBuf {
        PathBuf::from(format!("{}.pending", self.path.display()))
    }

    /// Records one decision for a process that decides once: a line
    /// appended to the spool, no database transaction. Drains the spool
    /// when it has grown past `SPOOL_DRAIN_BYTES`.
    pub fn append(&self, r: &Record) -> Result<(), AuditError> {
        let spool = self.spool_path();
        if let Some(dir) = spool.parent() {
            let _ = crate::private::create_dir(dir);
        }
        let failed = AuditError::spool("append to", &spool);
        let mut line = serde_json::to_vec(&SpoolLine {
            uid: unique_id(),
            record: r,
        })?;
        line.push(b'\n');
        let mut f = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&spool)
            .map_err(&failed)?;
        // Shared: appends run side by side; a drain waits for them all.
        lock(&f, libc::LOCK_SH).map_err(&failed)?;
        f.write_all(&line).map_err(&failed)?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        drop(f);
        if size > SPOOL_DRAIN_BYTES {
            self.drain()?;
        }
        Ok(())
    }

    /// Moves the spool into the database; returns how many records it held.
    /// A line that cannot be read (a write cut short by a full disk) is
    /// kept as a record saying so, never dropped in silence.
    pub fn drain(&self) -> Result<usize, AuditError> {
        let spool = self.spool_path();
        let failed = AuditError::spool("drain", &spool);
        let mut f = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&spool)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(failed(e)),
        };
        lock(&f, libc::LOCK_EX).map_err(&failed)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(&failed)?;
        if bytes.is_empty() {
            return Ok(0);
        }
        let mut spooled = Vec::new();
        let mut unreadable = Vec::new();
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<Spooled>(line) {
                Ok(s) => spooled.push(s),
                Err(_) => unreadable.push(String::from_utf8_lossy(line).into_owned()),
            }
        }
        let lost = (!unreadable.is_empty()).then(|| {
            let now = crate::taint::now_ms() as i64;
            Record {
                time: rfc3339(now),
                unix_ms: now,
                session: "?".into(),
                event: "audit".into(),
                tool: "?".into(),
                layer: "audit".into(),
                decision: "error".into(),
                reason: format!(
                    "{} spooled audit line(s) could not be read: {}",
                    unreadable.len(),
                    excerpt(&unreadable.join(" | "), 2000)
                ),
                ..Default::default()
            }
        });
        let mut rows: Vec<(Option<&str>, &Record)> = spooled
            .iter()
            .map(|s| (Some(s.uid.as_str()), &s.record))
            .collect();
        rows.extend(lost.iter().map(|r| (None, r)));
        self.insert(&rows)?;
        f.set_len(0).map_err(&failed)?;
        Ok(spooled.len() + unreadable.len())
    }

    /// Records matching a filter, newest first.
    pub fn query(&self, f: &Filter) -> Result<Vec<Record>, AuditError> {
        // Spooled records first, so the answer has every decision made.
        self.drain()?;
        if !self.path.exists() {
            return Ok(Vec::new());
        }
        let c = Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(AuditError::database("open", &self.path))?;
        let _ = c.busy_timeout(Duration::from_secs(5));
        let mut sql = String::from(
            "SELECT time, unix_ms, session, event, tool, command, cwd, verdict, findings,
                    corruption, secret, layer, rule, decision, reason
             FROM decisions WHERE 1=1",
        );
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        for (col, v) in [
            ("session", &f.session),
            ("tool", &f.tool),
            ("decision", &f.decision),
            ("layer", &f.layer),
            ("rule", &f.rule),
        ] {
            if let Some(v) = v {
                sql.push_str(&format!(" AND {col} = ?"));
                args.push(v.clone().into());
            }
        }
        if let Some(s) = f.since_ms {
            sql.push_str(" AND unix_ms >= ?");
            args.push(s.into());
        }
        sql.push_str(" ORDER BY id DESC LIMIT ?");
        args.push((f.limit as i64).into());
        let read = AuditError::database("read", &self.path);
        let mut st = c.prepare(&sql).map_err(&read)?;
        let rows = st
            .query_map(params_from_iter(args), |row| {
                Ok(Record {
                    time: row.get(0)?,
                    unix_ms: row.get(1)?,
                    session: row.get(2)?,
                    event: row.get(3)?,
                    tool: row.get(4)?,
                    command: row.get(5)?,
                    cwd: row.get(6)?,
                    verdict: row.get(7)?,
                    findings: row.get(8)?,
                    corruption: row.get(9)?,
                    secret: row.get(10)?,
                    layer: row.get(11)?,
                    rule: row.get(12)?,
                    decision: row.get(13)?,
                    reason: row.get(14)?,
                })
            })
            .map_err(&read)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read)
    }
}

/// RFC 3339 UTC time for unix milliseconds.
pub fn rfc3339(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let ms = unix_ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Reads `--since`: a duration back from now (`90s`, `15m`, `2h`, `7d`)
/// or unix seconds.
pub fn parse_since(s: &str, now_ms: i64) -> Option<i64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num.parse().ok()?;
    let mult = match unit {
        "" => return Some(n * 1000),
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    Some(now_ms - n * mult)
}

/// How `bashgate audit` shows a recorded decision word: an allow that
/// holds only fenced is `fenced`, as `bashgate check` says it.
pub fn shown_word(recorded: &str) -> &str {
    match recorded {
        "allow-confined" => "fenced",
        w => w,
    }
}

/// The recorded word a `--decision` filter means (`fenced` is recorded as
/// `allow-confined`, the hook protocol's word).
pub fn recorded_word(filter: &str) -> &str {
    match filter {
        "fenced" => "allow-confined",
        w => w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_767_225_599_000), "2025-12-31T23:59:59.000Z");
        assert_eq!(parse_since("2h", 10_000_000), Some(10_000_000 - 7_200_000));
        assert_eq!(parse_since("17", 0), Some(17_000));
        assert_eq!(parse_since("2w", 0), None);
    }

    #[test]
    fn write_and_query() {
        let t = tempfile::tempdir().unwrap();
        let a = Audit::new(t.path().join("audit.db"));
        assert!(a
            .query(&Filter {
                limit: 10,
                ..Default::default()
            })
            .unwrap()
            .is_empty());
        for (i, d) in ["allow", "deny", "ask"].iter().enumerate() {
            a.write(&Record {
                time: rfc3339(i as i64),
                unix_ms: i as i64,
                session: if i == 0 { "a".into() } else { "b".into() },
                event: "PreToolUse".into(),
                tool: "Bash".into(),
                command: Some(format!("cmd {i}")),
                layer: "cascade".into(),
                decision: d.to_string(),
                reason: "r".into(),
                ..Default::default()
            })
            .unwrap();
        }
        let all = a
            .query(&Filter {
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].decision, "ask");
        let b = a
            .query(&Filter {
                session: Some("b".into()),
                decision: Some("deny".into()),
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].command.as_deref(), Some("cmd 1"));
        let recent = a
            .query(&Filter {
                since_ms: Some(1),
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(recent.len(), 2);
    }

    fn record(i: i64) -> Record {
        Record {
            time: rfc3339(i),
            unix_ms: i,
            session: "s".into(),
            event: "PreToolUse".into(),
            tool: "Bash".into(),
            command: Some(format!("cmd {i}")),
            layer: "cascade".into(),
            decision: "allow".into(),
            reason: "r".into(),
            ..Default::default()
        }
    }

    fn all(a: &Audit) -> Vec<Record> {
        a.query(&Filter {
            limit: 1000,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn appended_records_reach_the_database_once() {
        let t = tempfile::tempdir().unwrap();
        let a = Audit::new(t.path().join("audit.db"));
        a.append(&record(1)).unwrap();
        a.append(&record(2)).unwrap();
        assert!(!t.path().join("audit.db").exists(), "no database on append");
        let got = all(&a);
        assert_eq!(got, vec![record(2), record(1)]);
        // A drain cut short after its commit leaves the lines in the spool:
        // draining them again inserts nothing twice.
        let spool = t.path().join("audit.db.pending");
        a.append(&record(3)).unwrap();
        let pending = std::fs::read(&spool).unwrap();
        assert_eq!(a.drain().unwrap(), 1);
        std::fs::write(&spool, &pending).unwrap();
        assert_eq!(a.drain().unwrap(), 1);
        assert_eq!(all(&a).len(), 3);
        assert_eq!(std::fs::metadata(&spool).unwrap().len(), 0);
    }

    #[test]
    fn a_torn_spool_line_is_recorded_not_dropped() {
        let t = tempfile::tempdir().unwrap();
        let a = Audit::new(t.path().join("audit.db"));
        a.append(&record(1)).unwrap();
        let spool = t.path().join("audit.db.pending");
        let mut f = OpenOptions::new().append(true).open(&spool).unwrap();
        f.write_all(br#"{"uid":"x","time":"1970"#).unwrap();
        let got = all(&a);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].decision, "error");
        assert!(got[0]
            .reason
            .contains("1 spooled audit line(s) could not be read"));
        assert_eq!(got[1], record(1));
    }

    #[test]
    fn concurrent_appends_and_drains_lose_nothing() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("audit.db");
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let a = Audit::new(path);
                    for i in 0..50 {
                        a.append(&record(w * 1000 + i)).unwrap();
                        if i % 10 == 0 {
                            a.drain().unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let a = Audit::new(path);
        let mut got: Vec<i64> = all(&a).iter().map(|r| r.unix_ms).collect();
        got.sort();
        let mut want: Vec<i64> = (0..8)
            .flat_map(|w| (0..50).map(move |i| w * 1000 + i))
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn a_database_of_the_first_schema_is_migrated() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("audit.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch("PRAGMA user_version = 1").unwrap();
            c.execute(
                "INSERT INTO decisions (time, unix_ms, session, event, tool, layer, decision, reason)
                 VALUES ('t', 0, 's', 'e', 'Bash', 'cascade', 'allow', 'old')",
                [],
            )
            .unwrap();
        }
        let a = Audit::new(path.clone());
        a.append(&record(5)).unwrap();
        let got = all(&a);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].reason, "old");
        let c = Connection::open(&path).unwrap();
        let v: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
    }

    #[test]
    fn unwritable_database_is_an_error_not_a_panic() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("file"), "x").unwrap();
        let a = Audit::new(t.path().join("file").join("audit.db"));
        assert!(a.write(&Record::default()).is_err());
        assert!(a.append(&Record::default()).is_err());
    }
}
