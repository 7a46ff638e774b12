//! Words: adjacent pieces joined as bash joins them, quoting removed,
//! substitutions lowered to the commands they run, tilde prefixes.

use tree_sitter::Node;

use crate::ir::{Command, Simple};
use crate::span::Span;
use crate::word::{
    decode_ansi_c, has_brace_expansion, push_lit, remove_backslashes, unescape_backquoted,
    unquoted_parts, DynKind, Dynamic, Part, Reparse, Word, IN_DOUBLE_QUOTES,
};

use super::{span, Lowerer, STATEMENTS};

impl<'a> Lowerer<'a> {
    /// Lowers word nodes, joining the ones bash reads as a single word:
    /// tree-sitter splits `'a'\b` and `'a'\<newline>'b'` into siblings.
    pub(super) fn words(&mut self, nodes: &[Node], depth: usize) -> Vec<Word> {
        let mut out: Vec<Word> = Vec::new();
        let mut prev_end: Option<usize> = None;
        for &n in nodes {
            let gap = prev_end.map(|end| self.src.get(end..n.start_byte()).unwrap_or(" "));
            let joined = prev_end.is_some_and(|end| self.joins(end, n.start_byte()));
            let w = self.word(n, depth);
            match out.last_mut() {
                Some(last) if joined => {
                    last.span = last.span.cover(w.span);
                    last.origin = None;
                    // `\ ` between pieces is an escaped character of the word.
                    let escaped: String = gap
                        .unwrap_or("")
                        .split('\\')
                        .skip(1)
                        .filter_map(|p| p.chars().next())
                        .filter(|&c| c != '\n')
                        .collect();
                    if !escaped.is_empty() {
                        push_lit(&mut last.parts, escaped, true);
                    }
                    for p in w.parts {
                        match p {
                            Part::Lit { text, quoted } => push_lit(&mut last.parts, text, quoted),
                            d => last.parts.push(d),
                        }
                    }
                }
                _ => out.push(w),
            }
            prev_end = Some(n.end_byte());
        }
        out
    }

