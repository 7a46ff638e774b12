//! tree-sitter-bash, run within the limits.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Parser, Point, Range, Tree};

use crate::limits::Limits;
use crate::repair::{self, Disagreement};
use crate::span::Span;

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
    /// The parse needed more steps than were left (see
    /// [`Limits::max_parse_steps`]).
    TooManySteps,
    /// The grammar could not be loaded or the parser gave up.
    Failed,
}

thread_local! {
    // Building a parser is cheap but not free; one per thread is reused.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// How many times one script is re-parsed after repairs.
const MAX_REPAIRS: usize = 16;

/// Parses `src`, repairing where the grammar and bash disagree. Every parse
/// and re-parse spends from `steps_left`, which the caller shares between
/// all the scripts of one command.
pub fn parse(src: &str, limits: &Limits, steps_left: &mut usize) -> Parsed {
    parse_in(src, None, limits, steps_left)
}

/// [`parse`], reading only the bytes of `src` in `range` when one is given
/// (tree-sitter's included ranges): the rest is as if it were blank, and
/// every node's position is still its position in `src`.
pub fn parse_in(src: &str, range: Option<Span>, limits: &Limits, steps_left: &mut usize) -> Parsed {
    let start = Instant::now();
    // A carriage return is an ordinary character of a word to bash, and a
    // blank to the grammar: `true\r# ; rm -rf ~` is the word `true\r#`
    // and then `rm -rf ~`, not a comment. `_` is a word character to both.
    let mut text = src.replace('\r', "_");
    let mut rounds = 0;
    loop {
        let tree = match parse_once(&text, range, limits, start, steps_left) {
            Some(Ok(t)) => t,
            Some(Err(Stop::Time)) => return Parsed::TimedOut,
            Some(Err(Stop::Steps)) => return Parsed::TooManySteps,
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

/// Why a parse was stopped.
enum Stop {
    Time,
    Steps,
}

/// One run of the parser; `Err` when it ran past the time budget (counted
/// from `start`, so repairs share it) or the steps left.
///
/// tree-sitter calls the progress callback once every hundred parse
/// operations, so counting the calls measures the parser's work the same
/// way on every machine: the verdict does not depend on the machine's
/// speed, and the time budget is only a backstop.
fn parse_once(
    src: &str,
    range: Option<Span>,
    limits: &Limits,
    start: Instant,
    steps_left: &mut usize,
) -> Option<Result<Tree, Stop>> {
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
        // Set on every parse: the parser is shared by every caller on
        // this thread. No ranges is the whole text.
        let ranges = range.map(|r| [included(src, r)]);
        parser
            .set_included_ranges(ranges.as_ref().map_or(&[], |r| &r[..]))
            .ok()?;
        let budget = limits.parse_timeout;
        let mut stopped = None;
        let mut progress = |_: &tree_sitter::ParseState| {
            if *steps_left == 0 {
                stopped = Some(Stop::Steps);
                return ControlFlow::Break(());
            }
            *steps_left -= 1;
            if start.elapsed() > budget {
                stopped = Some(Stop::Time);
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
                stopped.map(Err)
            }
        }
    })
}

/// `range` of `src` as tree-sitter's range, with rows and columns.
fn included(src: &str, range: Span) -> Range {
    let point = |at: usize| {
        let before = &src.as_bytes()[..at];
        let row = before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        Point::new(row, at - line_start)
    };
    Range {
        start_byte: range.start,
        end_byte: range.end,
        start_point: point(range.start),
        end_point: point(range.end),
    }
}
