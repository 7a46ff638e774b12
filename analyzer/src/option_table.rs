//! The one reader of a program's arguments: which words are options (by
//! their full spelling), which are their values and which are operands,
//! the way the program's own parser reads them. A program with a reviewed
//! option table (`analyzer/options/*.toml`) is read by it; any other the
//! GNU way, with the values its catalog entry lists (`options_with_value`).
//! The resolver uses it for unreviewed options (BG214), escapes,
//! `local_with` and the scripts of sed and awk; the write model for
//! operands and output values; the gate's rules through
//! [`crate::Invocation::options`].

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
    pub fn values_of<S: AsRef<str>>(&self, options: &[S], args: &[Arg]) -> Vec<(usize, String)> {
        self.values
            .iter()
            .filter(|(o, _, _)| options.iter().any(|w| w.as_ref() == o))
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
    let texts: Vec<Option<&str>> = args.iter().map(Arg::text).collect();
    read_texts(table, &texts, bundled)
}

/// [`read`] over the arguments' texts (`None`: known only at run time).
pub fn read_texts(table: &OptionTable, args: &[Option<&str>], bundled: bool) -> Reading {
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
        let Some(s) = args[at] else {
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

/// Reads the arguments of a program without an option table the GNU way:
/// options anywhere before `--`; `--name[=value]` as written; each letter
/// of a `-abc` cluster an option until one that the entry says takes a
/// value (`with_value`: `-C`), which takes the rest of the cluster or the
/// next word; a cluster also ends at its first character that is not a
/// letter (`-n5` is `-n` with `5`). An entry's `bundled_options` reads a
/// dash-less first argument as a traditional cluster; its `single_dash`
/// reads `-name` as one option.
pub fn read_gnu(entry: Option<&Entry>, args: &[Option<&str>]) -> Reading {
    let with_value: &[String] = entry.map_or(&[], |e| e.options_with_value.as_slice());
    let bundled = entry.is_some_and(|e| e.bundled_options);
    let single_dash = entry.is_some_and(|e| e.single_dash);
    let mut out = Reading::default();
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let at = i;
        i += 1;
        let Some(s) = args[at] else {
            out.operands.push(at);
            continue;
        };
        // A traditional first cluster (`bsdtar xzf a.tgz`): each letter an
        // option, each one that takes a value taking the next word.
        if at == 0 && bundled && !s.starts_with('-') && !s.is_empty() {
            for c in s.chars() {
                let option = format!("-{c}");
                out.given.push((at, option.clone()));
                if with_value.contains(&option) {
                    out.values.push((option, i, None));
                    i += 1;
                }
            }
            continue;
        }
        if options_done || !s.starts_with('-') || s.len() < 2 {
            out.operands.push(at);
            continue;
        }
        if s == "--" {
            options_done = true;
            continue;
        }
        if s.starts_with("--") || single_dash {
            let (name, value) = match s.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (s, None),
            };
            out.given.push((at, name.to_string()));
            match value {
                Some(v) => out.values.push((name.to_string(), at, Some(v))),
                None if with_value.iter().any(|o| o == name) => {
                    out.values.push((name.to_string(), i, None));
                    i += 1;
                }
                None => {}
            }
            continue;
        }
        let body = &s[1..];
        for (j, c) in body.char_indices() {
            let rest = &body[j + c.len_utf8()..];
            if !c.is_ascii_alphabetic() {
                break;
            }
            let option = format!("-{c}");
            out.given.push((at, option.clone()));
            if with_value.contains(&option) {
                if rest.is_empty() {
                    out.values.push((option, i, None));
                    i += 1;
                } else {
                    out.values.push((option, at, Some(rest.to_string())));
                }
                break;
            }
        }
    }
    out
}

/// Whether a static argument before `--` is one of `options`: a long
/// option by name (`--numeric`, `--numeric=x`), a short one alone or in a
/// cluster (`-n`, `-tlnp`). Run-time arguments never count.
pub(crate) fn has_any_option<S: AsRef<str>>(entry: &Entry, args: &[Arg], options: &[S]) -> bool {
    let texts: Vec<Option<&str>> = args.iter().map(Arg::text).collect();
    gives(entry, &texts, options)
}

/// A program's arguments as the one reader reads them: with its option
/// table when it has one (`lsof -cnode` is `-c node`, not `-n`; `--num` is
/// `--numeric`), else the GNU way with the values its entry lists.
pub(crate) fn reading(entry: &Entry, texts: &[Option<&str>]) -> Reading {
    match &entry.options {
        Some(table) => read_texts(table, texts, entry.bundled_options),
        None => read_gnu(Some(entry), texts),
    }
}

/// Whether any of `options` (full spellings) is given among `texts`.
pub(crate) fn gives<S: AsRef<str>>(entry: &Entry, texts: &[Option<&str>], options: &[S]) -> bool {
    !options.is_empty()
        && reading(entry, texts)
            .given
            .iter()
            .any(|(_, o)| options.iter().any(|w| w.as_ref() == o))
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
