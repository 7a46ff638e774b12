//! Where tree-sitter-bash reads a command differently from bash, found in
//! the tree and mended in the text before it is parsed again. A repair
//! never changes the text's length, so every span stays valid; what cannot
//! be mended is reported and the verdict cannot be `safe`.

use tree_sitter::{Node, Tree};

use crate::span::Span;

/// A same-length replacement of part of the text.
pub struct Edit {
    pub at: usize,
    pub with: String,
    why: &'static str,
}

impl Edit {
    /// The edit as a disagreement, for when repairs run out.
    pub fn disagreement(&self) -> Disagreement {
        Disagreement {
            span: Span::new(self.at, self.at + self.with.len()),
            why: self.why,
        }
    }
}

/// A place where the grammar and bash disagree and no repair applies.
pub struct Disagreement {
    pub span: Span,
    pub why: &'static str,
}

#[derive(Default)]
pub struct Found {
    pub edits: Vec<Edit>,
    pub unrepaired: Vec<Disagreement>,
}

const NEWLINE: &str =
    "a newline the parser reads as a blank: it and bash disagree about where the command ends";
const DELIMITER: &str =
    "a here-document delimiter quoted in part or touching an operator: the parser and bash disagree about where it ends";

pub fn find(tree: &Tree, text: &str) -> Found {
    let mut found = Found::default();
    let heredoc = has_heredoc(text);
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    // Each node's children, listed once and shared by every check on it:
    // walking them is most of what this pass costs.
    let mut kids: Vec<Node> = Vec::new();
    while let Some(n) = stack.pop() {
        kids.clear();
        if n.child_count() > 0 {
            kids.extend(n.children(&mut cursor));
        }
        match n.kind() {
            "heredoc_start" => delimiter(n, text, &mut found),
            "heredoc_redirect" => {
                heredoc_in_substitution(n, &kids, text, &mut found);
                heredoc_end_matches(n, &kids, text, &mut found);
                stack.extend_from_slice(&kids);
            }
            "word" if kids.is_empty() => newline_in_word(n, text, heredoc, &mut found),
            "command_substitution" => {
                let body = text.get(n.start_byte()..n.end_byte()).unwrap_or("");
                if body.starts_with('`') {
                    quote_extent(n, text, "`", b'`', &mut found);
                    // Bash removes backslashes from the body before parsing
                    // it, and the analyzer parses it again likewise: a
                    // repair made here, on the escaped text, would be wrong
                    // (`\\⏎` is a line continuation there).
                    if body.contains('\\') {
                        continue;
                    }
                }
                skipped_text(n, &kids, text, &mut found);
                stack.extend_from_slice(&kids);
            }
            "ansi_c_string" => quote_extent(n, text, "$'", b'\'', &mut found),
            "command" | "declaration_command" | "unset_command" => {
                regex_argument(&kids, &mut found);
                newline_between_words(n, &kids, text, heredoc, &mut found);
                skipped_text(n, &kids, text, &mut found);
                split_word(&kids, text, &mut found);
                stack.extend_from_slice(&kids);
            }
            "string" | "heredoc_body" | "heredoc_content" | "raw_string" | "translated_string"
            | "comment" => stack.extend_from_slice(&kids),
            _ => {
                skipped_text(n, &kids, text, &mut found);
                stack.extend_from_slice(&kids);
            }
        }
    }
    found
}

const REGEX: &str =
    "the parser reads the words after `=~` or `==` as one pattern; bash reads them as words and operators";

/// After a `==` or `=~` argument the grammar may take the rest of the line
/// for a `[[ ]]` pattern (`regex`), operators and all: `xargs -I =~ sh -c x
/// | mkdir` inside `"$(...)"` is one pattern to it, where bash runs two
/// programs. No same-length edit says what bash reads, so it is reported.
fn regex_argument(kids: &[Node], found: &mut Found) {
    for k in kids.iter().filter(|k| k.kind() == "regex") {
        found.unrepaired.push(Disagreement {
            span: Span::new(k.start_byte(), k.end_byte()),
            why: REGEX,
        });
    }
}

const SKIPPED: &str =
    "text the parser skipped between tokens (an escaped blank such as `\\ ` is a word to bash)";

