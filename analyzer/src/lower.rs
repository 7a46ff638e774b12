//! Lowering: tree-sitter-bash's concrete tree becomes our IR.
//!
//! Every node kind the analyzer understands is lowered precisely; anything
//! else is walked generically so that no command hidden inside it is lost
//! (its statements become commands of a compound, its substitutions become
//! dynamic parts). ERROR and MISSING nodes are recorded so the verdict can
//! never be `safe`, but are still walked for evidence of network use.

use tree_sitter::Node;

use crate::ir::{
    Assignment, Command, Compound, Function, Pipeline, Redirect, RedirectTarget, Simple,
};
use crate::span::Span;
use crate::word::{
    decode_ansi_c, has_brace_expansion, push_lit, runs_subscript, unescape_backquoted,
    unescape_double_quoted, unquoted_parts, DynKind, Dynamic, Part, Reparse, Word,
};

/// The result of lowering one script.
pub struct Lowered {
    pub commands: Vec<Command>,
    /// Spans of ERROR and MISSING nodes.
    pub errors: Vec<Span>,
    /// Set when nesting went deeper than the limit; lowering stopped there.
    pub too_deep: Option<Span>,
    /// Variables whose values bash evaluates as arithmetic (or as names):
    /// `$((x))`, `(( x ))`, `[[ x -eq 1 ]]`, `${a[x]}`, `${s:x}`, `${!x}`.
    pub arith_refs: Vec<(String, Span)>,
    /// Loop variables (`for`/`select`), and whether their values are not
    /// all static.
    pub loop_vars: Vec<(String, Span, bool)>,
    /// `${x@P}`: the value is expanded like a prompt, substitutions included.
    pub prompt_expansions: Vec<Span>,
    /// `[ -v 'a[$(cmd)]' ]`: a tested name whose subscript runs a command.
    pub subscript_tests: Vec<Span>,
    /// `$(( $(cmd) ))`: a substitution whose output bash evaluates as an
    /// arithmetic expression, subscripts (and so commands) included.
    pub arith_outputs: Vec<ArithOutput>,
}

/// A command substitution inside arithmetic.
pub struct ArithOutput {
    pub span: Span,
    /// The program, when the substitution is one simple command given
    /// only static options and input redirects (`$(wc -l < f)`): whether
    /// its output is a number is then the catalog's to say.
    pub sole_program: Option<String>,
}

pub fn lower(root: Node, src: &str, max_depth: usize) -> Lowered {
    let mut l = Lowerer {
        in_double_quotes: false,
        arith_refs: Vec::new(),
        loop_vars: Vec::new(),
        prompt_expansions: Vec::new(),
        subscript_tests: Vec::new(),
        arith_outputs: Vec::new(),
        src,
        max_depth,
        errors: Vec::new(),
        too_deep: None,
    };
    let commands = l.statements(root, 0);
    if root.has_error() {
        collect_errors(root, &mut l.errors);
    }
    Lowered {
        commands,
        errors: l.errors,
        too_deep: l.too_deep,
        arith_refs: l.arith_refs,
        loop_vars: l.loop_vars,
        prompt_expansions: l.prompt_expansions,
        subscript_tests: l.subscript_tests,
        arith_outputs: l.arith_outputs,
    }
}

/// Finds ERROR and MISSING nodes without recursion.
fn collect_errors(root: Node, out: &mut Vec<Span>) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            out.push(span(node));
            if out.len() >= 8 {
                return;
            }
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn span(n: Node) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

const STATEMENTS: &[&str] = &[
    "command",
    "declaration_command",
    "unset_command",
    "variable_assignment",
    "variable_assignments",
    "pipeline",
    "redirected_statement",
    "list",
    "subshell",
    "compound_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "function_definition",
    "test_command",
    "negated_command",
];

const WORDS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "concatenation",
    "number",
    "brace_expression",
];

const REDIRECTS: &[&str] = &["file_redirect", "heredoc_redirect", "herestring_redirect"];

struct Lowerer<'a> {
    src: &'a str,
    arith_refs: Vec<(String, Span)>,
    loop_vars: Vec<(String, Span, bool)>,
    prompt_expansions: Vec<Span>,
    subscript_tests: Vec<Span>,
    arith_outputs: Vec<ArithOutput>,
    max_depth: usize,
    /// Inside a double-quoted string (changes backquote unescaping).
    in_double_quotes: bool,
    errors: Vec<Span>,
    too_deep: Option<Span>,
}

