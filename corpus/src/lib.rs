//! bashgate-corpus: the project's labeled commands and the measurements
//! built on them.
//!
//! - [`case`]: the labeled cases in `corpus/cases/*.toml`, one file per
//!   category, loaded and validated.
//! - [`check`]: compares a case's label with the analyzer's answer.
//! - [`render`]: the readable text the insta snapshots pin.
//! - [`external`]: the external command sets (GTFOBins, reverse-shell cheat
//!   sheets, injection payloads, tldr-pages, NL2Bash, tree-sitter-bash's
//!   tests) and what each record is expected to be.
//! - [`eval`]: runs the analyzer over every set, guarded against panics and
//!   hangs, and counts escapes, recall, friction and coverage.
//! - [`report`]: writes `docs/accuracy.md`.

pub mod case;
pub mod check;
pub mod eval;
pub mod external;
pub mod paths;
pub mod render;
pub mod report;
pub mod tally;
