//! Statements: lists, pipelines, compound commands, simple commands with
//! their assignments, declaration builtins, function definitions, and
//! commands with redirects attached.

use tree_sitter::Node;

use crate::ir::{Assignment, Command, Compound, Function, Pipeline, Simple};
use crate::span::Span;
use crate::word::Word;

use super::{
    drop_fd_variable, empty_compound, is_fd_variable, last_simple, push_stage, span, Lowerer,
    REDIRECTS, STATEMENTS, WORDS,
};

/// Words bash reads as reserved at the start of a command; `!`, `time`
/// and `coproc` are left out (tree-sitter and bash agree on them, and the
/// resolver treats `coproc` as a wrapper).
const RESERVED_WORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "{", "}", "[[", "]]",
];

const CASE_TERMINATORS: &[&str] = &[";;", ";&", ";;&"];

impl<'a> Lowerer<'a> {
    /// The statements among `n`'s children (a program, a substitution body).
    pub(super) fn statements(&mut self, n: Node, depth: usize) -> Vec<Command> {
        let mut c = self.compound(n, "script", depth);
        if c.words.is_empty() && c.redirects.is_empty() {
            return c.body;
        }
        c.span = span(n);
        vec![Command::Compound(c)]
    }

    pub(super) fn statement(&mut self, n: Node, depth: usize) -> Option<Command> {
        if self.deep(n, depth) {
            return None;
        }
        let d = depth + 1;
        Some(match n.kind() {
            "command" => self.command(n, d),
            "declaration_command" | "unset_command" => self.declaration(n, d),
            "variable_assignment" | "variable_assignments" => {
                let mut assignments = Vec::new();
                self.assignments_into(n, d, &mut assignments);
                Command::Simple(Simple {
                    span: span(n),
                    assignments,
                    words: Vec::new(),
                    redirects: Vec::new(),
                })
            }
            "pipeline" => {
                let mut stages = Vec::new();
                let mut cursor = n.walk();
                for child in n.named_children(&mut cursor) {
                    if child.kind() == "comment" {
                        continue;
                    }
                    if let Some(cmd) = self.statement_or_generic(child, d) {
                        push_stage(&mut stages, cmd);
                    }
                }
                Command::Pipeline(Pipeline {
                    span: span(n),
                    stages,
                })
            }
            "redirected_statement" => self.redirected(n, d),
            "function_definition" => self.function(n, d),
            "list" => Command::Compound(self.compound(n, "list", d)),
            "subshell" => Command::Compound(self.compound(n, "subshell", d)),
            "compound_statement" => {
                if self.text(n).starts_with("((") {
                    self.arith_names(n);
                }
                Command::Compound(self.compound(n, "group", d))
            }
            "if_statement" => Command::Compound(self.compound(n, "if", d)),
            "while_statement" => Command::Compound(self.compound(n, "while", d)),
            "for_statement" => {
                self.loop_variable(n);
                Command::Compound(self.compound(n, "for", d))
            }
            "c_style_for_statement" => {
                for field in ["initializer", "condition", "update"] {
                    let mut cursor = n.walk();
                    for part in n.children_by_field_name(field, &mut cursor) {
                        self.arith_names(part);
                    }
                }
                Command::Compound(self.compound(n, "for", d))
            }
            "case_statement" => Command::Compound(self.compound(n, "case", d)),
            "test_command" => {
                self.tested_names(n, d);
                // `[[ ]]` evaluates -eq operands arithmetically; `[ ]` does not.
                if self.text(n).starts_with("[[") {
                    self.arith_tests(n);
                }
                Command::Compound(self.compound(n, "test", d))
            }
            "negated_command" => Command::Compound(self.compound(n, "negation", d)),
            _ => Command::Compound(self.compound(n, "other", d)),
        })
    }

    /// A statement, or a generic compound for any other node.
    pub(super) fn statement_or_generic(&mut self, n: Node, depth: usize) -> Option<Command> {
        if STATEMENTS.contains(&n.kind()) {
            self.statement(n, depth)
        } else {
            if self.deep(n, depth) {
                return None;
            }
            Some(Command::Compound(self.compound(n, "other", depth + 1)))
        }
    }

