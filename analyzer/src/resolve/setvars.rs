//! The variables a builtin sets from its arguments, read the way bash reads
//! them, whatever the spelling: `export 'PATH=/x'`, `builtin declare -n r`,
//! `printf -vPATH`, `read 'a[$(id)]'`, `mapfile -C cb`, `let 'X=1'`.
//! Assignments tree-sitter itself recognises (`export A=1`, `A=1 cmd`) are
//! checked where they are lowered; this is everything else, one model for
//! every builtin that assigns. The shell options `set` and `shopt` turn on
//! are judged in one place too, `shell_options_on` in invoke.rs.

use crate::args::Arg;
use crate::word::is_identifier;

/// One variable a builtin sets, or may set.
pub(super) struct Target<'a> {
    pub arg: &'a Arg,
    /// `None` when the name is not known statically.
    pub name: Option<String>,
    /// Gives a value (`X=v`, `read X`); `export X` alone changes none.
    pub assigns: bool,
    /// `X[...]` with a subscript other than a number: bash evaluates it as
    /// arithmetic, and arithmetic expands `$( )`.
    pub subscript: bool,
    /// A nameref: every later assignment goes to the variable it names.
    pub nameref: bool,
    /// Exported: it reaches the environment of every program started later.
    pub exported: bool,
}

/// What the arguments of one builtin set.
#[derive(Default)]
pub(super) struct Sets<'a> {
    pub targets: Vec<Target<'a>>,
    /// Other ways the arguments change what later runs, with why.
    pub notes: Vec<(&'a Arg, &'static str)>,
}

/// The option letters that take a value, from the builtin's reviewed
/// option table (the one definition of its options).
fn value_options(canon: &str) -> String {
    crate::catalog::Catalog::builtin()
        .lookup(canon)
        .and_then(|(_, e)| e.options.as_ref())
        .map(|t| t.short_value.clone())
        .unwrap_or_default()
}

