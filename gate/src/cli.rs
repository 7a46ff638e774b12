//! Command-line surface: argument parsing and dispatch.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::PathBuf;
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
    /// Configuration file (default: $BASHGATE_CONFIG, ./.bashgate.toml,
    /// then the user config directory's bashgate/config.toml).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
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
    /// Run as an agent's hook (reads the event JSON on stdin).
    Hook {
        #[command(subcommand)]
        agent: HookAgent,
    },
    /// Install bashgate's hooks into an agent's settings.
    Init {
        #[command(subcommand)]
        agent: InitAgent,
    },
    /// List recorded decisions, newest first.
    Audit {
        #[arg(long)]
        session: Option<String>,
        /// Bash, Read, WebFetch, mcp__server__tool...
        #[arg(long)]
        tool: Option<String>,
        /// allow, deny, ask, or taint (PostToolUse records).
        #[arg(long)]
        decision: Option<String>,
        /// always, denylist, allowlist, git-guard, paths, plugin, cascade, service...
        #[arg(long)]
        layer: Option<String>,
        /// A rule id such as BG410.
        #[arg(long)]
        rule: Option<String>,
        /// Only records newer than this: 90s, 15m, 2h, 7d, or unix seconds.
        #[arg(long)]
        since: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Show or clear a session's taint.
    Taint {
        #[command(subcommand)]
        action: TaintAction,
    },
    /// Check the configuration and say where it was found.
    Config,
}

#[derive(Subcommand)]
enum HookAgent {
    /// Claude Code PreToolUse / PostToolUse command hook.
    Claude,
    /// A framework-neutral hook: one JSON request on stdin, one JSON answer
    /// on stdout.
    ///
    /// Input (stdin), one JSON object:
    ///
    ///   {"tool_name": "Bash", "tool_input": {"command": "ls -la"},
    ///    "session_id": "run-42", "cwd": "/work/project"}
    ///
    /// tool_name defaults to "Bash", session_id to "default" (taint is kept
    /// per session), cwd to the hook's working directory. tool_input is
    /// required; for a shell command it holds "command".
    ///
    /// Output (stdout), one JSON object on one line:
    ///
    ///   {"decision": "allow" | "deny" | "ask", "reason": "..."}
    ///
    /// "allow": run it. "deny": do not run it; show the reason to the
    /// agent. "ask": a person must approve it first. The exit status is
    /// always 0: malformed input, a bad configuration or an internal error
    /// are answered with the configuration's on_error decision and a reason
    /// saying what happened.
    #[command(verbatim_doc_comment)]
    Json,
}

#[derive(Subcommand)]
enum InitAgent {
    /// Add the hooks to .claude/settings.json, keeping what is there.
    Claude {
        /// The project directory (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Write to ~/.claude/settings.json instead of the project's.
        #[arg(long, conflicts_with = "dir")]
        user: bool,
        /// The hook command (default: this executable's path + " hook claude").
        #[arg(long)]
        command: Option<String>,
    },
}

#[derive(Subcommand)]
enum TaintAction {
    /// Print a session's taint flags and what set them.
    Show {
        #[arg(long)]
        session: String,
        #[arg(long)]
        json: bool,
    },
    /// Forget a session's taint and Cop cache.
    Clear {
        #[arg(long)]
        session: String,
    },
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let config_flag = cli.config;
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
            for r in crate::rules::GATE_RULES {
                let _ = writeln!(
                    out,
                    "{}  {:<22} {:<8} {}",
                    r.id, r.name, "policy", r.summary
                );
            }
            ExitCode::SUCCESS
        }
        Command::Explain { rule } => match rules::lookup(&rule) {
            Some(info) => {
                print!("{}", render::explain(info));
                ExitCode::SUCCESS
            }
            None => match crate::rules::lookup(&rule) {
                Some(r) => {
                    println!("{} {} (policy)\n\n{}", r.id, r.name, r.summary);
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("bashgate explain: no rule `{rule}`; `bashgate rules` lists them");
                    ExitCode::from(EXIT_ERROR)
                }
            },
        },
        Command::Hook {
            agent: HookAgent::Claude,
        } => {
            crate::hook::claude::run(config_flag.as_deref());
            ExitCode::SUCCESS
        }
        Command::Hook {
            agent: HookAgent::Json,
        } => {
            crate::hook::json::run(config_flag.as_deref());
            ExitCode::SUCCESS
        }
        Command::Init {
            agent: InitAgent::Claude { dir, user, command },
        } => crate::commands::init_claude(dir, user, command),
        Command::Audit {
            session,
            tool,
            decision,
            layer,
            rule,
            since,
            limit,
            json,
        } => crate::commands::audit(
            config_flag.as_deref(),
            crate::audit::Filter {
                session,
                tool,
                decision,
                layer,
                rule,
                since_ms: None,
                limit,
            },
            since,
            json,
        ),
        Command::Taint { action } => match action {
            TaintAction::Show { session, json } => {
                crate::commands::taint_show(config_flag.as_deref(), &session, json)
            }
            TaintAction::Clear { session } => {
                crate::commands::taint_clear(config_flag.as_deref(), &session)
            }
        },
        Command::Config => crate::commands::config_check(config_flag.as_deref()),
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
