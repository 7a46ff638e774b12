//! Lowering: tree-sitter-bash's concrete tree becomes our IR.
//!
//! Every node kind the analyzer understands is lowered precisely; anything
//! else is walked generically so that no command hidden inside it is lost
//! (its statements become commands of a compound, its substitutions become
//! dynamic parts). ERROR and MISSING nodes are recorded so the verdict can
//! never be `safe`, but are still walked for evidence of network use.

mod evaluations;
mod heredoc;
mod plain;
mod redirects;
mod stages;
mod statements;
#[cfg(test)]
mod test_support;
mod words;

pub(crate) use crate::word::is_identifier;
use tree_sitter::Node;

pub use plain::{plain, plain_in};
pub use stages::pipeline;

use crate::ir::{Command, Compound, Redirect, Simple};
use crate::span::Span;
use crate::word::Word;

/// The result of lowering one script.
#[derive(Default)]
pub struct Lowered {
    pub commands: Vec<Command>,
    /// Spans of ERROR and MISSING nodes.
    pub errors: Vec<Span>,
    /// Set when nesting went deeper than the limit; lowering stopped there.
    pub too_deep: Option<Span>,
    /// Variables whose values bash evaluates as arithmetic (or as names):
    /// `$((x))`, `(( x ))`, `[[ x -eq 1 ]]`, `${a[x]}`, `${s:x}`, `${!x}`.
    pub arith_refs: Vec<(String, Span)>,
    /// Loop variables (`for`/`select`).
    pub loop_vars: Vec<LoopVar>,
    /// Variables an expansion assigns: `${X:=v}`, `${X=v}`, and arithmetic
    /// `X=`, `X+=`..., `X++` (builtins' arguments are in resolve/setvars).
    pub assigned: Vec<(String, Span)>,
    /// `${x:=v}`, `${x=v}`: names given a default by an expansion, whose
    /// value is then only known at run time.
    pub defaulted: Vec<(String, Span)>,
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
        assigned: Vec::new(),
        defaulted: Vec::new(),
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
        assigned: l.assigned,
        defaulted: l.defaulted,
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

/// A `for` or `select` loop's variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopVar {
    pub name: String,
    pub span: Span,
    /// Its values are not all static (globs, expansions, or "$@").
    pub dynamic: bool,
    /// Every value is a relative name, globbed or not (`*.txt`).
    pub relative: bool,
}

struct Lowerer<'a> {
    src: &'a str,
    arith_refs: Vec<(String, Span)>,
    loop_vars: Vec<LoopVar>,
    assigned: Vec<(String, Span)>,
    defaulted: Vec<(String, Span)>,
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
    pub(super) fn text(&self, n: Node) -> &'a str {
        self.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    pub(super) fn deep(&mut self, n: Node, depth: usize) -> bool {
        if depth > self.max_depth {
            if self.too_deep.is_none() {
                self.too_deep = Some(span(n));
            }
            return true;
        }
        false
    }
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

/// Whether `t` is `{name}`: written right before a redirect
/// (`exec {fd}>file`), it is no argument but the variable bash stores the
/// descriptor it opens in.
fn is_fd_variable(t: &str) -> bool {
    t.strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(is_identifier)
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
