//! awk: finds the program among the arguments and looks for what runs
//! commands: `system()`, pipes to and from commands (`|`, `|&`), and
//! extension loading. Network special files are caught by the catalog.

use super::{gave, values_of, Checked, Given, ScriptFinding};
use crate::args::Arg;
use crate::option_table::Reading;
use crate::rules::Rule;

/// Options whose value is a file of awk code: `-f`/`--file` and gawk's
/// `-E`/`--exec` replace the program operand; `-i`/`--include` and
/// `-l`/`--load` add a library to it.
const PROGRAM_FILES: &[&str] = &["-f", "--file", "-E", "--exec"];
const LIBRARIES: &[&str] = &["-i", "--include", "-l", "--load"];

pub fn check(reading: &Reading, args: &[Arg]) -> Checked {
    let mut out = Vec::new();
    let mut writes = Vec::new();
    let from_file = |a: &Arg, what: &str| ScriptFinding {
        rule: Rule::CodeFromFile,
        span: a.span,
        message: format!("`awk {what}` runs a program from a file"),
    };
    let files = values_of(reading, args, PROGRAM_FILES);
    for g in &files {
        out.push(from_file(g.arg, "-f"));
    }
    for g in values_of(reading, args, LIBRARIES) {
        out.push(from_file(g.arg, "-i` or `-l"));
    }
    // mawk: `-W exec FILE` (any prefix of exec) reads the program from FILE.
    let mawk_exec = values_of(reading, args, &["-W"])
        .into_iter()
        .filter(|g| !g.arg.is_static() || g.text.starts_with('e'))
        .collect::<Vec<_>>();
    for g in &mawk_exec {
        out.push(from_file(g.arg, "-W exec"));
    }
    let mut programs = values_of(reading, args, &["-e", "--source"]);
    let explicit = !programs.is_empty()
        || !files.is_empty()
        || !mawk_exec.is_empty()
        || gave(reading, &["--exec"]);
    if !explicit {
        if let Some(&first) = reading.operands.first() {
            let arg = &args[first];
            programs.push(Given {
                arg,
                text: arg.shape.clone(),
            });
        }
    }
    for g in programs {
        if !g.arg.is_static() {
            out.push(ScriptFinding {
                rule: Rule::OpaqueArgument,
                span: g.arg.span,
                message: "the awk program is only known at run time".into(),
            });
            continue;
        }
        let text = g.text;
        let mut found = Vec::new();
        match scan(&text, &mut found) {
            Some(why) => out.push(ScriptFinding {
                rule: Rule::EscapeOption,
                span: g.arg.span,
                message: why,
            }),
            None => writes.extend(found.into_iter().map(|f| (g.arg.span, f))),
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

/// Where the scanner is and what it knows there: a `/` after an operand
/// may be a division or start a regex (awk decides by its grammar, and
/// after `x++` the implementations differ), so both readings are followed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    p: usize,
    /// The token before was an operand (a name, a number, `)`, `]`, a
    /// string, `++`, `--`): a `/` here may be either.
    after_operand: bool,
    /// Inside a print or printf statement.
    in_print: bool,
    /// Parentheses open in that statement (capped).
    depth: u8,
}

/// Looks through an awk program, outside strings, regexes and comments,
/// under every way of reading its `/`s; the files its `print >`
/// statements write are added to `writes`. A reading that cannot be awk
/// (a regex or string running past the line) is dropped; when none is
/// left, the program is not understood.
fn scan(prog: &str, writes: &mut Vec<String>) -> Option<String> {
    let b: Vec<char> = prog.chars().collect();
    let mut todo = vec![State {
        p: 0,
        after_operand: false,
        in_print: false,
        depth: 0,
    }];
    let mut seen = std::collections::HashSet::new();
    let mut readable = false;
    while let Some(start) = todo.pop() {
        if !seen.insert(start) {
            continue;
        }
        // A program with thousands of ambiguous slashes is not read.
        if seen.len() > 4096 {
            return Some("awk program not understood (too many ways to read its `/`)".into());
        }
        match follow(&b, start, writes, &mut todo) {
            Lexing::Danger(why) => return Some(why),
            Lexing::Complete => readable = true,
            Lexing::Impossible => {}
        }
    }
    (!readable).then(|| "awk program not understood (no reading of it is awk)".into())
}

enum Lexing {
    Danger(String),
    Complete,
    Impossible,
}

/// Follows one reading from `st` to the end of the program, queueing the
/// other reading of every ambiguous `/` on the way.
fn follow(b: &[char], st: State, writes: &mut Vec<String>, todo: &mut Vec<State>) -> Lexing {
    let n = b.len();
    let State {
        mut p,
        mut after_operand,
        mut in_print,
        mut depth,
    } = st;
    while p < n {
        let c = b[p];
        match c {
            '(' => depth = depth.saturating_add(1).min(64),
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
                    None => return Lexing::Danger(
                        "awk writes to a file whose name is computed at run time, which could be one that decides what later commands run".into(),
                    ),
                }
                after_operand = false;
                continue;
            }
            _ => {}
        }
        match c {
            '"' => {
                p += 1;
                while p < n && b[p] != '"' {
                    if b[p] == '\n' {
                        return Lexing::Impossible;
                    }
                    p += if b[p] == '\\' { 2 } else { 1 };
                }
                if p >= n {
                    return Lexing::Impossible;
                }
                p += 1;
                after_operand = true;
            }
            '#' => {
                while p < n && b[p] != '\n' {
                    p += 1;
                }
            }
            '/' => {
                if after_operand {
                    // The division: an operator, after which a `/` is a regex.
                    todo.push(State {
                        p: p + 1,
                        after_operand: false,
                        in_print,
                        depth,
                    });
                }
                p += 1;
                // Where a regex ends differs: gawk reads a `/` inside a
                // bracket expression (`[/]`, `[[:alpha:]/]`, `[]/]`) as
                // part of it, the one true awk ends the regex at any `/`.
                // Once a regex has a `[`, every `/` in it is followed both
                // as its end and as part of it.
                let mut bracketed = false;
                while p < n {
                    match b[p] {
                        '\\' => p += 1,
                        '[' => bracketed = true,
                        '/' if !bracketed => break,
                        '/' => todo.push(State {
                            p: p + 1,
                            after_operand: true,
                            in_print,
                            depth,
                        }),
                        '\n' => return Lexing::Impossible,
                        _ => {}
                    }
                    p += 1;
                }
                if p >= n {
                    return Lexing::Impossible;
                }
                p += 1;
                after_operand = true;
            }
            '|' => {
                if b.get(p + 1) == Some(&'|') {
                    p += 2;
                    after_operand = false;
                    continue;
                }
                if b.get(p + 1) == Some(&'&') {
                    return Lexing::Danger("awk's `|&` runs a command as a coprocess".into());
                }
                return Lexing::Danger("awk pipes to or from a command with `|`".into());
            }
            '@' => {
                let word: String = b[p + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if word == "load" || word == "include" {
                    return Lexing::Danger(format!("awk's `@{word}` runs code from another file"));
                }
                // gawk's indirect call `@f()` calls the function a string
                // names, `system` included; other directives are rare.
                return Lexing::Danger(format!(
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
                    return Lexing::Danger("awk's `system()` runs a shell command".into());
                }
                if word == "print" || word == "printf" {
                    in_print = true;
                    depth = 0;
                }
                // After a keyword like `print` or `return`, `/` starts a regex.
                after_operand =
                    !matches!(word.as_str(), "print" | "printf" | "return" | "in" | "case");
            }
            c if c.is_ascii_digit() || c == '.' || c == ')' || c == ']' || c == '$' => {
                p += 1;
                after_operand = c != '$';
            }
            '+' | '-' if b.get(p + 1) == Some(&c) => {
                // `x++ / 2` divides; a prefix `++` is followed by a name.
                p += 2;
                after_operand = true;
            }
            // A line continued with a backslash: the token before still counts.
            '\\' if b.get(p + 1) == Some(&'\n') => p += 2,
            ' ' | '\t' | '\r' => p += 1,
            _ => {
                p += 1;
                after_operand = false;
            }
        }
    }
    Lexing::Complete
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
            "{ x = a / 2; y = b / 3 }",
            "{ print $1/2, $2/4 }",
            "$1 ~ /a|b/ && n++ > 2 { print }",
            "/[/]x/ { print }",
            "$0 ~ /^[a-z\\/]+$/ { n++ }",
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
            // After `++`, a `/` divides; the second `/` closes no regex.
            "{ n++ / 2; system(\"id\") / 1 }",
            "{ x = n-- /2; system(\"id\") }#/",
            "{ x = a \\\n / 2; system(\"id\") /\n}",
            "{ x = (a) / 2; system(\"id\") / 1 }",
            "/\"/ { system(\"id\") }",
            // Bracket expressions holding a slash end differently in
            // different awks; every reading is checked.
            "/[]/]/ { system(\"id\") } /x/",
            "/[[:alpha:]/]/ { system(\"id\") } /x/",
            "/[/]/ { system(\"id\") } /x/",
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
