//! awk: finds the program among the arguments and looks for what runs
//! commands: `system()`, pipes to and from commands (`|`, `|&`), and
//! extension loading. Network special files are caught by the catalog.

use super::{long_option, Checked, ScriptFinding};
use crate::args::Arg;
use crate::rules::Rule;

const LONG: &[&str] = &[
    "--file",
    "--exec",
    "--include",
    "--load",
    "--assign",
    "--field-separator",
    "--source",
    "--sandbox",
    "--characters-as-bytes",
    "--traditional",
    "--copyright",
    "--dump-variables",
    "--debug",
    "--gen-pot",
    "--help",
    "--lint",
    "--bignum",
    "--use-lc-numeric",
    "--non-decimal-data",
    "--optimize",
    "--no-optimize",
    "--posix",
    "--pretty-print",
    "--profile",
    "--re-interval",
    "--lint-old",
    "--version",
    "--csv",
];

pub fn check(args: &[Arg]) -> Checked {
    let mut out = Vec::new();
    let mut writes = Vec::new();
    let mut programs: Vec<(&Arg, String)> = Vec::new();
    let mut explicit = false;
    let mut i = 0;
    let mut first_operand: Option<&Arg> = None;
    let from_file = |a: &Arg, opt: &str| ScriptFinding {
        rule: Rule::CodeFromFile,
        span: a.span,
        message: format!("`awk {opt}` runs a program from a file"),
    };
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(s) = a.text() else {
            if first_operand.is_none() {
                first_operand = Some(a);
            }
            break;
        };
        if s == "--" {
            first_operand = args.get(i);
            break;
        }
        if !s.starts_with('-') || s == "-" {
            first_operand = Some(a);
            break;
        }
        if let Some(body) = s.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (s.to_string(), None),
            };
            let value = |i: &mut usize| -> Option<String> {
                match &inline {
                    Some(v) => Some(v.clone()),
                    None => {
                        *i += 1;
                        args.get(*i - 1).and_then(|v| v.text()).map(str::to_string)
                    }
                }
            };
            match long_option(&name, LONG) {
                Some(o @ ("--file" | "--exec" | "--include" | "--load")) => {
                    explicit = explicit || o != "--load" && o != "--include";
                    out.push(from_file(a, o));
                    value(&mut i);
                }
                Some("--source") => {
                    explicit = true;
                    if let Some(v) = value(&mut i) {
                        programs.push((a, v));
                    }
                }
                Some("--assign") | Some("--field-separator") => {
                    value(&mut i);
                }
                // gawk only: original-awk ignores it, so the program is read anyway.
                Some("--sandbox") => {}
                Some(_) => {}
                None => out.push(ScriptFinding {
                    rule: Rule::EscapeOption,
                    span: a.span,
                    message: format!("unrecognized awk option `{name}`"),
                }),
            }
            continue;
        }
        let body = &s[1..];
        for (j, c) in body.char_indices() {
            let rest = &body[j + c.len_utf8()..];
            let take = |i: &mut usize| -> Option<String> {
                if rest.is_empty() {
                    *i += 1;
                    args.get(*i - 1).and_then(|v| v.text()).map(str::to_string)
                } else {
                    Some(rest.to_string())
                }
            };
            match c {
                'f' | 'E' | 'i' | 'l' => {
                    if c == 'f' || c == 'E' {
                        explicit = true;
                    }
                    out.push(from_file(a, &format!("-{c}")));
                    take(&mut i);
                    break;
                }
                'e' => {
                    explicit = true;
                    if let Some(v) = take(&mut i) {
                        programs.push((a, v));
                    }
                    break;
                }
                'v' | 'F' => {
                    take(&mut i);
                    break;
                }
                'W' => {
                    // mawk: -W exec FILE reads the program from a file.
                    if let Some(v) = take(&mut i) {
                        if v.starts_with("e") {
                            out.push(from_file(a, "-W exec"));
                            if rest.is_empty() && !v.contains(' ') {
                                i += 1;
                            }
                        }
                    }
                    break;
                }
                'S' => {}
                // Optional values attached to the option letter.
                'd' | 'D' | 'o' | 'p' | 'L' => break,
                'b' | 'c' | 'C' | 'g' | 'h' | 'M' | 'n' | 'N' | 'O' | 'P' | 'r' | 's' | 't'
                | 'V' | 'k' => {}
                _ => {
                    out.push(ScriptFinding {
                        rule: Rule::EscapeOption,
                        span: a.span,
                        message: format!("unrecognized awk option `-{c}`"),
                    });
                    break;
                }
            }
        }
    }
    if !explicit {
        if let Some(a) = first_operand {
            match a.text() {
                Some(t) => programs.push((a, t.to_string())),
                None => out.push(ScriptFinding {
                    rule: Rule::OpaqueArgument,
                    span: a.span,
                    message: "the awk program is only known at run time".into(),
                }),
            }
        }
    }
    for (a, text) in programs {
        let mut files = Vec::new();
        match scan(&text, &mut files) {
            Some(why) => out.push(ScriptFinding {
                rule: Rule::EscapeOption,
                span: a.span,
                message: why,
            }),
            None => writes.extend(files.into_iter().map(|f| (a.span, f))),
        }
    }
    Checked {
        findings: out,
        writes,
    }
}

