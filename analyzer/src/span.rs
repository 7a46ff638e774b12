//! Byte spans into the original command text.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` in the command that was analyzed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(into = "[usize; 2]", from = "[usize; 2]")]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

impl From<Span> for [usize; 2] {
    fn from(s: Span) -> [usize; 2] {
        [s.start, s.end]
    }
}

impl From<[usize; 2]> for Span {
    fn from(a: [usize; 2]) -> Span {
        Span::new(a[0], a[1])
    }
}
