//! sed: finds the scripts among the arguments and parses each one far
//! enough to find the commands that run programs (`e`, `s///e`) or write
//! to devices (`w /dev/...`). Anything it cannot parse is reported.

use super::{gave, values_of, Checked, Given, ScriptFinding};
use crate::args::Arg;
use crate::option_table::Reading;
use crate::rules::Rule;

pub fn check(reading: &Reading, args: &[Arg]) -> Checked {
    let mut out = Vec::new();
    let mut writes = Vec::new();
    let mut scripts = values_of(reading, args, &["-e", "--expression"]);
    let files = values_of(reading, args, &["-f", "--file"]);
    for f in &files {
        out.push(ScriptFinding {
            rule: Rule::CodeFromFile,
            span: f.arg.span,
            message: "`sed -f` runs a script from a file".into(),
        });
    }
    // Without -e or -f, the first operand is the script.
    if scripts.is_empty() && files.is_empty() {
        if let Some(&first) = reading.operands.first() {
            let arg = &args[first];
            scripts.push(Given {
                arg,
                text: arg.shape.clone(),
            });
        }
    }
    if gave(reading, &["--sandbox"]) {
        return Checked {
            findings: out,
            writes,
        };
    }
    let mut known: Vec<(&Arg, String)> = Vec::new();
    for g in scripts {
        if g.arg.is_static() {
            known.push((g.arg, g.text));
        } else {
            out.push(ScriptFinding {
                rule: Rule::OpaqueArgument,
                span: g.arg.span,
                message: "the sed script is only known at run time".into(),
            });
        }
    }
    // GNU sed joins its `-e` scripts with newlines before reading them (so
    // `-e 'a\\' -e text` is one command); other seds read each alone. Both
    // readings are checked.
    let mut readings: Vec<(&Arg, String)> = known.clone();
    if known.len() > 1 {
        let joined: Vec<&str> = known.iter().map(|(_, t)| t.as_str()).collect();
        readings.push((known[0].0, joined.join("\n")));
    }
    for (a, text) in readings {
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
