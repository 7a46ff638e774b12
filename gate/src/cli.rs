//! Command-line surface: argument parsing and dispatch.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use bashgate_analyzer::{analyze_bytes, rules, Verdict};
use clap::{Parser, Subcommand};

use crate::{jsonl, render};

/// Exit statuses of `bashgate check`, one per verdict.
pub const EXIT_SAFE: u8 = 0;
pub const EXIT_ERROR: u8 = 1;
pub const EXIT_UNKNOWN: u8 = 3;
pub const EXIT_NETWORK: u8 = 4;

#[derive(Parser)]
#[command(
    name = "bashgate",
    version,
    about = "Decides whether an AI agent's shell command may run."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze one command and explain the verdict.
    ///
    /// Exit status: 0 safe, 3 unknown, 4 network, 1 on error, 2 on usage error.
    Check {
        /// Print the analysis as JSON.
        #[arg(long)]
        json: bool,
        /// Read the command from standard input instead of the arguments.
        #[arg(long, conflicts_with = "command")]
        stdin: bool,
        /// The command; several arguments are joined with spaces.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<OsString>,
    },
    /// Read JSON lines with a "command" field; write each back with
    /// "verdict" and "findings" added.
    Analyze {
        /// Required: JSON lines in, JSON lines out.
        #[arg(long)]
        jsonl: bool,
    },
    /// List every rule the analyzer can report.
    Rules,
    /// Explain one rule: what it catches, why, and examples.
    Explain {
        /// A rule id (BG101) or name (network-program).
        rule: String,
    },
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check {
            json,
            stdin,
            command,
        } => check(json, stdin, command),
        Command::Analyze { jsonl } => {
            if !jsonl {
                eprintln!("bashgate analyze: only --jsonl input is supported; run `bashgate analyze --jsonl < commands.jsonl`");
                return ExitCode::from(2);
            }
            match jsonl::run(io::stdin().lock(), io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("bashgate analyze: {e}");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
        Command::Rules => {
            let mut out = io::stdout().lock();
            for r in rules::RULES {
                let _ = writeln!(
                    out,
                    "{}  {:<22} {:<8} {}",
                    r.id,
                    r.name,
                    r.verdict.as_str(),
                    r.summary
                );
            }
            ExitCode::SUCCESS
        }
        Command::Explain { rule } => match rules::lookup(&rule) {
            Some(info) => {
                print!("{}", render::explain(info));
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("bashgate explain: no rule `{rule}`; `bashgate rules` lists them");
                ExitCode::from(EXIT_ERROR)
            }
        },
    }
}

fn check(json: bool, stdin: bool, command: Vec<OsString>) -> ExitCode {
    let bytes = if stdin {
        let mut buf = Vec::new();
        if let Err(e) = io::stdin().lock().read_to_end(&mut buf) {
            eprintln!("bashgate check: cannot read standard input: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
        buf
    } else {
        if command.is_empty() {
            eprintln!("bashgate check: no command given; run `bashgate check -- 'COMMAND'` or pipe it with --stdin");
            return ExitCode::from(2);
        }
        join_args(command)
    };
    let analysis = analyze_bytes(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    let mut out = io::stdout().lock();
    let written = if json {
        let value = serde_json::json!({
            "command": text,
            "verdict": analysis.verdict,
            "findings": analysis.findings,
            "invocations": analysis.invocations,
        });
        writeln!(out, "{value}")
    } else {
        write!(
            out,
            "{}",
            render::report(&text, &analysis, render::color_wanted())
        )
    };
    if let Err(e) = written {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("bashgate check: cannot write output: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    }
    ExitCode::from(match analysis.verdict {
        Verdict::Safe => EXIT_SAFE,
        Verdict::Unknown => EXIT_UNKNOWN,
        Verdict::Network => EXIT_NETWORK,
    })
}

/// Joins arguments with spaces, keeping their bytes (invalid UTF-8 is
/// reported by the analyzer, not lost here).
fn join_args(args: Vec<OsString>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, a) in args.into_iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(a.as_encoded_bytes());
    }
    out
}
