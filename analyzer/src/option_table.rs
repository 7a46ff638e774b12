//! Reading a local program's arguments with its reviewed option table
//! (`analyzer/options/*.toml`): which words are options, which are their
//! values and which are operands, the way the program's own parser reads
//! them. The resolver uses it for unreviewed options (BG214), escapes and
//! `local_with`; the write model for operands.

use crate::args::Arg;
use crate::catalog::{Entry, OptionSyntax, OptionTable};

/// Arguments as a local program's own parser reads them.
#[derive(Debug, Default)]
pub struct Reading {
    /// Options its reviewed table does not hold: `(argument index, option)`.
    pub unreviewed: Vec<(usize, String)>,
    /// Indexes of its operands (arguments known only at run time included:
    /// they may be either).
    pub operands: Vec<usize>,
    /// The options given, by their full spelling (`-n`, `--numeric` for
    /// `--num`, `-noout`), with the index of the argument holding each.
    pub given: Vec<(usize, String)>,
    /// The values of the options that take one, in order: the option's
    /// full spelling, and the index of the argument holding the value with
    /// the text it has there (`-ofile`: the same argument, `file`).
    pub values: Vec<(String, usize, Option<String>)>,
}

impl Reading {
    /// The values given to any of `options` (full spellings: `-f`,
    /// `--file`), with the index of the argument holding each.
    pub fn values_of(&self, options: &[String], args: &[Arg]) -> Vec<(usize, String)> {
        self.values
            .iter()
            .filter(|(o, _, _)| options.contains(o))
            .filter_map(|(_, at, text)| match text {
                Some(t) => Some((*at, t.clone())),
                None => args.get(*at).map(|a| (*at, a.shape.clone())),
            })
            .collect()
    }
}

/// Reads `args` with a program's option table: options, their values and
/// operands, the way the program's parser does. `bundled` reads a
/// dash-less first argument as a cluster (`tar xzf`). Arguments known only
/// at run time are the escape model's business (BG210), not this one's.
pub fn read(table: &OptionTable, args: &[Arg], bundled: bool) -> Reading {
    let mut out = Reading::default();
    if table.syntax == OptionSyntax::Operands {
        out.operands = (0..args.len()).collect();
        return out;
    }
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let at = i;
        i += 1;
        let Some(s) = args[at].text() else {
            out.operands.push(at);
            continue;
        };
        if options_done {
            out.operands.push(at);
            continue;
        }
        if s == "--" {
            options_done = true;
            continue;
        }
        // tar's traditional form (`tar cfI out.tar zstd src`): a first
        // argument without a dash is a cluster in which every letter that
        // takes a value takes the next word, and the letters after it are
        // still options.
        if at == 0 && bundled && !s.starts_with(['-', '+']) && !s.is_empty() {
            for c in s.chars() {
                out.given.push((at, format!("-{c}")));
                if table.short_value.contains(c) {
                    out.values.push((format!("-{c}"), i, None));
                    i += 1;
                } else if !table.short.contains(c) && !table.short_optional.contains(c) {
                    out.unreviewed.push((at, format!("-{c}")));
                }
            }
            continue;
        }
        let is_option = (s.starts_with('-') || (table.plus && s.starts_with('+'))) && s.len() > 1;
        if !is_option {
            out.operands.push(at);
            if table.syntax == OptionSyntax::Posix {
                options_done = true;
            }
            continue;
        }
        if let Some(body) = s.strip_prefix("--") {
            let full = long_name(table, body).map(|f| format!("--{f}"));
            if let Some(full) = &full {
                out.given.push((at, full.clone()));
            }
            let inline = body.split_once('=').map(|(_, v)| v.to_string());
            match long_option(table, body) {
                Some(LongArity::Value) if inline.is_none() => {
                    out.values.extend(full.map(|f| (f, i, None)));
                    i += 1
                }
                Some(LongArity::Value | LongArity::Optional) if inline.is_some() => {
                    out.values.extend(full.map(|f| (f, at, inline)));
                }
                Some(_) => {}
                None => out
                    .unreviewed
                    .push((at, s.split('=').next().unwrap_or(s).to_string())),
            }
            continue;
        }
        let body = &s[1..];
        if table.syntax == OptionSyntax::SingleDash {
            if let Some(arity) = single_dash(table, body) {
                let full = format!("-{}", body.split('=').next().unwrap_or(body));
                out.given.push((at, full.clone()));
                match body.split_once('=') {
                    None if arity == LongArity::Value => {
                        out.values.push((full, i, None));
                        i += 1;
                    }
                    Some((_, v)) => out.values.push((full, at, Some(v.to_string()))),
                    None => {}
                }
                continue;
            }
        }
        if table.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (j, c) in body.char_indices() {
            out.given.push((at, format!("{}{c}", &s[..1])));
            if table.short.contains(c) {
                continue;
            }
            let rest = &body[j + c.len_utf8()..];
            let option = format!("{}{c}", &s[..1]);
            if table.short_value.contains(c) {
                if rest.is_empty() {
                    out.values.push((option, i, None));
                    i += 1;
                } else {
                    out.values.push((option, at, Some(rest.to_string())));
                }
                break;
            }
            if table.short_optional.contains(c) {
                if !rest.is_empty() {
                    out.values.push((option, at, Some(rest.to_string())));
                }
                break;
            }
            out.unreviewed.push((at, format!("{}{c}", &s[..1])));
            break;
        }
    }
    out
}

