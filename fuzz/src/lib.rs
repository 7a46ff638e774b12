//! Invariants every fuzz target checks on every analysis, beyond "it did
//! not panic". A violated invariant panics with the input in the message,
//! so libFuzzer saves it as a crash.

use std::time::Duration;

use bashgate_analyzer::{Analysis, Limits, Rule, Verdict};

/// Most CPU time an analysis of an input under the size limit may take.
/// The parser's own budget is 2 s of wall time per script; this leaves room for the
/// sanitizers' slowdown (about 10x) and for embedded scripts. CPU time of
/// the thread, not wall time, so a busy machine does not raise false alarms.
pub const TIME_BOUND: Duration = Duration::from_secs(3);

/// CPU time used by the calling thread so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f`, then checks the analysis it returns against `command`.
pub fn timed(command: &str, limits: &Limits, f: impl FnOnce() -> Analysis) -> Analysis {
    let start = thread_cpu();
    let a = f();
    let took = thread_cpu().saturating_sub(start);
    if command.len() <= limits.max_bytes {
        assert!(
            took < TIME_BOUND,
            "analysis took {took:?} of CPU (bound {TIME_BOUND:?}) for {} bytes: {command:?}",
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
