//! What a command does to the machine besides printing. A command is
//! read-only when it is `safe` (every program that runs is known and local)
//! and every program is one the catalog lists in `read_only_programs` (it
//! writes no file, deletes nothing, changes no permission or owner and
//! signals no process, whatever its options), and its redirects write
//! nowhere but the terminal or `/dev/null`.

use crate::analysis::Analysis;
use crate::args::Arg;
use crate::catalog::{Catalog, Entry, Removes, ScriptLang, Writes};
use crate::verdict::Verdict;
use crate::word::Value;

/// Written paths with the index of the argument each comes from.
type Written = Vec<(usize, String)>;

/// What one invocation writes and removes (see `file_effects`).
#[derive(Debug, Default)]
pub(crate) struct FileEffects {
    pub writes: Vec<(usize, String)>,
    pub removes: Vec<String>,
}

/// `find -delete` removes what it finds under its starting points (the
/// operands before the first option or expression). A word known only at
/// run time where find reads a primary may be `-delete`.
pub(crate) fn find_removes(args: &[Arg]) -> Vec<String> {
    let dynamic = find_run_time_primaries(args);
    // `-delete` as find's own primary, not a word of the command an
    // `-exec` runs (`find . -exec echo -delete \;`).
    let mut in_exec = false;
    let deletes = args.iter().any(|a| {
        match a.text() {
            Some("-exec" | "-execdir" | "-ok" | "-okdir") if !in_exec => in_exec = true,
            Some(";" | "+") if in_exec => in_exec = false,
            Some("-delete") if !in_exec => return true,
            _ => {}
        }
        false
    });
    if !deletes && dynamic.is_empty() {
        return Vec::new();
    }
    // find's own leading options (-H, -L, -P, -O3, -D debug) come first.
    let mut i = 0;
    while let Some(t) = args.get(i).and_then(Arg::text) {
        match t {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut starts: Vec<String> = args
        .iter()
        .enumerate()
        .skip(i)
        .take_while(|(j, a)| !a.shape.starts_with(['-', '(', '!']) && !dynamic.contains(j))
        .map(|(_, a)| a.shape.clone())
        .collect();
    // A start point that turns out to be `-delete` leaves find the working
    // directory; a run-time word may also have been a start point.
    if !dynamic.is_empty() {
        starts.push(".".into());
        starts.extend(dynamic.iter().map(|&j| args[j].shape.clone()));
        starts.dedup();
    }
    starts
}

/// find's primaries and options that read the next word as their value
/// (GNU findutils 4.9): a word after one of them is data, not a primary.
/// `-newerXY` reads one too; `-fprintf` reads two.
const FIND_VALUE_TAKERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-anewer",
    "-cnewer",
    "-samefile",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-size",
    "-type",
    "-xtype",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-links",
    "-inum",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-context",
    "-regextype",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-fprintf",
    "-files0-from",
    "-D",
];

/// The words of a find command line known only at run time that find may
/// read as a primary of their own (`-delete`, `-fprint FILE`): one word
/// (it cannot split), not the value of the word before it (`-name "$x"`,
/// as long as no such word came earlier), not inside `-exec ... ;`, and
/// not known to begin with something other than `-` (`"./$d"` is a path).
/// A start point counts: one that begins with `-` starts the expression.
pub(crate) fn find_run_time_primaries(args: &[Arg]) -> Vec<usize> {
    let value_at = |i: usize| {
        let before = |n: usize| i.checked_sub(n).and_then(|j| args[j].text());
        match before(1) {
            Some(t) if FIND_VALUE_TAKERS.contains(&t) => true,
            Some(t) if t.starts_with("-newer") && t.len() == 8 => true,
            _ => before(2) == Some("-fprintf"),
        }
    };
    let mut in_exec = false;
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a.text() {
            Some("-exec" | "-execdir" | "-ok" | "-okdir") if !in_exec => in_exec = true,
            Some(";" | "+") if in_exec => in_exec = false,
            _ => {}
        }
        let dash = matches!(a.shape.chars().next(), None | Some('-' | '*'));
        // After one such word (`-fprint` takes the next word as its file),
        // which later word is a value is not known either.
        let value = out.is_empty() && value_at(i);
        if a.value == Value::Dynamic && !a.splits && dash && !in_exec && !value {
            out.push(i);
        }
    }
    out
}

