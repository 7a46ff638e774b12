//! The daemon's audit writer: one thread writes queued records to the
//! store in batches (one transaction each), so concurrent checks never
//! wait on the store one by one. A check's answer waits for the batch
//! holding its record to be durable (group commit), so a daemon killed
//! mid-load loses no answered row.
//!
//! When the store cannot take a batch (PostgreSQL down, SQLite locked),
//! the batch is appended to a local file of unsent records and synced,
//! which is as durable as a commit; the writer sends that file first, every
//! few seconds and before each batch, until the store takes it. To send
//! it, the writer first renames it under its lock, so an append never waits
//! on the store. Each record
//! carries a unique id, so a batch sent twice is stored once. A failure is
//! reported on stderr and changes no decision.
//!
//! An answer waits for its record no longer than what is left of its
//! request's store budget (`[serve] store_timeout_ms`), so a database that
//! hangs cannot hold answers past the hook's deadline: a record not durable
//! by then is appended to the unsent file by the request itself, under the
//! same id.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use bashgate::audit::{unique_id, Record};
use bashgate_store::DaemonStore;

/// At most this many records per transaction.
const BATCH: usize = 512;

/// The longest an answer waits for its record to be durable.
const COMMIT_WAIT: Duration = Duration::from_secs(10);

/// The least an answer waits for the writer, even when its request's budget
/// is spent (the writer keeps a batch in the unsent file within an fsync
/// once the store has failed).
const LEAST_WAIT: Duration = Duration::from_millis(250);

/// How often unsent records are retried while the daemon is idle.
const RETRY: Duration = Duration::from_secs(2);

type Done = SyncSender<Result<(), String>>;

/// A record, its unique id, and who waits for it to be durable.
type Queued = ((String, Record), Option<Done>);

#[derive(Clone)]
pub struct Auditor {
    tx: Sender<Queued>,
    writer: Arc<Writer>,
}

/// A line of the unsent file.
#[derive(Serialize, Deserialize)]
struct Unsent {
    uid: String,
    record: Record,
}

impl Auditor {
    /// Starts the writer; `unsent` is the local file of records the store
    /// has not taken yet.
    pub fn start(store: Arc<dyn DaemonStore>, unsent: PathBuf) -> Auditor {
        let (tx, rx) = mpsc::channel();
        let writer = Arc::new(Writer {
            store,
            unsent,
            // What a daemon stopped midway left is looked for at the start.
            refused: AtomicBool::new(true),
        });
        let w = writer.clone();
        std::thread::Builder::new()
            .name("bashgate-audit".into())
            .spawn(move || run(&w, rx))
            .expect("the audit thread starts");
        Auditor { tx, writer }
    }

    /// Queues a record without waiting (events that answer nobody).
    pub fn record(&self, r: Record) {
        if self.tx.send(((unique_id(), r), None)).is_err() {
            eprintln!("bashgate serve: the audit writer has stopped; record not written");
        }
    }

    /// Writes a record and returns once it is durable: stored, or in the
    /// unsent file. Waits for the writer no longer than the request's store
    /// budget allows, then keeps the record itself. A record that could not
    /// be kept anywhere is said on stderr; the decision stands.
    pub fn record_durably(&self, r: Record) {
        let entry = (unique_id(), r);
        let (done, wait) = mpsc::sync_channel(1);
        if self.tx.send((entry.clone(), Some(done))).is_err() {
            eprintln!("bashgate serve: the audit writer has stopped; record not written");
            return;
        }
        let limit = bashgate_store::time_left()
            .unwrap_or(COMMIT_WAIT)
            .clamp(LEAST_WAIT, COMMIT_WAIT);
        match wait.recv_timeout(limit) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("bashgate serve: audit record not written: {e}"),
            // The writer is still on an earlier batch (a store that does
            // not answer): kept here under the same id, so storing both
            // copies stores one row.
            Err(_) => match self.writer.keep(std::slice::from_ref(&entry)) {
                Ok(()) => eprintln!(
                    "bashgate serve: an audit record kept in {} (the store did not take it within {} ms)",
                    self.writer.unsent.display(),
                    limit.as_millis()
                ),
                Err(e) => eprintln!("bashgate serve: audit record not written: {e}"),
            },
        }
    }
}

struct Writer {
    store: Arc<dyn DaemonStore>,
    unsent: PathBuf,
    /// The store refused what was sent: taken files wait to be sent again.
    refused: AtomicBool,
}

