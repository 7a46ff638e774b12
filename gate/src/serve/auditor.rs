//! The daemon's audit writer: one thread owns the audit database and
//! writes queued records in batches (one transaction each), so concurrent
//! checks never wait on SQLite's write lock one by one. A check's answer
//! waits for the batch holding its record to commit (group commit), so an
//! answered decision is on disk before the agent sees it, and a daemon
//! killed mid-load loses no answered row. A failed write is reported on
//! stderr and changes no decision.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::time::Duration;

use bashgate::audit::{Audit, Record};

/// At most this many records per transaction.
const BATCH: usize = 512;

/// The longest an answer waits for its record to commit.
const COMMIT_WAIT: Duration = Duration::from_secs(10);

type Done = SyncSender<Result<(), String>>;

#[derive(Clone)]
pub struct Auditor {
    tx: Sender<(Record, Option<Done>)>,
}

impl Auditor {
    pub fn start(path: PathBuf) -> Auditor {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("bashgate-audit".into())
            .spawn(move || run(Audit::new(path), rx))
            .expect("the audit thread starts");
        Auditor { tx }
    }

    /// Queues a record without waiting (events that answer nobody).
    pub fn record(&self, r: Record) {
        if self.tx.send((r, None)).is_err() {
            eprintln!("bashgate serve: the audit writer has stopped; record not written");
        }
    }

    /// Writes a record and returns once it is committed (or the write
    /// failed, or took longer than `COMMIT_WAIT`: then it says so on
    /// stderr; the decision stands).
    pub fn record_durably(&self, r: Record) {
        let (done, wait) = mpsc::sync_channel(1);
        if self.tx.send((r, Some(done))).is_err() {
            eprintln!("bashgate serve: the audit writer has stopped; record not written");
            return;
        }
        match wait.recv_timeout(COMMIT_WAIT) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("bashgate serve: audit record not written: {e}"),
            Err(_) => eprintln!(
                "bashgate serve: the audit record was not committed within {} s",
                COMMIT_WAIT.as_secs()
            ),
        }
    }
}

fn run(audit: Audit, rx: Receiver<(Record, Option<Done>)>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let (records, waiters): (Vec<Record>, Vec<Option<Done>>) = batch.into_iter().unzip();
        let result = audit.write_all(&records);
        if let Err(e) = &result {
            eprintln!(
                "bashgate serve: {} audit record(s) not written: {e}",
                records.len()
            );
        }
        for w in waiters.into_iter().flatten() {
            let _ = w.send(result.clone());
        }
    }
}
