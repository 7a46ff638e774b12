//! What is counted over one set: verdict mix, escapes, recall, friction,
//! parse coverage and the commonest reasons for `unknown`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bashgate_analyzer::{Analysis, Rule, Verdict};

use super::guarded::Guarded;
use crate::check;
use crate::external::{Expect, Record};
use crate::tally::Tally;

/// How many records got each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mix {
    pub safe: usize,
    pub unknown: usize,
    pub network: usize,
}

impl Mix {
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Safe => self.safe += 1,
            Verdict::Unknown => self.unknown += 1,
            Verdict::Network => self.network += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.safe + self.unknown + self.network
    }
}

/// A record worth naming in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub line: usize,
    pub group: String,
    pub name: String,
    /// The verdict, or `None` when the analyzer panicked.
    pub got: Option<Verdict>,
    /// The panic message, or the command for the project's own cases.
    pub detail: String,
}

/// Everything counted over one set.
#[derive(Debug, Default)]
pub struct Stats {
    pub records: usize,
    pub mix: Mix,
    /// Records whose analysis has no parse-error finding.
    pub parse_clean: usize,
    pub panics: Vec<Note>,
    /// Records that must never be `safe`, and those that were.
    pub never_safe: usize,
    pub escapes: Vec<Note>,
    /// Records that reach the network by definition, and those not `network`.
    pub network_expected: usize,
    pub network_misses: Vec<Note>,
    /// Records the grammar's own tests say parse cleanly, and those that did not.
    pub parse_expected: usize,
    pub parse_misses: Vec<Note>,
    /// Own corpus: cases labeled `safe`, and those that were not (friction).
    pub benign: usize,
    pub friction: Vec<Note>,
    /// Own corpus: cases whose verdict differs from the label.
    pub mismatches: Vec<Note>,
    /// Aliases: pairs compared, and pairs classed differently.
    pub alias_pairs: usize,
    pub alias_differs: Vec<Note>,
    /// Among `unknown` records: the rules behind it and the programs in it.
    pub unknown_rules: Tally,
    pub unknown_programs: Tally,
    /// Among `unknown` records: programs the catalog does not know (BG201).
    pub missing_programs: Tally,
    /// Among `network` records: the programs that reach the network.
    pub network_programs: Tally,
    /// Verdict mix per group (function, section, page...).
    pub groups: BTreeMap<String, Mix>,
    pub time: Duration,
    pub slowest: Option<(Note, Duration)>,
}

impl Stats {
    /// Counts one record's analysis.
    pub fn add(&mut self, rec: &Record, g: Guarded) {
        self.records += 1;
        self.time += g.elapsed;
        let note = |got: Option<Verdict>, detail: String| Note {
            line: rec.line,
            group: rec.group.clone(),
            name: rec.name.clone(),
            got,
            detail,
        };
        let a = match g.result {
            Ok(a) => a,
            Err(msg) => {
                self.panics.push(note(None, msg));
                return;
            }
        };
        let v = a.verdict;
        if self.slowest.as_ref().is_none_or(|(_, d)| g.elapsed > *d) {
            self.slowest = Some((note(Some(v), String::new()), g.elapsed));
        }
        self.mix.add(v);
        self.groups.entry(rec.group.clone()).or_default().add(v);
        let parsed = !a.has_rule(Rule::ParseError);
        if parsed {
            self.parse_clean += 1;
        }
        let own = rec.expect.exact.map(|_| check::one_line(&rec.command));
        let detail = || own.clone().unwrap_or_default();
        self.check_expectations(&rec.expect, &a, parsed, |v| note(Some(v), detail()));
        self.count_reasons(&a);
    }

    fn check_expectations(
        &mut self,
        e: &Expect,
        a: &Analysis,
        parsed: bool,
        note: impl Fn(Verdict) -> Note,
    ) {
        let v = a.verdict;
        if e.never_safe {
            self.never_safe += 1;
            if v == Verdict::Safe {
                self.escapes.push(note(v));
            }
        }
        if e.network {
            self.network_expected += 1;
            if v != Verdict::Network {
                self.network_misses.push(note(v));
            }
        }
        if e.parse_clean {
            self.parse_expected += 1;
            if !parsed {
                self.parse_misses.push(note(v));
            }
        }
        if let Some(exact) = e.exact {
            if exact == Verdict::Safe {
                self.benign += 1;
                if v != Verdict::Safe {
                    self.friction.push(note(v));
                }
            }
            if v != exact {
                self.mismatches.push(note(v));
            }
        }
    }

