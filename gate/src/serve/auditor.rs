//! The daemon's audit writer: one thread owns the audit database and
//! writes queued records in batches (one transaction each), so concurrent
//! checks never wait on SQLite's write lock. A failed write is reported on
//! stderr and changes no decision.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};

use bashgate::audit::{Audit, Record};

/// At most this many records per transaction.
const BATCH: usize = 512;

#[derive(Clone)]
pub struct Auditor {
    tx: Sender<Record>,
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

    pub fn record(&self, r: Record) {
        if self.tx.send(r).is_err() {
            eprintln!("bashgate serve: the audit writer has stopped; record not written");
        }
    }
}

fn run(audit: Audit, rx: Receiver<Record>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        if let Err(e) = audit.write_all(&batch) {
            eprintln!(
                "bashgate serve: {} audit record(s) not written: {e}",
                batch.len()
            );
        }
    }
}
