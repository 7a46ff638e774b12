//! Here-documents: their bodies, quoted or not, tab-stripped, with
//! backslash-newline joined and backquoted substitutions found in the text.

use tree_sitter::Node;

use crate::ir::{Command, Compound, Redirect, RedirectTarget};
use crate::span::Span;
use crate::word::{
    push_lit, remove_backslashes, unescape_backquoted, DynKind, Dynamic, Part, Reparse, Word,
    IN_BACKQUOTES,
};

use super::{span, LoweredRedirects, Lowerer, REDIRECTS, STATEMENTS, WORDS};

impl<'a> Lowerer<'a> {
    pub(super) fn heredoc(
        &mut self,
        n: Node,
        fd: Option<String>,
        depth: usize,
        out: &mut LoweredRedirects,
    ) {
        let mut op = String::from("<<");
        let mut quoted = false;
        let mut body = Word {
            span: Span::new(n.end_byte(), n.end_byte()),
            parts: vec![],
            origin: None,
        };
        let mut pending_op: Option<String> = None;
        // Words after the delimiter on the heredoc's line: the command's
        // arguments (`time <<EOF id` runs id, F43).
        let mut arg_nodes = Vec::new();
        let mut cursor = n.walk();
        for child in n.children(&mut cursor) {
            if !child.is_named() {
                match child.kind() {
                    "<<" | "<<-" => op = child.kind().to_string(),
                    k @ ("|" | "|&" | "&&" | "||" | ";" | "&") => pending_op = Some(k.to_string()),
                    _ => {}
                }
                continue;
            }
            match child.kind() {
                "heredoc_start" => {
                    let t = self.text(child);
                    quoted = t.contains(['\'', '"', '\\']);
                }
                "heredoc_body" => body = self.heredoc_body(child, quoted, op == "<<-", depth),
                "heredoc_end" | "file_descriptor" => {}
                k if REDIRECTS.contains(&k) => {
                    let r = self.redirect(child, depth);
                    out.redirects.extend(r.redirects);
                    out.trailing.extend(r.trailing);
                }
                k if STATEMENTS.contains(&k) => {
                    // `cat <<EOF | sh`: the `|` is the first token of the
                    // pipeline node itself.
                    let leading_pipe = child
                        .child(0)
                        .filter(|c| !c.is_named() && matches!(c.kind(), "|" | "|&"))
                        .map(|c| c.kind().to_string());
                    if let Some(cmd) = self.statement(child, depth) {
                        let op = pending_op
                            .take()
                            .or(leading_pipe)
                            .unwrap_or_else(|| ";".into());
                        out.trailing.push((op, cmd));
                    }
                }
                k if WORDS.contains(&k) => arg_nodes.push(child),
                _ => {
                    // Anything else the grammar attached to the heredoc
                    // line stays in view.
                    let w = self.opaque_word(child, depth);
                    let cmd = Command::Compound(Compound {
                        span: span(child),
                        kind: "other",
                        body: vec![],
                        words: vec![w],
                        redirects: vec![],
                    });
                    out.trailing.push((";".into(), cmd));
                }
            }
        }
        let args = self.words(&arg_nodes, depth);
        out.args.extend(args);
        out.redirects.insert(
            0,
            Redirect {
                span: span(n),
                op,
                fd,
                target: RedirectTarget::Heredoc { quoted, body },
                variable: None,
            },
        );
    }

    /// A here-document body. Quoted delimiter: literal text. Unquoted: like
    /// a double-quoted string, except that `\"` keeps its backslash.
    pub(super) fn heredoc_body(
        &mut self,
        n: Node,
        quoted: bool,
        strip_tabs: bool,
        depth: usize,
    ) -> Word {
        let sp = span(n);
        let continued = !quoted && self.text(n).contains("\\\n");
        if strip_tabs || continued {
            // bash strips leading tabs, and in an unquoted body joins lines
            // ending in a backslash, before expanding; tree-sitter does
            // neither, so the result is read again as a heredoc of its own.
            let mut text: String = self
                .text(n)
                .split_inclusive('\n')
                .map(|line| {
                    if strip_tabs {
                        line.trim_start_matches('\t')
                    } else {
                        line
                    }
                })
                .collect();
            if continued {
                text = join_continued_lines(&text);
            }
            if quoted || !text.contains(['$', '`']) {
                return Word {
                    span: sp,
                    parts: vec![Part::Lit { text, quoted: true }],
                    origin: None,
                };
            }
            let mut delim = String::from("BASHGATE_EOF");
            while text.contains(&delim) {
                delim.push('_');
            }
            let script = format!(
                ": <<{delim}\n{text}{}{delim}\n",
                if text.ends_with('\n') { "" } else { "\n" }
            );
            return Word {
                span: sp,
                parts: vec![Part::Dynamic(Dynamic {
                    kind: DynKind::Parameter,
                    span: sp,
                    commands: vec![],
                    reparse: Some(Reparse {
                        text: script,
                        origin: None,
                    }),
                    quoted: false,
                })],
                origin: None,
            };
        }
        if quoted {
            return Word {
                span: sp,
                parts: vec![Part::Lit {
                    text: self.text(n).to_string(),
                    quoted: true,
                }],
                origin: Some(sp.start),
            };
        }
        let mut parts = Vec::new();
        let mut pos = n.start_byte();
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            if child.kind() == "heredoc_content" {
                continue;
            }
            if child.start_byte() > pos {
                heredoc_text(self.src, pos, child.start_byte(), &mut parts);
            }
            let w = self.word(child, depth);
            parts.extend(w.parts);
            pos = child.end_byte().max(pos);
        }
        if n.end_byte() > pos {
            heredoc_text(self.src, pos, n.end_byte(), &mut parts);
        }
        let origin = match parts.as_slice() {
            [Part::Lit { text, .. }] if text.len() == sp.len() => Some(sp.start),
            [] => Some(sp.start),
            _ => None,
        };
        Word {
            span: sp,
            parts,
            origin,
        }
    }
}

/// Literal text of an unquoted here-document body, with its backquoted
/// command substitutions (tree-sitter leaves them as text).
pub(super) fn heredoc_text(src: &str, start: usize, end: usize, parts: &mut Vec<Part>) {
    let text = src.get(start..end).unwrap_or("");
    let bytes = text.as_bytes();
    let mut lit_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => {
                // Find the closing unescaped backquote.
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'`' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                push_lit(
                    parts,
                    remove_backslashes(&text[lit_from..i], IN_BACKQUOTES),
                    true,
                );
                let inner_end = j.min(bytes.len());
                let inner = &text[i + 1..inner_end];
                let origin = (!inner.contains('\\')).then_some(start + i + 1);
                parts.push(Part::Dynamic(Dynamic {
                    kind: DynKind::CommandSubstitution,
                    span: Span::new(start + i, start + (j + 1).min(bytes.len())),
                    commands: vec![],
                    reparse: Some(Reparse {
                        text: unescape_backquoted(inner, false),
                        origin,
                    }),
                    quoted: true,
                }));
                i = j + 1;
                lit_from = i.min(bytes.len());
            }
            _ => i += 1,
        }
    }
    if lit_from < bytes.len() {
        push_lit(
            parts,
            remove_backslashes(&text[lit_from..], IN_BACKQUOTES),
            true,
        );
    }
}

/// Removes every backslash-newline pair; other backslashes stay with the
/// character they escape.
pub(super) fn join_continued_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}
