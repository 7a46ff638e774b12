//! GNU-style option parsing for wrappers, driven by their catalog entries:
//! finds where the wrapped program starts, and which options were given.

use crate::args::Arg;
use crate::catalog::Entry;

#[derive(Debug, Default)]
pub struct Parsed {
    /// Index of the wrapped program's name in the argument list.
    pub command: Option<usize>,
    /// Options seen, by their canonical spelling (`-u`, `--user`).
    pub seen: Vec<String>,
    /// Values of script options (`su -c SCRIPT`).
    pub scripts: Vec<Arg>,
    /// Values of options that take a value, with their option.
    pub values: Vec<(String, Arg)>,
    /// `NAME=VALUE` environment assignments before the program.
    pub assignments: Vec<(String, Arg)>,
    /// Operands consumed before the program (or all of them when the
    /// wrapper permutes and takes no program).
    pub operands: Vec<usize>,
}

impl Parsed {
    pub fn saw(&self, names: &[String]) -> bool {
        self.seen.iter().any(|s| names.contains(s))
    }
}

/// How parsing should treat operands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Options, then `entry.operands` operands, then the program.
    Command,
    /// Options anywhere; every operand is collected (su, script).
    Permute,
}

/// Parses `args` (after the wrapper's own name). An `Err` names what could
/// not be understood: an unknown option, or an option or operand whose
/// value is not known statically.
pub fn parse(entry: &Entry, args: &[Arg], mode: Mode) -> Result<Parsed, String> {
    let mut p = Parsed::default();
    let mut operands_left = entry.operands;
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let Some(s) = arg.text() else {
            // A word known only at run time could be an option or an
            // operand; as the program name it is simply dynamic.
            if operands_left > 0 || mode == Mode::Permute {
                return Err("an argument is only known at run time".into());
            }
            p.command = Some(i);
            return Ok(p);
        };
        if !options_done && s == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if !options_done && s.starts_with("--") && s.len() > 2 {
            let (name, inline) = match s.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (s, None),
            };
            let full = match_long(entry, name).ok_or_else(|| format!("unknown option `{name}`"))?;
            let takes_value =
                entry.options_with_value.contains(&full) || entry.script_options.contains(&full);
            if takes_value {
                let value = match inline {
                    Some(v) => Arg::new(crate::word::Value::Static(v.to_string()), arg.span, None),
                    None => {
                        i += 1;
                        args.get(i)
                            .cloned()
                            .ok_or_else(|| format!("`{full}` needs a value"))?
                    }
                };
                record_value(entry, &mut p, &full, value);
            }
            p.seen.push(full);
            i += 1;
            continue;
        }
        if !options_done && s.starts_with('-') && s.len() > 1 {
            if entry.numeric_options && s[1..].chars().all(|c| c.is_ascii_digit()) {
                p.seen.push("-N".into());
                i += 1;
                continue;
            }
            let body = &s[1..];
            for (j, c) in body.char_indices() {
                let key = format!("-{c}");
                let takes_value =
                    entry.options_with_value.contains(&key) || entry.script_options.contains(&key);
                if takes_value {
                    let rest = &body[j + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i)
                            .cloned()
                            .ok_or_else(|| format!("`{key}` needs a value"))?
                    } else {
                        Arg::new(crate::word::Value::Static(rest.to_string()), arg.span, None)
                    };
                    record_value(entry, &mut p, &key, value);
                    p.seen.push(key);
                    break;
                }
                if known_flag(entry, &key) {
                    p.seen.push(key);
                    continue;
                }
                return Err(format!("unknown option `{key}`"));
            }
            i += 1;
            continue;
        }
        if entry.assignments && p.command.is_none() && s.find('=').is_some_and(|i| i > 0) {
            let (name, _) = s.split_once('=').unwrap_or((s, ""));
            p.assignments.push((name.to_string(), arg.clone()));
            i += 1;
            continue;
        }
        match mode {
            Mode::Permute => {
                p.operands.push(i);
                i += 1;
            }
            Mode::Command if operands_left > 0 => {
                operands_left -= 1;
                p.operands.push(i);
                i += 1;
            }
            Mode::Command => {
                p.command = Some(i);
                return Ok(p);
            }
        }
    }
    Ok(p)
}

fn record_value(entry: &Entry, p: &mut Parsed, key: &str, value: Arg) {
    if entry.script_options.iter().any(|o| o == key) {
        p.scripts.push(value);
    } else {
        p.values.push((key.to_string(), value));
    }
}

fn known_flag(entry: &Entry, key: &str) -> bool {
    entry.flags.iter().any(|f| f == key)
        || entry.no_command_options.iter().any(|f| f == key)
        || entry.shell_options.iter().any(|f| f == key)
}

/// Exact long option, or the one option it unambiguously abbreviates.
fn match_long(entry: &Entry, name: &str) -> Option<String> {
    let all = entry
        .flags
        .iter()
        .chain(&entry.options_with_value)
        .chain(&entry.script_options)
        .chain(&entry.no_command_options)
        .chain(&entry.shell_options)
        .filter(|o| o.starts_with("--"));
    let mut found: Option<&String> = None;
    for o in all {
        if o == name {
            return Some(o.clone());
        }
        if o.starts_with(name) {
            if found.is_some_and(|f| f != o) {
                return None;
            }
            found = Some(o);
        }
    }
    found.cloned()
}
