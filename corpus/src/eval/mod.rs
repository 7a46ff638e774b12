//! The evaluation: the own corpus and the external sets run through the
//! analyzer ([`run`]) and tallied ([`stats`]) into what the report shows.

mod guarded;
mod run;
mod stats;

use std::path::Path;
use std::time::Duration;

use bashgate_analyzer::Verdict;

pub use guarded::{analyze_guarded, Guarded};
pub use run::{run_jobs, run_jobs_with, Hang, Job, SetResult};
pub use stats::{Mix, Note, Stats};

use crate::case::CaseFile;
use crate::external::{self, Expect, Record, Reviewed, SetSpec, SETS};

/// The project's own cases as records: line is the case's position in its
/// file, group the file's name.
pub fn own_records(files: &[CaseFile]) -> Vec<Record> {
    files
        .iter()
        .flat_map(|f| {
            f.cases.iter().enumerate().map(|(i, c)| Record {
                line: i + 1,
                group: f.name.clone(),
                name: String::new(),
                command: c.command.clone(),
                expect: Expect {
                    never_safe: c.expect != Verdict::Safe,
                    network: c.expect == Verdict::Network,
                    parse_clean: false,
                    exact: Some(c.expect),
                },
                alias_of: None,
            })
        })
        .collect()
}

/// Which external sets to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every set.
    All,
    /// Every set but the two large coverage sets (tldr, NL2Bash).
    Labeled,
}

/// Why the evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Load(#[from] external::LoadError),
    #[error(transparent)]
    Hang(#[from] Hang),
}

/// The whole evaluation.
pub struct Evaluation {
    pub own: SetResult,
    /// The external sets, or why they were skipped.
    pub external: Result<Vec<SetResult>, String>,
    pub reviewed: Reviewed,
    pub scope: Scope,
}

/// A record that runs longer than this is reported as a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(10);

/// Evaluates the own cases and, when `corpora` exists, the external sets.
pub fn evaluate(files: &[CaseFile], corpora: &Path, scope: Scope) -> Result<Evaluation, EvalError> {
    let reviewed = Reviewed::builtin();
    let mut jobs = vec![Job {
        name: "own corpus".into(),
        spec: None,
        records: own_records(files),
    }];
    let skipped = if corpora.is_dir() {
        for spec in SETS {
            if scope == Scope::Labeled && !has_labels(spec) {
                continue;
            }
            jobs.push(Job {
                name: spec.file.into(),
                spec: Some(spec),
                records: external::load_set(corpora, spec, &reviewed)?,
            });
        }
        None
    } else {
        Some(format!(
            "skipped: external corpora not found at {} (set {} to their folder)",
            corpora.display(),
            crate::paths::CORPORA_ENV
        ))
    };
    let mut results = run_jobs(jobs, HANG_LIMIT)?;
    let own = results.remove(0);
    Ok(Evaluation {
        own,
        external: skipped.map_or(Ok(results), Err),
        reviewed,
        scope,
    })
}

/// Sets other than the large unlabeled coverage sets.
fn has_labels(spec: &SetSpec) -> bool {
    !matches!(spec.kind, external::Kind::Tldr | external::Kind::Nl2bash)
}

impl Evaluation {
    /// Every set, own corpus first.
    pub fn sets(&self) -> impl Iterator<Item = &SetResult> {
        std::iter::once(&self.own).chain(self.external.as_deref().unwrap_or(&[]).iter())
    }

    /// Escapes and panics over every set: what must be zero.
    pub fn failures(&self) -> (usize, usize) {
        self.sets().fold((0, 0), |(e, p), s| {
            (e + s.stats.escapes.len(), p + s.stats.panics.len())
        })
    }
}