/// The file a redirection writes when its target is one string literal
/// and nothing more, with no escape in it (awk reads `"\056git"` as
/// `.git`): the written name is then in the command, for the write model
/// to judge by place.
fn literal_target(rest: &[char]) -> Option<String> {
    let mut p = 0;
    while rest.get(p).is_some_and(|c| *c == ' ' || *c == '\t') {
        p += 1;
    }
    if rest.get(p) != Some(&'"') {
        return None;
    }
    p += 1;
    let start = p;
    while p < rest.len() && rest[p] != '"' {
        if rest[p] == '\\' {
            return None;
        }
        p += 1;
    }
    let name: String = rest[start..p.min(rest.len())].iter().collect();
    p += 1;
    while rest.get(p).is_some_and(|c| *c == ' ' || *c == '\t') {
        p += 1;
    }
    matches!(rest.get(p), None | Some(';' | '\n' | '}')).then_some(name)
}

/// Looks through an awk program, outside strings, regexes and comments;
/// the files its `print >` statements write are added to `writes`.
fn scan(prog: &str, writes: &mut Vec<String>) -> Option<String> {
    let b: Vec<char> = prog.chars().collect();
    let n = b.len();
    let mut p = 0;
    // Whether a `/` here starts a regex rather than a division.
    let mut regex_ok = true;
    // Inside a print or printf statement, outside parentheses, `>` and
    // `>>` redirect its output to the file named next.
    let mut in_print = false;
    let mut depth = 0usize;
    while p < n {
        let c = b[p];
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ';' | '\n' | '}' | '{' => {
                in_print = false;
                depth = 0;
            }
            '>' if in_print && depth == 0 => {
                p += 1;
                if b.get(p) == Some(&'>') {
                    p += 1;
                }
                match literal_target(&b[p..]) {
                    Some(file) => writes.push(file),
                    None => {
                        return Some(
                            "awk writes to a file whose name is computed at run time, which could be one that decides what later commands run".into(),
                        )
                    }
                }
                regex_ok = true;
                continue;
            }
            _ => {}
        }
        match c {
            '"' => {
                p += 1;
                while p < n && b[p] != '"' {
                    p += if b[p] == '\\' { 2 } else { 1 };
                }
                p += 1;
                regex_ok = false;
            }
            '#' => {
                while p < n && b[p] != '\n' {
                    p += 1;
                }
            }
            '/' if regex_ok => {
                p += 1;
                let mut in_bracket = false;
                while p < n {
                    match b[p] {
                        '\\' => p += 1,
                        '[' => in_bracket = true,
                        ']' => in_bracket = false,
                        '/' if !in_bracket => break,
                        '\n' => {
                            return Some("awk program not understood (unterminated regex)".into())
                        }
                        _ => {}
                    }
                    p += 1;
                }
                p += 1;
                regex_ok = false;
            }
            '|' => {
                if b.get(p + 1) == Some(&'|') {
                    p += 2;
                    regex_ok = true;
                    continue;
                }
                if b.get(p + 1) == Some(&'&') {
                    return Some("awk's `|&` runs a command as a coprocess".into());
                }
                return Some("awk pipes to or from a command with `|`".into());
            }
            '@' => {
                let word: String = b[p + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if word == "load" || word == "include" {
                    return Some(format!("awk's `@{word}` runs code from another file"));
                }
                // gawk's indirect call `@f()` calls the function a string
                // names, `system` included; other directives are rare.
                return Some(format!(
                    "gawk's `@{word}` (an indirect function call or a directive) can call any function, system() included"
                ));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = p;
                while p < n && (b[p].is_ascii_alphanumeric() || b[p] == '_') {
                    p += 1;
                }
                let word: String = b[start..p].iter().collect();
                if word == "system" {
                    return Some("awk's `system()` runs a shell command".into());
                }
                if word == "print" || word == "printf" {
                    in_print = true;
                    depth = 0;
                }
                // After a keyword like `print` or `return`, `/` starts a regex.
                regex_ok = matches!(word.as_str(), "print" | "printf" | "return" | "in" | "case");
            }
            c if c.is_ascii_digit() || c == ')' || c == ']' || c == '$' => {
                p += 1;
                regex_ok = c == '$';
            }
            ' ' | '\t' | '\r' => p += 1,
            _ => {
                p += 1;
                regex_ok = true;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn safe_programs() {
        for s in [
            "{print $1}",
            "/error|warn/ {n++} END {print n}",
            "{ s += $2 / 2 } END { print s }",
            "BEGIN{FS=\":\"} {print $1 \"|\" $2}",
            "$1 == \"x\" || $2 > 3",
            "NR % 2 == 0",
            "{ print > \"out.txt\" }",
            "# comment | here\n{print}",
            "{ a[$1] = a[$1] \"|\" $2 }",
            "{ print >> \"log\"; n++ }",
            "{ print (NR > 2) }",
            "$3 > 10 { print $1 }",
            "{ if ($2 > 0) print $1 > \"pos\"; else print $1 }",
        ] {
            assert_eq!(scan(s, &mut Vec::new()), None, "{s}");
        }
    }

    #[test]
    fn command_runners() {
        for s in [
            "BEGIN{system(\"id\")}",
            "{ print | \"sh\" }",
            "BEGIN { \"date\" | getline d }",
            "BEGIN { print \"x\" |& \"cat\" }",
            "@load \"filefuncs\"",
            "{ print $1 / 2 | \"sh\" }",
        ] {
            assert!(scan(s, &mut Vec::new()).is_some(), "{s}");
        }
    }

    #[test]
    fn writes_to_computed_names() {
        for s in [
            "{ print > $1 }",
            "{ print $2 >> $1 \".sh\" }",
            "{ printf(\"%s\", $0) > name }",
            "{ f = \".bash\" \"rc\"; print \"x\" > f }",
            "{ print > \"out\" $1 }",
        ] {
            assert!(scan(s, &mut Vec::new()).is_some(), "{s}");
        }
    }
}
