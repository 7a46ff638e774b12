//! Where a fenced run's time goes: with `BASHGATE_FENCE_STEPS=1` in its
//! environment, `bashgate run` writes each step's end to stderr as
//! microseconds since the run began, from whichever of the fence's
//! processes reaches it (`docs/performance.md` has the command that reads
//! them). Off, a step costs one load.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock (once, before the first step), if asked for.
pub fn start() {
    START.get_or_init(|| std::env::var_os("BASHGATE_FENCE_STEPS").map(|_| Instant::now()));
}

/// Notes that `step` has ended.
pub fn mark(step: &str) {
    if let Some(Some(t0)) = START.get() {
        eprintln!(
            "bashgate run: step {step} {} us (pid {})",
            t0.elapsed().as_micros(),
            std::process::id()
        );
    }
}
