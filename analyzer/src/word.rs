//! Words: what a shell word's value is when static, its shape, what it
//! runs while expanded.
//!
//! A word ([`Word`], defined in [`crate::ir`]) is a sequence of parts. Literal parts hold text after quote
//! removal; everything whose value is decided at run time (parameters,
//! substitutions, arithmetic, brace expansion, globs) is a dynamic part.
//! A word is *static* only when every part is literal.

// The word types live with the command types in `ir` (a substitution's
// part holds commands, a command holds words); this module says what a
// word's value is.
pub use crate::ir::{DynKind, Dynamic, Part, Reparse, Word};

use crate::ir::Command;
use crate::span::Span;

/// A word's value as far as the analyzer can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Fully known.
    Static(String),
    /// A glob pattern over literal text: expands to file names.
    Glob(String),
    /// Decided at run time.
    Dynamic,
}

impl Word {
    /// Whether the value is always a number: digits and `$(( ))` results
    /// only (`$((i+1))`, `0$((n))`), never text a subscript could hide in.
    pub fn is_number(&self) -> bool {
        !self.parts.is_empty()
            && self.parts.iter().all(|p| match p {
                Part::Lit { text, .. } => text.bytes().all(|b| b.is_ascii_digit() || b == b'-'),
                Part::Dynamic(d) => d.kind == DynKind::Arithmetic,
            })
    }

    /// The value after quote removal when every part is literal.
    pub fn static_value(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                Part::Dynamic(_) => return None,
            }
        }
        Some(out)
    }

    pub fn value(&self) -> Value {
        if let Some(s) = self.static_value() {
            return Value::Static(s);
        }
        let mut pattern = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => pattern.push_str(text),
                Part::Dynamic(d) if d.kind == DynKind::Glob => pattern.push('*'),
                Part::Dynamic(_) => return Value::Dynamic,
            }
        }
        Value::Glob(pattern)
    }

    /// Whether expansion can split this word into several (an unquoted
    /// parameter, substitution, glob or brace expansion).
    pub fn can_split(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Dynamic(d) if !d.quoted))
    }

    /// The literal text with `*` for every part only known at run time:
    /// `"$HOME/.bashrc"` is `*/.bashrc`; a process substitution is the pipe
    /// bash names for it, `/dev/fd/*`.
    pub fn shape(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Lit { text, .. } => text.as_str(),
                Part::Dynamic(d) if d.kind == DynKind::ProcessSubstitution => "/dev/fd/*",
                Part::Dynamic(_) => "*",
            })
            .collect()
    }

    /// Every command that runs while this word is expanded.
    pub fn commands(&self) -> impl Iterator<Item = &Command> {
        self.parts.iter().flat_map(|p| match p {
            Part::Dynamic(d) => d.commands.iter(),
            Part::Lit { .. } => [].iter(),
        })
    }

    /// The literal text before the first dynamic part.
    pub fn static_prefix(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                Part::Dynamic(_) => break,
            }
        }
        out
    }
}

/// A shell variable name: letters, digits and `_`, not starting with a digit.
pub fn is_identifier(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value holding an array subscript with a command substitution in it:
/// evaluating it as a variable name or arithmetic runs the command.
pub fn runs_subscript(s: &str) -> bool {
    s.contains('[') && (s.contains("$(") || s.contains('`'))
}

/// Splits an unquoted shell word's source text into literal and glob parts,
/// removing backslash escapes and line continuations.
pub fn unquoted_parts(src: &str, start: usize, out: &mut Vec<Part>) {
    let mut text = String::new();
    let mut chars = src.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, e)) => {
                    // An escaped character is quoted: it cannot glob.
                    flush(&mut text, false, out);
                    push_lit(out, e.to_string(), true);
                }
                None => text.push('\\'),
            },
            '*' | '?' | '[' => {
                // A bracket expression runs to its `]`; without one the `[`
                // is literal text.
                let mut end = i + 1;
                if c == '[' {
                    match src[i + 1..].find(']') {
                        Some(close) if close > 0 || src[i + 2..].contains(']') => {
                            let close = if close == 0 {
                                1 + src[i + 2..].find(']').unwrap_or(0)
                            } else {
                                close
                            };
                            end = i + 1 + close + 1;
                            while chars.peek().is_some_and(|&(j, _)| j < end) {
                                chars.next();
                            }
                        }
                        _ => {
                            text.push('[');
                            continue;
                        }
                    }
                }
                flush(&mut text, false, out);
                out.push(Part::Dynamic(Dynamic {
                    kind: DynKind::Glob,
                    span: Span::new(start + i, start + end),
                    commands: Vec::new(),
                    reparse: None,
                    quoted: false,
                }));
            }
            _ => text.push(c),
        }
    }
    flush(&mut text, false, out);
}

