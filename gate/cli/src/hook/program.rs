//! The command line of `bashgate-hook` (src/bin/bashgate-hook.rs), read
//! without the full parser so the program starts faster. Its tests run in
//! `bashgate`'s, with the rest of the hook's.

use std::path::PathBuf;

use super::CLIENTS;

/// How it is used, naming every client it has a hook for.
pub fn usage() -> String {
    let clients: Vec<&str> = CLIENTS.iter().map(|c| c.key).collect();
    format!(
        "usage: bashgate-hook [--config PATH] CLIENT [--remote URL]
CLIENT: {} or json
Runs as the client's hook, as `bashgate hook CLIENT` does: the event on
stdin, the answer on stdout. `bashgate hook CLIENT --help` describes each.",
        clients.join(", ")
    )
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub client: String,
    pub config: Option<PathBuf>,
    pub remote: Option<String>,
}

/// The arguments after the program name, or the message to print and exit
/// with (`Ok` for --help and --version, `Err` for a mistake).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, Result<String, String>> {
    let mut client = None;
    let mut config = None;
    let mut remote = None;
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        // `--name value` and `--name=value`, as clap reads them.
        let (name, glued) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |what: &str| {
            glued
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| Err(format!("{what} needs a value\n{}", usage())))
        };
        match name.as_str() {
            "--help" | "-h" => return Err(Ok(usage())),
            "--version" | "-V" => {
                return Err(Ok(format!("bashgate-hook {}", env!("CARGO_PKG_VERSION"))))
            }
            "--config" => config = Some(PathBuf::from(value("--config")?)),
            "--remote" => remote = Some(value("--remote")?),
            _ if a.starts_with('-') => return Err(Err(format!("unknown option {a}\n{}", usage()))),
            _ if client.is_none() => client = Some(a),
            _ => return Err(Err(format!("unexpected argument {a}\n{}", usage()))),
        }
    }
    match client {
        Some(client) => Ok(Args {
            client,
            config,
            remote,
        }),
        None => Err(Err(format!("which client's hook?\n{}", usage()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Result<Args, Result<String, String>> {
        parse(words.iter().map(|w| w.replace("CLIENT", CLIENTS[0].key)))
    }

    #[test]
    fn reads_the_client_and_both_options_in_any_order_and_either_spelling() {
        let want = Args {
            client: CLIENTS[0].key.into(),
            config: Some(PathBuf::from("/c.toml")),
            remote: Some("unix:/run/b.sock".into()),
        };
        for words in [
            &[
                "--config",
                "/c.toml",
                "CLIENT",
                "--remote",
                "unix:/run/b.sock",
            ][..],
            &["CLIENT", "--remote=unix:/run/b.sock", "--config=/c.toml"],
            &[
                "--remote",
                "unix:/run/b.sock",
                "--config",
                "/c.toml",
                "CLIENT",
            ],
        ] {
            assert_eq!(args(words), Ok(want.clone()), "{words:?}");
        }
        assert_eq!(
            args(&["json"]),
            Ok(Args {
                client: "json".into(),
                config: None,
                remote: None
            })
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for words in [
            &[][..],
            &["CLIENT", "json"],
            &["CLIENT", "--remote"],
            &["CLIENT", "--bogus"],
            &["-x", "CLIENT"],
        ] {
            assert!(matches!(args(words), Err(Err(_))), "{words:?}");
        }
        assert!(matches!(args(&["--help"]), Err(Ok(_))));
        assert!(matches!(args(&["CLIENT", "--version"]), Err(Ok(_))));
    }
}
