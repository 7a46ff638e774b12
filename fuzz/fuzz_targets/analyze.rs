//! Raw bytes into the analyzer: `analyze_bytes` for every input, and
//! `analyze` when the bytes are UTF-8. Invalid UTF-8 is never `safe`.
#![no_main]

use bashgate_analyzer::{analyze, analyze_bytes, Limits, Rule, Verdict};
use bashgate_fuzz::timed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let text = String::from_utf8_lossy(data);
    let a = timed(&text, &limits, || analyze_bytes(data));
    match std::str::from_utf8(data) {
        Ok(s) => {
            let b = timed(s, &limits, || analyze(s));
            // The parse budget is wall time: on a loaded machine one of two
            // parses of a large input can run out and the other not. Both
            // are still checked on their own; only a limit-free pair must
            // agree.
            let limited = |x: &bashgate_analyzer::Analysis| x.has_rule(Rule::LimitExceeded);
            if !limited(&a) && !limited(&b) {
                assert_eq!(
                    a.verdict, b.verdict,
                    "analyze and analyze_bytes disagree: {s:?}"
                );
            }
        }
        Err(_) => assert_ne!(
            a.verdict,
            Verdict::Safe,
            "invalid UTF-8 called safe: {data:?}"
        ),
    }
});
