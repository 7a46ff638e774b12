//! dc: `!` runs a shell command, from an expression, a program file or the
//! input. Expressions are read; files and input are code not in the command.

use super::ScriptFinding;
use crate::args::Arg;
use crate::rules::Rule;

pub fn check(args: &[Arg]) -> Vec<ScriptFinding> {
    let mut out = Vec::new();
    let mut code_given = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(t) = a.text() else {
            out.push(finding(
                a,
                Rule::OpaqueArgument,
                "a dc argument is only known at run time",
            ));
            continue;
        };
        let expression = if t == "-e" || t == "--expression" {
            i += 1;
            args.get(i - 1)
        } else if t.starts_with("--expression=") || (t.starts_with("-e") && t.len() > 2) {
            Some(a)
        } else {
            None
        };
        if let Some(e) = expression {
            code_given = true;
            let text = e.text().unwrap_or("!");
            let text = text
                .strip_prefix("--expression=")
                .or_else(|| text.strip_prefix("-e"))
                .unwrap_or(text);
            if text.contains('!') || !e.is_static() {
                out.push(finding(
                    e,
                    Rule::EscapeOption,
                    "dc's `!` runs a shell command",
                ));
            } else if text.contains('?') {
                out.push(finding(
                    e,
                    Rule::EscapeOption,
                    "dc's `?` runs a line read from its input as dc code, whose `!` runs a shell command",
                ));
            }
            continue;
        }
        if matches!(t, "-V" | "--version" | "-h" | "--help") {
            code_given = true;
            continue;
        }
        // -f FILE, --file=FILE and plain operands are program files.
        if t == "-f" || t == "--file" {
            i += 1;
        }
        code_given = true;
        out.push(finding(
            a,
            Rule::CodeFromFile,
            "dc runs the program in a file, which may use `!` to run commands",
        ));
    }
    if !code_given {
        let span = args.first().map(|a| a.span).unwrap_or_default();
        out.push(ScriptFinding {
            rule: Rule::CodeFromFile,
            span,
            message: "dc runs the program on its input, which may use `!` to run commands".into(),
        });
    }
    out
}

fn finding(a: &Arg, rule: Rule, message: &str) -> ScriptFinding {
    ScriptFinding {
        rule,
        span: a.span,
        message: message.into(),
    }
}
