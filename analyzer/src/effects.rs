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

/// The files one invocation writes and removes, as shapes (`$HOME/.bashrc`
/// is `*/.bashrc`), from the catalog's write model: `writes` and
/// `removes` operands, `of=`, `-t`/`--target-directory`, `sed -i`. The
/// indexes point into `args` (the arguments after the program name).
#[derive(Debug, Default)]
pub(crate) struct FileEffects {
    pub writes: Vec<(usize, String)>,
    pub removes: Vec<String>,
}

/// `find -delete` removes what it finds under its starting points (the
/// operands before the first option or expression).
pub(crate) fn find_removes(args: &[Arg]) -> Vec<String> {
    if !args.iter().any(|a| a.text() == Some("-delete")) {
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
    args.iter()
        .skip(i)
        .take_while(|a| !a.shape.starts_with(['-', '(', '!']))
        .map(|a| a.shape.clone())
        .collect()
}

pub(crate) fn file_effects(entry: &Entry, args: &[Arg]) -> FileEffects {
    let mut out = FileEffects::default();
    // sed -i (in any cluster, or --in-place) writes its file operands.
    let in_place = entry.script == Some(ScriptLang::Sed)
        && args.iter().filter_map(Arg::text).any(|t| {
            t.starts_with("--in-place")
                || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
        });
    let writes = if in_place {
        Some(Writes::All)
    } else {
        entry.writes
    };
    let operands: Vec<(usize, &Arg)> = args
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.shape.starts_with('-'))
        .collect();
    if writes.is_some() {
        for (i, a) in args.iter().enumerate() {
            let t = a.shape.as_str();
            if let Some(v) = t
                .strip_prefix("of=")
                .or_else(|| t.strip_prefix("--target-directory="))
            {
                out.writes.push((i, v.to_string()));
            } else if t == "-t" || t == "--target-directory" {
                if let Some(v) = args.get(i + 1) {
                    out.writes.push((i + 1, v.shape.clone()));
                }
            }
        }
    }
    for (i, value) in output_values(&entry.output_options, args) {
        out.writes.push((i, value));
    }
    // `key=value` operands (dd's if=, bs=) are not paths.
    let plain = |a: &&(usize, &Arg)| !a.1.shape.contains('=');
    match writes {
        Some(Writes::All) => out.writes.extend(
            operands
                .iter()
                .filter(plain)
                .map(|(i, a)| (*i, a.shape.clone())),
        ),
        Some(Writes::Last) => out
            .writes
            .extend(operands.last().map(|(i, a)| (*i, a.shape.clone()))),
        Some(Writes::Second) => out
            .writes
            .extend(operands.get(1).map(|(i, a)| (*i, a.shape.clone()))),
        None => {}
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

/// The values of output options (`-o FILE`, `-oFILE`, `-uo FILE`,
/// `--output=FILE`, `--out FILE`), with the index of the argument holding
/// each. A cluster or prefix that may not be the option still counts: an
/// extra path looked at costs nothing but a closer look.
fn output_values(options: &[String], args: &[Arg]) -> Vec<(usize, String)> {
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
                    .filter_map(|o| o.strip_prefix("--"))
                    .any(|o| o.starts_with(name));
            if hit {
                match value {
                    Some(v) => out.push((i, v.to_string())),
                    None => out.extend(next()),
                }
            }
        } else if let Some(body) = t.strip_prefix('-') {
            for o in options.iter().filter_map(|o| o.strip_prefix('-')) {
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