/// The files one invocation writes and removes, as shapes (`$HOME/.bashrc`
/// is `*/.bashrc`), from the catalog's write model: `writes` and `removes`
/// operands, output options' values (`sort -o`), `of=`,
/// `-t`/`--target-directory`, `sed -i` and its backups. The indexes point
/// into `args` (the arguments after the program name).
pub(crate) fn file_effects(entry: &Entry, args: &[Arg]) -> FileEffects {
    let mut out = FileEffects::default();
    // sed -i (in any cluster, or --in-place) writes its file operands.
    let in_place = entry.script == Some(ScriptLang::Sed) && sed_in_place(args).is_some();
    let writes = if in_place {
        Some(Writes::All)
    } else {
        entry.writes
    };
    let mut operands: Vec<(usize, &Arg)> = operands(entry, args);
    // sed's first operand is its script unless -e or -f gave one.
    if entry.script == Some(ScriptLang::Sed) && !sed_script_given(args) && !operands.is_empty() {
        operands.remove(0);
    }
    // `-t DIR` in every spelling (`-vtDIR`, `--target=DIR`).
    let mut targets = Vec::new();
    if writes.is_some() {
        for (i, a) in args.iter().enumerate() {
            if let Some(v) = a.shape.strip_prefix("of=") {
                out.writes.push((i, v.to_string()));
            }
        }
        targets = option_values(&TARGET_DIRECTORY, args);
        out.writes.extend(targets.iter().cloned());
    }
    if !crate::option_table::has_any_option(entry, args, &entry.output_read_modes) {
        out.writes.extend(output_values(entry, args));
    }
    // `key=value` operands (dd's if=, bs=) are not paths; a path with `=`
    // in it (`/usr/bin/x=y/../ls`) is.
    let plain = |a: &&(usize, &Arg)| {
        a.1.shape
            .split_once('=')
            .is_none_or(|(k, _)| k.is_empty() || !k.bytes().all(|b| b.is_ascii_lowercase()))
    };
    // chmod (modes in any argument): only a mode that can grant execute
    // changes what runs (a hook made executable); its first operand is the
    // mode, not a file.
    let writes = match &entry.modes {
        Some(m) if m.is_empty() && writes.is_some() => {
            if operands.is_empty() || !chmod_grants_execute(args, operands[0].0) {
                None
            } else {
                operands.remove(0);
                writes
            }
        }
        _ => writes,
    };
    match writes {
        Some(Writes::All) => out.writes.extend(
            operands
                .iter()
                .filter(plain)
                .map(|(i, a)| (*i, a.shape.clone())),
        ),
        Some(Writes::Last) => {
            // A copy, move or link into a directory writes DIR/NAME for
            // each source NAME (`cp dotfiles/.bashrc ~` writes ~/.bashrc).
            let (dests, sources): (Written, &[(usize, &Arg)]) = if targets.is_empty() {
                match operands.split_last() {
                    Some(((i, a), sources)) => (vec![(*i, a.shape.clone())], sources),
                    None => (Vec::new(), &[]),
                }
            } else {
                (targets.clone(), &operands[..])
            };
            if targets.is_empty() {
                out.writes.extend(dests.iter().cloned());
            }
            for (i, dest) in &dests {
                for (j, source) in sources {
                    let name = basename(&source.shape);
                    // A name only known at run time is the source's doing.
                    let at = if matches!(source.value, Value::Static(_)) {
                        *i
                    } else {
                        *j
                    };
                    if !name.is_empty() {
                        out.writes
                            .push((at, format!("{}/{name}", dest.trim_end_matches('/'))));
                    }
                }
            }
        }
        Some(Writes::First) => out
            .writes
            .extend(operands.first().map(|(i, a)| (*i, a.shape.clone()))),
        Some(Writes::Second) => out
            .writes
            .extend(operands.get(1).map(|(i, a)| (*i, a.shape.clone()))),
        None => {}
    }
    // sed -iSUFFIX keeps a backup at FILE+SUFFIX (`*` in the suffix is
    // the file's name, and a `/` puts it in another directory).
    if entry.script == Some(ScriptLang::Sed) {
        if let Some(Some(suffix)) = sed_in_place(args) {
            for (i, a) in &operands {
                let backup = if suffix.contains('*') {
                    suffix.replace('*', basename(&a.shape))
                } else {
                    format!("{}{suffix}", a.shape)
                };
                out.writes.push((*i, backup));
            }
        }
    }
    match entry.removes {
        Some(Removes::All) => out
            .removes
            .extend(operands.iter().map(|(_, a)| a.shape.clone())),
        Some(Removes::AllButLast) => {
            let n = operands.len().saturating_sub(1);
            out.removes
                .extend(operands[..n].iter().map(|(_, a)| a.shape.clone()));
        }
        None => {}
    }
    out
}

