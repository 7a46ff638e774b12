//! The accuracy evaluation: no escape and no panic on any set, and
//! `docs/accuracy.md` current in everything but its timings.
//!
//! Skips the external sets, saying so, when `$BASHGATE_EXTERNAL_CORPORA`
//! (default `../shared/corpora`) is missing.

use bashgate_corpus::eval::{self, Scope};
use bashgate_corpus::{case, paths, report};

#[test]
fn no_escape_no_panic_and_the_report_is_current() {
    let files = case::load_all().expect("the case files load and validate");
    let corpora = paths::corpora_dir();
    let ev =
        eval::evaluate(&files, &corpora, Scope::All).expect("the evaluation runs without a hang");

    let mut problems = Vec::new();
    for set in ev.sets() {
        let s = &set.stats;
        for n in &s.escapes {
            problems.push(format!(
                "escape: {} line {} ({}) {}",
                set.name, n.line, n.group, n.detail
            ));
        }
        for n in &s.panics {
            problems.push(format!(
                "panic: {} line {} ({}): {}",
                set.name, n.line, n.group, n.detail
            ));
        }
    }
    match &ev.external {
        Err(skip) => eprintln!("{skip}"),
        Ok(_) => {
            let fresh = report::render(&ev);
            let current = std::fs::read_to_string(paths::report_path()).unwrap_or_default();
            if report::deterministic(&current) != report::deterministic(&fresh) {
                problems.push(format!(
                    "docs/accuracy.md is stale: run `{}`",
                    report::REGENERATE
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