/// Between a structural node's children there is only blank space and
/// line continuations; anything else is text tree-sitter dropped that bash
/// reads (`a | \  while ...`: bash's next command is a one-space word, and
/// the line is a syntax error).
fn skipped_text(n: Node, kids: &[Node], text: &str, found: &mut Found) {
    if kids.is_empty() {
        return;
    }
    let mut from = n.start_byte();
    let check = |a: usize, b: usize, found: &mut Found| {
        let Some(gap) = text.get(a..b) else {
            return;
        };
        let blank = only_continuations_and(gap, |c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
        if !blank {
            found.unrepaired.push(Disagreement {
                span: Span::new(a, b),
                why: SKIPPED,
            });
        }
    };
    for child in kids {
        if child.start_byte() > from {
            check(from, child.start_byte(), found);
        }
        from = from.max(child.end_byte());
    }
    if n.end_byte() > from {
        check(from, n.end_byte(), found);
    }
}

const SPLIT: &str = "one word the parser split in two: bash reads the touching pieces as one word";

/// Two words of a command that touch, with no blank between them, are one
/// word to bash; the grammar splits some (an escaped letter after a `{`, a
/// line continuation inside a word: bash removes `\⏎` before it splits
/// words), and the arguments it then sees are not the ones bash passes.
/// Redirections may touch a word (`echo x>y`).
fn split_word(kids: &[Node], text: &str, found: &mut Found) {
    let mut prev: Option<&Node> = None;
    for child in kids {
        if let Some(p) = prev {
            let wordy = |k: &str| !k.ends_with("redirect") && k != "<<<" && k != ";";
            let gap = text.get(p.end_byte()..child.start_byte()).unwrap_or(" ");
            let touching = only_continuations_and(gap, |_| false);
            if touching && wordy(p.kind()) && wordy(child.kind()) {
                found.unrepaired.push(Disagreement {
                    span: Span::new(p.start_byte(), child.end_byte()),
                    why: SPLIT,
                });
            }
        }
        prev = Some(child);
    }
}

const QUOTE_END: &str =
    "backquotes or $'...' quoting the parser ends elsewhere than bash: bash ends them at the first closing quote no backslash escapes";

/// Bash ends a backquoted substitution at the first backquote no backslash
/// escapes (quotes, `$(` and `${` inside do not count), and `$'...'` at
/// the first `'` no backslash escapes. The grammar sometimes ends them
/// elsewhere (escaped backquotes inside quotes inside `$( )` inside
/// backquotes; `\\''` closing a `$'...'`), and the commands it then sees
/// are not the ones bash runs.
fn quote_extent(n: Node, text: &str, open: &str, close: u8, found: &mut Found) {
    let Some(inner) = text
        .get(n.start_byte()..n.end_byte())
        .and_then(|t| t.strip_prefix(open))
    else {
        return;
    };
    let mut bytes = inner.bytes().enumerate();
    let mut end = None;
    while let Some((i, b)) = bytes.next() {
        if b == b'\\' {
            bytes.next();
        } else if b == close {
            end = Some(i);
            break;
        }
    }
    if end.is_none() || end != inner.len().checked_sub(1) {
        found.unrepaired.push(Disagreement {
            span: Span::new(n.start_byte(), n.end_byte()),
            why: QUOTE_END,
        });
    }
}

/// Whether `gap` holds nothing but line continuations (`\\⏎`) and bytes
/// `also` accepts. (Splitting at `"\\\n"` said the same, at the cost of a
/// substring search set up for every gap.)
fn only_continuations_and(gap: &str, also: impl Fn(u8) -> bool) -> bool {
    let b = gap.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 2;
        } else if also(b[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.at..e.at + e.with.len(), &e.with);
    }
    out
}

/// tree-sitter-bash glues a line that starts with a backslash escape onto
/// the last word of the line before: `ls a⏎\curl x` comes back as one
/// command `ls a ⏎\curl x`, where bash runs `ls a`, then `curl x`. Such a
/// word token starts with the newline that ends the command in bash; `;`
/// means the same there, unless a here-document waits for its body.
fn newline_in_word(n: Node, text: &str, heredoc: bool, found: &mut Found) {
    let Some(word) = text.get(n.byte_range()) else {
        return;
    };
    let Some(i) = unescaped_newline(word) else {
        return;
    };
    let leading = word[..i].bytes().all(|b| b == b' ' || b == b'\t');
    if leading && !heredoc {
        found.edits.push(Edit {
            at: n.start_byte() + i,
            with: ";".into(),
            why: NEWLINE,
        });
    } else {
        found.unrepaired.push(Disagreement {
            span: Span::new(n.start_byte(), n.end_byte()),
            why: NEWLINE,
        });
    }
}

