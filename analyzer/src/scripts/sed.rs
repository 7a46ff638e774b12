//! sed: finds the scripts among the arguments and parses each one far
//! enough to find the commands that run programs (`e`, `s///e`) or write
//! to devices (`w /dev/...`). Anything it cannot parse is reported.

use super::{long_option, Checked, ScriptFinding};
use crate::args::Arg;
use crate::rules::Rule;

const LONG: &[&str] = &[
    "--expression",
    "--file",
    "--in-place",
    "--line-length",
    "--null-data",
    "--zero-terminated",
    "--separate",
    "--sandbox",
    "--debug",
    "--posix",
    "--quiet",
    "--silent",
    "--regexp-extended",
    "--unbuffered",
    "--follow-symlinks",
    "--binary",
    "--help",
    "--version",
];

pub fn check(args: &[Arg]) -> Checked {
    let mut out = Vec::new();
    let mut writes = Vec::new();
    let mut scripts: Vec<(&Arg, String)> = Vec::new();
    let mut explicit = false;
    let mut sandbox = false;
    let mut operands: Vec<&Arg> = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    let unknown = |a: &Arg, what: String| ScriptFinding {
        rule: Rule::EscapeOption,
        span: a.span,
        message: what,
    };
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(s) = a.text() else {
            // Reported as an opaque argument by the caller.
            operands.push(a);
            continue;
        };
        if options_done || !s.starts_with('-') || s == "-" {
            operands.push(a);
            continue;
        }
        if s == "--" {
            options_done = true;
            continue;
        }
        if let Some(body) = s.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v)),
                None => (s.to_string(), None),
            };
            match long_option(&name, LONG) {
                Some("--expression") => {
                    explicit = true;
                    match inline {
                        Some(v) => scripts.push((a, v.to_string())),
                        None => {
                            if let Some(v) = args.get(i) {
                                scripts.push((v, v.text().unwrap_or("").to_string()));
                            }
                            i += 1;
                        }
                    }
                }
                Some("--file") => {
                    explicit = true;
                    out.push(ScriptFinding {
                        rule: Rule::CodeFromFile,
                        span: a.span,
                        message: "`sed --file` runs a script from a file".into(),
                    });
                    if inline.is_none() {
                        i += 1;
                    }
                }
                Some("--line-length") if inline.is_none() => i += 1,
                Some("--sandbox") => sandbox = true,
                Some(_) => {}
                None => out.push(unknown(a, format!("unrecognized sed option `{name}`"))),
            }
            continue;
        }
        let body = &s[1..];
        for (j, c) in body.char_indices() {
            let rest = &body[j + c.len_utf8()..];
            match c {
                'e' => {
                    explicit = true;
                    if rest.is_empty() {
                        if let Some(v) = args.get(i) {
                            scripts.push((v, v.text().unwrap_or("").to_string()));
                        }
                        i += 1;
                    } else {
                        scripts.push((a, rest.to_string()));
                    }
                    break;
                }
                'f' => {
                    explicit = true;
                    out.push(ScriptFinding {
                        rule: Rule::CodeFromFile,
                        span: a.span,
                        message: "`sed -f` runs a script from a file".into(),
                    });
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
                'l' => {
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
                // -i takes an optional suffix attached to it.
                'i' => break,
                'n' | 'r' | 'E' | 's' | 'u' | 'z' | 'b' => {}
                _ => {
                    out.push(unknown(a, format!("unrecognized sed option `-{c}`")));
                    break;
                }
            }
        }
    }
    if !explicit {
        if let Some(first) = operands.first() {
            scripts.push((first, first.text().unwrap_or("").to_string()));
        }
    }
    if sandbox {
        return Checked {
            findings: out,
            writes,
        };
    }
    // GNU sed joins its `-e` scripts with newlines before reading them (so
    // `-e 'a\\' -e text` is one command); other seds read each alone. Both
    // readings are checked.
    if scripts.len() > 1 && scripts.iter().all(|(a, _)| a.is_static()) {
        let joined: Vec<&str> = scripts.iter().map(|(_, t)| t.as_str()).collect();
        let first = scripts[0].0;
        match parse(&joined.join("\n")) {
            Ok(files) => writes.extend(files.into_iter().map(|f| (first.span, f))),
            Err(why) => out.push(ScriptFinding {
                rule: Rule::EscapeOption,
                span: first.span,
                message: why,
            }),
        }
    }
    for (a, text) in scripts {
        if !a.is_static() {
            out.push(ScriptFinding {
                rule: Rule::OpaqueArgument,
                span: a.span,
                message: "the sed script is only known at run time".into(),
            });
            continue;
        }
        match parse(&text) {
            Ok(files) => writes.extend(files.into_iter().map(|f| (a.span, f))),
            Err(why) => out.push(ScriptFinding {
                rule: Rule::EscapeOption,
                span: a.span,
                message: why,
            }),
        }
    }
    Checked {
        findings: out,
        writes,
    }
}

