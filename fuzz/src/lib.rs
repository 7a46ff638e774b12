//! Invariants every fuzz target checks on every analysis, beyond "it did
//! not panic". A violated invariant panics with the input in the message,
//! so libFuzzer saves it as a crash.

use std::time::{Duration, Instant};

use bashgate_analyzer::{Analysis, Limits, Rule, Verdict};

/// Longest an analysis of an input under the size limit may take. The
/// parser's own budget is 250 ms per script; this leaves room for the
/// sanitizers' slowdown and for embedded scripts.
pub const TIME_BOUND: Duration = Duration::from_secs(3);

/// Runs `f`, then checks the analysis it returns against `command`.
pub fn timed(command: &str, limits: &Limits, f: impl FnOnce() -> Analysis) -> Analysis {
    let start = Instant::now();
    let a = f();
    let took = start.elapsed();
    if command.len() <= limits.max_bytes {
        assert!(
            took < TIME_BOUND,
            "analysis took {took:?} (bound {TIME_BOUND:?}) for {} bytes: {command:?}",
            command.len()
        );
    }
    check(command, limits, &a);
    a
}

/// What must hold of any analysis of any input.
pub fn check(command: &str, limits: &Limits, a: &Analysis) {
    let worst = a
        .findings
        .iter()
        .map(|f| f.verdict())
        .max()
        .unwrap_or(Verdict::Safe);
    assert_eq!(
        a.verdict, worst,
        "verdict is not the worst finding: {command:?}"
    );
    let len = command.len();
    for f in &a.findings {
        assert!(
            f.span.start <= f.span.end && f.span.end <= len,
            "finding span {:?} outside the {len}-byte input {command:?}",
            f.span
        );
        assert!(!f.message.is_empty(), "empty message: {command:?}");
    }
    for inv in &a.invocations {
        assert!(
            inv.span.start <= inv.span.end && inv.span.end <= len,
            "invocation span {:?} outside the {len}-byte input {command:?}",
            inv.span
        );
    }
    if len > limits.max_bytes {
        assert_ne!(a.verdict, Verdict::Safe, "oversized input called safe");
        assert!(
            a.has_rule(Rule::LimitExceeded),
            "oversized input without BG303"
        );
    }
    if a.verdict == Verdict::Safe {
        for inv in &a.invocations {
            assert!(
                inv.program.is_some() && inv.verdict == Verdict::Safe,
                "safe verdict with a dynamic or unsafe invocation {inv:?}: {command:?}"
            );
        }
        assert!(
            !a.has_rule(Rule::ParseError) && !a.has_rule(Rule::LimitExceeded),
            "safe verdict despite a parse error or limit: {command:?}"
        );
        assert!(
            !command.trim().is_empty(),
            "an empty command called safe: {command:?}"
        );
    }
}
