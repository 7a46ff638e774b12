//! Structure-aware: libFuzzer's bytes drive the same command generator as
//! the differential oracle (quoting tricks, wrappers, substitutions,
//! redirects, here-documents, embedded scripts, deep nesting). When the
//! generator put something not provably local where bash runs commands,
//! the verdict must not be `safe`.
#![no_main]

use arbitrary::Unstructured;
use bashgate_analyzer::{analyze, Limits, Verdict};
use bashgate_fuzz::timed;
use bashgate_tests::gen::{generate, Choices, Config};
use libfuzzer_sys::fuzz_target;

struct Bytes<'a, 'b>(&'a mut Unstructured<'b>);

impl Choices for Bytes<'_, '_> {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.0.choose_index(n).unwrap_or(0)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let g = generate(&mut Bytes(&mut u), &Config::fuzz());
    let a = timed(&g.command, &Limits::default(), || analyze(&g.command));
    if g.runs_unsafe {
        assert_ne!(
            a.verdict,
            Verdict::Safe,
            "a command that runs something not provably local was called safe:\n{}\n{:#?}",
            g.command,
            a.invocations
        );
    }
});
