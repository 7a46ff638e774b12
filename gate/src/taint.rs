//! Per-session taint: two flags, corruption (the agent has read content an
//! attacker may control) and secret (it has read secrets), with the events
//! that set them and the session's Cop cache.
//!
//! Each session is one JSON file in `<state dir>/sessions/`. Readers read it
//! without locking: writers replace it atomically (write a temporary file in
//! the same directory, fsync, rename), so a reader sees the old state or the
//! new one, never half of either, and a crash mid-write leaves the old file.
//! Writers serialize on an exclusive lock of a sibling `.lock` file, so
//! concurrent hook processes of one session never lose each other's taint.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// At most this many taint events are kept per session (the flags are
/// never dropped).
pub const MAX_SOURCES: usize = 512;
/// At most this many Cop answers are cached per session.
pub const MAX_CACHE: usize = 512;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taint {
    pub corruption: bool,
    pub secret: bool,
}

impl Taint {
    pub fn any(self) -> bool {
        self.corruption || self.secret
    }

    pub fn both(self) -> bool {
        self.corruption && self.secret
    }

    pub fn union(self, o: Taint) -> Taint {
        Taint {
            corruption: self.corruption || o.corruption,
            secret: self.secret || o.secret,
        }
    }

    pub fn describe(self) -> &'static str {
        match (self.corruption, self.secret) {
            (false, false) => "untainted",
            (true, false) => "tainted by untrusted content",
            (false, true) => "tainted by secrets",
            (true, true) => "tainted by untrusted content and secrets",
        }
    }
}

/// Why a flag was set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// "corruption" or "secret".
    pub flag: String,
    pub tool: String,
    pub detail: String,
    pub at_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedReview {
    pub flagged: bool,
    pub reason: String,
    pub at_ms: u64,
}

/// What the person answered about one command in this session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    pub approved: bool,
    /// The command as written (shortened), for `bashgate approvals`.
    pub command: String,
    /// The client's id for the tool call that asked (`tool_use_id` in its
    /// hook events), when it gives one: only that call's post-tool event
    /// is the person's approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    pub at_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    pub taint: Taint,
    pub sources: Vec<Source>,
    pub cop_cache: BTreeMap<String, CachedReview>,
    /// Commands the person was asked about and not yet seen to run, by
    /// fingerprint (see `remember.rs`), with the command and when.
    pub asked: BTreeMap<String, Remembered>,
    /// The person's answers, by fingerprint: the same command is not asked
    /// about again in this session.
    pub remembered: BTreeMap<String, Remembered>,
    /// The project's root as the session's first event found it, when the
    /// client does not name its project directory (see `hook::anchors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
}

impl SessionState {
    /// A taint that could not be recorded may have been either flag.
    pub fn assume_lost(&mut self, why: &str) {
        for flag in ["corruption", "secret"] {
            self.add_source(Source {
                flag: flag.into(),
                tool: "bashgate".into(),
                detail: format!("bashgate could not record what an earlier tool call read ({why}), so it assumes the worst until `bashgate taint clear`"),
                at_ms: now_ms(),
            });
        }
    }

    pub fn add_source(&mut self, s: Source) {
        match s.flag.as_str() {
            "corruption" => self.taint.corruption = true,
            "secret" => self.taint.secret = true,
            _ => {}
        }
        if self.sources.len() < MAX_SOURCES {
            self.sources.push(s);
        }
    }

    pub fn cache(&mut self, key: String, review: CachedReview) {
        if self.cop_cache.len() >= MAX_CACHE {
            if let Some(oldest) = self
                .cop_cache
                .iter()
                .min_by_key(|(_, v)| v.at_ms)
                .map(|(k, _)| k.clone())
            {
                self.cop_cache.remove(&oldest);
            }
        }
        self.cop_cache.insert(key, review);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state directory {dir}: {source}")]
    Io { dir: PathBuf, source: io::Error },
    #[error("session database: {0}")]
    Db(String),
    #[error(
        "session state {file} is unreadable ({message}); treating the session as fully tainted"
    )]
    Corrupt { file: PathBuf, message: String },
}