    /// Walks every child: statements into the body, words into `words`,
    /// redirects into `redirects`, anything else recursively.
    pub(super) fn compound(&mut self, n: Node, kind: &'static str, depth: usize) -> Compound {
        let mut c = Compound {
            span: span(n),
            kind,
            body: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        self.compound_into(n, &mut c, depth);
        c
    }

    pub(super) fn compound_into(&mut self, n: Node, c: &mut Compound, depth: usize) {
        if self.deep(n, depth) {
            return;
        }
        if n.kind() != "case_item" {
            // A case terminator outside a case item: bash refuses the line.
            let mut cursor = n.walk();
            for child in n.children(&mut cursor) {
                if !child.is_named() && CASE_TERMINATORS.contains(&child.kind()) {
                    self.errors.push(span(child));
                }
            }
        }
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            let kind = child.kind();
            if kind == "comment" {
                continue;
            }
            if STATEMENTS.contains(&kind) {
                if let Some(cmd) = self.statement(child, depth + 1) {
                    c.body.push(cmd);
                }
            } else if WORDS.contains(&kind) {
                let w = self.word(child, depth + 1);
                c.words.push(w);
            } else if REDIRECTS.contains(&kind) {
                let r = self.redirect(child, depth + 1);
                c.redirects.extend(r.redirects);
                c.body.extend(r.trailing.into_iter().map(|(_, cmd)| cmd));
            } else {
                self.compound_into(child, c, depth + 1);
            }
        }
    }

