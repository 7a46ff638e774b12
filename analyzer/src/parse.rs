//! tree-sitter-bash, run within the limits.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Parser, Tree};

use crate::limits::Limits;

pub enum Parsed {
    Tree(Tree),
    /// The parse ran past its time budget.
    TimedOut,
    /// The grammar could not be loaded or the parser gave up.
    Failed,
}

thread_local! {
    // Building a parser is cheap but not free; one per thread is reused.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

pub fn parse(src: &str, limits: &Limits) -> Parsed {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = Parser::new();
            if p.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
                return Parsed::Failed;
            }
            *slot = Some(p);
        }
        let Some(parser) = slot.as_mut() else {
            return Parsed::Failed;
        };
        parser.reset();
        let start = Instant::now();
        let budget = limits.parse_timeout;
        let mut timed_out = false;
        let mut progress = |_: &tree_sitter::ParseState| {
            if start.elapsed() > budget {
                timed_out = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let bytes = src.as_bytes();
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or(&[]),
            None,
            Some(options),
        );
        match tree {
            Some(t) => Parsed::Tree(t),
            None if timed_out => {
                parser.reset();
                Parsed::TimedOut
            }
            None => {
                parser.reset();
                Parsed::Failed
            }
        }
    })
}
