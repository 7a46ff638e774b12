//! Reviewed exceptions to the README's blanket expectations.
//!
//! A section or function label says what its records are *for*, and a few
//! records in them are helper steps that are local by any reading: the
//! attacker generating a key pair, or a file operation whose danger is the
//! privileged context it is run in. Each exception names the record by
//! file and line, repeats its group so a moved record is caught, lifts one
//! expectation, and says why. They are listed in the report.

use serde::Deserialize;

use super::Record;

const REVIEWED_TOML: &str = include_str!("../../external/reviewed.toml");

/// Which expectation an exception lifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lift {
    /// The record is local: it may be `safe` and is not counted for recall.
    NeverSafe,
    /// The record opens no connection itself: not counted for recall, but
    /// still never `safe`.
    Network,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exception {
    pub file: String,
    pub line: usize,
    pub group: String,
    pub lift: Lift,
    pub reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reviewed {
    #[serde(rename = "record")]
    pub records: Vec<Exception>,
}

impl Reviewed {
    /// The exceptions compiled into the crate.
    pub fn builtin() -> Reviewed {
        toml::from_str(REVIEWED_TOML).expect("external/reviewed.toml is valid")
    }

    /// The exceptions for one file.
    pub fn for_file<'a>(&'a self, file: &'a str) -> impl Iterator<Item = &'a Exception> {
        self.records.iter().filter(move |e| e.file == file)
    }

    /// Lifts the reviewed expectations of `file`'s records. Fails when an
    /// exception no longer matches its record (the set changed).
    pub fn apply(&self, file: &str, records: &mut [Record]) -> Result<(), String> {
        for e in self.for_file(file) {
            let Some(r) = records.iter_mut().find(|r| r.line == e.line) else {
                return Err(format!(
                    "reviewed exception {file}:{} has no record",
                    e.line
                ));
            };
            if r.group != e.group {
                return Err(format!(
                    "reviewed exception {file}:{} expects group {:?}, the record has {:?}",
                    e.line, e.group, r.group
                ));
            }
            let had = match e.lift {
                Lift::NeverSafe => r.expect.never_safe,
                Lift::Network => r.expect.network,
            };
            if !had {
                return Err(format!(
                    "reviewed exception {file}:{} lifts an expectation the record does not have",
                    e.line
                ));
            }
            if e.lift == Lift::NeverSafe {
                r.expect.never_safe = false;
            }
            r.expect.network = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::{expectation, Kind};

    fn record(line: usize, group: &str) -> Record {
        Record {
            line,
            group: group.into(),
            name: String::new(),
            command: String::new(),
            expect: expectation(Kind::Revshells, group),
            alias_of: None,
        }
    }

    #[test]
    fn builtin_parses_and_every_exception_has_a_reason() {
        let r = Reviewed::builtin();
        assert!(!r.records.is_empty());
        assert!(r.records.iter().all(|e| !e.reason.trim().is_empty()));
    }

    #[test]
    fn lifts_and_detects_drift() {
        let reviewed: Reviewed = toml::from_str(
            r#"
            [[record]]
            file = "x"
            line = 1
            group = "Reverse Shell > A"
            lift = "never-safe"
            reason = "local"
            [[record]]
            file = "x"
            line = 2
            group = "Meterpreter > B"
            lift = "never-safe"
            reason = "local"
            "#,
        )
        .unwrap();
        let mut recs = vec![record(1, "Reverse Shell > A"), record(2, "Meterpreter > B")];
        reviewed.apply("x", &mut recs).unwrap();
        assert!(!recs[0].expect.never_safe && !recs[0].expect.network);
        assert!(!recs[1].expect.never_safe);

        let mut moved = vec![record(1, "Reverse Shell > Z")];
        assert!(reviewed.apply("x", &mut moved).is_err());
    }
}
