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
}

/// Whether an argument is one of `flags`, exactly or as `--flag=value`.
pub fn is_flag(arg: &str, flags: &[String]) -> bool {
    flags.iter().any(|f| {
        arg == f
            || arg
                .strip_prefix(f.as_str())
                .is_some_and(|rest| rest.starts_with('='))
    })
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

    #[test]
    fn flags_match_exactly_or_with_a_value() {
        let f = vec!["--global".to_string()];
        assert!(is_flag("--global", &f));
        assert!(is_flag("--global=1", &f));
        assert!(!is_flag("--globalx", &f));
    }
}
