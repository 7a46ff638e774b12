//! tree-sitter-bash, run within the limits.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Parser, Tree};

use crate::limits::Limits;
use crate::repair::{self, Disagreement};

pub enum Parsed {
    /// The tree, and the text it was parsed from: the command itself, or a
    /// repaired copy of the same length (see [`repair`]).
    Tree {
        tree: Tree,
        text: String,
        /// Where the grammar and bash still disagree.
        unrepaired: Vec<Disagreement>,
    },
    /// The parse ran past its time budget.
    TimedOut,
    /// The grammar could not be loaded or the parser gave up.
    Failed,
}

thread_local! {
    // Building a parser is cheap but not free; one per thread is reused.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// How many times one script is re-parsed after repairs.
const MAX_REPAIRS: usize = 16;

pub fn parse(src: &str, limits: &Limits) -> Parsed {
    let start = Instant::now();
    let mut text = src.to_string();
    let mut rounds = 0;
    loop {
        let tree = match parse_once(&text, limits, start) {
            Some(Ok(t)) => t,
            Some(Err(())) => return Parsed::TimedOut,
            None => return Parsed::Failed,
        };
        let found = repair::find(&tree, &text);
        if found.edits.is_empty() || rounds == MAX_REPAIRS {
            let mut unrepaired = found.unrepaired;
            unrepaired.extend(found.edits.iter().map(|e| e.disagreement()));
            return Parsed::Tree {
                tree,
                text,
                unrepaired,
            };
        }
        text = repair::apply(&text, &found.edits);
        rounds += 1;
    }
}

/// One run of the parser; `Err` when it ran past the budget (counted from
/// `start`, so repairs share it).
fn parse_once(src: &str, limits: &Limits, start: Instant) -> Option<Result<Tree, ()>> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = Parser::new();
            if p.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
                return None;
            }
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        parser.reset();
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
            Some(t) => Some(Ok(t)),
            None => {
                parser.reset();
                timed_out.then_some(Err(()))
            }
        }
    })
}
