//! The audit log: every decision in an SQLite database (WAL mode) in the
//! state directory, and `bashgate audit` to read it. Opened only when a
//! record is written or read. A failing write is reported on stderr by the
//! caller and never changes a decision.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{params, params_from_iter, Connection, OpenFlags};
use serde::Serialize;

use crate::call::ToolCall;
use crate::decision::{excerpt, Decision};
use crate::engine::Outcome;

const SCHEMA_VERSION: i64 = 1;

/// The WAL size past which a write checkpoints the database.
const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS decisions (
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
);
";

/// One audited decision.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
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
            // An allow that holds only fenced is its own kind of answer.
            decision: if d.confined {
                "allow-confined".to_string()
            } else {
                d.permission.as_str().to_string()
            },
            reason: d.reason.clone(),
            ..Default::default()
        }
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

impl Audit {
    pub fn new(path: PathBuf) -> Audit {
        Audit { path }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let c = Connection::open(&self.path)?;
        c.busy_timeout(Duration::from_secs(5))?;
        // WAL is a property of the file: set it, and the schema, once.
        let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version < SCHEMA_VERSION {
            c.pragma_update(None, "journal_mode", "WAL")?;
            c.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))?;
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

    pub fn write(&self, r: &Record) -> Result<(), String> {
        self.write_all(std::slice::from_ref(r))
    }

    /// Writes records in one transaction (the daemon batches its decisions).
    pub fn write_all(&self, records: &[Record]) -> Result<(), String> {
        let mut c = self
            .open()
            .map_err(|e| format!("cannot open {}: {e}", self.path.display()))?;
        let failed = |e: rusqlite::Error| format!("cannot write to {}: {e}", self.path.display());
        let tx = c.transaction().map_err(failed)?;
        for r in records {
            tx.execute(
                "INSERT INTO decisions (time, unix_ms, session, event, tool, command, cwd, verdict,
                    findings, corruption, secret, layer, rule, decision, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
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
                    r.reason
                ],
            )
            .map_err(failed)?;
        }
        tx.commit().map_err(failed)?;
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_CHECKPOINT_BYTES) {
            // Best effort: a busy database is checkpointed by a later write.
            let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        Ok(())
    }

    /// Records matching a filter, newest first.
    pub fn query(&self, f: &Filter) -> Result<Vec<Record>, String> {
        if !self.path.exists() {
            return Ok(Vec::new());
        }
        let c = Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("cannot open {}: {e}", self.path.display()))?;
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
        let mut st = c
            .prepare(&sql)
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
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
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))
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

    #[test]
    fn unwritable_database_is_an_error_not_a_panic() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("file"), "x").unwrap();
        let a = Audit::new(t.path().join("file").join("audit.db"));
        assert!(a.write(&Record::default()).is_err());
    }
}
