//! `bashgate-hook CLIENT`: the agent hooks, and nothing else.
//!
//! It answers exactly as `bashgate hook CLIENT` does: the hook surface
//! (`gate/cli/src/hook/`) and the daemon's client (`gate/cli/src/remote.rs`) are
//! the same source files, compiled into this program as well. What it
//! leaves out is every other command: the command-line parser, the daemon,
//! its PostgreSQL store and HTTP server, the audit reader, the fence's
//! runner. A client starts the hook once per tool call, and a process
//! starts faster the less it has to map and relocate: this one answers
//! about 0.3 ms sooner (docs/performance.md). `bashgate init` writes it
//! into the clients' settings when it sits beside `bashgate`.
//!
//! Usage: `bashgate-hook [--config PATH] CLIENT [--remote URL]`, where
//! CLIENT is claude, codex, gemini, copilot, cursor or json.

#[path = "../hook/mod.rs"]
mod hook;
// The admin commands' half of the daemon client is used by `bashgate` only.
#[allow(dead_code)]
#[path = "../remote.rs"]
mod remote;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: bashgate-hook [--config PATH] CLIENT [--remote URL]
CLIENT: claude, codex, gemini, copilot, cursor or json
Runs as the client's hook, as `bashgate hook CLIENT` does: the event on
stdin, the answer on stdout. `bashgate hook CLIENT --help` describes each.";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Args {
    client: String,
    config: Option<PathBuf>,
    remote: Option<String>,
}

/// The arguments after the program name, or the message to print and exit
/// with (`Ok` for --help and --version, `Err` for a mistake).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, Result<String, String>> {
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
                .ok_or_else(|| Err(format!("{what} needs a value\n{USAGE}")))
        };
        match name.as_str() {
            "--help" | "-h" => return Err(Ok(USAGE.to_string())),
            "--version" | "-V" => {
                return Err(Ok(format!("bashgate-hook {}", env!("CARGO_PKG_VERSION"))))
            }
            "--config" => config = Some(PathBuf::from(value("--config")?)),
            "--remote" => remote = Some(value("--remote")?),
            _ if a.starts_with('-') => return Err(Err(format!("unknown option {a}\n{USAGE}"))),
            _ if client.is_none() => client = Some(a),
            _ => return Err(Err(format!("unexpected argument {a}\n{USAGE}"))),
        }
    }
    match client {
        Some(client) => Ok(Args {
            client,
            config,
            remote,
        }),
        None => Err(Err(format!("which client's hook?\n{USAGE}"))),
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(Ok(text)) => {
            println!("{text}");
            return ExitCode::SUCCESS;
        }
        // A mistake in the hook's own command line is the installer's to
        // fix: exit 2 with the message, as `bashgate hook` does through
        // its parser (Claude Code and Codex read exit 2 as a block).
        Err(Err(why)) => {
            eprintln!("bashgate-hook: {why}");
            return ExitCode::from(2);
        }
    };
    let (config, remote) = (args.config.as_deref(), args.remote.as_deref());
    match args.client.as_str() {
        "claude" => hook::run::<hook::claude::Claude>(config, remote),
        "codex" => hook::run::<hook::codex::Codex>(config, remote),
        "gemini" => hook::run::<hook::gemini::Gemini>(config, remote),
        "copilot" => hook::run::<hook::copilot::Copilot>(config, remote),
        "cursor" => hook::run::<hook::cursor::Cursor>(config, remote),
        "json" => hook::run::<hook::json::JsonHook>(config, remote),
        other => {
            eprintln!("bashgate-hook: no hook for a client named {other:?}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Result<Args, Result<String, String>> {
        parse(words.iter().map(|w| w.to_string()))
    }

    #[test]
    fn reads_the_client_and_both_options_in_any_order_and_either_spelling() {
        let want = Args {
            client: "claude".into(),
            config: Some(PathBuf::from("/c.toml")),
            remote: Some("unix:/run/b.sock".into()),
        };
        for words in [
            &[
                "--config",
                "/c.toml",
                "claude",
                "--remote",
                "unix:/run/b.sock",
            ][..],
            &["claude", "--remote=unix:/run/b.sock", "--config=/c.toml"],
            &[
                "--remote",
                "unix:/run/b.sock",
                "--config",
                "/c.toml",
                "claude",
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
            &["claude", "codex"],
            &["claude", "--remote"],
            &["claude", "--bogus"],
            &["-x", "claude"],
        ] {
            assert!(matches!(args(words), Err(Err(_))), "{words:?}");
        }
        assert!(matches!(args(&["--help"]), Err(Ok(_))));
        assert!(matches!(args(&["claude", "--version"]), Err(Ok(_))));
    }
}
