//! A pipeline parsed one stage at a time.
//!
//! tree-sitter-bash's pipeline rule is ambiguous (`a | b | c` groups either
//! way), so from the third stage on the parser carries several stack
//! versions and runs its error recovery on the losing ones: each stage
//! costs about five times what it costs after `;`. A text that is one
//! pipeline and nothing else is therefore cut at its `|` bytes, and each
//! stage is parsed alone: the parser reads only the stage's bytes of the
//! text (tree-sitter's included ranges), so every span stays where it was.
//!
//! Cutting is only sound where each `|` is certainly a pipe between
//! stages of one pipeline, which [`stage_spans`] decides with a scan that
//! knows quotes and escapes and gives up on anything else that could put
//! a `|` inside another construct or join commands another way
//! (substitutions, `${...}`, subshells, `[[ ]]`, `;`, `&&`, `||`, `|&`,
//! heredocs, comments, `!`, `time`, newlines). Any stage the parser does
//! not take cleanly sends the whole text back to the ordinary path.
//!
//! The IR returned here must be exactly what lowering the whole text's
//! tree gives: the tests at the end compare the two over the labeled
//! corpus, the shared corpora and generated pipelines.

use super::{lower, plain_in, push_stage, Lowered};
use crate::ir::{Command, Pipeline};
use crate::limits::Limits;
use crate::parse::{parse_in, Parsed};
use crate::span::Span;

/// Longer texts take the ordinary path, where the parser's step limit
/// governs them.
const MAX_SPLIT: usize = 1024;

/// Words that, first in a stage, make it something other than one
/// command of the pipeline (`time` and `!` take the whole pipeline) or
/// open a construct the cut could land inside.
const LEADING_SYNTAX: &[&str] = &[
    "!", "time", "coproc", "{", "}", "[[", "]]", "if", "then", "elif", "else", "fi", "case",
    "esac", "for", "select", "while", "until", "do", "done", "in", "function",
];

/// The IR of `src` when it is one pipeline whose stages can be parsed
/// apart; `None` sends it to the ordinary path. Spends parser steps from
/// `steps_left` only when it succeeds.
pub fn pipeline(src: &str, limits: &Limits, steps_left: &mut usize) -> Option<Lowered> {
    // Where a carriage return makes a word of what looks like a comment,
    // the whole text is the parser's (see `parse::parse_in`).
    if src.contains('\r') {
        return None;
    }
    let spans = stage_spans(src)?;
    let mut steps = *steps_left;
    let mut nodes = 0;
    let mut out = Lowered::default();
    let mut stages = Vec::with_capacity(spans.len());
    for sp in spans {
        let mut one = match plain_in(src, sp) {
            Some(lowered) => lowered,
            None => {
                let Parsed::Tree {
                    tree,
                    text,
                    unrepaired,
                } = parse_in(src, Some(sp), limits, &mut steps)
                else {
                    return None;
                };
                nodes += tree.root_node().descendant_count();
                if !unrepaired.is_empty() || nodes > limits.max_nodes {
                    return None;
                }
                lower(tree.root_node(), &text, limits.max_depth)
            }
        };
        if !one.errors.is_empty() || one.too_deep.is_some() || one.commands.len() != 1 {
            return None;
        }
        push_stage(&mut stages, one.commands.pop()?);
        out.arith_refs.append(&mut one.arith_refs);
        out.loop_vars.append(&mut one.loop_vars);
        out.assigned.append(&mut one.assigned);
        out.defaulted.append(&mut one.defaulted);
        out.prompt_expansions.append(&mut one.prompt_expansions);
        out.subscript_tests.append(&mut one.subscript_tests);
        out.arith_outputs.append(&mut one.arith_outputs);
    }
    let span = stages.first()?.span().cover(stages.last()?.span());
    out.commands = vec![Command::Pipeline(Pipeline { span, stages })];
    *steps_left = steps;
    Some(out)
}