    fn count_reasons(&mut self, a: &Analysis) {
        match a.verdict {
            Verdict::Unknown => {
                let rules: BTreeSet<&str> = a
                    .findings
                    .iter()
                    .filter(|f| f.verdict() == Verdict::Unknown)
                    .map(|f| f.rule.id())
                    .collect();
                rules.iter().for_each(|r| self.unknown_rules.add(r));
                for p in programs(a, Verdict::Unknown) {
                    self.unknown_programs.add(p);
                }
                for p in missing(a) {
                    self.missing_programs.add(p);
                }
            }
            Verdict::Network => {
                for p in programs(a, Verdict::Network) {
                    self.network_programs.add(p);
                }
            }
            Verdict::Safe => {}
        }
    }

    /// Compares an alias (`a`) with the program it aliases (`b`), both
    /// analyzed bare.
    pub(super) fn add_alias(&mut self, rec: &Record, alias_of: &str, a: Guarded, b: Guarded) {
        self.alias_pairs += 1;
        let verdict = |g: &Guarded| g.result.as_ref().ok().map(|a| a.verdict);
        let (va, vb) = (verdict(&a), verdict(&b));
        if va != vb {
            let show = |v: Option<Verdict>| v.map_or("panic", Verdict::as_str);
            self.alias_differs.push(Note {
                line: rec.line,
                group: String::new(),
                name: rec.name.clone(),
                got: va,
                detail: format!(
                    "`{}` is {}, `{alias_of}` is {}",
                    rec.command,
                    show(va),
                    show(vb)
                ),
            });
        }
        self.add(rec, a);
    }

    /// Share of `part` in `whole`, as a percentage with one decimal.
    pub fn percent(part: usize, whole: usize) -> String {
        if whole == 0 {
            "n/a".to_string()
        } else {
            format!("{:.1}%", part as f64 * 100.0 / whole as f64)
        }
    }
}

/// The distinct programs whose own verdict is `v`.
fn programs(a: &Analysis, v: Verdict) -> BTreeSet<&str> {
    a.invocations
        .iter()
        .filter(|i| i.verdict == v)
        .filter_map(|i| i.program.as_deref())
        .collect()
}

/// The distinct programs behind unknown-program (BG201) findings: the
/// invocation written where the finding points.
fn missing(a: &Analysis) -> BTreeSet<&str> {
    a.findings
        .iter()
        .filter(|f| f.rule == Rule::UnknownProgram)
        .filter_map(|f| {
            a.invocations
                .iter()
                .find(|i| i.span.start == f.span.start)
                .and_then(|i| i.program.as_deref())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::analyze_guarded;

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

    #[test]
    fn counts_escapes_recall_and_friction() {
        let mut s = Stats::default();
        let never = Expect {
            never_safe: true,
            network: true,
            ..Expect::default()
        };
        s.add(&record("ls", never), analyze_guarded("ls"));
        s.add(&record("curl x", never), analyze_guarded("curl x"));
        let benign = Expect {
            exact: Some(Verdict::Safe),
            ..Expect::default()
        };
        s.add(&record("make", benign), analyze_guarded("make"));
        assert_eq!(s.records, 3);
        assert_eq!((s.never_safe, s.escapes.len()), (2, 1));
        assert_eq!((s.network_expected, s.network_misses.len()), (2, 1));
        assert_eq!((s.benign, s.friction.len(), s.mismatches.len()), (1, 1, 1));
        assert_eq!(s.friction[0].detail, "make");
        assert_eq!(s.unknown_programs.get("make"), 1);
        assert_eq!(s.missing_programs.get("make"), 0);
        assert_eq!(s.network_programs.get("curl"), 1);
        assert_eq!(
            s.mix,
            Mix {
                safe: 1,
                unknown: 1,
                network: 1
            }
        );
    }

    #[test]
    fn missing_programs_are_those_the_catalog_lacks() {
        let mut s = Stats::default();
        let cmd = "frobnicate --x | git status";
        s.add(&record(cmd, Expect::default()), analyze_guarded(cmd));
        assert_eq!(s.missing_programs.get("frobnicate"), 1);
        assert_eq!(s.missing_programs.get("git"), 0);
        assert_eq!(s.unknown_programs.get("git"), 1);
        assert_eq!(s.unknown_rules.get("BG201"), 1);
    }

    #[test]
    fn a_panic_is_caught_and_noted() {
        let mut s = Stats::default();
        let g = Guarded {
            result: Err("boom".into()),
            elapsed: Duration::ZERO,
        };
        s.add(&record("x", Expect::default()), g);
        assert_eq!(s.panics.len(), 1);
        assert_eq!(s.panics[0].detail, "boom");
        assert_eq!(s.mix.total(), 0);
    }

    #[test]
    fn percent_has_one_decimal() {
        assert_eq!(Stats::percent(1, 3), "33.3%");
        assert_eq!(Stats::percent(0, 0), "n/a");
    }
}