/// In a pipeline of three or more with a redirect after it, the grammar
/// takes a newline for a blank: `a | b | head⏎A=1 curl x 2>/dev/null` is
/// read as `head A=1 curl x`. An unescaped newline between two words of one
/// simple command always ends it in bash.
fn newline_between_words(n: Node, kids: &[Node], text: &str, heredoc: bool, found: &mut Found) {
    for pair in kids.windows(2) {
        let (from, to) = (pair[0].end_byte(), pair[1].start_byte());
        let Some(gap) = text.get(from..to) else {
            continue;
        };
        // `X=''\l\s curl`: bash reads one assignment `X=ls` and runs curl;
        // the grammar ends the assignment at the quote and makes `\l\s`
        // the command name. Nothing but line continuations may separate an
        // assignment from a word that is still part of its value.
        let touching = only_continuations_and(gap, |_| false);
        if touching
            && pair[0].kind() == "variable_assignment"
            && !pair[1].kind().ends_with("redirect")
        {
            found.unrepaired.push(Disagreement {
                span: Span::new(pair[0].start_byte(), pair[1].end_byte()),
                why: "an assignment's value runs on into the next word: the parser and bash disagree about where the command name starts",
            });
            return;
        }
        let bytes = gap.as_bytes();
        let newline =
            (0..bytes.len()).find(|&i| bytes[i] == b'\n' && (i == 0 || bytes[i - 1] != b'\\'));
        let Some(i) = newline else {
            continue;
        };
        if heredoc {
            found.unrepaired.push(Disagreement {
                span: Span::new(n.start_byte(), n.end_byte()),
                why: NEWLINE,
            });
        } else {
            found.edits.push(Edit {
                at: from + i,
                with: ";".into(),
                why: NEWLINE,
            });
        }
        return;
    }
}

/// The line that ends the body must be the delimiter bash uses; where the
/// grammar ended it elsewhere, its body (and what follows) is not bash's.
fn heredoc_end_matches(n: Node, kids: &[Node], text: &str, found: &mut Found) {
    let part = |kind: &str| {
        kids.iter()
            .find(|c| c.kind() == kind)
            .and_then(|c| text.get(c.byte_range()))
    };
    let (Some(start), Some(end)) = (part("heredoc_start"), part("heredoc_end")) else {
        return;
    };
    // Partly quoted delimiters are delimiter()'s to mend first.
    let plain = !start.contains(['\'', '"', '\\']);
    if !(plain || whole_quoted(start)) {
        return;
    }
    let Some(want) = unquoted(start).or_else(|| plain.then(|| start.to_string())) else {
        return;
    };
    if end.trim_start_matches('\t') != want {
        found.unrepaired.push(Disagreement {
            span: Span::new(n.start_byte(), n.end_byte()),
            why: DELIMITER,
        });
    }
}

/// bash 5.2 (5.2.15 at least) loses a `;` that follows a here-document
/// inside `$( )` or `<( )`: `$(cat <<E⏎E⏎echo a; echo b)` runs `echo a echo b`, and
/// other versions run two commands. Only a here-document that ends the
/// substitution (`"$(cat <<'EOF' ... EOF⏎)"`, the usual commit message) reads
/// the same everywhere.
fn heredoc_in_substitution(n: Node, kids: &[Node], text: &str, found: &mut Found) {
    let mut up = n.parent();
    while let Some(p) = up {
        if matches!(p.kind(), "command_substitution" | "process_substitution") {
            break;
        }
        up = p.parent();
    }
    let Some(subst) = up else {
        return;
    };
    let start_end = kids
        .iter()
        .find(|c| c.kind() == "heredoc_start")
        .map_or(n.start_byte(), |c| c.end_byte());
    let line_end = text[start_end..]
        .find('\n')
        .map_or(text.len(), |i| start_end + i);
    let rest_of_line = text.get(start_end..line_end).unwrap_or("");
    let close = subst.end_byte().saturating_sub(1).max(n.end_byte());
    let after = text.get(n.end_byte()..close).unwrap_or("x");
    if rest_of_line.contains([';', '|', '&']) || !after.trim().is_empty() {
        found.unrepaired.push(Disagreement {
            span: Span::new(n.start_byte(), n.end_byte()),
            why: "commands after a here-document inside `$( )` or `<( )`: bash versions disagree about how they are split",
        });
    }
}