/// The operands, as the program's option table reads its arguments (the
/// value of `-b 1` is no operand); without a table, every argument that
/// does not start with `-`.
pub(crate) fn operands<'a>(entry: &Entry, args: &'a [Arg]) -> Vec<(usize, &'a Arg)> {
    let reading = match &entry.options {
        Some(table) => crate::option_table::read(table, args, entry.bundled_options),
        None => {
            let texts: Vec<Option<&str>> = args.iter().map(Arg::text).collect();
            crate::option_table::read_gnu(Some(entry), &texts)
        }
    };
    reading
        .operands
        .into_iter()
        .map(|i| (i, &args[i]))
        .collect()
}

/// Whether ln is given `-s` (`--symbolic`), as its table reads it: its
/// targets are then read from the link's directory.
pub(crate) fn makes_symlinks(entry: &Entry, args: &[Arg]) -> bool {
    crate::option_table::has_any_option(entry, args, &["-s", "--symbolic"])
}

/// The values of a program's output options, with the index of the
/// argument holding each: read by the program's option table when it has
/// one (tar's traditional `cfz FILE` included), else GNU style.
fn output_values(entry: &Entry, args: &[Arg]) -> Vec<(usize, String)> {
    match &entry.options {
        Some(table) if table.syntax != crate::catalog::OptionSyntax::Operands => {
            let mut found = crate::option_table::read(table, args, entry.bundled_options)
                .values_of(&entry.output_options, args);
            // A word only partly known (`-o"$x"x`) is no option to the
            // table reader; its shape still shows an output option.
            found.extend(
                option_values(&entry.output_options, args)
                    .into_iter()
                    .filter(|(i, _)| args[*i].text().is_none()),
            );
            found
        }
        _ => option_values(&entry.output_options, args),
    }
}

pub(crate) const TARGET_DIRECTORY: [&str; 2] = ["-t", "--target-directory"];

/// Whether chmod's mode (its first operand, or modes written as options
/// such as `-x+s`) can grant an execute bit or let group or others write,
/// or is only known at run time.
fn chmod_grants_execute(args: &[Arg], mode_at: usize) -> bool {
    let octal = |t: &str| !t.is_empty() && t.bytes().all(|b| (b'0'..=b'7').contains(&b));
    let grants = |mode: &str| {
        if octal(mode) {
            return grants_octal(mode);
        }
        mode.split(',').any(|clause| {
            clause.find(['+', '=']).is_some_and(|i| {
                let (who, rhs) = (&clause[..i], &clause[i + 1..]);
                rhs.contains(['x', 'X', 's', 't', 'u', 'g', 'o'])
                    || (rhs.contains('w') && who.contains(['g', 'o', 'a']))
                    || (octal(rhs) && grants_octal(rhs))
            })
        })
    };
    args.iter().enumerate().any(|(i, a)| {
        let is_mode = i == mode_at
            || a.shape.starts_with('-')
                && a.shape.len() > 1
                && a.shape[1..]
                    .chars()
                    .all(|c| "rwxXstugoa+-=,01234567".contains(c));
        is_mode
            && a.text()
                .is_none_or(|t| grants(t.strip_prefix('-').filter(|_| i != mode_at).unwrap_or(t)))
    })
}

/// An octal mode's execute bits, or group or other write bits.
fn grants_octal(mode: &str) -> bool {
    let digits: Vec<u8> = mode.bytes().rev().take(3).map(|b| b - b'0').collect();
    digits.iter().any(|d| d & 1 == 1) || digits.iter().take(2).any(|d| d & 2 == 2)
}

/// Whether sed's script comes from -e or -f (any spelling) rather than
/// its first operand.
fn sed_script_given(args: &[Arg]) -> bool {
    args.iter()
        .filter_map(Arg::text)
        .take_while(|t| *t != "--")
        .any(|t| {
            if let Some(body) = t.strip_prefix("--") {
                let name = body.split('=').next().unwrap_or(body);
                !name.is_empty() && ("expression".starts_with(name) || "file".starts_with(name))
            } else if let Some(body) = t.strip_prefix('-') {
                // The first of e or f ends the cluster; -l and -i take values too.
                body.chars()
                    .take_while(|c| !matches!(c, 'l' | 'i'))
                    .any(|c| c == 'e' || c == 'f')
            } else {
                false
            }
        })
}