/// The sessions directory under a state directory.
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(state_dir: &Path) -> Store {
        Store {
            dir: state_dir.join("sessions"),
        }
    }

    /// The file stem for a session id: the id itself when it is short and
    /// plain, else a hash of it.
    pub fn stem(session: &str) -> String {
        let plain = !session.is_empty()
            && session.len() <= 96
            && !session.starts_with('.')
            && session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if plain {
            session.to_string()
        } else {
            let h = Sha256::digest(session.as_bytes());
            format!("h-{}", hex(&h[..16]))
        }
    }

    pub fn path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.json", Store::stem(session)))
    }

    fn lock_path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.lock", Store::stem(session)))
    }

    /// Reads a session's state; a session never seen is clean.
    pub fn load(&self, session: &str) -> Result<SessionState, StateError> {
        let file = self.path(session);
        match fs::read(&file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| StateError::Corrupt {
                file,
                message: e.to_string(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(SessionState::default()),
            Err(e) => Err(StateError::Io {
                dir: self.dir.clone(),
                source: e,
            }),
        }
    }

    /// Applies `f` to a session's state under the session's lock and
    /// replaces the file atomically. A corrupt file is replaced by a fully
    /// tainted state before `f` runs (taint is never lost by accident).
    pub fn update<T>(
        &self,
        session: &str,
        f: impl FnOnce(&mut SessionState) -> T,
    ) -> Result<T, StateError> {
        let io_err = |source| StateError::Io {
            dir: self.dir.clone(),
            source,
        };
        crate::private::create_dir(&self.dir).map_err(io_err)?;
        let lock = OpenOptions::new()
            .create(true)
            .mode(0o600)
            .truncate(false)
            .write(true)
            .open(self.lock_path(session))
            .map_err(io_err)?;
        lock.lock().map_err(io_err)?;
        let mut state = match self.load(session) {
            Ok(s) => s,
            Err(StateError::Corrupt { .. }) => SessionState {
                taint: Taint {
                    corruption: true,
                    secret: true,
                },
                ..Default::default()
            },
            Err(e) => return Err(e),
        };
        let out = f(&mut state);
        self.write_atomic(session, &state).map_err(io_err)?;
        drop(lock);
        Ok(out)
    }

    fn write_atomic(&self, session: &str, state: &SessionState) -> io::Result<()> {
        let bytes = serde_json::to_vec(state).map_err(io::Error::other)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)?;
        tmp.write_all(&bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(self.path(session)).map_err(|e| e.error)?;
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Removes a session's state (taint and cache), and any mark that its
    /// taint was lost.
    pub fn clear(&self, session: &str) -> Result<bool, StateError> {
        let io_err = |source| StateError::Io {
            dir: self.dir.clone(),
            source,
        };
        for marker in self.lost_markers(session) {
            let _ = fs::remove_file(marker);
        }
        match fs::remove_file(self.path(session)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_err(e)),
        }
    }

    /// Where the mark that a session's taint could not be recorded goes:
    /// beside its state, and in a directory on another filesystem (the
    /// runtime directory or the temporary one), for when the state's disk
    /// is full or read-only.
    fn lost_markers(&self, session: &str) -> Vec<PathBuf> {
        let stem = Store::stem(session);
        let elsewhere = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let which = hex(&Sha256::digest(self.dir.to_string_lossy().as_bytes())[..8]);
        vec![
            self.dir.join(format!("{stem}.lost")),
            elsewhere
                .join(format!("bashgate-lost-{which}"))
                .join(format!("{stem}.lost")),
        ]
    }

    /// Marks that a taint for this session could not be recorded; the
    /// session is then treated as carrying every flag. Returns whether any
    /// mark was written.
    pub fn mark_lost(&self, session: &str, why: &str) -> bool {
        let mut any = false;
        for m in self.lost_markers(session) {
            if let Some(dir) = m.parent() {
                let _ = crate::private::create_dir(dir);
            }
            any |= fs::write(&m, why.as_bytes()).is_ok() || m.exists();
        }
        any
    }

    /// Why this session's taint was lost, if it was.
    pub fn lost(&self, session: &str) -> Option<String> {
        self.lost_markers(session).into_iter().find_map(|m| {
            fs::metadata(&m).ok()?;
            Some(
                fs::read_to_string(&m)
                    .ok()
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| "a taint could not be recorded".into()),
            )
        })
    }
}