fn flush(text: &mut String, quoted: bool, out: &mut Vec<Part>) {
    if !text.is_empty() {
        push_lit(out, std::mem::take(text), quoted);
    }
}

/// Appends literal text, merging with a preceding literal of the same kind.
pub fn push_lit(out: &mut Vec<Part>, text: String, quoted: bool) {
    if let Some(Part::Lit {
        text: prev,
        quoted: q,
    }) = out.last_mut()
    {
        if *q == quoted {
            prev.push_str(&text);
            return;
        }
    }
    out.push(Part::Lit { text, quoted });
}

/// Whether the unquoted text of a word contains a brace expansion:
/// an unquoted `{` followed by a `,` or `..` and then an unquoted `}`.
pub fn has_brace_expansion(parts: &[Part]) -> bool {
    // Quoted text and dynamic parts are opaque characters here.
    let mut shape = String::new();
    for part in parts {
        match part {
            Part::Lit {
                text,
                quoted: false,
            } => shape.push_str(text),
            _ => shape.push('\u{1}'),
        }
    }
    let bytes = shape.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'{' {
            continue;
        }
        let rest = &shape[i + 1..];
        if let Some(close) = rest.find('}') {
            let inner = &rest[..close];
            if inner.contains(',') || inner.contains("..") {
                return true;
            }
        }
    }
    false
}

