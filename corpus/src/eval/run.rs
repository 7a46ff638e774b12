//! Running the analyzer over records: each analysis guarded against
//! panics and timed, the whole run watched for a record that hangs.

use std::panic;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::guarded::{analyze_guarded, Guarded};
use super::stats::Stats;
use crate::external::{Record, SetSpec};

/// One set to evaluate.
pub struct Job {
    pub name: String,
    pub spec: Option<&'static SetSpec>,
    pub records: Vec<Record>,
}

/// One evaluated set.
pub struct SetResult {
    pub name: String,
    pub spec: Option<&'static SetSpec>,
    pub stats: Stats,
}

/// A record that took longer than the hang limit.
#[derive(Debug, thiserror::Error)]
#[error("analysis hung: {set} record {line} ran for more than {} ms", limit.as_millis())]
pub struct Hang {
    pub set: String,
    pub line: usize,
    pub limit: Duration,
}

/// Evaluates every job on a worker thread while this thread watches for a
/// record that runs longer than `hang_after`. On a hang the worker is left
/// behind (it cannot be stopped) and the hang is returned.
pub fn run_jobs(jobs: Vec<Job>, hang_after: Duration) -> Result<Vec<SetResult>, Hang> {
    run_jobs_with(jobs, hang_after, analyze_guarded)
}

/// [`run_jobs`] with the analysis function given.
pub fn run_jobs_with<F>(jobs: Vec<Job>, hang_after: Duration, f: F) -> Result<Vec<SetResult>, Hang>
where
    F: Fn(&str) -> Guarded + Send + 'static,
{
    let names: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
    let current: Arc<Mutex<Option<(usize, usize, Instant)>>> = Arc::default();
    let seen = Arc::clone(&current);
    let worker = thread::spawn(move || {
        let mut out = Vec::new();
        for (i, job) in jobs.into_iter().enumerate() {
            let mut stats = Stats::default();
            for rec in &job.records {
                *seen.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((i, rec.line, Instant::now()));
                match &rec.alias_of {
                    Some(of) => stats.add_alias(rec, of, f(&rec.command), f(of)),
                    None => stats.add(rec, f(&rec.command)),
                }
            }
            out.push(SetResult {
                name: job.name,
                spec: job.spec,
                stats,
            });
        }
        out
    });
    loop {
        if worker.is_finished() {
            return Ok(worker.join().unwrap_or_else(|e| panic::resume_unwind(e)));
        }
        let now = *current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((i, line, started)) = now {
            if started.elapsed() > hang_after {
                return Err(Hang {
                    set: names[i].clone(),
                    line,
                    limit: hang_after,
                });
            }
        }
        thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::HANG_LIMIT;
    use crate::external::Expect;

    fn record(cmd: &str, expect: Expect) -> Record {
        Record {
            line: 1,
            group: "g".into(),
            name: String::new(),
            command: cmd.into(),
            expect,
            alias_of: None,
        }
    }

    fn job(name: &str) -> Job {
        Job {
            name: name.into(),
            spec: None,
            records: vec![record("ls", Expect::default())],
        }
    }

    #[test]
    fn a_hang_is_reported_with_its_record() {
        let slow = |c: &str| {
            thread::sleep(Duration::from_millis(500));
            analyze_guarded(c)
        };
        let err = run_jobs_with(vec![job("slow")], Duration::from_millis(50), slow);
        let h = err.err().expect("the slow record is reported");
        assert_eq!((h.set.as_str(), h.line), ("slow", 1));
    }

    #[test]
    fn jobs_finish_in_order() {
        let done = run_jobs(vec![job("a"), job("b")], HANG_LIMIT).expect("no hang");
        let names: Vec<_> = done.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(done[1].stats.mix.safe, 1);
    }
}