/// The stages of `src` (from after one `|` to before the next), when it is
/// one pipeline of two or more stages and every `|` in it is certainly a
/// pipe of that pipeline.
fn stage_spans(src: &str) -> Option<Vec<Span>> {
    let b = src.as_bytes();
    if b.len() > MAX_SPLIT || !b.contains(&b'|') || b.contains(&b'\n') || b.contains(&b'\r') {
        return None;
    }
    let mut bars = Vec::new();
    let mut quote = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match quote {
            Some(b'\'') => {
                if c == b'\'' {
                    quote = None;
                }
            }
            Some(_) => match c {
                b'"' => quote = None,
                b'\\' => i += 1,
                // A substitution or expansion inside double quotes may
                // hold quotes of its own.
                b'`' => return None,
                b'$' if matches!(next, Some(b'(' | b'{' | b'[')) => return None,
                _ => {}
            },
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'\\' => i += 1,
                b'|' if matches!(next, Some(b'|' | b'&')) => return None,
                // The grammar reads a value or a `$` up to the `|` as
                // unfinished (`a=|cat`, `x$|y`), where bash does not.
                b'|' if matches!(b.get(i.wrapping_sub(1)), Some(b'=' | b'$')) => return None,
                b'|' => bars.push(i),
                // Only as part of a redirect: `>&`, `<&`, `&>`, `&>>` (but
                // not `>&-`, which the grammar gives no target).
                b'&' if !(matches!(b.get(i.wrapping_sub(1)), Some(b'>' | b'<'))
                    && next != Some(b'-')
                    || next == Some(b'>')) =>
                {
                    return None
                }
                b'$' if matches!(next, Some(b'(' | b'{' | b'[' | b'\'' | b'"')) => return None,
                // The grammar may read the rest of the text, `|` included,
                // as a pattern after these (F41).
                b'=' if matches!(next, Some(b'=' | b'~')) => return None,
                b'<' if next == Some(b'<') => return None,
                b'[' if next == Some(b'[') => return None,
                b']' if next == Some(b']') => return None,
                b';' | b'(' | b')' | b'`' | b'#' | b'!' => return None,
                _ => {}
            },
        }
        i += 1;
    }
    if quote.is_some() || bars.is_empty() {
        return None;
    }
    let mut spans = Vec::with_capacity(bars.len() + 1);
    let mut start = 0;
    for end in bars.into_iter().chain([b.len()]) {
        let stage = &src[start..end];
        let first = stage.split_ascii_whitespace().next()?;
        // After a `|`, the grammar reads an assignment or an escaped first
        // byte differently from the same stage alone; a first word in
        // braces or brackets may be a group or a test, one starting with
        // other punctuation meets the grammar's ties (`- x=1` loses its
        // `-`), and a stage starting with a redirect may have no command
        // node at all (F42).
        let odd_after_bar = start > 0 && (first.contains('=') || first.starts_with('\\'));
        let ordinary = (first.as_bytes()[0].is_ascii_alphanumeric()
            || first.starts_with(['_', '.', '/', '~', '$', '\'', '"', '\\']))
            && !first.contains(['<', '>']);
        if LEADING_SYNTAX.contains(&first) || odd_after_bar || !ordinary {
            return None;
        }
        spans.push(Span::new(start, end));
        start = end + 1;
    }
    Some(spans)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::by_parser;
    use super::*;
    use proptest::prelude::*;

    /// Whether the split took `src`; panics when its IR differs from the
    /// whole parse's.
    fn agrees(src: &str) -> bool {
        let limits = Limits::default();
        let mut steps = limits.max_parse_steps;
        let Some(split) = pipeline(src, &limits, &mut steps) else {
            return false;
        };
        let whole = by_parser(src).unwrap_or_else(|| panic!("{src:?}: split, but not clean whole"));
        assert!(
            whole.errors.is_empty() && whole.too_deep.is_none(),
            "{src:?}: split, but the whole parse has errors"
        );
        assert_eq!(split.commands, whole.commands, "{src:?}");
        assert_eq!(split.arith_refs, whole.arith_refs, "{src:?}");
        assert_eq!(split.loop_vars, whole.loop_vars, "{src:?}");
        assert_eq!(split.assigned, whole.assigned, "{src:?}");
        assert_eq!(split.defaulted, whole.defaulted, "{src:?}");
        assert_eq!(split.prompt_expansions, whole.prompt_expansions, "{src:?}");
        assert_eq!(split.subscript_tests, whole.subscript_tests, "{src:?}");
        let outputs = |l: &Lowered| {
            l.arith_outputs
                .iter()
                .map(|o| (o.span, o.sole_program.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(outputs(&split), outputs(&whole), "{src:?}");
        true
    }

    #[test]
    fn examples() {
        for src in [
            "ls | wc -l",
            "cut -c 2- | cut -c 2- | sort -n | uniq -c",
            "grep -v '|' f | tr '|' ' ' | sort",
            "echo \"a|b\" | cat",
            "a 2>&1 | b &>/dev/null | c >&2",
            "a < in | b > out",
            "x=1 a | b",
            "find . -name '*.rs' | xargs -I{} wc -l {}",
            "echo a\\|b | cat",
            "echo $HOME | cat",
            "echo {a,b} | sort",
        ] {
            assert!(agrees(src), "{src:?} should be split");
        }
        for src in [
            "ls",
            "a || b",
            "a |& b",
            "a | b; c",
            "a | b && c",
            "a & b | c",
            "a | b &",
            "echo $(a | b) | c",
            "echo \"$(a | b)\" | c",
            "echo `a | b` | c",
            "echo ${x/|/} | c",
            "echo $'|\\'' | c",
            "! a | b",
            "time a | b",
            "a | b # c | d",
            "a <<EOF | b",
            "[[ a | b ]]",
            "(a | b) | c",
            "a | { b; }",
            "a | 'b",
            "a |",
            "| a",
            "a | | b",
            "a | b\n",
            "a | y=2 b",
            "a | {} x",
        ] {
            let limits = Limits::default();
            let mut steps = limits.max_parse_steps;
            assert!(
                pipeline(src, &limits, &mut steps).is_none(),
                "{src:?} is for the whole parse"
            );
        }
    }

    #[test]
    fn steps_are_spent_only_on_success() {
        let limits = Limits::default();
        let mut steps = limits.max_parse_steps;
        assert!(pipeline("a | b c 'd", &limits, &mut steps).is_none());
        assert_eq!(steps, limits.max_parse_steps);
    }

    /// Stage material chosen to meet bash's and the grammar's edge cases.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "cat",
                "ls",
                "-n",
                "5",
                "x=1",
                "a=",
                "'|'",
                "\"|\"",
                "\"a b\"",
                "'a\"b'",
                "\"a'b\"",
                "\\|",
                "\\\\",
                "\\'",
                "$x",
                "\"$x\"",
                "${x}",
                "$@",
                "*.rs",
                "{}",
                "{a,b}",
                "{",
                "}",
                "[",
                "]",
                "[[",
                "!",
                "time",
                "if",
                "do",
                "done",
                "in",
                "export",
                "local",
                "declare",
                "2>&1",
                ">f",
                ">>f",
                "<f",
                "&>f",
                ">&2",
                "2>/dev/null",
                "<&0",
                "<>f",
                ">|f",
                "=",
                "==",
                "=~",
                "$",
                "%",
                "~",
                "~/x",
                "a~",
                "-",
                "--",
                "coproc",
                "function",
                "f()",
                "a#b",
                "#",
                "echo",
                "xargs",
                "sh",
                "-c",
                "\t",
                "&",
                ">&",
                "<&-",
                ">&-",
                "1>",
                "2>",
                ">",
                "<",
                "a\\ b",
                "\\ ",
                "~u",
                "a\\\"b",
                "'",
                "\"",
                "a|b",
                "'a|b'",
                "\"a|b\"",
                "?",
                "[a]",
                "\"$@\"",
                "$1",
                "$#",
                "$?",
                "$$",
                "$-",
                "$_",
                "a$",
                "=a",
                "+=",
                "a+=b",
                "a[1]=x",
                "%%",
                "^",
                ",",
                "x,y",
            ])
            .prop_map(str::to_string),
            "[a-z0-9_.,:=+@%/'\"{}$*?-]{1,5}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 5000,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7069_7065),
            ..ProptestConfig::default()
        })]

        /// Every generated pipeline the split takes lowers as the whole.
        #[test]
        fn generated_pipelines_agree(
            stages in prop::collection::vec(prop::collection::vec(word(), 1..5), 2..7),
            pad in 0..2usize,
        ) {
            let gap = " ".repeat(pad);
            let src = stages
                .iter()
                .map(|s| s.join(" "))
                .collect::<Vec<_>>()
                .join(&format!("{gap}|{gap}"));
            agrees(&src);
        }
    }

    /// The labeled corpus and, where present, the shared corpora: every
    /// command the split takes, and every pipeline cut out of a longer one.
    #[test]
    fn corpus_commands_agree() {
        let (commands, own) = super::super::test_support::commands();
        let mut took = 0;
        for c in &commands {
            took += usize::from(agrees(c));
            for piece in c.split([';', '&', '\n', '(', ')', '`']) {
                agrees(piece);
            }
        }
        assert!(
            took > own / 50,
            "the split took {took} of {} commands",
            commands.len()
        );
    }
}