/// Decodes the body of an ANSI-C quoted string (`$'...'`, without the
/// `$'` and `'`). Returns `None` for escapes whose value is not a character
/// we can represent (the caller treats the word as dynamic).
pub fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out: Vec<u8> = Vec::new();
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&e) = b.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        match e {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'e' | b'E' => out.push(0x1b),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'0'..=b'7' => {
                let mut v: u32 = (e - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let (v, used) = hex(&b[i..], 2);
                if used == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                    i += used;
                }
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let (v, used) = hex(&b[i..], max);
                if used == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else {
                    let ch = char::from_u32(v)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    i += used;
                }
            }
            b'c' => {
                // Control character: \cX
                let x = *b.get(i)?;
                i += 1;
                out.push(x.to_ascii_uppercase() ^ 0x40);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    // A NUL ends the string in bash.
    if let Some(nul) = out.iter().position(|&c| c == 0) {
        out.truncate(nul);
    }
    String::from_utf8(out).ok()
}

fn hex(b: &[u8], max: usize) -> (u32, usize) {
    let mut v = 0u32;
    let mut n = 0;
    while n < max && n < b.len() && b[n].is_ascii_hexdigit() {
        v = v * 16 + (b[n] as char).to_digit(16).unwrap_or(0);
        n += 1;
    }
    (v, n)
}

/// The characters a backslash escapes inside double quotes.
pub const IN_DOUBLE_QUOTES: &[char] = &['$', '`', '"', '\\'];
/// ... inside backquotes, and in an unquoted here-document's body (where
/// `\"` stays as written).
pub const IN_BACKQUOTES: &[char] = &['$', '`', '\\'];
/// ... inside backquotes that are inside double quotes.
pub const IN_BACKQUOTES_IN_DOUBLE_QUOTES: &[char] = IN_DOUBLE_QUOTES;

/// Bash's backslash removal where only some characters can be escaped
/// (double quotes, backquotes, an unquoted here-document): a backslash
/// before one of `escapable` goes and the character stays, a
/// backslash-newline goes entirely, any other backslash stays. Inside
/// backquotes the line joining happens in single quotes and `$'...'` too:
/// bash joins the lines while it reads the backquotes, before the body is
/// parsed.
pub fn remove_backslashes(src: &str, escapable: &[char]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(n) if escapable.contains(n) => out.push(chars.next().unwrap_or('\\')),
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The command inside backquotes as bash parses it (see
/// [`remove_backslashes`]).
pub fn unescape_backquoted(src: &str, in_double_quotes: bool) -> String {
    let escapable = if in_double_quotes {
        IN_BACKQUOTES_IN_DOUBLE_QUOTES
    } else {
        IN_BACKQUOTES
    };
    remove_backslashes(src, escapable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes() {
        assert_eq!(decode_ansi_c(r"\x63url").as_deref(), Some("curl"));
        assert_eq!(decode_ansi_c(r"\143url").as_deref(), Some("curl"));
        assert_eq!(decode_ansi_c(r"\u0063url").as_deref(), Some("curl"));
        assert_eq!(decode_ansi_c(r"\U00000063url").as_deref(), Some("curl"));
        assert_eq!(decode_ansi_c(r"a\nb\tc").as_deref(), Some("a\nb\tc"));
        assert_eq!(decode_ansi_c(r"\'q\'").as_deref(), Some("'q'"));
        assert_eq!(decode_ansi_c(r"\cA").as_deref(), Some("\u{1}"));
        assert_eq!(decode_ansi_c(r"ab\0cd").as_deref(), Some("ab"));
        assert_eq!(decode_ansi_c(r"\xZZ").as_deref(), Some(r"\xZZ"));
    }

    #[test]
    fn unquoted_escapes_and_globs() {
        let mut parts = Vec::new();
        unquoted_parts(r"c\url", 0, &mut parts);
        let w = Word {
            span: Span::new(0, 5),
            parts,
            origin: None,
        };
        assert_eq!(w.static_value().as_deref(), Some("curl"));

        let mut parts = Vec::new();
        unquoted_parts("*.py", 0, &mut parts);
        let w = Word {
            span: Span::new(0, 4),
            parts,
            origin: None,
        };
        assert_eq!(w.static_value(), None);
        assert_eq!(w.value(), Value::Glob("*.py".into()));

        let mut parts = Vec::new();
        unquoted_parts("-exe[c]", 0, &mut parts);
        let w = Word {
            span: Span::new(0, 7),
            parts,
            origin: None,
        };
        assert_eq!(w.value(), Value::Glob("-exe*".into()));

        let mut parts = Vec::new();
        unquoted_parts("a[", 0, &mut parts);
        let w = Word {
            span: Span::new(0, 2),
            parts,
            origin: None,
        };
        assert_eq!(w.static_value().as_deref(), Some("a["));

        let mut parts = Vec::new();
        unquoted_parts(r"\*", 0, &mut parts);
        let w = Word {
            span: Span::new(0, 2),
            parts,
            origin: None,
        };
        assert_eq!(w.static_value().as_deref(), Some("*"));
    }

    #[test]
    fn braces() {
        let lit = |t: &str, q| Part::Lit {
            text: t.into(),
            quoted: q,
        };
        assert!(has_brace_expansion(&[lit("{curl,x}", false)]));
        assert!(has_brace_expansion(&[lit("a{1..3}", false)]));
        assert!(!has_brace_expansion(&[lit("{}", false)]));
        assert!(!has_brace_expansion(&[lit("{a,b}", true)]));
        assert!(!has_brace_expansion(&[lit("@{u}", false)]));
    }

    #[test]
    fn backquote_escapes() {
        assert_eq!(
            unescape_backquoted(r"echo \`curl x\`", false),
            "echo `curl x`"
        );
        assert_eq!(unescape_backquoted(r#"echo \"a\""#, false), r#"echo \"a\""#);
        assert_eq!(unescape_backquoted(r#"echo \"a\""#, true), r#"echo "a""#);
        assert_eq!(unescape_backquoted(r"a\\b\$c\d", false), r"a\b$c\d");
        // Lines are joined even inside quotes: `'a\⏎b'` is `'ab'`.
        assert_eq!(unescape_backquoted("echo 'a\\\nb'", false), "echo 'ab'");
        assert_eq!(unescape_backquoted("a\\\\\\\nb", false), "a\\b");
    }

    #[test]
    fn double_quote_escapes() {
        assert_eq!(
            remove_backslashes(r#"a\"b\$c\d"#, IN_DOUBLE_QUOTES),
            r#"a"b$c\d"#
        );
    }
}