    pub(super) fn command(&mut self, n: Node, depth: usize) -> Command {
        let mut simple = Simple {
            span: span(n),
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        let mut extra = Vec::new();
        let mut word_nodes = Vec::new();
        let mut arg_words = Vec::new();
        let mut cursor = n.walk();
        // Unnamed children too: the grammar gives a bare `$` and the `==`
        // and `=~` of `[[ ]]` no node of their own even where they are a
        // command's arguments (`xargs -I == curl`), and bash passes them on.
        let children: Vec<Node> = n.children(&mut cursor).collect();
        let mut idx = 0;
        while idx < children.len() {
            let child = children[idx];
            idx += 1;
            match child.kind() {
                "variable_assignment" => {
                    self.assignments_into(child, depth, &mut simple.assignments)
                }
                "command_name" => {
                    // The name's single child is the word itself.
                    let word = child.named_child(0).unwrap_or(child);
                    // An unquoted reserved word here is tree-sitter reading
                    // on where bash stops with a syntax error (`fi`, `done`).
                    if word.kind() == "word" && RESERVED_WORDS.contains(&self.text(word)) {
                        self.errors.push(span(word));
                    }
                    word_nodes.push(word);
                }
                k if REDIRECTS.contains(&k) => {
                    // Word pieces touching the redirect's end belong to its
                    // target in bash (`<<<'a'\c'b'` is one word).
                    let mut tail = Vec::new();
                    let mut end = child.end_byte();
                    while let Some(next) = children.get(idx) {
                        if !WORDS.contains(&next.kind()) || !self.joins(end, next.start_byte()) {
                            break;
                        }
                        tail.push(*next);
                        end = next.end_byte();
                        idx += 1;
                    }
                    let r = self.redirect_with(child, depth, &tail);
                    simple.redirects.extend(r.redirects);
                    arg_words.extend(r.args);
                    extra.extend(r.trailing.into_iter().map(|(_, c)| c));
                }
                k if WORDS.contains(&k) => {
                    // `{fd}>file` names a descriptor variable: not an argument.
                    let next_is_redirect = children.get(idx).is_some_and(|r| {
                        REDIRECTS.contains(&r.kind()) && r.start_byte() == child.end_byte()
                    });
                    if next_is_redirect && is_fd_variable(self.text(child)) {
                        continue;
                    }
                    word_nodes.push(child)
                }
                "comment" => {}
                _ if !child.is_named() => word_nodes.push(child),
                // What the grammar took for a `[[ ]]` pattern after `==` or
                // `=~` (repair.rs reports it): an opaque word, in its place.
                "regex" => word_nodes.push(child),
                _ => {
                    if let Some(cmd) = self.statement_or_generic(child, depth) {
                        extra.push(cmd);
                    }
                }
            }
        }
        // The name precedes the arguments even when tree-sitter lists a
        // prefix assignment first.
        word_nodes.sort_by_key(|w| w.start_byte());
        simple.words = self.words(&word_nodes, depth);
        simple.words.extend(arg_words);
        simple.words.sort_by_key(|w| w.span.start);
        if extra.is_empty() {
            Command::Simple(simple)
        } else {
            let sp = simple.span;
            let mut body = vec![Command::Simple(simple)];
            body.extend(extra);
            Command::Compound(Compound {
                span: sp,
                kind: "command",
                body,
                words: vec![],
                redirects: vec![],
            })
        }
    }

    /// `export`, `declare`, `local`, `readonly`, `typeset`, `unset`.
    pub(super) fn declaration(&mut self, n: Node, depth: usize) -> Command {
        let mut simple = Simple {
            span: span(n),
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        let mut cursor = n.walk();
        for child in n.children(&mut cursor) {
            if !child.is_named() {
                // The keyword itself.
                if simple.words.is_empty() && child.kind().chars().all(|c| c.is_ascii_lowercase()) {
                    simple.words.push(self.plain_word(child));
                }
                continue;
            }
            match child.kind() {
                "variable_assignment" => {
                    self.assignments_into(child, depth, &mut simple.assignments)
                }
                "variable_name" => simple.words.push(self.plain_word(child)),
                k if WORDS.contains(&k) => {
                    let w = self.word(child, depth);
                    simple.words.push(w);
                }
                _ => {
                    let w = self.opaque_word(child, depth);
                    simple.words.push(w);
                }
            }
        }
        Command::Simple(simple)
    }

    pub(super) fn assignments_into(&mut self, n: Node, depth: usize, out: &mut Vec<Assignment>) {
        if n.kind() == "variable_assignments" {
            let mut cursor = n.walk();
            for child in n.named_children(&mut cursor) {
                self.assignments_into(child, depth, out);
            }
            return;
        }
        let name_node = n.child_by_field_name("name");
        let mut values = Vec::new();
        let name = match name_node {
            Some(nn) if nn.kind() == "subscript" => {
                // `a[$(cmd)]=v`: the subscript is expanded, so its commands run.
                let w = self.opaque_word(nn, depth);
                if !w.parts.is_empty() {
                    values.push(w);
                }
                // An indexed array's subscript is evaluated arithmetically.
                if let Some(index) = nn.child_by_field_name("index") {
                    self.arith_names(index);
                }
                self.text(nn.child_by_field_name("name").unwrap_or(nn))
                    .to_string()
            }
            Some(nn) => self.text(nn).to_string(),
            None => String::new(),
        };
        if let Some(v) = n.child_by_field_name("value") {
            if v.kind() == "array" {
                let mut cursor = v.walk();
                for el in v.named_children(&mut cursor) {
                    if el.kind() != "comment" {
                        values.push(self.word(el, depth + 1));
                    }
                }
            } else {
                values.push(self.word(v, depth + 1));
            }
        } else {
            // `x=` assigns the empty string.
            values.push(Word {
                span: Span::new(n.end_byte(), n.end_byte()),
                parts: vec![],
                origin: None,
            });
        }
        out.push(Assignment {
            span: span(n),
            name,
            values,
        });
    }

    pub(super) fn function(&mut self, n: Node, depth: usize) -> Command {
        let name = n
            .child_by_field_name("name")
            .map(|x| self.text(x).to_string())
            .unwrap_or_default();
        let body = match n.child_by_field_name("body") {
            Some(b) => self.statement_or_generic(b, depth),
            None => None,
        };
        let mut redirects = Vec::new();
        let mut trailing = Vec::new();
        let mut cursor = n.walk();
        for child in n.children_by_field_name("redirect", &mut cursor) {
            let r = self.redirect(child, depth);
            redirects.extend(r.redirects);
            trailing.extend(r.trailing);
        }
        let mut body = body.unwrap_or_else(|| empty_compound(span(n)));
        if !redirects.is_empty() || !trailing.is_empty() {
            let mut c = Compound {
                span: span(n),
                kind: "group",
                body: vec![body],
                words: vec![],
                redirects,
            };
            c.body.extend(trailing.into_iter().map(|(_, cmd)| cmd));
            body = Command::Compound(c);
        }
        Command::Function(Function {
            span: span(n),
            name,
            body: Box::new(body),
        })
    }

    pub(super) fn redirected(&mut self, n: Node, depth: usize) -> Command {
        let body = n.child_by_field_name("body");
        let mut redirects = Vec::new();
        let mut trailing = Vec::new();
        let mut extra_words = Vec::new();
        let mut arg_words = Vec::new();
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            if Some(child.id()) == body.map(|b| b.id()) {
                continue;
            }
            if REDIRECTS.contains(&child.kind()) {
                let r = self.redirect(child, depth);
                redirects.extend(r.redirects);
                trailing.extend(r.trailing);
                arg_words.extend(r.args);
            } else if child.kind() != "comment" {
                // Grammar oddities: keep whatever is there in view.
                extra_words.push(self.opaque_word(child, depth));
            }
        }
        let mut body_cmd = body.and_then(|b| self.statement_or_generic(b, depth));
        if let (Some(body @ (Command::Pipeline(_) | Command::Compound(_))), Some(at)) = (
            body_cmd.as_mut(),
            redirects.iter().map(|r| r.span.start).min(),
        ) {
            // `a | b {fd}>file`, `! b {fd}>file`: the grammar hangs the
            // redirect on the whole; the `{fd}` before it still belongs to
            // the last simple command.
            if let Some(last) = last_simple(body) {
                drop_fd_variable(last, at);
            }
        }
        // `{fd}` the grammar folded into the redirect before it (`cmd <in
        // {fd}>out`) names a descriptor variable, not an argument.
        arg_words.retain(|w| {
            let names_fd = w.static_value().is_some_and(|t| is_fd_variable(&t));
            !(names_fd && redirects.iter().any(|r| r.span.start == w.span.end))
        });
        let mut cmd = match body_cmd {
            Some(Command::Simple(mut s)) if extra_words.is_empty() => {
                // `cmd {fd}>file`: the `{fd}` that touches the redirect names
                // a descriptor variable, not an argument.
                if let Some(at) = redirects.iter().map(|r| r.span.start).min() {
                    drop_fd_variable(&mut s, at);
                }
                s.words.extend(arg_words);
                s.words.sort_by_key(|w| w.span.start);
                s.redirects.extend(redirects);
                s.span = span(n);
                Command::Simple(s)
            }
            // `a | b <<EOF`, `! b <<<x <<EOF`, `a && b >f`: bash gives the
            // redirects to the last simple command, after its own (so the
            // heredoc is b's stdin); the grammar hangs them on the whole.
            Some(mut whole) if hangs_on_last(&whole) && extra_words.is_empty() => {
                if let Some(last) = last_simple(&mut whole) {
                    last.words.extend(arg_words);
                    last.words.sort_by_key(|w| w.span.start);
                    last.span = redirects.iter().fold(last.span, |sp, r| sp.cover(r.span));
                    last.redirects.extend(redirects);
                }
                match &mut whole {
                    Command::Pipeline(p) => p.span = span(n),
                    Command::Compound(c) => c.span = span(n),
                    _ => {}
                }
                whole
            }
            Some(Command::Compound(mut c)) => {
                c.redirects.extend(redirects);
                c.words.extend(extra_words);
                c.words.extend(arg_words);
                c.span = span(n);
                Command::Compound(c)
            }
            // `2>&1 >&2 'curl' x`: no command node, but the grammar folded
            // the words into a redirect, and bash runs them (F42).
            None if !arg_words.is_empty() => {
                arg_words.extend(extra_words);
                arg_words.sort_by_key(|w| w.span.start);
                Command::Simple(Simple {
                    span: span(n),
                    assignments: Vec::new(),
                    words: arg_words,
                    redirects,
                })
            }
            other => {
                // The words folded into a redirect are still the simple
                // command's arguments, beside the grammar's oddities.
                let body = match other {
                    Some(Command::Simple(mut s)) => {
                        s.words.append(&mut arg_words);
                        s.words.sort_by_key(|w| w.span.start);
                        Some(Command::Simple(s))
                    }
                    other => other,
                };
                extra_words.append(&mut arg_words);
                Command::Compound(Compound {
                    span: span(n),
                    kind: "group",
                    body: body.into_iter().collect(),
                    words: extra_words,
                    redirects,
                })
            }
        };
        for (op, next) in trailing {
            cmd = match op.as_str() {
                "|" | "|&" => {
                    let mut stages = Vec::new();
                    push_stage(&mut stages, cmd);
                    push_stage(&mut stages, next);
                    let sp = stages.iter().fold(span(n), |s, c| s.cover(c.span()));
                    Command::Pipeline(Pipeline { span: sp, stages })
                }
                _ => {
                    let sp = span(n).cover(next.span());
                    Command::Compound(Compound {
                        span: sp,
                        kind: "list",
                        body: vec![cmd, next],
                        words: vec![],
                        redirects: vec![],
                    })
                }
            };
        }
        cmd
    }
}

/// Whether redirects the grammar hangs on `cmd` as a whole belong, in bash,
/// to its last simple command: a pipeline, list or negation ending in one.
fn hangs_on_last(cmd: &Command) -> bool {
    fn ends_in_simple(cmd: &Command) -> bool {
        match cmd {
            Command::Simple(_) => true,
            Command::Pipeline(p) => p.stages.last().is_some_and(ends_in_simple),
            Command::Compound(c) if matches!(c.kind, "list" | "negation") => {
                c.body.last().is_some_and(ends_in_simple)
            }
            _ => false,
        }
    }
    let whole = matches!(cmd, Command::Pipeline(_))
        || matches!(cmd, Command::Compound(c) if matches!(c.kind, "list" | "negation"));
    whole && ends_in_simple(cmd)
}
