//! Reading a resolved invocation's arguments with the catalog's option
//! tables: which word is the subcommand of `git -C repo push`. The tables
//! live in the catalog entry (`options_with_value`) and nowhere else, so the
//! analyzer's classification and the gate's policies agree on them.

use crate::analysis::Invocation;
use crate::catalog::Catalog;

/// Where a program's subcommand is in its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sub<'a> {
    /// The subcommand and its index in the arguments.
    Found(usize, &'a str),
    /// An argument before the subcommand is known only at run time.
    Dynamic,
    /// Only options, or nothing.
    None,
}

/// The first argument of `program` that is not an option, skipping the
/// values of the options its catalog entry says take one (when written as
/// a separate word). A program the catalog does not know is read as if
/// none of its options took a value.
pub fn subcommand<'a>(catalog: &Catalog, program: &str, args: &'a [Option<String>]) -> Sub<'a> {
    let base = program.rsplit('/').next().unwrap_or(program);
    let with_value: &[String] = catalog
        .lookup(base)
        .map(|(_, e)| e.options_with_value.as_slice())
        .unwrap_or(&[]);
    subcommand_of(with_value, args)
}

/// The subcommand among `args` (`None` where a word is only known at run
/// time), skipping the values of `with_value` options: the one reading of
/// where a subcommand is, for the resolver's classes and the gate's rules.
pub(crate) fn subcommand_of<'a>(with_value: &[String], args: &'a [Option<String>]) -> Sub<'a> {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = args[i].as_deref() else {
            return Sub::Dynamic;
        };
        if a == "--" {
            return match args.get(i + 1) {
                Some(Some(s)) => Sub::Found(i + 1, s),
                Some(None) => Sub::Dynamic,
                None => Sub::None,
            };
        }
        if a.starts_with('-') && a.len() > 1 {
            if !a.contains('=') && with_value.iter().any(|o| o == a) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return Sub::Found(i, a);
    }
    Sub::None
}

impl Invocation {
    /// This invocation's subcommand, read with the built-in catalog.
    pub fn subcommand(&self) -> Sub<'_> {
        match self.program.as_deref() {
            Some(p) => subcommand(Catalog::builtin(), p, &self.args),
            None => Sub::Dynamic,
        }
    }

    /// This invocation's options, read by the one reader of arguments
    /// (its program's reviewed table, or the GNU way with the values its
    /// catalog entry lists).
    pub fn options(&self) -> Options {
        let texts: Vec<Option<&str>> = self.args.iter().map(Option::as_deref).collect();
        let entry = self
            .program
            .as_deref()
            .and_then(|p| Catalog::builtin().lookup(p.rsplit('/').next().unwrap_or(p)))
            .map(|(_, e)| e);
        // A subcommand's own options that take a value are read with the
        // program's (`git checkout -bfix`).
        let extended;
        let entry = match (entry, self.subcommand()) {
            (Some(e), Sub::Found(_, s)) if e.subcommand_options_with_value.contains_key(s) => {
                let mut e = e.clone();
                e.options_with_value
                    .extend(e.subcommand_options_with_value[s].iter().cloned());
                extended = e;
                Some(&extended)
            }
            (e, _) => e,
        };
        let reading = match entry {
            Some(e) => crate::option_table::reading(e, &texts),
            None => crate::option_table::read_gnu(None, &texts),
        };
        Options {
            given: reading.given,
            operands: reading.operands,
            values: reading
                .values
                .into_iter()
                .filter_map(|(o, at, attached)| {
                    let shape = attached.or_else(|| self.shapes.get(at).cloned())?;
                    Some((o, at, shape))
                })
                .collect(),
            open: self
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| a.is_none())
                .map(|(i, _)| i)
                .collect(),
        }
    }
}

/// An invocation's options, as the one reader read them.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Each option given, by its full spelling (`--recursive` for
    /// `--rec`, `-r` and `-f` for `-rf`), with the index of its argument.
    pub given: Vec<(usize, String)>,
    /// The indexes of its operands (option values excluded; arguments
    /// known only at run time included).
    pub operands: Vec<usize>,
    /// The values of options that take one, in order: the option's full
    /// spelling, the index of the argument holding the value, and the
    /// value's shape (`*` for parts known only at run time).
    pub values: Vec<(String, usize, String)>,
    /// Arguments known only at run time: each may be any option.
    pub open: Vec<usize>,
}