impl Writer {
    /// Stores a batch, or keeps it in the unsent file.
    fn write(&self, batch: &[(String, Record)]) -> Result<(), String> {
        // When the kept records could not be sent, the store has just
        // failed: the batch is kept without waiting on it a second time.
        let e = match self.send_unsent(false) {
            Err(e) => e,
            Ok(()) => match self.store.write_audit(batch) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            },
        };
        match self.keep(batch) {
            Ok(()) => {
                eprintln!(
                    "bashgate serve: {} audit record(s) kept in {} until the store takes them: {e}",
                    batch.len(),
                    self.unsent.display()
                );
                Ok(())
            }
            Err(k) => Err(format!("{e}; and {k}")),
        }
    }

    /// Appends a batch to the unsent file and syncs it. The lock is held
    /// only for the append: the writer renames the file away under the
    /// same lock before it sends it (`take`), so an append never waits on
    /// the store, and one that finds its file renamed goes to a fresh one.
    fn keep(&self, batch: &[(String, Record)]) -> Result<(), String> {
        let failed = |e: std::io::Error| format!("cannot keep in {}: {e}", self.unsent.display());
        let mut text = Vec::new();
        for (uid, r) in batch {
            let line = serde_json::to_vec(&Unsent {
                uid: uid.clone(),
                record: r.clone(),
            })
            .map_err(|e| e.to_string())?;
            text.extend_from_slice(&line);
            text.push(b'\n');
        }
        if let Some(dir) = self.unsent.parent().filter(|d| !d.exists()) {
            // The state directory: owner-only, as the daemon's database's.
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(failed)?;
        }
        // Renamed between the open and the lock at most once per send.
        for _ in 0..8 {
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.unsent)
                .map_err(failed)?;
            // Another daemon on this host may share the file.
            f.lock().map_err(failed)?;
            if !still_named(&f, &self.unsent) {
                continue;
            }
            f.write_all(&text).map_err(failed)?;
            return f.sync_data().map_err(failed);
        }
        Err(failed(std::io::Error::other(
            "the file was renamed away on every try",
        )))
    }

    /// Sends what is kept to the store: first what earlier sends took and
    /// the store did not store (a refusal, a daemon stopped midway), then
    /// the unsent file. An error is the store's refusal; what it refused
    /// stays for the next try.
    fn send_unsent(&self, look_for_taken: bool) -> Result<(), bashgate_store::StoreError> {
        if look_for_taken || self.refused.load(Ordering::Relaxed) {
            for taken in self.taken() {
                self.send(&taken)?;
            }
            self.refused.store(false, Ordering::Relaxed);
        }
        if let Some(taken) = self.take() {
            self.send(&taken)?;
        }
        Ok(())
    }

    /// Renames the unsent file, when it holds records, to a name of its own
    /// (`NAME.sending-PID-N`), under its lock; appends then go to a new
    /// file while the store is sent what was taken.
    fn take(&self) -> Option<PathBuf> {
        let f = OpenOptions::new().read(true).open(&self.unsent).ok()?;
        if f.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            return None;
        }
        f.lock().ok()?;
        if !still_named(&f, &self.unsent) {
            // Another daemon's writer took it first.
            return None;
        }
        static TAKES: AtomicU64 = AtomicU64::new(0);
        let mut name = self.unsent.file_name()?.to_os_string();
        name.push(format!(
            "{SENDING}{}-{}",
            std::process::id(),
            TAKES.fetch_add(1, Ordering::Relaxed)
        ));
        let to = self.unsent.with_file_name(name);
        match std::fs::rename(&self.unsent, &to) {
            Ok(()) => Some(to),
            Err(e) => {
                eprintln!(
                    "bashgate serve: cannot take {} to send it: {e}",
                    self.unsent.display()
                );
                None
            }
        }
    }

    /// What earlier sends took and did not store, by this daemon or
    /// another on the host.
    fn taken(&self) -> Vec<PathBuf> {
        let (Some(dir), Some(name)) = (self.unsent.parent(), self.unsent.file_name()) else {
            return Vec::new();
        };
        let mut prefix = name.as_encoded_bytes().to_vec();
        prefix.extend_from_slice(SENDING.as_bytes());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().as_encoded_bytes().starts_with(&prefix))
            .map(|e| e.path())
            .collect();
        found.sort();
        found
    }

    /// Sends one taken file to the store and removes it once stored.
    fn send(&self, taken: &std::path::Path) -> Result<(), bashgate_store::StoreError> {
        let mut text = String::new();
        // Gone: another daemon's writer sent it.
        let Ok(mut f) = std::fs::File::open(taken) else {
            return Ok(());
        };
        if f.read_to_string(&mut text).is_err() {
            return Ok(());
        }
        // A line torn by a crash mid-append is skipped: its answer never
        // left, since answers wait for the sync.
        let rows: Vec<(String, Record)> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Unsent>(l).ok())
            .map(|u| (u.uid, u.record))
            .collect();
        for chunk in rows.chunks(BATCH) {
            if let Err(e) = self.store.write_audit(chunk) {
                self.refused.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        match std::fs::remove_file(taken) {
            Ok(()) => eprintln!(
                "bashgate serve: {} kept audit record(s) sent to the store",
                rows.len()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!(
                "bashgate serve: cannot remove {} (its records are stored; sending them again is harmless): {e}",
                taken.display()
            ),
        }
        Ok(())
    }
}

/// Whether `f` is still the file at `path` (not renamed away since it was
/// opened).
fn still_named(f: &std::fs::File, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// What a taken unsent file's name adds to the unsent file's.
const SENDING: &str = ".sending-";

fn run(w: &Writer, rx: Receiver<Queued>) {
    loop {
        let first = match rx.recv_timeout(RETRY) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                // Tried again at the next batch or retry.
                let _ = w.send_unsent(true);
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let (records, waiters): (Vec<(String, Record)>, Vec<Option<Done>>) =
            batch.into_iter().unzip();
        let result = w.write(&records);
        if let Err(e) = &result {
            eprintln!(
                "bashgate serve: {} audit record(s) not written: {e}",
                records.len()
            );
        }
        for d in waiters.into_iter().flatten() {
            let _ = d.send(result.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::audit::Filter;
    use bashgate_store::sqlite::SqliteStore;

    /// A real SQLite store whose audit writes can be refused, as a
    /// PostgreSQL server that is down refuses them.
    struct Flaky {
        inner: SqliteStore,
        down: AtomicBool,
        /// Writes hang this long before failing, as a frozen server's do.
        hang: std::sync::Mutex<Option<std::time::Duration>>,
    }

    impl DaemonStore for Flaky {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        fn create_session(&self, n: &str, h: &str) -> Result<bool, bashgate_store::StoreError> {
            self.inner.create_session(n, h)
        }
        fn session_for(&self, h: &str) -> Result<Option<String>, bashgate_store::StoreError> {
            self.inner.session_for(h)
        }
        fn sessions(&self) -> Result<Vec<bashgate_store::SessionRow>, bashgate_store::StoreError> {
            self.inner.sessions()
        }
        fn delete_session(&self, n: &str) -> Result<bool, bashgate_store::StoreError> {
            self.inner.delete_session(n)
        }
        fn load_state(
            &self,
            n: &str,
        ) -> Result<Option<bashgate::taint::SessionState>, bashgate_store::StoreError> {
            self.inner.load_state(n)
        }
        fn update(
            &self,
            n: &str,
            f: &mut dyn FnMut(&mut bashgate::taint::SessionState),
        ) -> Result<bool, bashgate_store::StoreError> {
            self.inner.update(n, f)
        }
        fn insert_approval(
            &self,
            a: &mut bashgate_store::Approval,
        ) -> Result<(), bashgate_store::StoreError> {
            self.inner.insert_approval(a)
        }
        fn approval(
            &self,
            id: &str,
        ) -> Result<Option<bashgate_store::Approval>, bashgate_store::StoreError> {
            self.inner.approval(id)
        }
        fn approvals(
            &self,
            all: bool,
            l: usize,
        ) -> Result<Vec<bashgate_store::Approval>, bashgate_store::StoreError> {
            self.inner.approvals(all, l)
        }
        fn answer(
            &self,
            id: &str,
            ok: bool,
            note: Option<&str>,
        ) -> Result<bashgate_store::Answered, bashgate_store::StoreError> {
            self.inner.answer(id, ok, note)
        }
        fn expire_due(&self) -> Result<Vec<bashgate_store::Approval>, bashgate_store::StoreError> {
            self.inner.expire_due()
        }
        fn count_pending(&self) -> Result<i64, bashgate_store::StoreError> {
            self.inner.count_pending()
        }
        fn write_audit(&self, r: &[(String, Record)]) -> Result<(), bashgate_store::StoreError> {
            let hang = *self.hang.lock().unwrap();
            if let Some(d) = hang {
                std::thread::sleep(d);
                return Err(bashgate_store::StoreError::TimedOut {
                    store: "frozen".into(),
                    ms: d.as_millis(),
                });
            }
            if self.down.load(Ordering::SeqCst) {
                return Err(bashgate_store::StoreError::Database(
                    "the store is down".into(),
                ));
            }
            self.inner.write_audit(r)
        }
        fn query_audit(&self, f: &Filter) -> Result<Vec<Record>, bashgate_store::StoreError> {
            self.inner.query_audit(f)
        }
        fn watch(
            &self,
            f: bashgate_store::OnChange,
            w: bashgate_store::Warn,
        ) -> Result<(), bashgate_store::StoreError> {
            self.inner.watch(f, w)
        }
    }

    fn record(n: usize) -> Record {
        Record {
            session: "s".into(),
            event: "daemon-check".into(),
            tool: "Bash".into(),
            command: Some(format!("echo {n}")),
            layer: "verdict".into(),
            decision: "allow".into(),
            reason: "r".into(),
            ..Default::default()
        }
    }

    /// A real SQLite store behind `Flaky`, and an auditor writing to it
    /// with its unsent file in the same scratch directory.
    fn flaky_auditor(
        down: bool,
        hang: Option<std::time::Duration>,
    ) -> (tempfile::TempDir, Arc<Flaky>, PathBuf, Auditor) {
        let t = tempfile::tempdir().unwrap();
        let store = Arc::new(Flaky {
            inner: SqliteStore::open(&t.path().join("d.db"), t.path().join("a.db")).unwrap(),
            down: AtomicBool::new(down),
            hang: std::sync::Mutex::new(hang),
        });
        let unsent = t.path().join("unsent");
        let auditor = Auditor::start(store.clone(), unsent.clone());
        (t, store, unsent, auditor)
    }

    #[test]
    fn records_the_store_refuses_are_kept_and_sent_once_it_is_back() {
        let (_t, store, unsent, auditor) = flaky_auditor(true, None);
        for n in 0..3 {
            auditor.record_durably(record(n));
        }
        // Durable while the store is down: in the synced local files.
        assert_eq!(kept_lines(&unsent), 3);
        let all = Filter {
            limit: 100,
            ..Default::default()
        };
        assert!(store.query_audit(&all).unwrap().is_empty());
        store.down.store(false, Ordering::SeqCst);
        auditor.record_durably(record(3));
        assert_eq!(
            stored_commands(&store),
            ["echo 0", "echo 1", "echo 2", "echo 3"]
        );
        assert_eq!(kept_lines(&unsent), 0);
    }

    /// The commands of every row the store holds, sorted.
    fn stored_commands(store: &Flaky) -> Vec<String> {
        let all = Filter {
            limit: 100,
            ..Default::default()
        };
        let mut commands: Vec<_> = store
            .query_audit(&all)
            .unwrap()
            .iter()
            .filter_map(|r| r.command.clone())
            .collect();
        commands.sort();
        commands
    }

    /// The records left in the unsent file and in the files taken from it.
    fn kept_lines(unsent: &std::path::Path) -> usize {
        std::fs::read_dir(unsent.parent().unwrap())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("unsent"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap().lines().count())
            .sum()
    }

    #[test]
    fn keeping_a_record_does_not_wait_while_the_writer_sends_to_a_store_that_hangs() {
        let (_t, store, unsent, auditor) = flaky_auditor(true, None);
        auditor.record_durably(record(0));
        assert_eq!(kept_lines(&unsent), 1);
        // The next batch makes the writer send the kept record first, to a
        // store that now holds it 3 s.
        *store.hang.lock().unwrap() = Some(std::time::Duration::from_secs(3));
        store.down.store(false, Ordering::SeqCst);
        auditor.record(record(1));
        std::thread::sleep(std::time::Duration::from_millis(300));
        // A request keeping its own record meanwhile is not held by it.
        let started = std::time::Instant::now();
        auditor
            .writer
            .keep(&[("kept-by-request".into(), record(2))])
            .unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        // Once the store answers, every record is stored once and nothing
        // is left kept.
        *store.hang.lock().unwrap() = None;
        std::thread::sleep(std::time::Duration::from_secs(3));
        auditor.record_durably(record(3));
        assert_eq!(
            stored_commands(&store),
            ["echo 0", "echo 1", "echo 2", "echo 3"]
        );
        assert_eq!(kept_lines(&unsent), 0);
    }

    #[test]
    fn an_answer_does_not_wait_past_its_budget_for_a_store_that_hangs() {
        let (_t, store, unsent, auditor) =
            flaky_auditor(false, Some(std::time::Duration::from_secs(6)));
        let started = std::time::Instant::now();
        // The request's store budget is spent: the answer waits the least.
        bashgate_store::within(std::time::Duration::ZERO, || {
            auditor.record_durably(record(0))
        });
        // Well inside the hook's 5 s, where the store alone holds it 6 s.
        assert!(started.elapsed() < std::time::Duration::from_secs(3));
        // Durable all the same: kept in the local file under its id.
        let kept = std::fs::read_to_string(&unsent).unwrap();
        assert_eq!(kept.lines().count(), 1, "{kept}");
        assert!(kept.contains("echo 0"));
        // Once the store answers, the copy the writer still holds and the
        // kept one are stored as one row.
        *store.hang.lock().unwrap() = None;
        std::thread::sleep(std::time::Duration::from_secs(6));
        auditor.record_durably(record(1));
        assert_eq!(stored_commands(&store), ["echo 0", "echo 1"]);
    }
}
