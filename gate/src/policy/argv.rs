//! Finding a program's subcommand in its resolved arguments.

/// Where the subcommand of `git -C dir push` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sub<'a> {
    /// The subcommand and its index in the arguments.
    Found(usize, &'a str),
    /// An argument before the subcommand is known only at run time.
    Dynamic,
    /// Only options, or nothing.
    None,
}

/// The first argument that is not an option, skipping the values of the
/// options in `value_options` (when written as a separate word).
pub fn subcommand<'a>(args: &'a [Option<String>], value_options: &[String]) -> Sub<'a> {
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
            if !a.contains('=') && value_options.iter().any(|o| o == a) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return Sub::Found(i, a);
    }
    Sub::None
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

    #[test]
    fn skips_options_and_their_values() {
        let vo = vec!["-C".to_string(), "-c".to_string()];
        assert_eq!(
            subcommand(&args(&["-C", "dir", "push", "origin"]), &vo),
            Sub::Found(2, "push")
        );
        assert_eq!(
            subcommand(&args(&["--git-dir=x", "pull"]), &vo),
            Sub::Found(1, "pull")
        );
        assert_eq!(
            subcommand(&args(&["-c", "a=b", "$", "x"]), &vo),
            Sub::Dynamic
        );
        assert_eq!(subcommand(&args(&["--version"]), &vo), Sub::None);
    }

    #[test]
    fn flags() {
        let f = vec!["--global".to_string(), "-g".to_string()];
        assert!(is_flag("-g", &f));
        assert!(is_flag("--global=true", &f));
        assert!(!is_flag("--globals", &f));
    }
}