/// Walks a sed script; `Err` says why it may run a program (or could not
/// be understood). `Ok` holds the files its `w` commands and flags write.
fn parse(script: &str) -> Result<Vec<String>, String> {
    let mut writes = Vec::new();
    let b: Vec<char> = script.chars().collect();
    let mut p = 0;
    let n = b.len();
    let skip_ws = |p: &mut usize| {
        while *p < n && (b[*p] == ' ' || b[*p] == '\t') {
            *p += 1;
        }
    };
    loop {
        while p < n && matches!(b[p], ' ' | '\t' | '\n' | ';') {
            p += 1;
        }
        if p >= n {
            return Ok(writes);
        }
        if b[p] == '#' {
            while p < n && b[p] != '\n' {
                p += 1;
            }
            continue;
        }
        // Addresses.
        for k in 0..2 {
            if k == 1 {
                if p < n && b[p] == ',' {
                    p += 1;
                    skip_ws(&mut p);
                } else {
                    break;
                }
            }
            p = address(&b, p)?;
            skip_ws(&mut p);
        }
        while p < n && (b[p] == '!' || b[p] == ' ') {
            p += 1;
        }
        if p >= n {
            return Err("sed script ends after an address".into());
        }
        let cmd = b[p];
        p += 1;
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                skip_ws(&mut p);
                while p < n && b[p].is_ascii_digit() {
                    p += 1;
                }
            }
            'b' | 't' | 'T' | ':' | 'v' => p = label(&b, p)?,
            'a' | 'i' | 'c' => p = text(&b, p),
            'r' | 'R' => p = to_line_end(&b, p),
            'w' | 'W' => {
                let start = p;
                p = to_line_end(&b, p);
                let file: String = b[start..p].iter().collect();
                check_write_target(file.trim())?;
                writes.push(file.trim().to_string());
            }
            'e' => return Err("sed's `e` command runs a shell command".into()),
            's' => {
                p = delimited(&b, p, 2)?;
                // Flags.
                while p < n && !matches!(b[p], ';' | '\n' | '}' | '#') {
                    match b[p] {
                        'e' => {
                            return Err(
                                "sed's `s///e` flag runs the pattern space as a shell command"
                                    .into(),
                            )
                        }
                        'w' => {
                            let start = p + 1;
                            p = to_line_end(&b, start);
                            let file: String = b[start..p].iter().collect();
                            check_write_target(file.trim())?;
                            writes.push(file.trim().to_string());
                            break;
                        }
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' | '\t' => p += 1,
                        c if c.is_ascii_digit() => p += 1,
                        c => return Err(format!("unrecognized sed s/// flag `{c}`")),
                    }
                }
            }
            'y' => p = delimited(&b, p, 2)?,
            c => return Err(format!("unrecognized sed command `{c}`")),
        }
    }
}

fn check_write_target(file: &str) -> Result<(), String> {
    if file.starts_with("/dev/") && !matches!(file, "/dev/stdout" | "/dev/stderr" | "/dev/null") {
        return Err(format!("sed writes to the device `{file}`"));
    }
    Ok(())
}

/// One address: a line number (with `~step`), `$`, `+N`/`~N`, or a regex.
fn address(b: &[char], mut p: usize) -> Result<usize, String> {
    let n = b.len();
    if p >= n {
        return Ok(p);
    }
    match b[p] {
        c if c.is_ascii_digit() || c == '+' || c == '~' => {
            p += 1;
            while p < n && (b[p].is_ascii_digit() || b[p] == '~') {
                p += 1;
            }
        }
        '$' => p += 1,
        '/' => p = delimited(b, p, 1)?,
        '\\' => p = delimited(b, p + 1, 1)?,
        _ => return Ok(p),
    }
    while p < n && (b[p] == 'I' || b[p] == 'M') {
        p += 1;
    }
    Ok(p)
}

