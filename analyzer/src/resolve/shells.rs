//! Shells and embedded scripts: `bash -c STRING`, a heredoc or herestring
//! fed to a shell, `eval`, `trap`, `su -c`... are parsed and walked as
//! scripts of their own, to a bounded depth.

use crate::catalog::Entry;
use crate::rules::Rule;
use crate::span::Span;
use crate::verdict::Verdict;
use crate::word::Value;

use super::{Feed, Frame, Resolver};
use crate::args::Arg;

/// Which grammar a shell reads its script with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Bash,
    /// sh, dash, ash, and the `sh -c` behind watch, flock, su...
    Posix,
    /// zsh, ksh, fish, csh...
    Foreign,
}

/// Constructs bash and a POSIX sh read differently: `$'...'` and `$"..."`
/// are plain text to dash, `((cmd))` is two subshells there, not
/// arithmetic, and `{fd}>file` is an argument `{fd}` and a redirect.
fn posix_divergence(text: &str) -> Option<&'static str> {
    if named_fd_redirect(text) {
        return Some("`{fd}>`");
    }
    if text.contains("$'") {
        return Some("`$'...'`");
    }
    if text.contains("$\"") {
        return Some("`$\"...\"`");
    }
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1))
        .any(|i| b[i] == b'(' && b[i + 1] == b'(' && (i == 0 || b[i - 1] != b'$'))
        .then_some("`((`")
}

/// `{name}` right before `<` or `>`.
fn named_fd_redirect(text: &str) -> bool {
    text.match_indices('{').any(|(i, _)| {
        let rest = &text[i + 1..];
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        name_len > 0
            && rest[name_len..].starts_with('}')
            && rest[name_len + 1..].starts_with(['<', '>'])
    })
}

/// Long options of bash and its kin that take no value.
const LONG_FLAGS: &[&str] = &[
    "--norc",
    "--noprofile",
    "--posix",
    "--login",
    "--noediting",
    "--verbose",
    "--version",
    "--help",
    "--restricted",
    "--debugger",
    "--dump-strings",
    "--dump-po-strings",
    "--pretty-print",
    "--protected",
    "--wordexp",
];