/// Whether a here-document (not a here-string) appears anywhere.
fn has_heredoc(text: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices("<<")
        .any(|(i, _)| b.get(i + 2) != Some(&b'<') && (i == 0 || b[i - 1] != b'<'))
}

/// The offset of the first newline in `word` not escaped by a backslash.
fn unescaped_newline(word: &str) -> Option<usize> {
    let b = word.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The grammar knows delimiters quoted whole (`'EOF'`, `"EOF"`, `\EOF`);
/// bash takes any quoting (`E'OF'`, `"E"OF`, `E\OF`) to mean the same: the
/// delimiter without its quotes, and a body that is not expanded. The
/// grammar instead looks for a line reading `E'OF'` and takes the rest of
/// the text as the body. Rewritten as `\EOF` plus blanks, it means the same
/// to both.
fn delimiter(n: Node, text: &str, found: &mut Found) {
    let Some(t) = text.get(n.byte_range()) else {
        return;
    };
    // The grammar also reads `EOF;` or `EOF|` as one delimiter, where bash
    // ends the word at the operator: the rest of the line is lost.
    let operator = t.contains([';', '|', '&', '(', ')', '<', '>', ' ', '\t', '\n']);
    if whole_quoted(t) || !(operator || t.contains(['\'', '"', '\\'])) {
        return;
    }
    let plain = unquoted(t).filter(|d| {
        !d.is_empty()
            && d.len() < t.len()
            && d.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    });
    let ends_word = text
        .as_bytes()
        .get(n.end_byte())
        .is_none_or(|b| b" \t\n;|&<>)".contains(b));
    match plain {
        Some(d) if ends_word && !operator => found.edits.push(Edit {
            at: n.start_byte(),
            with: format!("\\{d}{}", " ".repeat(t.len() - d.len() - 1)),
            why: DELIMITER,
        }),
        _ => found.unrepaired.push(Disagreement {
            span: Span::new(n.start_byte(), n.end_byte()),
            why: DELIMITER,
        }),
    }
}

/// `'EOF'`, `"EOF"` or `\EOF` (`\'` and `\\` too), with no other quoting
/// inside: the forms the grammar matches.
fn whole_quoted(t: &str) -> bool {
    let plain = |s: &str| !s.contains(['\'', '"', '\\', '$', '`']);
    if let Some(rest) = t.strip_prefix('\\') {
        let mut chars = rest.chars();
        return chars.next().is_some() && plain(chars.as_str());
    }
    if let Some(inner) = t.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return !inner.is_empty() && !inner.contains('\'');
    }
    if let Some(inner) = t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return !inner.is_empty() && plain(inner);
    }
    false
}

/// The delimiter bash uses: the word with its quotes removed. `None` for
/// anything but plain, single-quoted, double-quoted and escaped pieces.
fn unquoted(t: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => out.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' | '$' | '`' => return None,
                    c => out.push(c),
                }
            },
            '\\' => out.push(chars.next()?),
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_removal_of_delimiters() {
        assert_eq!(unquoted("E'OF'").as_deref(), Some("EOF"));
        assert_eq!(unquoted("\"E\"OF").as_deref(), Some("EOF"));
        assert_eq!(unquoted("E\\OF").as_deref(), Some("EOF"));
        assert_eq!(unquoted("E$'x'"), None);
        assert_eq!(unquoted("E'OF"), None);
        assert!(whole_quoted("'EOF'"));
        assert!(whole_quoted("\\EOF"));
        assert!(!whole_quoted("E'OF'"));
        assert!(!whole_quoted("'E'OF"));
        assert!(whole_quoted("'```'"));
        assert!(whole_quoted("\\'"));
        assert!(whole_quoted("\\\\"));
        assert!(!whole_quoted("\\E'OF'"));
    }
}
