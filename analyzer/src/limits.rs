//! Bounds on the work one analysis may do. Over any of them the verdict is
//! `unknown` with a finding that names the limit.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest command text accepted, in bytes.
    pub max_bytes: usize,
    /// Wall-clock budget for tree-sitter's parse of one script: a backstop
    /// behind `max_parse_steps`.
    pub parse_timeout: Duration,
    /// Most parser steps (a hundred tree-sitter operations each) for every
    /// script of one command together, re-parses after repairs included.
    /// It bounds the parse by the input's structure rather than its bytes:
    /// a 60 KB heredoc is a few steps, 60 KB of `cat |` about 1,700.
    pub max_parse_steps: usize,
    /// Most syntax-tree nodes accepted for one script.
    pub max_nodes: usize,
    /// Deepest nesting of constructs the lowering descends into.
    pub max_depth: usize,
    /// Deepest chain of embedded scripts (`bash -c`, `eval`, heredocs fed
    /// to shells...) parsed recursively.
    pub max_embed_depth: usize,
    /// Most wrappers unwrapped around one program (`env nice sudo ...`).
    pub max_wrappers: usize,
    /// Most invocations recorded for one command.
    pub max_invocations: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 64 * 1024,
            parse_timeout: Duration::from_millis(2000),
            max_parse_steps: 128,
            max_nodes: 100_000,
            max_depth: 128,
            max_embed_depth: 8,
            max_wrappers: 16,
            max_invocations: 4096,
        }
    }
}