    /// Whether two word pieces ending and starting at these offsets are one
    /// word to bash: nothing between them, or only backslash escapes
    /// (`\<newline>` continuations, `\ ` escaped blanks).
    pub(super) fn joins(&self, end: usize, start: usize) -> bool {
        let Some(gap) = self.src.get(end..start) else {
            return false;
        };
        let b = gap.as_bytes();
        if b.is_empty() {
            return true;
        }
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'\\' || i + 1 >= b.len() {
                return false;
            }
            // Skip the escaped character, however many bytes it has.
            let ch_len = gap[i + 1..].chars().next().map_or(1, char::len_utf8);
            i += 1 + ch_len;
        }
        true
    }

    /// A word whose text is taken literally (names, keywords).
    pub(super) fn plain_word(&self, n: Node) -> Word {
        let sp = span(n);
        Word {
            span: sp,
            parts: vec![Part::Lit {
                text: self.text(n).to_string(),
                quoted: false,
            }],
            origin: Some(sp.start),
        }
    }

    /// A node we do not lower precisely: a dynamic part carrying every
    /// command found inside it.
    pub(super) fn opaque_word(&mut self, n: Node, depth: usize) -> Word {
        let commands = self.commands_within(n, depth);
        Word {
            span: span(n),
            parts: vec![Part::Dynamic(Dynamic {
                kind: DynKind::Parameter,
                span: span(n),
                commands,
                reparse: None,
                quoted: false,
            })],
            origin: None,
        }
    }

    /// Every command inside `n` that runs when `n` is expanded: the bodies
    /// of substitutions and any statements, at any depth.
    pub(super) fn commands_within(&mut self, n: Node, depth: usize) -> Vec<Command> {
        let mut out = Vec::new();
        self.commands_within_into(n, depth, &mut out);
        out
    }

    pub(super) fn commands_within_into(&mut self, n: Node, depth: usize, out: &mut Vec<Command>) {
        if self.deep(n, depth) {
            return;
        }
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            match child.kind() {
                "command_substitution" | "process_substitution" => {
                    out.extend(self.substitution_body(child, depth + 1));
                }
                k if STATEMENTS.contains(&k) => {
                    if let Some(c) = self.statement(child, depth + 1) {
                        out.push(c);
                    }
                }
                _ => self.commands_within_into(child, depth + 1, out),
            }
        }
    }

    /// The commands of `$(...)`, `` `...` `` or `<(...)`. `$(< file)` is a
    /// redirect-only command.
    pub(super) fn substitution_body(&mut self, n: Node, depth: usize) -> Vec<Command> {
        let mut cmds = self.statements(n, depth);
        let mut redirects = Vec::new();
        let mut cursor = n.walk();
        for r in n.children_by_field_name("redirect", &mut cursor) {
            let lr = self.redirect(r, depth);
            redirects.extend(lr.redirects);
            cmds.extend(lr.trailing.into_iter().map(|(_, c)| c));
        }
        // `statements` already turned loose redirects into a compound; keep
        // field redirects as a redirect-only simple command.
        if !redirects.is_empty() {
            cmds.push(Command::Simple(Simple {
                span: span(n),
                assignments: vec![],
                words: vec![],
                redirects,
            }));
        }
        cmds
    }

    pub(super) fn word(&mut self, n: Node, depth: usize) -> Word {
        let sp = span(n);
        if self.deep(n, depth) {
            return Word {
                span: sp,
                parts: vec![Part::Dynamic(Dynamic {
                    kind: DynKind::Parameter,
                    span: sp,
                    commands: vec![],
                    reparse: None,
                    quoted: false,
                })],
                origin: None,
            };
        }
        let mut parts = Vec::new();
        self.word_parts(n, depth + 1, &mut parts);
        tilde_prefix(&mut parts, sp);
        if has_brace_expansion(&parts) {
            // One word becomes several: its value is not a single string.
            let commands = parts
                .drain(..)
                .flat_map(|p| match p {
                    Part::Dynamic(d) => d.commands,
                    Part::Lit { .. } => vec![],
                })
                .collect();
            parts.push(Part::Dynamic(Dynamic {
                kind: DynKind::Brace,
                span: sp,
                commands,
                reparse: None,
                quoted: false,
            }));
        }
        let origin = self.origin(n, &parts);
        Word {
            span: sp,
            parts,
            origin,
        }
    }

    /// Where the static value starts in the source, when it maps 1:1.
    pub(super) fn origin(&self, n: Node, parts: &[Part]) -> Option<usize> {
        let [Part::Lit { text, .. }] = parts else {
            return None;
        };
        let src = self.text(n);
        match n.kind() {
            "word" if src == text => Some(n.start_byte()),
            _ if !n.is_named() && src == text => Some(n.start_byte()),
            "raw_string" if src.len() == text.len() + 2 => Some(n.start_byte() + 1),
            "string" if src.len() == text.len() + 2 => Some(n.start_byte() + 1),
            _ => None,
        }
    }

    pub(super) fn word_parts(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
        if self.deep(n, depth) {
            out.push(Part::Dynamic(Dynamic {
                kind: DynKind::Parameter,
                span: span(n),
                commands: vec![],
                reparse: None,
                quoted: false,
            }));
            return;
        }
        let text = self.text(n);
        match n.kind() {
            "word" | "number" if n.named_child_count() == 0 => {
                unquoted_parts(text, n.start_byte(), out)
            }
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                push_lit(out, inner.to_string(), true);
            }
            "ansi_c_string" => {
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                match decode_ansi_c(inner) {
                    Some(v) => push_lit(out, v, true),
                    None => out.push(Part::Dynamic(Dynamic {
                        kind: DynKind::Parameter,
                        span: span(n),
                        commands: vec![],
                        reparse: None,
                        quoted: false,
                    })),
                }
            }
            "string" if text.starts_with("$\"") => {
                let commands = self.commands_within(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Translated,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            "string" => self.double_quoted(n, depth, out),
            "translated_string" => {
                let commands = self.commands_within(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Translated,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            "concatenation" => {
                // Unquoted text (plain words, unnamed tokens, gaps) is read as
                // one run, so a glob like `-exe[c]` split over tokens stays a
                // glob.
                let mut cursor = n.walk();
                let mut run_start: Option<usize> = None;
                let mut pos = n.start_byte();
                for child in n.children(&mut cursor) {
                    let unquoted = !child.is_named()
                        || (child.kind() == "word" && child.named_child_count() == 0);
                    if unquoted {
                        run_start.get_or_insert(pos.min(child.start_byte()));
                    } else {
                        let from = run_start.take().unwrap_or(pos);
                        if child.start_byte() > from {
                            unquoted_parts(
                                self.src.get(from..child.start_byte()).unwrap_or(""),
                                from,
                                out,
                            );
                        }
                        self.word_parts(child, depth + 1, out);
                    }
                    pos = child.end_byte().max(pos);
                }
                let from = run_start.unwrap_or(pos);
                if n.end_byte() > from {
                    unquoted_parts(self.src.get(from..n.end_byte()).unwrap_or(""), from, out);
                }
            }
            "command_substitution" => {
                // Inside backquotes bash removes some backslashes before
                // parsing; tree-sitter does not, so such bodies are re-parsed.
                if let Some(inner) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
                    if inner.contains('\\') {
                        let reparse = Reparse {
                            text: unescape_backquoted(inner, self.in_double_quotes),
                            origin: None,
                        };
                        out.push(Part::Dynamic(Dynamic {
                            kind: DynKind::CommandSubstitution,
                            span: span(n),
                            commands: vec![],
                            reparse: Some(reparse),
                            quoted: false,
                        }));
                        return;
                    }
                }
                let commands = self.substitution_body(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::CommandSubstitution,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            "process_substitution" => {
                let commands = self.substitution_body(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::ProcessSubstitution,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            "arithmetic_expansion" => {
                self.arith_names(n);
                let commands = self.commands_within(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Arithmetic,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            "brace_expression" => {
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Brace,
                    span: span(n),
                    commands: vec![],
                    reparse: None,
                    quoted: false,
                }));
            }
            "simple_expansion" | "expansion" => {
                if n.kind() == "expansion" {
                    self.expansion_evaluations(n);
                }
                let commands = self.commands_within(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Parameter,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
            // A token the grammar leaves unnamed (`$`, `==`, `=~`) where
            // bash reads a word: its text.
            _ if !n.is_named() => unquoted_parts(text, n.start_byte(), out),
            _ => {
                // ERROR nodes, extglob patterns and anything unforeseen.
                let commands = self.commands_within(n, depth);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Parameter,
                    span: span(n),
                    commands,
                    reparse: None,
                    quoted: false,
                }));
            }
        }
    }

    pub(super) fn double_quoted(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
        let outer = std::mem::replace(&mut self.in_double_quotes, true);
        let before = out.len();
        self.double_quoted_parts(n, depth, out);
        for p in &mut out[before..] {
            if let Part::Dynamic(d) = p {
                d.quoted = true;
            }
        }
        self.in_double_quotes = outer;
    }

    pub(super) fn double_quoted_parts(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
        let start = n.start_byte() + 1;
        let end = n.end_byte().saturating_sub(1).max(start);
        let mut pos = start;
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            if child.kind() == "string_content" {
                continue;
            }
            if child.start_byte() > pos {
                let lit = remove_backslashes(
                    self.src.get(pos..child.start_byte()).unwrap_or(""),
                    IN_DOUBLE_QUOTES,
                );
                push_lit(out, lit, true);
            }
            self.word_parts(child, depth + 1, out);
            pos = child.end_byte().max(pos);
        }
        if end > pos {
            let lit = remove_backslashes(self.src.get(pos..end).unwrap_or(""), IN_DOUBLE_QUOTES);
            push_lit(out, lit, true);
        }
    }
}

/// A leading `~+`, `~-` or `~user` expands to $PWD, $OLDPWD or a home
/// directory: run-time values. A plain `~` ($HOME) stays literal: assigning
/// HOME is itself a finding.
pub(super) fn tilde_prefix(parts: &mut Vec<Part>, sp: Span) {
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = parts.first_mut()
    else {
        return;
    };
    if !text.starts_with('~') {
        return;
    }
    let end = text.find('/').unwrap_or(text.len());
    if end == 1 {
        return;
    }
    let rest = text[end..].to_string();
    let dynamic = Part::Dynamic(Dynamic {
        kind: DynKind::Parameter,
        span: Span::new(sp.start, sp.start + end),
        commands: vec![],
        reparse: None,
        quoted: false,
    });
    if rest.is_empty() {
        parts[0] = dynamic;
    } else {
        *text = rest;
        parts.insert(0, dynamic);
    }
}