/// Where sessions' state lives: one JSON file per session (the hooks), or
/// the daemon's database. The engine reads and updates taint through this.
pub trait SessionStore {
    fn load(&self, session: &str) -> Result<SessionState, StateError>;
    /// Applies `f` to the session's state atomically.
    fn update_with(
        &self,
        session: &str,
        f: Box<dyn FnOnce(&mut SessionState) + '_>,
    ) -> Result<(), StateError>;
    /// Marks that a taint could not be recorded (see `Store::mark_lost`).
    /// A store that cannot mark returns `false`.
    fn mark_lost(&self, _session: &str, _why: &str) -> bool {
        false
    }
    /// Why a taint of this session was lost, if one was.
    fn lost(&self, _session: &str) -> Option<String> {
        None
    }
    /// Whether a command the person was asked about and that then ran was
    /// approved by them: true where the client itself asks the person (the
    /// hooks). The daemon's reports come from containers, which are the
    /// agent's side; there only `bashgate approve` answers.
    fn runs_are_answers(&self) -> bool {
        true
    }
}

impl SessionStore for Store {
    fn load(&self, session: &str) -> Result<SessionState, StateError> {
        Store::load(self, session)
    }

    fn mark_lost(&self, session: &str, why: &str) -> bool {
        Store::mark_lost(self, session, why)
    }

    fn lost(&self, session: &str) -> Option<String> {
        Store::lost(self, session)
    }

    fn update_with(
        &self,
        session: &str,
        f: Box<dyn FnOnce(&mut SessionState) + '_>,
    ) -> Result<(), StateError> {
        self.update(session, f)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(flag: &str, n: usize) -> Source {
        Source {
            flag: flag.into(),
            tool: "t".into(),
            detail: format!("{n}"),
            at_ms: n as u64,
        }
    }

    #[test]
    fn new_sessions_are_clean_and_updates_persist() {
        let t = tempfile::tempdir().unwrap();
        let s = Store::new(t.path());
        assert_eq!(s.load("abc").unwrap().taint, Taint::default());
        s.update("abc", |st| st.add_source(src("corruption", 1)))
            .unwrap();
        let st = s.load("abc").unwrap();
        assert!(st.taint.corruption && !st.taint.secret);
        assert_eq!(st.sources.len(), 1);
        assert!(s.clear("abc").unwrap());
        assert!(!s.load("abc").unwrap().taint.any());
    }

    #[test]
    fn odd_session_ids_are_hashed() {
        assert_eq!(Store::stem("5f1c-aa_b.c"), "5f1c-aa_b.c");
        assert!(Store::stem("../../etc/passwd").starts_with("h-"));
        assert!(Store::stem("").starts_with("h-"));
        assert!(Store::stem(&"x".repeat(200)).starts_with("h-"));
    }

    #[test]
    fn corrupt_state_reads_as_error_and_updates_as_fully_tainted() {
        let t = tempfile::tempdir().unwrap();
        let s = Store::new(t.path());
        fs::create_dir_all(t.path().join("sessions")).unwrap();
        fs::write(s.path("x"), b"{not json").unwrap();
        assert!(matches!(s.load("x"), Err(StateError::Corrupt { .. })));
        s.update("x", |_| ()).unwrap();
        assert!(s.load("x").unwrap().taint.both());
    }

    #[test]
    fn threads_do_not_lose_updates() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().to_path_buf();
        let hs: Vec<_> = (0..16)
            .map(|n| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    Store::new(&dir)
                        .update("s", |st| {
                            st.add_source(src(if n % 2 == 0 { "corruption" } else { "secret" }, n))
                        })
                        .unwrap()
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let st = Store::new(&dir).load("s").unwrap();
        assert!(st.taint.both());
        assert_eq!(st.sources.len(), 16);
    }

    #[test]
    fn cache_is_bounded() {
        let mut st = SessionState::default();
        for n in 0..(MAX_CACHE + 10) {
            st.cache(
                format!("{n}"),
                CachedReview {
                    flagged: false,
                    reason: String::new(),
                    at_ms: n as u64,
                },
            );
        }
        assert_eq!(st.cop_cache.len(), MAX_CACHE);
        assert!(!st.cop_cache.contains_key("0"));
    }
}