/// Whether a static argument before `--` is one of `options`: a long
/// option by name (`--numeric`, `--numeric=x`), a short one alone or in a
/// cluster (`-n`, `-tlnp`). Run-time arguments never count.
pub(crate) fn has_any_option(entry: &Entry, args: &[Arg], options: &[String]) -> bool {
    if options.is_empty() {
        return false;
    }
    // With an option table, as the program reads them: `lsof -cnode` is
    // `-c node`, not `-n`; `--num` is `--numeric`.
    if let Some(table) = &entry.options {
        return read(table, args, entry.bundled_options)
            .given
            .iter()
            .any(|(_, o)| options.contains(o));
    }
    for a in args {
        let Some(t) = a.text() else { continue };
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if options.iter().any(|o| o.strip_prefix("--") == Some(name)) {
                return true;
            }
        } else if let Some(cluster) = t.strip_prefix('-') {
            if cluster.chars().any(|c| {
                options
                    .iter()
                    .any(|o| o.len() == 2 && o.ends_with(c) && o.starts_with('-'))
            }) {
                return true;
            }
        }
    }
    false
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LongArity {
    Flag,
    Value,
    Optional,
}

fn arity_of(table: &OptionTable, name: &str) -> Option<LongArity> {
    if table.long.iter().any(|o| o == name) {
        Some(LongArity::Flag)
    } else if table.long_value.iter().any(|o| o == name) {
        Some(LongArity::Value)
    } else if table.long_optional.iter().any(|o| o == name) {
        Some(LongArity::Optional)
    } else {
        None
    }
}

/// `name[=value]` after `--`: the exact name, or the one name it
/// abbreviates (getopt_long accepts any unique prefix; a prefix shared by
/// several names is an error to the program, and unknown to us).
fn long_option(table: &OptionTable, body: &str) -> Option<LongArity> {
    let name = body.split('=').next().unwrap_or(body);
    if name.is_empty() {
        return None;
    }
    if let Some(a) = arity_of(table, name) {
        return Some(a);
    }
    let mut matches = table
        .long
        .iter()
        .chain(&table.long_value)
        .chain(&table.long_optional)
        .filter(|o| o.starts_with(name));
    let first = matches.next()?;
    if matches.next().is_some() {
        return None;
    }
    arity_of(table, first)
}

/// The full name a `--name[=value]` spelling stands for, when one.
fn long_name<'a>(table: &'a OptionTable, body: &str) -> Option<&'a str> {
    let name = body.split('=').next().unwrap_or(body);
    let all = || {
        table
            .long
            .iter()
            .chain(&table.long_value)
            .chain(&table.long_optional)
    };
    if let Some(o) = all().find(|o| *o == name) {
        return Some(o);
    }
    let mut matches = all().filter(|o| !name.is_empty() && o.starts_with(name));
    let first = matches.next()?;
    matches.next().is_none().then_some(first.as_str())
}

/// `-name[=value]`, exact (openssl, xxd).
fn single_dash(table: &OptionTable, body: &str) -> Option<LongArity> {
    let name = body.split('=').next().unwrap_or(body);
    arity_of(table, name)
}