pub(super) fn sets<'a>(canon: &str, rest: &'a [Arg]) -> Sets<'a> {
    let mut out = Sets::default();
    match canon {
        "declare" | "typeset" | "local" | "export" | "readonly" => {
            declaration(canon, rest, &mut out)
        }
        "printf" => {
            if let Some(first) = rest.first() {
                match first.text() {
                    Some("-v") => {
                        if let Some(a) = rest.get(1) {
                            out.targets.push(target(a, a.text(), true, false));
                        }
                    }
                    Some(t) if t.starts_with("-v") => {
                        out.targets.push(target(first, Some(&t[2..]), true, false));
                    }
                    Some(_) => {}
                    // A run-time first argument may be `-vNAME`.
                    None if first.shape.starts_with(['-', '*']) => {
                        out.targets.push(target(first, None, true, false))
                    }
                    None => {}
                }
            }
        }
        "read" | "mapfile" | "readarray" => {
            let takes = value_options(canon);
            let mut i = 0;
            while i < rest.len() {
                let a = &rest[i];
                let Some(t) = a.text() else {
                    // Could be an option or a name.
                    out.targets.push(target(a, None, true, false));
                    i += 1;
                    continue;
                };
                if t == "--" {
                    i += 1;
                    break;
                }
                if !t.starts_with('-') || t == "-" {
                    break;
                }
                // A cluster: flags, then at most one option with its value.
                for (k, c) in t.char_indices().skip(1) {
                    if takes.contains(c) {
                        let attached = &t[k + c.len_utf8()..];
                        let (value_arg, value) = if attached.is_empty() {
                            i += 1;
                            match rest.get(i) {
                                Some(v) => (v, v.text()),
                                None => break,
                            }
                        } else {
                            (a, Some(attached))
                        };
                        match (canon, c) {
                            ("read", 'a') => out.targets.push(target(value_arg, value, true, false)),
                            (_, 'C') => out.notes.push((
                                value_arg,
                                "`mapfile -C` runs its callback as a command for every few lines read",
                            )),
                            _ => {}
                        }
                        break;
                    }
                }
                i += 1;
            }
            for a in &rest[i.min(rest.len())..] {
                out.targets.push(target(a, a.text(), true, false));
            }
        }
        "getopts" => {
            if let Some(a) = rest.get(1) {
                out.targets.push(target(a, a.text(), true, false));
            }
        }
        "wait" => {
            for w in rest.windows(2) {
                if w[0].text() == Some("-p") {
                    out.targets.push(target(&w[1], w[1].text(), true, false));
                }
            }
        }
        "let" => {
            for a in rest {
                match a.text() {
                    None => out.targets.push(target(a, None, true, false)),
                    Some(t) => {
                        for name in arithmetic_targets(t) {
                            out.targets.push(target(a, Some(name), true, false));
                        }
                        if has_subscript(t) {
                            out.targets.push(Target {
                                arg: a,
                                name: Some(t.to_string()),
                                assigns: true,
                                subscript: true,
                                nameref: false,
                                exported: false,
                            });
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// `declare`, `typeset`, `local`, `export`, `readonly` with arguments the
/// grammar did not take for assignments.
fn declaration<'a>(canon: &str, rest: &'a [Arg], out: &mut Sets<'a>) {
    let mut nameref = false;
    let mut functions = false;
    let mut exports = canon == "export";
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        let Some(t) = a.text() else {
            break;
        };
        if t == "--" {
            i += 1;
            break;
        }
        let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) else {
            break;
        };
        if flags.is_empty() {
            break;
        }
        let on = t.starts_with('-');
        // `export -n` takes the export away; elsewhere `-n` is a nameref.
        nameref |= on && canon != "export" && flags.contains('n');
        functions |= flags.contains('f') || flags.contains('F');
        exports |= on && flags.contains('x');
        i += 1;
    }
    for a in &rest[i..] {
        if functions {
            if exports {
                out.notes.push((
                    a,
                    "exports a function: child bash processes run it in place of the command it names",
                ));
            }
            continue;
        }
        match a.text() {
            None => out.targets.push(target(a, None, true, nameref)),
            Some(t) => {
                let (name, assigns) = match t.split_once('=') {
                    Some((n, _)) => (n.strip_suffix('+').unwrap_or(n), true),
                    None => (t, false),
                };
                let base = name.split('[').next().unwrap_or(name);
                // bash refuses a name that is not an identifier: nothing set.
                if is_identifier(base) {
                    let mut t = target(a, Some(name), assigns, nameref);
                    t.exported = exports;
                    out.targets.push(t);
                }
            }
        }
    }
}

fn target<'a>(arg: &'a Arg, name: Option<&str>, assigns: bool, nameref: bool) -> Target<'a> {
    let subscript = name.is_some_and(has_subscript);
    Target {
        arg,
        name: name.map(|n| n.split('[').next().unwrap_or(n).to_string()),
        assigns,
        subscript,
        nameref,
        exported: false,
    }
}

/// A subscript bash evaluates as arithmetic: anything but digits.
fn has_subscript(name: &str) -> bool {
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let close = after.find(']').unwrap_or(after.len());
        if !after[..close].bytes().all(|b| b.is_ascii_digit()) || close == 0 {
            return true;
        }
        rest = &after[close.min(after.len())..];
    }
    false
}

/// Names assigned in an arithmetic expression: `X=`, `X+=`... and `X++`.
fn arithmetic_targets(expr: &str) -> Vec<&str> {
    let bytes = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &expr[start..i];
            let after = expr[i..].trim_start();
            let before = expr[..start].trim_end();
            let assigned = (after.starts_with('=') && !after.starts_with("=="))
                || [
                    "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--",
                ]
                .iter()
                .any(|op| after.starts_with(op))
                || before.ends_with("++")
                || before.ends_with("--");
            if assigned {
                out.push(name);
            }
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscripts_and_arithmetic_targets() {
        assert!(!has_subscript("a"));
        assert!(!has_subscript("a[0]"));
        assert!(has_subscript("a[i]"));
        assert!(has_subscript("a[$(id)]"));
        assert!(has_subscript("a[]"));
        assert_eq!(arithmetic_targets("X=1+y"), vec!["X"]);
        assert_eq!(arithmetic_targets("a += b == c"), vec!["a"]);
        assert_eq!(arithmetic_targets("++n, m--"), vec!["n", "m"]);
        assert!(arithmetic_targets("x == 1").is_empty());
    }
}