impl Options {
    /// Whether `option` (a full spelling: `-r`, `--force`) is given in an
    /// argument from index `from` on, or may be (a word known only at run
    /// time stands there).
    pub fn has_from(&self, from: usize, option: &str) -> bool {
        self.open.iter().any(|i| *i >= from)
            || self.given.iter().any(|(i, o)| *i >= from && o == option)
    }

    /// The last value given to any of `options` (full spellings), as a
    /// shape: the one a program that takes the option once keeps.
    pub fn last_value(&self, options: &[String]) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(o, _, _)| options.contains(o))
            .map(|(_, _, v)| v.as_str())
    }

    /// Whether `option` is given anywhere, or may be.
    pub fn has(&self, option: &str) -> bool {
        self.has_from(0, option)
    }

    /// Whether `option` is surely given from index `from` on (words known
    /// only at run time do not count).
    pub fn given_from(&self, from: usize, option: &str) -> bool {
        self.given.iter().any(|(i, o)| *i >= from && o == option)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<Option<String>> {
        v.iter()
            .map(|s| if *s == "$" { None } else { Some(s.to_string()) })
            .collect()
    }

    fn sub(program: &str, v: &[&str]) -> Option<String> {
        let a = args(v);
        match subcommand(Catalog::builtin(), program, &a) {
            Sub::Found(_, s) => Some(s.to_string()),
            Sub::Dynamic => Some("$".into()),
            Sub::None => None,
        }
    }

    #[test]
    fn skips_the_values_the_catalog_lists() {
        assert_eq!(sub("git", &["-C", "repo", "push"]).as_deref(), Some("push"));
        assert_eq!(
            sub("/usr/bin/git", &["-c", "a=b", "pull"]).as_deref(),
            Some("pull")
        );
        assert_eq!(
            sub("git", &["--git-dir=x", "pull"]).as_deref(),
            Some("pull")
        );
        assert_eq!(sub("git", &["--", "push"]).as_deref(), Some("push"));
        assert_eq!(sub("git", &["-C", "$", "push"]).as_deref(), Some("push"));
        assert_eq!(sub("git", &["$", "push"]).as_deref(), Some("$"));
        assert_eq!(sub("git", &["--version"]), None);
        assert_eq!(
            sub("docker", &["-H", "tcp://x", "run", "x"]).as_deref(),
            Some("run")
        );
        // Unknown programs: no option takes a value.
        assert_eq!(sub("nosuchtool", &["-x", "y"]).as_deref(), Some("y"));
    }

    fn options(cmd: &str) -> Vec<String> {
        let a = crate::analyze(cmd);
        let mut o: Vec<String> = a.invocations[0]
            .options()
            .given
            .into_iter()
            .map(|(_, o)| o)
            .collect();
        o.sort();
        o
    }

    #[test]
    fn options_are_read_by_the_one_reader() {
        // With a table: clusters, abbreviations, `--` ends options.
        assert_eq!(options("rm -rf x"), ["-f", "-r"]);
        assert_eq!(options("rm --rec --fo x"), ["--force", "--recursive"]);
        assert_eq!(options("rm -- -rf"), Vec::<String>::new());
        assert_eq!(options("tar xzf a.tgz"), ["-f", "-x", "-z"]);
        assert_eq!(options("gtar xf a.tar"), ["-f", "-x"]);
        // Without one: GNU style, values the entry lists skipped.
        assert_eq!(options("git -C -f push --force=1"), ["--force", "-C"]);
        assert_eq!(options("git reset --hard"), ["--hard"]);
        assert_eq!(options("git push --forced"), ["--forced"]);
        assert_eq!(options("bsdtar xf a.tar"), ["-f", "-x"]);
        assert_eq!(options("go test -exec ./x ./..."), ["-exec"]);
        let a = crate::analyze("rm \"$x\" f");
        assert!(
            a.invocations[0].options().has("-r"),
            "a run-time word may be any option"
        );
        assert!(!a.invocations[0].options().given_from(0, "-r"));
    }
}