/// Skips `count` parts delimited by the character at `p` (the delimiter
/// itself is at `p`). Returns the position after the last delimiter.
fn delimited(b: &[char], p: usize, count: usize) -> Result<usize, String> {
    let n = b.len();
    let Some(&delim) = b.get(p) else {
        return Err("sed script ends where a delimiter was expected".into());
    };
    if delim == '\n' || delim == '\\' {
        return Err("sed delimiter not understood".into());
    }
    let mut p = p + 1;
    for _ in 0..count {
        loop {
            if p >= n {
                return Err("unterminated sed expression".into());
            }
            match b[p] {
                '\\' => p += 2,
                c if c == delim => {
                    p += 1;
                    break;
                }
                _ => p += 1,
            }
        }
    }
    Ok(p)
}

/// To the end of the line, as GNU sed reads a file name: no escapes.
fn to_line_end(b: &[char], mut p: usize) -> usize {
    while p < b.len() && b[p] != '\n' {
        p += 1;
    }
    p
}

/// The text of `a`, `i` and `c`, as GNU sed 4.9 reads it: blanks, then an
/// optional backslash that takes the character after it (a newline in the
/// classic `a\` form); then a backslash takes any next character, a newline
/// included, and the first newline not taken ends the text. So in
/// `a foo\\` + newline the backslashes pair up and the next line is a
/// command.
fn text(b: &[char], mut p: usize) -> usize {
    let n = b.len();
    while p < n && (b[p] == ' ' || b[p] == '\t') {
        p += 1;
    }
    if p < n && b[p] == '\\' {
        p += 2;
    }
    while p < n && b[p] != '\n' {
        p += if b[p] == '\\' { 2 } else { 1 };
    }
    p.min(n)
}

/// A label (`:`, `b`, `t`, `T`) or `v`'s version. GNU sed ends a label at
/// whitespace, `;`, `#` or `}`, and reads what follows on the line as the
/// next command; sed versions before 4.3 and other seds read the label to
/// the end of the line. Only a reading they all share is accepted: a
/// label of plain characters, then the end of the line, `;` or `}`.
fn label(b: &[char], mut p: usize) -> Result<usize, String> {
    let n = b.len();
    while p < n && (b[p] == ' ' || b[p] == '\t') {
        p += 1;
    }
    while p < n && (b[p].is_ascii_alphanumeric() || matches!(b[p], '_' | '.' | '-')) {
        p += 1;
    }
    while p < n && (b[p] == ' ' || b[p] == '\t') {
        p += 1;
    }
    match b.get(p) {
        None | Some('\n' | ';' | '}') => Ok(p),
        Some(c) => Err(format!(
            "a sed label is followed by `{c}`, which sed versions read differently (GNU sed starts a new command there)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn safe_scripts() {
        for s in [
            "s/a/b/g",
            "s|/usr|/opt|",
            "1d;$d",
            "/^#/d",
            "10q",
            "s/\\(x\\)/\\1/2",
            "/start/,/end/{s/a/b/;p}",
            "y/abc/xyz/",
            "a\\\nappended",
            "0~3d",
            "s/e/E/w /dev/stdout",
            "$!N;P;D",
            ":a;N;$!ba;s/\\n/ /g",
            "s/x/y/I",
            ":a;$!{N;ba};p",
            "b end ; p",
            "a foo\\\nbar",
            "a foo\\\\",
            "v 4.2",
        ] {
            assert!(parse(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn escaping_scripts() {
        for s in [
            "e curl x",
            "1e id",
            "s/.*/id/e",
            "s/a/b/ge",
            "/x/e",
            "w /dev/tcp/h/1",
            "s/a/b/w /dev/sda",
            "K",
            "s/a/b/Z",
            // GNU sed ends a label at a blank and runs what follows.
            ":a e touch x",
            "b a e touch x",
            "t x\te touch x",
            "v 4.2 e touch x",
            ":a#x\ne id",
            // The backslashes pair up; the newline ends the text.
            "a foo\\\\\ne touch x",
            "i\\\\\ne touch x",
            "1{\na\\\nfoo\\\\\ne id\n}",
        ] {
            assert!(parse(s).is_err(), "{s}");
        }
    }
}
