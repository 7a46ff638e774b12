//! Reading a wrapper's arguments, with the one reader of arguments over
//! a table made from its catalog entry: where the wrapped program starts,
//! which options were given and with what values.

use crate::args::Arg;
use crate::catalog::{Entry, OptionSyntax, OptionTable};

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

/// Parses `args` (after the wrapper's own name) with the one reader of
/// arguments ([`crate::option_table`]), over a table made from the entry's
/// option lists: POSIX style (options end at the first operand, as the
/// wrappers' `getopt("+...")` reads them) to find where the wrapped
/// program starts, GNU style (options anywhere) for `Permute`. An `Err`
/// names what could not be understood: an unknown option, or an option or
/// operand whose value is not known statically.
pub fn parse(entry: &Entry, args: &[Arg], mode: Mode) -> Result<Parsed, String> {
    let table = table_of(entry, mode);
    let reading = crate::option_table::read(&table, args, false);
    if let Some((_, option)) = reading.unreviewed.first() {
        return Err(format!("unknown option `{option}`"));
    }
    let mut p = Parsed::default();
    for (option, at, attached) in &reading.values {
        let value = match attached {
            Some(v) => Arg::new(crate::word::Value::Static(v.clone()), args[*at].span, None),
            None => args
                .get(*at)
                .cloned()
                .ok_or_else(|| format!("`{option}` needs a value"))?,
        };
        record_value(entry, &mut p, option, value);
    }
    p.seen = reading.given.into_iter().map(|(_, o)| o).collect();
    let mut operands_left = entry.operands;
    for &i in &reading.operands {
        let Some(s) = args[i].text() else {
            // A word known only at run time could be an option or an
            // operand; as the program name it is simply dynamic.
            if operands_left > 0 || mode == Mode::Permute {
                return Err("an argument is only known at run time".into());
            }
            p.command = Some(i);
            return Ok(p);
        };
        // A lone `-` that the entry lists as a flag (`env -`, `su -`).
        if s == "-" && entry.flags.iter().any(|f| f == "-") {
            p.seen.push("-".into());
            continue;
        }
        if entry.assignments && s.find('=').is_some_and(|k| k > 0) {
            let (name, _) = s.split_once('=').unwrap_or((s, ""));
            p.assignments.push((name.to_string(), args[i].clone()));
            continue;
        }
        match mode {
            Mode::Permute => p.operands.push(i),
            Mode::Command if operands_left > 0 => {
                operands_left -= 1;
                p.operands.push(i);
            }
            Mode::Command => {
                p.command = Some(i);
                return Ok(p);
            }
        }
    }
    Ok(p)
}

/// The option table of a wrapper, from its entry's lists: which options
/// are flags, which take a value (a script option's value is a script).
fn table_of(entry: &Entry, mode: Mode) -> OptionTable {
    let mut t = OptionTable {
        reviewed: String::new(),
        syntax: match mode {
            Mode::Command => OptionSyntax::Posix,
            Mode::Permute => OptionSyntax::Gnu,
        },
        why: None,
        short: String::new(),
        short_value: String::new(),
        short_optional: String::new(),
        long: Vec::new(),
        long_value: Vec::new(),
        long_optional: Vec::new(),
        numeric: entry.numeric_options,
        plus: false,
        help: None,
    };
    let flags = entry
        .flags
        .iter()
        .chain(&entry.no_command_options)
        .chain(&entry.shell_options);
    let valued = entry.options_with_value.iter().chain(&entry.script_options);
    for (options, value) in [(flags.collect::<Vec<_>>(), false), (valued.collect(), true)] {
        for o in options {
            if let Some(long) = o.strip_prefix("--") {
                if value {
                    &mut t.long_value
                } else {
                    &mut t.long
                }
                .push(long.to_string());
            } else if let Some(letter) = o.strip_prefix('-').filter(|l| l.chars().count() == 1) {
                if value {
                    &mut t.short_value
                } else {
                    &mut t.short
                }
                .push_str(letter);
            }
        }
    }
    t
}

fn record_value(entry: &Entry, p: &mut Parsed, key: &str, value: Arg) {
    if entry.script_options.iter().any(|o| o == key) {
        p.scripts.push(value);
    } else {
        p.values.push((key.to_string(), value));
    }
}
