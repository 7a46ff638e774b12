//! Shrinks a command the oracle flagged to a small reproducer: delta
//! debugging over its characters, keeping a candidate while the analyzer
//! still calls it `safe` and bash still starts the same program the
//! analyzer does not account for (or the command still writes outside the
//! work the same way). Candidates of one round run as a batch.

use bashgate_analyzer::{analyze, Verdict};

use crate::oracle::{Options, Run, Sandbox};
use crate::oracle_check::{check, Mismatch};

/// What a mismatch is about, so shrinking does not wander to another bug.
fn subject(m: &Mismatch) -> String {
    match m {
        Mismatch::Missing(e) => format!("missing {}", e.program),
        Mismatch::Argv(e) => format!("argv {}", e.program),
        Mismatch::Socket => "socket".into(),
        Mismatch::WroteOutside { place, .. } => format!("wrote {place}"),
    }
}

/// The subjects of the mismatches of a command, given its run.
pub fn subjects(command: &str, run: &Run) -> Vec<String> {
    check(&analyze(command), run).iter().map(subject).collect()
}

/// The smallest variant of `command` found that still shows `target`
/// (one of [`subjects`] of the original).
pub fn minimize(
    sandbox: &Sandbox,
    opts: &Options,
    command: &str,
    target: &str,
) -> Result<String, String> {
    let mut current: Vec<char> = command.chars().collect();
    let mut n = 2usize;
    while current.len() >= 2 {
        let chunk = current.len().div_ceil(n);
        let len = current.len();
        let candidates: Vec<String> = (0..n)
            .map(|i| ((i * chunk).min(len), ((i + 1) * chunk).min(len)))
            .filter(|(a, b)| a < b)
            .map(|(a, b)| current[..a].iter().chain(&current[b..]).collect::<String>())
            .filter(|c| !c.trim().is_empty() && analyze(c).verdict == Verdict::Safe)
            .collect();
        let runs = if candidates.is_empty() {
            Vec::new()
        } else {
            sandbox.run(&candidates, opts)?
        };
        let hit = candidates
            .iter()
            .zip(&runs)
            .find(|(c, r)| subjects(c, r).iter().any(|s| s == target));
        match hit {
            Some((c, _)) => {
                current = c.chars().collect();
                n = (n - 1).max(2);
            }
            None if n >= current.len() => break,
            None => n = (n * 2).min(current.len()),
        }
    }
    Ok(current.into_iter().collect())
}
