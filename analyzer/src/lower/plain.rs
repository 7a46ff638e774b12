//! The commonest command, lowered without running the parser: one simple
//! command of plain words (`ls -la src/`, `git status`, `grep -n "a b" f`).
//!
//! Bash does nothing to a text made only of spaces, the bytes
//! [`plain_byte`] allows, and quoted texts free of expansions and escapes
//! ([`quoted_byte`]) but split it at the unquoted spaces and remove the
//! quotes: none of them expands, globs, redirects, separates commands or
//! starts a comment. The first word is the program and the rest are its
//! arguments, with two exceptions that go to the parser instead: a first
//! word holding `=` or a quote (an assignment, or a name the grammar may
//! read its own way), and any word the grammar reads as syntax of its own
//! (reserved words, declaration builtins). Texts over [`MAX_PLAIN`] bytes
//! go to the parser as well, so its limits on steps and nodes stay the
//! only ones that apply to long input.
//!
//! The IR returned here must be exactly what lowering the parser's tree
//! gives for the same text: the tests below compare the two over the
//! shared corpora and generated texts, including every tie the grammar
//! breaks (a word of digits is its `number` node, which carries no origin;
//! `''` is an empty quoted text and `""` nothing).

use super::Lowered;
use crate::ir::{Command, Simple};
use crate::span::Span;
use crate::word::{push_lit, unquoted_parts, Word};

/// Longer texts take the parser's path.
const MAX_PLAIN: usize = 1024;

/// Bytes with no meaning to bash's parser or to its expansions.
fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'.' | b'/' | b',' | b':' | b'=' | b'+' | b'@' | b'%' | b'-'
        )
}

/// Words that are syntax rather than a program or an argument: bash's
/// reserved words, the builtins the grammar gives a declaration node, and
/// `==`, which the grammar expects an operand after.
/// A text holding one anywhere takes the parser's path.
const SYNTAX_WORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "declare", "typeset", "export", "readonly",
    "local", "unset", "unsetenv", "==",
];

/// The IR of `src` when it is one simple command of plain words; `None`
/// sends it to the parser.
pub fn plain(src: &str) -> Option<Lowered> {
    plain_in(src, Span::new(0, src.len()))
}

