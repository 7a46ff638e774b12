//! The small syntax tree the analyzer owns, lowered from tree-sitter's.
//!
//! It keeps only what decides a verdict: simple commands with their words,
//! assignments and redirects; pipelines (who feeds whose stdin); compound
//! commands (whose bodies and words all run); and function definitions.

use crate::span::Span;
use crate::word::Word;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Simple(Simple),
    Pipeline(Pipeline),
    Compound(Compound),
    Function(Function),
}

impl Command {
    pub fn span(&self) -> Span {
        match self {
            Command::Simple(c) => c.span,
            Command::Pipeline(c) => c.span,
            Command::Compound(c) => c.span,
            Command::Function(c) => c.span,
        }
    }
}

/// `NAME=value ... program args ... redirects`. Declaration builtins
/// (`export`, `declare`, `local`...) are simple commands too, with their
/// assignments recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    pub span: Span,
    pub assignments: Vec<Assignment>,
    /// The program name followed by its arguments. Empty for a bare
    /// assignment or a redirect-only command.
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub span: Span,
    pub name: String,
    /// One word for `x=v`, several for `x=(a b c)`, none for `export x`.
    pub values: Vec<Word>,
}

/// Stages joined by `|` or `|&`: each stage's stdin is the previous
/// stage's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub span: Span,
    pub stages: Vec<Command>,
}

/// Lists, subshells, groups, if/while/until/for/select/case, `[[ ]]`,
/// `(( ))`: everything in `body` may run and every word in `words` is
/// expanded; `redirects` apply to the whole compound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compound {
    pub span: Span,
    pub kind: &'static str,
    pub body: Vec<Command>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub span: Span,
    pub name: String,
    pub body: Box<Command>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub span: Span,
    /// The operator as written: `>`, `>>`, `<`, `<>`, `>&`, `&>`, `>|`,
    /// `<<`, `<<-`, `<<<`...
    pub op: String,
    pub fd: Option<String>,
    pub target: RedirectTarget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectTarget {
    /// A file name, an fd number (`>&2`), or a process substitution.
    File(Word),
    /// A here-document. With a quoted delimiter the body is literal; with an
    /// unquoted one it is expanded like a double-quoted string.
    Heredoc { quoted: bool, body: Word },
    /// `<<< word`.
    Herestring(Word),
}

impl Redirect {
    /// Whether this redirect replaces the command's standard input.
    pub fn feeds_stdin(&self) -> bool {
        let fd0 = matches!(self.fd.as_deref(), None | Some("0"));
        match &self.target {
            RedirectTarget::Heredoc { .. } | RedirectTarget::Herestring(_) => fd0,
            RedirectTarget::File(_) => fd0 && (self.op == "<" || self.op == "<>"),
        }
    }
}
