//! Ways to write a static value as one bash word.
//!
//! Every function here returns text that bash's quote removal turns back
//! into exactly the value given, so a generated command means what its
//! generator says it means however the words are spelled: `curl`,
//! `"cu"rl`, `c\url`, `$'\x63url'` and `c''url` all run `curl`.

use crate::choices::Choices;

/// Characters that need no quoting anywhere in an unquoted word.
fn plain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./:,+%@^".contains(c)
}

/// Whether `value` can be written bare. A leading `-` is fine; a word that
/// looks like an assignment is not, since in command position it would be one.
pub fn bare(value: &str) -> bool {
    !value.is_empty() && value.chars().all(plain_char)
}

/// `'...'`, with embedded single quotes written `'\''`.
pub fn single(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// `"..."`, escaping the four characters that stay special inside.
pub fn double(value: &str) -> String {
    let mut out = String::from("\"");
    for ch in value.chars() {
        if matches!(ch, '$' | '`' | '"' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
    out
}

/// `$'...'`, with some ASCII characters written as hex or octal escapes.
fn ansi_c(c: &mut impl Choices, value: &str) -> String {
    let mut out = String::from("$'");
    for ch in value.chars() {
        match ch {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            ch if ch.is_ascii() && (ch.is_ascii_control() || c.below(3) == 1) => {
                if c.below(2) == 0 {
                    out.push_str(&format!("\\x{:02x}", ch as u32));
                } else {
                    out.push_str(&format!("\\{:03o}", ch as u32));
                }
            }
            ch => out.push(ch),
        }
    }
    out.push('\'');
    out
}

/// Every character behind a backslash; newlines (which a backslash would
/// remove) go in single quotes.
fn backslashed(value: &str) -> String {
    if value.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for ch in value.chars() {
        if ch == '\n' {
            out.push_str("'\n'");
        } else {
            out.push('\\');
            out.push(ch);
        }
    }
    out
}

/// Bare text with `\`-newline continuations and empty quotes spliced in.
fn spliced(c: &mut impl Choices, value: &str) -> String {
    let mut out = String::new();
    for (i, ch) in value.chars().enumerate() {
        if i > 0 {
            match c.below(6) {
                1 => out.push_str("''"),
                2 => out.push_str("\"\""),
                3 => out.push_str("\\\n"),
                4 => out.push_str("$''"),
                _ => {}
            }
        }
        if plain_char(ch) {
            out.push(ch);
        } else {
            out.push_str(&single(&ch.to_string()));
        }
    }
    if out.is_empty() {
        out.push_str("\"\"");
    }
    out
}

/// One word in a style chosen by `c` (choice 0 is the simplest).
pub fn quote(c: &mut impl Choices, value: &str) -> String {
    match c.below(8) {
        0 if bare(value) => value.to_string(),
        0 | 1 => single(value),
        2 => double(value),
        3 => ansi_c(c, value),
        4 => backslashed(value),
        5 => spliced(c, value),
        _ => mixed(c, value),
    }
}

/// The value cut into pieces, each written in its own style.
fn mixed(c: &mut impl Choices, value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < 2 {
        return single(value);
    }
    let mut out = String::new();
    let mut start = 0;
    while start < chars.len() {
        let len = 1 + c.below(chars.len() - start);
        let piece: String = chars[start..start + len].iter().collect();
        out.push_str(&match c.below(5) {
            0 if bare(&piece) => piece,
            0 | 1 => single(&piece),
            2 => double(&piece),
            3 => ansi_c(c, &piece),
            _ => backslashed(&piece),
        });
        start += len;
    }
    out
}

/// A here-document body whose delimiter is unquoted: `\`, `$` and `` ` ``
/// are escaped so the outer shell hands the text on unchanged.
pub fn heredoc_escape(value: &str) -> String {
    let mut out = String::new();
    for ch in value.chars() {
        if matches!(ch, '$' | '`' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// A script written inside backquotes: `\` and `` ` `` get a backslash.
pub fn backquote_escape(value: &str) -> String {
    let mut out = String::new();
    for ch in value.chars() {
        if matches!(ch, '`' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::Rng;
    use std::process::Command;

    /// Asks bash what each word means: `printf '%s\0' WORD...`.
    fn bash_values(words: &[String]) -> Vec<String> {
        let script = format!("printf '%s\\0' {}", words.join(" "));
        let out = Command::new("/bin/bash")
            .args(["--norc", "-c", &script])
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{script}: {:?}", out);
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let mut v: Vec<String> = text.split('\0').map(str::to_string).collect();
        v.pop();
        v
    }

    #[test]
    fn every_style_reads_back_as_the_value() {
        let values = [
            "curl",
            "a b",
            "it's",
            "$(curl x)",
            "back\\slash",
            "line\nbreak",
            "`tick`",
            "\"dq\"",
            "-exec",
            "",
            "ü=1",
        ];
        let mut rng = Rng::new(7);
        let mut words = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..40 {
            for v in values {
                words.push(quote(&mut rng, v));
                expected.push(v.to_string());
            }
        }
        assert_eq!(bash_values(&words), expected);
    }

    #[test]
    fn escapes_survive_their_context() {
        let v = "echo \\$HOME `x` $(y)";
        let doc = format!("cat <<EOF\n{}\nEOF", heredoc_escape(v));
        let out = Command::new("/bin/bash")
            .args(["--norc", "-c", &doc])
            .output()
            .expect("bash runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{v}\n"));
        let inner = format!("printf %s {}", single(v));
        let bq = format!("x=`{}`; printf %s \"$x\"", backquote_escape(&inner));
        let out = Command::new("/bin/bash")
            .args(["--norc", "-c", &bq])
            .output()
            .expect("bash runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), v);
    }
}