/// [`plain`] for the part of `src` in `range` (a pipeline's stage), with
/// spans into the whole of `src`. `range` ends at a byte boundary of one.
pub fn plain_in(src: &str, range: Span) -> Option<Lowered> {
    if range.len() > MAX_PLAIN {
        return None;
    }
    let b = &src.as_bytes()[..range.end];
    let mut words = Vec::new();
    let mut i = range.start;
    while i < b.len() {
        if b[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        let mut parts = Vec::with_capacity(1);
        let mut quotes = 0;
        while i < b.len() && b[i] != b' ' {
            if plain_byte(b[i]) {
                let end = b[i..]
                    .iter()
                    .position(|&c| !plain_byte(c))
                    .map_or(b.len(), |n| i + n);
                unquoted_parts(&src[i..end], i, &mut parts);
                i = end;
                continue;
            }
            let quote = b[i];
            if !matches!(quote, b'\'' | b'"') {
                return None;
            }
            let close = i + 1 + b[i + 1..].iter().position(|&c| c == quote)?;
            let inner = &src[i + 1..close];
            if !inner.bytes().all(|c| quoted_byte(quote, c)) {
                return None;
            }
            // As lowering does: `''` is an empty quoted text, `""` nothing.
            if quote == b'\'' || !inner.is_empty() {
                push_lit(&mut parts, inner.to_string(), true);
            }
            quotes += 1;
            i = close + 1;
        }
        let piece = &src[start..i];
        // After `==` or `=~` the grammar may read the rest as a `[[ ]]`
        // pattern (F41); with a quote in the word it does.
        let pattern = quotes > 0 && (piece.contains("==") || piece.contains("=~"));
        if pattern || SYNTAX_WORDS.contains(&piece) || (words.is_empty() && !program_name(piece)) {
            return None;
        }
        let origin = match quotes {
            // The grammar reads a word of digits as a number, whose value
            // lowering does not map back onto the source.
            0 => (!grammar_number(piece)).then_some(start),
            // One quoted text alone: its value is the bytes inside.
            1 if matches!(b[start], b'\'' | b'"') && b[i - 1] == b[start] && parts.len() == 1 => {
                Some(start + 1)
            }
            _ => None,
        };
        words.push(Word {
            span: Span::new(start, i),
            parts,
            origin,
        });
    }
    let (first, last) = (words.first()?.span, words.last()?.span);
    Some(Lowered {
        commands: vec![Command::Simple(Simple {
            span: first.cover(last),
            assignments: Vec::new(),
            words,
            redirects: Vec::new(),
        })],
        ..Lowered::default()
    })
}

/// Bytes a quoted text may hold here: inside single quotes anything but
/// the closing quote; inside double quotes nothing bash expands or
/// escapes there (`$`, `` ` ``, `\`) and no `!`. No newline in either,
/// which the repair pass has rules for.
fn quoted_byte(quote: u8, c: u8) -> bool {
    c != quote
        && !matches!(c, b'\n' | b'\r')
        && (quote == b'\'' || !matches!(c, b'$' | b'`' | b'\\' | b'!'))
}

/// A first word the grammar reads as a command name, as bash does: no `=`
/// (an assignment), and none of the bytes its scanner gives a meaning of
/// its own at the start of a command (`@`, `%`, `:`, `,`).
fn program_name(w: &str) -> bool {
    let b = w.as_bytes();
    (b[0].is_ascii_alphanumeric() || matches!(b[0], b'_' | b'.' | b'/'))
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-' | b'+'))
}

/// Whether tree-sitter-bash lexes the whole word as its `number` token
/// (`-?(0x)?[0-9]+`): the grammar declares it before `word`, so it wins
/// when both match the same bytes.
fn grammar_number(w: &str) -> bool {
    let w = w.strip_prefix('-').unwrap_or(w);
    let digits = w.strip_prefix("0x").unwrap_or(w);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::by_parser;
    use super::*;
    use proptest::prelude::*;

    /// Whether the shortcut took `src`; panics when its IR differs from
    /// the parser's.
    fn agrees(src: &str) -> bool {
        let Some(fast) = plain(src) else {
            return false;
        };
        let slow = by_parser(src).unwrap_or_else(|| panic!("{src:?}: no clean parse"));
        assert_eq!(fast.commands, slow.commands, "{src:?}");
        assert!(slow.errors.is_empty() && slow.too_deep.is_none(), "{src:?}");
        assert!(
            slow.arith_refs.is_empty()
                && slow.loop_vars.is_empty()
                && slow.assigned.is_empty()
                && slow.defaulted.is_empty()
                && slow.prompt_expansions.is_empty()
                && slow.subscript_tests.is_empty()
                && slow.arith_outputs.is_empty(),
            "{src:?}: the parser's path found more than words"
        );
        true
    }

    #[test]
    fn examples() {
        for src in [
            "ls -la src/",
            "  git   status  ",
            "head -n 5 notes.txt",
            "kill -9 1234",
            "printf %s 0x10 0x1f 007 -1 -- 1.5 1e5",
            "dd if=/dev/zero of=out bs=1M count=2",
            "cargo test -p a,b --features x:y +nightly @file",
            "python3 -m http.server 8000",
            "grep -n \"a b\" notes.txt",
            "echo '' \"\" 'it''s' --x=\"y z\" a\"b\"'c'",
            "git commit -m 'fix: the #1 bug; really'",
        ] {
            assert!(agrees(src), "{src:?} should take the shortcut");
        }
        for src in [
            "",
            "   ",
            "FOO=1 ls",
            "a+=b",
            "time ls",
            "export PATH",
            "ls; rm x",
            "ls\tx",
            "echo ~",
            "ls *.rs",
            "echo $HOME",
            "echo done if",
            "echo \"$HOME\"",
            "echo \"a\\\"b\"",
            "echo 'unterminated",
            "'ls' x",
            "echo \"hi!\"",
            "echo x==\"y\"",
        ] {
            assert!(plain(src).is_none(), "{src:?} is for the parser");
        }
        assert!(plain(&"ls ".repeat(400)).is_none(), "over the size limit");
    }

    /// Words chosen to meet the grammar's ties and bash's special cases.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "ls", "5", "-1", "0x10", "0x1f", "0x", "-0x7", "007", "1.5", "-", "--", "=", "a=b",
                "--x=y", "x=", "=x", "if", "in", "fi", "time", "export", "local", "%1", "@", "a,b",
                ":", "+", "a+b", "+=", "x.y/z", "-n", "/", "..", "_", "A_1", "coproc", "esac",
                "''", "\"\"", "'a b'", "\"a b\"", "\"if\"", "'if'", "a\"\"a", "\"a\"b", "5\"x\"",
                "'--x'", "\"#\"", "'#'", "\"*\"", "'$x'", "\"{}\"", "\"~\"", "\"a'b\"", "'a\"b'",
                "\"==\"", "'=~'", "x=\"y\"", "--x=\"y z\"", "\"-\"", "\"\u{e9}\"", "'\\t'",
                "0x\"1\"", "''\"\"", "d\"o\"ne", "\"done\"", "'['", "\"]\"", "\";\"", "'|'",
            ])
            .prop_map(str::to_string),
            "[a-z0-9_.,:=+@%/-]{1,6}",
            "[a-z0-9=-]{0,2}(\"[a-z #*{}~=;&|<>()'-]{0,3}\"|'[a-z #*{}~=$;&|<>()\"-]{0,3}'){1,2}[a-z0-9=]{0,2}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 5000,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0070_6c61_696e),
            ..ProptestConfig::default()
        })]

        /// Every generated text the shortcut takes lowers as the parser's.
        #[test]
        fn generated_texts_agree(words in prop::collection::vec((word(), 1..4usize), 1..7), lead in 0..3usize) {
            let mut src = " ".repeat(lead);
            for (w, gap) in &words {
                src.push_str(w);
                src.push_str(&" ".repeat(*gap));
            }
            agrees(&src);
        }
    }

    /// The commands of the labeled corpus and, where they are present,
    /// the shared external corpora, plus every plain run of words in them.
    #[test]
    fn corpus_commands_agree() {
        let (commands, own) = super::super::test_support::commands();
        let mut took = 0;
        for c in &commands {
            took += usize::from(agrees(c));
            for run in c.split(|ch: char| !(ch == ' ' || ch.is_ascii() && plain_byte(ch as u8))) {
                agrees(run);
            }
        }
        assert!(
            took > own / 10,
            "the shortcut took {took} of {} commands",
            commands.len()
        );
    }
}
