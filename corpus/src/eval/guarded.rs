//! One analysis guarded against panics and timed.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use bashgate_analyzer::{analyze, Analysis};

/// One analysis, with a panic caught and the time it took.
pub struct Guarded {
    pub result: Result<Analysis, String>,
    pub elapsed: Duration,
}

/// Analyzes `command`, turning a panic into an error message.
pub fn analyze_guarded(command: &str) -> Guarded {
    let start = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(|| analyze(command))).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string())
    });
    Guarded {
        result,
        elapsed: start.elapsed(),
    }
}