/// A redirect plus what a here-document's line carried after it
/// (`cat <<EOF | sh`: tree-sitter hangs `| sh` off the heredoc).
struct LoweredRedirects {
    redirects: Vec<Redirect>,
    trailing: Vec<(String, Command)>,
    /// Words tree-sitter put inside the redirect that bash gives the
    /// command as arguments (`echo >$x curl y`: `curl` and `y`).
    args: Vec<Word>,
}

impl<'a> Lowerer<'a> {
    fn text(&self, n: Node) -> &'a str {
        self.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    fn deep(&mut self, n: Node, depth: usize) -> bool {
        if depth > self.max_depth {
            if self.too_deep.is_none() {
                self.too_deep = Some(span(n));
            }
            return true;
        }
        false
    }

    /// The statements among `n`'s children (a program, a substitution body).
    fn statements(&mut self, n: Node, depth: usize) -> Vec<Command> {
        let mut c = self.compound(n, "script", depth);
        if c.words.is_empty() && c.redirects.is_empty() {
            return c.body;
        }
        c.span = span(n);
        vec![Command::Compound(c)]
    }

    fn statement(&mut self, n: Node, depth: usize) -> Option<Command> {
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
    fn statement_or_generic(&mut self, n: Node, depth: usize) -> Option<Command> {
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
    fn compound(&mut self, n: Node, kind: &'static str, depth: usize) -> Compound {
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

    fn compound_into(&mut self, n: Node, c: &mut Compound, depth: usize) {
        if self.deep(n, depth) {
            return;
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

    fn command(&mut self, n: Node, depth: usize) -> Command {
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
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
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
                    word_nodes.push(child.named_child(0).unwrap_or(child));
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
    fn declaration(&mut self, n: Node, depth: usize) -> Command {
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

    fn assignments_into(&mut self, n: Node, depth: usize, out: &mut Vec<Assignment>) {
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

    fn function(&mut self, n: Node, depth: usize) -> Command {
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

    fn redirected(&mut self, n: Node, depth: usize) -> Command {
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
        let mut cmd = match body_cmd {
            Some(Command::Simple(mut s)) if extra_words.is_empty() => {
                // `cmd {fd}>file`: the `{fd}` that touches the redirect names
                // a descriptor variable, not an argument.
                if let Some(at) = redirects.iter().map(|r| r.span.start).min() {
                    drop_fd_variable(&mut s, at);
                }
                // The same when the grammar folded `{fd}` into the redirect
                // before it: `cmd <in {fd}>out`.
                arg_words.retain(|w| {
                    let names_fd = w.static_value().is_some_and(|t| is_fd_variable(&t));
                    !(names_fd && redirects.iter().any(|r| r.span.start == w.span.end))
                });
                s.words.extend(arg_words);
                s.words.sort_by_key(|w| w.span.start);
                s.redirects.extend(redirects);
                s.span = span(n);
                Command::Simple(s)
            }
            Some(Command::Compound(mut c)) => {
                c.redirects.extend(redirects);
                c.words.extend(extra_words);
                c.words.extend(arg_words);
                c.span = span(n);
                Command::Compound(c)
            }
            other => Command::Compound(Compound {
                span: span(n),
                kind: "group",
                body: other.into_iter().collect(),
                words: extra_words,
                redirects,
            }),
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

    fn redirect(&mut self, n: Node, depth: usize) -> LoweredRedirects {
        self.redirect_with(n, depth, &[])
    }

    /// A redirect whose target continues into `tail`, sibling word nodes
    /// that touch it.
    fn redirect_with(&mut self, n: Node, depth: usize, tail: &[Node]) -> LoweredRedirects {
        let mut out = LoweredRedirects {
            redirects: Vec::new(),
            trailing: Vec::new(),
            args: Vec::new(),
        };
        if self.deep(n, depth) {
            return out;
        }
        let depth = depth + 1;
        let fd = n
            .child_by_field_name("descriptor")
            .map(|d| self.text(d).to_string());
        match n.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut target_nodes = Vec::new();
                let mut cursor = n.walk();
                for child in n.children(&mut cursor) {
                    if !child.is_named() {
                        if op.is_empty() {
                            op = child.kind().to_string();
                        }
                        continue;
                    }
                    if child.kind() == "file_descriptor" {
                        continue;
                    }
                    if child.is_error() {
                        // `<>` is not in the grammar: it leaves an ERROR
                        // where the operator's second half was.
                        let t = self.text(child);
                        if !t.is_empty() {
                            op.push_str(t);
                        }
                        continue;
                    }
                    target_nodes.push(child);
                }
                target_nodes.extend_from_slice(tail);
                // The first word is the target; the rest are the command's.
                let mut groups = self.words(&target_nodes, depth).into_iter();
                let target = groups.next();
                out.args.extend(groups);
                if let Some(target) = target {
                    out.redirects.push(Redirect {
                        span: span(n),
                        op: op.clone(),
                        fd: fd.clone(),
                        target: RedirectTarget::File(target),
                    });
                }
            }
            "herestring_redirect" => {
                let mut cursor = n.walk();
                let mut nodes: Vec<Node> = n
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "file_descriptor")
                    .collect();
                nodes.extend_from_slice(tail);
                let mut groups = self.words(&nodes, depth).into_iter();
                let target = groups.next().unwrap_or_else(|| Word {
                    span: span(n),
                    parts: vec![],
                    origin: None,
                });
                out.args.extend(groups);
                out.redirects.push(Redirect {
                    span: span(n),
                    op: "<<<".into(),
                    fd,
                    target: RedirectTarget::Herestring(target),
                });
            }
            "heredoc_redirect" => self.heredoc(n, fd, depth, &mut out),
            _ => {}
        }
        out
    }

    fn heredoc(&mut self, n: Node, fd: Option<String>, depth: usize, out: &mut LoweredRedirects) {
        let mut op = String::from("<<");
        let mut quoted = false;
        let mut body = Word {
            span: Span::new(n.end_byte(), n.end_byte()),
            parts: vec![],
            origin: None,
        };
        let mut pending_op: Option<String> = None;
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
                _ => {
                    // Arguments tree-sitter attached to the heredoc line.
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
        out.redirects.insert(
            0,
            Redirect {
                span: span(n),
                op,
                fd,
                target: RedirectTarget::Heredoc { quoted, body },
            },
        );
    }

    /// A here-document body. Quoted delimiter: literal text. Unquoted: like
    /// a double-quoted string, except that `\"` keeps its backslash.
    fn heredoc_body(&mut self, n: Node, quoted: bool, strip_tabs: bool, depth: usize) -> Word {
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

    /// Lowers word nodes, joining the ones bash reads as a single word:
    /// tree-sitter splits `'a'\b` and `'a'\<newline>'b'` into siblings.
    fn words(&mut self, nodes: &[Node], depth: usize) -> Vec<Word> {
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
    fn joins(&self, end: usize, start: usize) -> bool {
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
    fn plain_word(&self, n: Node) -> Word {
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
    fn opaque_word(&mut self, n: Node, depth: usize) -> Word {
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
    fn commands_within(&mut self, n: Node, depth: usize) -> Vec<Command> {
        let mut out = Vec::new();
        self.commands_within_into(n, depth, &mut out);
        out
    }

    fn commands_within_into(&mut self, n: Node, depth: usize, out: &mut Vec<Command>) {
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
    fn substitution_body(&mut self, n: Node, depth: usize) -> Vec<Command> {
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

    fn word(&mut self, n: Node, depth: usize) -> Word {
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
    fn origin(&self, n: Node, parts: &[Part]) -> Option<usize> {
        let [Part::Lit { text, .. }] = parts else {
            return None;
        };
        let src = self.text(n);
        match n.kind() {
            "word" if src == text => Some(n.start_byte()),
            "raw_string" if src.len() == text.len() + 2 => Some(n.start_byte() + 1),
            "string" if src.len() == text.len() + 2 => Some(n.start_byte() + 1),
            _ => None,
        }
    }

    fn word_parts(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
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

    fn double_quoted(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
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

    fn double_quoted_parts(&mut self, n: Node, depth: usize, out: &mut Vec<Part>) {
        let start = n.start_byte() + 1;
        let end = n.end_byte().saturating_sub(1).max(start);
        let mut pos = start;
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            if child.kind() == "string_content" {
                continue;
            }
            if child.start_byte() > pos {
                let lit =
                    unescape_double_quoted(self.src.get(pos..child.start_byte()).unwrap_or(""));
                push_lit(out, lit, true);
            }
            self.word_parts(child, depth + 1, out);
            pos = child.end_byte().max(pos);
        }
        if end > pos {
            let lit = unescape_double_quoted(self.src.get(pos..end).unwrap_or(""));
            push_lit(out, lit, true);
        }
    }

    /// Every variable named in an arithmetic expression, without recursion.
    fn arith_names(&mut self, n: Node) {
        let mut stack = vec![n];
        let mut steps = 0;
        while let Some(node) = stack.pop() {
            steps += 1;
            if steps > 10_000 {
                break;
            }
            match node.kind() {
                "command_substitution" => {
                    let sole_program = self.sole_program(node);
                    self.arith_outputs.push(ArithOutput {
                        span: span(node),
                        sole_program,
                    });
                    continue;
                }
                "process_substitution" => continue,
                "variable_name" => {
                    self.arith_refs
                        .push((self.text(node).to_string(), span(node)));
                    continue;
                }
                "word" => {
                    let t = self.text(node);
                    if is_identifier(t) {
                        self.arith_refs.push((t.to_string(), span(node)));
                    }
                    continue;
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// The program of a substitution holding one simple command with only
    /// short options (`-l`) and input redirects from plain file names.
    fn sole_program(&self, subst: Node) -> Option<String> {
        let mut cursor = subst.walk();
        let inner: Vec<Node> = subst.named_children(&mut cursor).collect();
        let [mut cmd] = inner.as_slice() else {
            return None;
        };
        let plain = |n: Node| {
            n.kind() == "word"
                && self
                    .text(n)
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        };
        if cmd.kind() == "redirected_statement" {
            let mut c = cmd.walk();
            let parts: Vec<Node> = cmd.named_children(&mut c).collect();
            let (body, redirects) = parts.split_first()?;
            for r in redirects {
                let mut rc = r.walk();
                let kids: Vec<Node> = r.children(&mut rc).collect();
                match kids.as_slice() {
                    [op, target] if self.text(*op) == "<" && plain(*target) => {}
                    _ => return None,
                }
            }
            cmd = *body;
        }
        if cmd.kind() != "command" {
            return None;
        }
        let mut c = cmd.walk();
        let mut name = None;
        for part in cmd.named_children(&mut c) {
            match part.kind() {
                "command_name" if name.is_none() => {
                    let word = part.named_child(0)?;
                    if !plain(word) {
                        return None;
                    }
                    name = Some(self.text(word).to_string());
                }
                // Short options only: a long one (`--files0-from`) can put
                // file names into the output.
                "word"
                    if plain(part)
                        && self.text(part).starts_with('-')
                        && !self.text(part).starts_with("--") => {}
                _ => return None,
            }
        }
        name
    }

    /// `-v NAME` (in `[ ]` and `[[ ]]`) evaluates the name's subscript.
    fn tested_names(&mut self, n: Node, depth: usize) {
        let mut stack = vec![n];
        while let Some(node) = stack.pop() {
            if node.kind() == "unary_expression" {
                let mut cursor = node.walk();
                let kids: Vec<Node> = node.named_children(&mut cursor).collect();
                if let [op, operand] = kids.as_slice() {
                    if op.kind() == "test_operator" && matches!(self.text(*op), "-v" | "-R") {
                        match self.word(*operand, depth).static_value() {
                            Some(v) if runs_subscript(&v) => {
                                self.subscript_tests.push(span(*operand))
                            }
                            Some(_) => {}
                            None => self.arith_names(*operand),
                        }
                        continue;
                    }
                }
            }
            if matches!(node.kind(), "command_substitution" | "process_substitution") {
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// `[[ a -eq b ]]` and kin evaluate both operands arithmetically.
    fn arith_tests(&mut self, n: Node) {
        let mut stack = vec![n];
        while let Some(node) = stack.pop() {
            if node.kind() == "binary_expression" {
                let arithmetic = node
                    .child_by_field_name("operator")
                    .or_else(|| {
                        let mut c = node.walk();
                        let found = node
                            .named_children(&mut c)
                            .find(|c| c.kind() == "test_operator");
                        found
                    })
                    .is_some_and(|op| {
                        matches!(self.text(op), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
                    });
                if arithmetic {
                    self.arith_names(node);
                    continue;
                }
            }
            if matches!(node.kind(), "command_substitution" | "process_substitution") {
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// `${a[i]}`, `${s:off:len}` and `${!x}` evaluate names; `${x@P}` runs
    /// substitutions held in the value.
    fn expansion_evaluations(&mut self, n: Node) {
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        let mut seen_name = false;
        let mut after_colon = false;
        for (i, c) in children.iter().enumerate() {
            match c.kind() {
                "!" if !seen_name => {
                    if let Some(v) = children.get(i + 1).filter(|v| v.kind() == "variable_name") {
                        self.arith_refs.push((self.text(*v).to_string(), span(*v)));
                    }
                }
                "subscript" => {
                    if let Some(index) = c.child_by_field_name("index") {
                        self.arith_names(index);
                    }
                    seen_name = true;
                }
                "variable_name" if !seen_name => seen_name = true,
                ":" => after_colon = true,
                "@" if children
                    .get(i + 1)
                    .is_some_and(|o| self.text(*o).contains('P')) =>
                {
                    self.prompt_expansions.push(span(n));
                }
                _ if after_colon && c.is_named() => self.arith_names(*c),
                _ => {}
            }
        }
    }

    /// `for x in WORDS`: the variable is dynamic unless every word is static.
    fn loop_variable(&mut self, n: Node) {
        let Some(var) = n.child_by_field_name("variable") else {
            return;
        };
        let name = self.text(var).to_string();
        let mut cursor = n.walk();
        let values: Vec<Node> = n.children_by_field_name("value", &mut cursor).collect();
        // No `in` list iterates over "$@".
        let dynamic = values.is_empty()
            || values.iter().any(|v| {
                !matches!(v.kind(), "word" | "raw_string" | "number")
                    || self.text(*v).contains(['*', '?', '[', '$', '`', '{'])
            });
        self.loop_vars.push((name, span(var), dynamic));
    }
}

/// Literal text of an unquoted here-document body, with its backquoted
/// command substitutions (tree-sitter leaves them as text).
fn heredoc_text(src: &str, start: usize, end: usize, parts: &mut Vec<Part>) {
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
                push_lit(parts, unescape_heredoc(&text[lit_from..i]), true);
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
        push_lit(parts, unescape_heredoc(&text[lit_from..]), true);
    }
}

/// Backslash removal in an unquoted here-document body: only `\$`, `` \` ``,
/// `\\` and line continuations; `\"` stays as written.
fn unescape_heredoc(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '\\') => out.push(chars.next().unwrap_or('\\')),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A leading `~+`, `~-` or `~user` expands to $PWD, $OLDPWD or a home
/// directory: run-time values. A plain `~` ($HOME) stays literal: assigning
/// HOME is itself a finding.
fn tilde_prefix(parts: &mut Vec<Part>, sp: Span) {
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

/// `{name}` written right before a redirect: bash stores the descriptor it
/// opens in that variable.
/// Removes every backslash-newline pair; other backslashes stay with the
/// character they escape.
fn join_continued_lines(text: &str) -> String {
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

/// The simple command that ends a pipeline, list or negation.
fn last_simple(cmd: &mut Command) -> Option<&mut Simple> {
    match cmd {
        Command::Simple(s) => Some(s),
        Command::Pipeline(p) => p.stages.last_mut().and_then(last_simple),
        Command::Compound(c) if matches!(c.kind, "list" | "negation") => {
            c.body.last_mut().and_then(last_simple)
        }
        _ => None,
    }
}

/// Drops the last word of `s` when it is a `{fd}` touching a redirect
/// that starts at `at`.
fn drop_fd_variable(s: &mut Simple, at: usize) {
    if let Some(last) = s.words.last() {
        if s.words.len() > 1
            && last.span.end == at
            && last.static_value().is_some_and(|t| is_fd_variable(&t))
        {
            s.words.pop();
        }
    }
}

fn is_fd_variable(t: &str) -> bool {
    t.strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(is_identifier)
}

fn is_identifier(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn push_stage(stages: &mut Vec<Command>, cmd: Command) {
    match cmd {
        Command::Pipeline(p) => {
            for s in p.stages {
                push_stage(stages, s);
            }
        }
        other => stages.push(other),
    }
}

fn empty_compound(sp: Span) -> Command {
    Command::Compound(Compound {
        span: sp,
        kind: "group",
        body: vec![],
        words: vec![],
        redirects: vec![],
    })
}