/// sed's in-place option in any spelling (`-i`, `-ni`, `-i.bak`, `--in`,
/// `--in-place=.bak`): `Some(suffix)` when given.
fn sed_in_place(args: &[Arg]) -> Option<Option<String>> {
    for a in args {
        let t = a.shape.as_str();
        if t == "--" {
            break;
        }
        if let Some(body) = t.strip_prefix("--") {
            let (name, value) = body
                .split_once('=')
                .map_or((body, None), |(n, v)| (n, Some(v)));
            if !name.is_empty() && "in-place".starts_with(name) {
                return Some(value.filter(|v| !v.is_empty()).map(String::from));
            }
        } else if let Some(body) = t.strip_prefix('-') {
            // -e, -f, -l and -s... take values: an `i` after them is theirs.
            for (j, c) in body.char_indices() {
                match c {
                    'i' => {
                        let rest = &body[j + 1..];
                        return Some((!rest.is_empty()).then(|| rest.to_string()));
                    }
                    'e' | 'f' | 'l' => break,
                    _ => {}
                }
            }
        }
    }
    None
}

/// The last component of a path shape (`a/b/` is `b`).
fn basename(shape: &str) -> &str {
    let trimmed = shape.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// The values of options that name a file or directory (`-o FILE`, `-oFILE`, `-uo FILE`,
/// `--output=FILE`, `--out FILE`), with the index of the argument holding
/// each. A cluster or prefix that may not be the option still counts: an
/// extra path looked at costs nothing but a closer look.
pub(crate) fn option_values<S: AsRef<str>>(options: &[S], args: &[Arg]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    if options.is_empty() {
        return out;
    }
    for (i, a) in args.iter().enumerate() {
        let t = a.shape.as_str();
        let next = || args.get(i + 1).map(|n| (i + 1, n.shape.clone()));
        if t == "--" {
            break;
        }
        if let Some(body) = t.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let hit = !name.is_empty()
                && options
                    .iter()
                    .filter_map(|o| o.as_ref().strip_prefix("--"))
                    .any(|o| o.starts_with(name));
            if hit {
                match value {
                    Some(v) => out.push((i, v.to_string())),
                    None => out.extend(next()),
                }
            }
        } else if let Some(body) = t.strip_prefix('-') {
            for o in options.iter().filter_map(|o| o.as_ref().strip_prefix('-')) {
                if o.starts_with('-') || o.is_empty() {
                    continue;
                }
                if let Some(at) = body.find(o) {
                    let rest = &body[at + o.len()..];
                    if rest.is_empty() {
                        out.extend(next());
                    } else {
                        out.push((i, rest.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// Where a redirect may write and stay read-only.
const HARMLESS_SINKS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

impl Analysis {
    /// Whether the command only reads and prints (see the module docs),
    /// judged with the built-in catalog.
    pub fn read_only(&self) -> bool {
        self.read_only_with(Catalog::builtin())
    }

    pub fn read_only_with(&self, catalog: &Catalog) -> bool {
        self.verdict == Verdict::Safe
            && !self.invocations.is_empty()
            && self.invocations.iter().all(|inv| {
                inv.via.is_empty()
                    && inv.program.as_deref().is_some_and(|p| {
                        !p.contains('/') && catalog.read_only_programs.iter().any(|r| r == p)
                    })
            })
            && self.redirects.iter().all(|r| {
                !r.writes()
                    || r.target
                        .as_deref()
                        .is_some_and(|t| HARMLESS_SINKS.contains(&t))
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::analyze;

    #[test]
    fn only_printing_commands_are_read_only() {
        for c in [
            "ls -la",
            "cat README.md | grep -n foo | head -5",
            "rg -n TODO src/ 2>/dev/null",
            "wc -l < Cargo.toml",
            "echo hi 2>&1",
            "git_log=1; echo $git_log",
        ] {
            assert!(analyze(c).read_only(), "{c}");
        }
        for c in [
            "touch x",
            "echo hi > notes.txt",
            "cat a >> b",
            "sort -o out in",
            "rm -f x",
            "ls; rm x",
            "git status",
            "sudo ls",
            "env ls",
            "bash -c 'ls'",
            "xargs ls",
            "./ls",
            "cat $(touch x)",
            "curl https://example.com",
            "$cmd",
            "echo x 1<> f",
            "",
        ] {
            assert!(!analyze(c).read_only(), "{c}");
        }
    }

    #[test]
    fn every_read_only_program_is_a_local_tool_in_the_catalog() {
        let c = crate::Catalog::builtin();
        for p in &c.read_only_programs {
            let e = c
                .get(p)
                .unwrap_or_else(|| panic!("`{p}` is not in the catalog"));
            assert_eq!(e.class, crate::catalog::Class::Local, "{p}");
        }
    }
}
