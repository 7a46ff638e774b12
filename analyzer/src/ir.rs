//! The small syntax tree the analyzer owns, lowered from tree-sitter's.
//!
//! It keeps only what decides a verdict: simple commands with their words,
//! assignments and redirects; pipelines (who feeds whose stdin); compound
//! commands (whose bodies and words all run); and function definitions;
//! and the words they are made of.

use crate::span::Span;

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
    /// The variable whose value is the whole target (`< "$f"`, `> ${out}`),
    /// when that is all the target is.
    pub variable: Option<String>,
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

// Words. A word holds the commands its substitutions run, and a command
// holds words, so both live here; `word.rs` computes what a word means.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub span: Span,
    pub parts: Vec<Part>,
    /// When the word's static value maps byte-for-byte onto the source
    /// (a single unquoted literal without escapes, or one single-quoted
    /// string), the offset of the value's first byte. Lets findings inside
    /// an embedded `bash -c '...'` point at the exact bytes.
    pub origin: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text after quote removal. `quoted` tells whether it came from quotes,
    /// where globs and brace expansion do not apply.
    Lit { text: String, quoted: bool },
    /// Something whose value is only known at run time.
    Dynamic(Dynamic),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dynamic {
    pub kind: DynKind,
    pub span: Span,
    /// Commands that run while this part is expanded (`$(...)`, `<(...)`,
    /// substitutions nested in `${x:-$(...)}` or `$(( ))`).
    pub commands: Vec<Command>,
    /// A command substitution whose text tree-sitter did not parse as bash
    /// would (backticks with escapes inside, backticks in here-documents):
    /// the resolver parses this text as a script of its own.
    pub reparse: Option<Reparse>,
    /// Inside double quotes: the expansion is one word, never split.
    pub quoted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reparse {
    pub text: String,
    /// Where `text` starts in the source, when it maps byte for byte.
    pub origin: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynKind {
    Parameter,
    CommandSubstitution,
    ProcessSubstitution,
    Arithmetic,
    /// `$"..."`: the text is looked up in a message catalog at run time.
    Translated,
    /// An unquoted glob (`*`, `?`, `[...]`): expands to file names.
    Glob,
    /// Brace expansion (`{a,b}`, `{1..3}`): one word becomes several.
    Brace,
}