impl<'c> Resolver<'c> {
    /// A shell invocation: `-c STRING`, a script file, or commands on stdin.
    pub(super) fn shell(
        &mut self,
        canon: &str,
        entry: &Entry,
        args: &[Arg],
        frame: &Frame,
        feed: &Feed,
    ) -> Verdict {
        let name_span = args[0].span;
        let mut command_mode = false;
        let mut stdin_mode = false;
        let mut startup_files: Option<Span> = None;
        let mut noexec = false;
        let mut verdict = Verdict::Safe;
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            let Some(s) = a.text() else {
                return self.add(
                    frame,
                    Rule::DynamicScript,
                    a.span,
                    format!("`{canon}` gets arguments only known at run time"),
                );
            };
            if s == "--" || s == "-" {
                i += 1;
                break;
            }
            if s.starts_with("--") {
                let name = s.split('=').next().unwrap_or(s);
                if name == "--rcfile" || name == "--init-file" {
                    verdict = verdict.max(self.add(
                        frame,
                        Rule::CodeFromFile,
                        a.span,
                        format!("`{canon} {name}` runs a startup file"),
                    ));
                    i += if s.contains('=') { 1 } else { 2 };
                    continue;
                }
                if name == "--login" {
                    startup_files = Some(a.span);
                }
                if !LONG_FLAGS.contains(&name) {
                    return verdict.max(self.add(
                        frame,
                        Rule::WrapperOperand,
                        a.span,
                        format!("unknown `{canon}` option `{name}`"),
                    ));
                }
                i += 1;
                continue;
            }
            if (s.starts_with('-') || s.starts_with('+')) && s.len() > 1 {
                let mut consume = 0;
                for c in s[1..].chars() {
                    match c {
                        'c' => command_mode = true,
                        's' => stdin_mode = true,
                        'n' if s.starts_with('-') => noexec = true,
                        'l' | 'i' if s.starts_with('-') => startup_files = Some(a.span),
                        'o' | 'O' => consume += 1,
                        c if c.is_ascii_alphabetic() => {}
                        _ => {
                            return verdict.max(self.add(
                                frame,
                                Rule::WrapperOperand,
                                a.span,
                                format!("unknown `{canon}` option `{s}`"),
                            ));
                        }
                    }
                }
                i += 1 + consume;
                continue;
            }
            break;
        }
        if let Some(sp) = startup_files {
            verdict = verdict.max(self.add(
                frame,
                Rule::CodeFromFile,
                sp,
                format!("a login or interactive `{canon}` runs its startup files (/etc/profile, ~/.profile, ~/.bashrc)"),
            ));
        }
        if noexec {
            // `bash -n` reads and parses its script without running it.
            return verdict;
        }
        let operands = args.get(i..).unwrap_or(&[]);
        let syntax = if entry.foreign_syntax {
            Syntax::Foreign
        } else if entry.posix_syntax {
            Syntax::Posix
        } else {
            Syntax::Bash
        };
        if command_mode {
            let Some(script) = operands.first() else {
                return verdict.max(self.add(
                    frame,
                    Rule::DynamicScript,
                    name_span,
                    format!("`{canon} -c` has no script"),
                ));
            };
            return verdict.max(self.shell_string(
                script,
                frame,
                feed,
                &format!("{canon} -c"),
                syntax,
            ));
        }
        if !stdin_mode {
            if let Some(file) = operands.first() {
                self.note_code_file(file, frame);
                let shown = file.text().unwrap_or("a file");
                return verdict.max(self.add(
                    frame,
                    Rule::ScriptFile,
                    file.span,
                    format!("`{canon}` runs the script `{shown}`"),
                ));
            }
        }
        verdict.max(self.stdin_script(canon, name_span, frame, feed, syntax))
    }

    /// A script given as one argument (`-c STRING`, `su -c`, `flock -c`).
    pub(super) fn shell_string(
        &mut self,
        script: &Arg,
        frame: &Frame,
        feed: &Feed,
        label: &str,
        syntax: Syntax,
    ) -> Verdict {
        match &script.value {
            Value::Static(text) => {
                let text = text.clone();
                self.embed_as(
                    &text,
                    script.origin,
                    script.span,
                    frame,
                    feed,
                    label,
                    syntax,
                );
                self.check_syntax(&text, syntax, frame, script.span, label)
            }
            _ => self.add(
                frame,
                Rule::DynamicScript,
                script.span,
                format!("`{label}` runs a script only known at run time"),
            ),
        }
    }

    /// A shell reading its commands from standard input.
    fn stdin_script(
        &mut self,
        canon: &str,
        name_span: Span,
        frame: &Frame,
        feed: &Feed,
        syntax: Syntax,
    ) -> Verdict {
        match feed {
            Feed::Doc {
                text: Some(text),
                origin,
                span,
            } => {
                let text = text.clone();
                self.embed_as(
                    &text,
                    *origin,
                    *span,
                    frame,
                    &Feed::Inherited,
                    &format!("{canon} stdin"),
                    syntax,
                );
                self.check_syntax(&text, syntax, frame, *span, canon)
            }
            Feed::Doc {
                text: None, span, ..
            } => self.add(
                frame,
                Rule::DynamicScript,
                *span,
                format!("`{canon}` reads a here-document whose text is only known at run time"),
            ),
            Feed::Pipe { network: true, .. } => self.add(
                frame,
                Rule::RemoteCodePipe,
                name_span,
                format!("`{canon}` runs commands piped from a program that reaches the network"),
            ),
            Feed::Pipe { decoded: true, .. } => self.add(
                frame,
                Rule::DecodedCodePipe,
                name_span,
                format!("`{canon}` runs decoded data as commands"),
            ),
            Feed::Pipe { .. } => self.add(
                frame,
                Rule::ShellReadsStdin,
                name_span,
                format!("`{canon}` runs commands piped into it, which are not in the command text"),
            ),
            Feed::File => self.add(
                frame,
                Rule::ScriptFile,
                name_span,
                format!("`{canon}` runs the commands in the file redirected into it"),
            ),
            Feed::Inherited => self.add(
                frame,
                Rule::ShellReadsStdin,
                name_span,
                format!("`{canon}` reads commands from its inherited input"),
            ),
        }
    }

    /// Scripts for shells other than bash were read with bash's grammar:
    /// never provable for zsh, fish and kin; for a POSIX sh (dash), only
    /// where the two grammars read the text differently.
    pub(super) fn check_syntax(
        &mut self,
        text: &str,
        syntax: Syntax,
        frame: &Frame,
        span: Span,
        label: &str,
    ) -> Verdict {
        let why = match syntax {
            Syntax::Bash => return Verdict::Safe,
            Syntax::Foreign => {
                "is not bash; checked with bash's grammar, it cannot be proven safe".to_string()
            }
            Syntax::Posix => match posix_divergence(text) {
                Some(construct) => {
                    format!("may run under dash, which reads {construct} differently from bash")
                }
                None => return Verdict::Safe,
            },
        };
        self.add(
            frame,
            Rule::ForeignShellSyntax,
            span,
            format!("`{label}` script {why}"),
        )
    }

    /// Parses and walks `text` as a script embedded at `origin` (or derived
    /// from the text at `span`) of the current frame's text, run by the same
    /// shell (`eval`, `trap`, backquotes). Under a shell that is not bash,
    /// the embedded text is checked for the constructs it reads differently.
    pub(super) fn embed(
        &mut self,
        text: &str,
        origin: Option<usize>,
        span: Span,
        frame: &Frame,
        feed: &Feed,
        label: &str,
    ) {
        if frame.syntax != Syntax::Bash {
            self.check_syntax(text, frame.syntax, frame, span, label);
        }
        self.embed_as(text, origin, span, frame, feed, label, frame.syntax);
    }

    /// [`embed`](Self::embed) for a script run by a shell of this syntax.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn embed_as(
        &mut self,
        text: &str,
        origin: Option<usize>,
        span: Span,
        frame: &Frame,
        feed: &Feed,
        label: &str,
        syntax: Syntax,
    ) {
        if frame.embed_depth + 1 > self.limits.max_embed_depth {
            self.add(
                frame,
                Rule::LimitExceeded,
                span,
                format!(
                    "scripts are embedded more than {} levels deep",
                    self.limits.max_embed_depth
                ),
            );
            return;
        }
        let inner = Frame {
            embed_depth: frame.embed_depth + 1,
            map: frame.map.embed(origin, span),
            via: {
                let mut v = frame.via.clone();
                v.push(label.to_string());
                v
            },
            syntax,
        };
        self.script(text, &inner, feed);
    }
}
