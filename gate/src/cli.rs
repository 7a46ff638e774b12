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
    /// List the commands the person approved or refused in a session (the
    /// same command is not asked about again), or forget them. The hook's
    /// sessions by default; a daemon's with --daemon or --admin-socket.
    Approvals {
        #[arg(long)]
        session: String,
        /// Forget every remembered answer: the next ask asks again.
        #[arg(long, conflicts_with = "revoke")]
        forget: bool,
        /// Forget one remembered answer, by the id the list shows.
        #[arg(long, value_name = "ID")]
        revoke: Option<String>,
        #[arg(long)]
        json: bool,
        /// The daemon's sessions, through its admin socket.
        #[arg(long)]
        daemon: bool,
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
    /// Check the configuration and say where it was found.
    Config,
    /// Run the host daemon for agents in containers: a container API
    /// (loopback TCP or a unix socket to mount into containers; one token
    /// per session) and an owner-only admin socket.
    Serve {
        /// The container API: HOST:PORT (loopback) or unix:/path/to.sock
        /// (default: serve.listen, else unix:<state dir>/container/bashgate.sock).
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// The admin socket (default: serve.admin_socket, else <state dir>/admin.sock).
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
    /// The daemon's sessions: create one (and its token), list, set taint.
    Session {
        /// The daemon's admin socket (default: $BASHGATE_ADMIN_SOCKET, then serve.admin_socket).
        #[arg(long, global = true, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
        #[command(subcommand)]
        action: SessionAction,
    },
    /// List the daemon's approvals waiting for a person.
    Pending {
        /// Answered and expired ones too.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
    /// Approve a pending approval: the waiting command runs.
    Approve {
        id: String,
        /// A note passed to the agent.
        #[arg(long)]
        note: Option<String>,
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
    /// Deny a pending approval: the waiting command does not run.
    Deny {
        id: String,
        /// A note passed to the agent (what to do instead).
        #[arg(long)]
        note: Option<String>,
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
    /// Run a bash command fenced: no network, protected files read-only
    /// (what the hook rewrites a tainted session's commands to).
    ///
    /// Exit status: the command's; 126 when the fence cannot be set up
    /// (then nothing ran).
    Run {
        /// default, strict or network-only (default: [confine] profile).
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Write the command's final working directory here.
        #[arg(long, value_name = "FILE")]
        cwd_file: Option<PathBuf>,
        /// The command, as one argument (after `--`).
        #[arg(required = true, last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Which layers of the fence this machine offers.
    Doctor {
        #[arg(long, default_value = "default", value_name = "NAME")]
        profile: String,
    },
    /// The daemon's request counters (JSON).
    Stats {
        #[arg(long, value_name = "PATH")]
        admin_socket: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum SessionAction {
    /// Create a session; prints its token once (pass it to the container as
    /// BASHGATE_TOKEN).
    Create {
        /// Letters, digits, `-`, `_`, `.` (default: a random name).
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List sessions and their taint.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Delete a session: its token stops working, its pending approvals
    /// are denied.
    Delete { name: String },
    /// Set or clear a session's taint.
    Taint {
        name: String,
        #[arg(long)]
        corruption: bool,
        #[arg(long)]
        secret: bool,
        #[arg(long, conflicts_with_all = ["corruption", "secret"])]
        clear: bool,
    },
}

#[derive(Subcommand)]
enum HookAgent {
    /// Claude Code PreToolUse / PostToolUse command hook.
    Claude {
        /// Ask the host daemon at URL (http://127.0.0.1:PORT or
        /// unix:/path/to.sock) for what is not provably safe; the token is
        /// read from $BASHGATE_TOKEN (remote.token_env).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
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
    ///
    /// With --remote URL (or remote.url in the configuration), commands
    /// the analyzer proves safe are still answered locally; everything
    /// else is decided by the host daemon (`bashgate serve`), which may
    /// wait for a person's approval. The session token is read from
    /// $BASHGATE_TOKEN (remote.token_env). If the daemon cannot be reached
    /// or does not answer in time, on_error applies and the reason says so.
    #[command(verbatim_doc_comment)]
    Json {
        /// The host daemon: http://127.0.0.1:PORT or unix:/path/to.sock.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
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
        /// Inside a container: the hook asks the host daemon at URL
        /// (http://127.0.0.1:PORT or unix:/path/to.sock) and waits up to 360 s
        /// for approvals; the token comes from $BASHGATE_TOKEN.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        /// Also set the protection profile in the project's .bashgate.toml:
        /// minimal, standard (the default) or strict.
        #[arg(long, value_name = "NAME", conflicts_with = "user")]
        profile: Option<String>,
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
            for r in bashgate::rules::GATE_RULES {
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
            None => match bashgate::rules::lookup(&rule) {
                Some(r) => {
                    print!("{}", bashgate::rules::explain(r));
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("bashgate explain: no rule `{rule}`; `bashgate rules` lists them");
                    ExitCode::from(EXIT_ERROR)
                }
            },
        },
        Command::Hook {
            agent: HookAgent::Claude { remote },
        } => {
            crate::hook::run::<crate::hook::claude::Claude>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Hook {
            agent: HookAgent::Json { remote },
        } => {
            crate::hook::run::<crate::hook::json::JsonHook>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Serve {
            listen,
            admin_socket,
        } => {
            let (source, config) = match crate::commands::load_config(config_flag.as_deref()) {
                Ok(c) => c,
                Err(code) => return code,
            };
            crate::serve::run(
                config,
                source.path().map(std::path::Path::to_path_buf),
                crate::serve::Flags {
                    listen,
                    admin_socket,
                },
            )
        }
        Command::Session {
            admin_socket,
            action,
        } => {
            let config = match crate::commands::load_config(config_flag.as_deref()) {
                Ok((_, c)) => c,
                Err(code) => return code,
            };
            let sock = admin_socket.as_deref();
            match action {
                SessionAction::Create { name, json } => {
                    crate::admin_cli::session_create(&config, sock, name, json)
                }
                SessionAction::List { json } => crate::admin_cli::session_list(&config, sock, json),
                SessionAction::Delete { name } => {
                    crate::admin_cli::session_delete(&config, sock, &name)
                }
                SessionAction::Taint {
                    name,
                    corruption,
                    secret,
                    clear,
                } => {
                    crate::admin_cli::session_taint(&config, sock, &name, corruption, secret, clear)
                }
            }
        }
        Command::Pending {
            all,
            json,
            admin_socket,
        } => match crate::commands::load_config(config_flag.as_deref()) {
            Ok((_, c)) => crate::admin_cli::pending(&c, admin_socket.as_deref(), all, json),
            Err(code) => code,
        },
        Command::Approve {
            id,
            note,
            admin_socket,
        } => match crate::commands::load_config(config_flag.as_deref()) {
            Ok((_, c)) => crate::admin_cli::answer(&c, admin_socket.as_deref(), &id, true, note),
            Err(code) => code,
        },
        Command::Deny {
            id,
            note,
            admin_socket,
        } => match crate::commands::load_config(config_flag.as_deref()) {
            Ok((_, c)) => crate::admin_cli::answer(&c, admin_socket.as_deref(), &id, false, note),
            Err(code) => code,
        },
        Command::Run {
            profile,
            cwd_file,
            command,
        } => crate::fence_cli::run(
            config_flag.as_deref(),
            profile.as_deref(),
            cwd_file,
            &command.join(" "),
        ),
        Command::Doctor { profile } => crate::fence_cli::doctor(&profile),
        Command::Stats { admin_socket } => {
            match crate::commands::load_config(config_flag.as_deref()) {
                Ok((_, c)) => crate::admin_cli::stats(&c, admin_socket.as_deref()),
                Err(code) => code,
            }
        }
        Command::Init {
            agent:
                InitAgent::Claude {
                    dir,
                    user,
                    command,
                    remote,
                    profile,
                },
        } => {
            if let Some(name) = &profile {
                let project = dir.clone().unwrap_or_else(|| PathBuf::from("."));
                if let Err(code) = crate::commands::set_profile(&project, name) {
                    return code;
                }
            }
            crate::commands::init_claude(dir, user, command, remote)
        }
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
            bashgate::audit::Filter {
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
        Command::Approvals {
            session,
            forget,
            revoke,
            json,
            daemon,
            admin_socket,
        } => {
            let forget = match (forget, revoke) {
                (true, _) => Some(None),
                (false, Some(id)) => Some(Some(id)),
                (false, None) => None,
            };
            if daemon || admin_socket.is_some() {
                match crate::commands::load_config(config_flag.as_deref()) {
                    Ok((_, c)) => crate::admin_cli::approvals(
                        &c,
                        admin_socket.as_deref(),
                        &session,
                        forget,
                        json,
                    ),
                    Err(code) => code,
                }
            } else {
                crate::commands::approvals(config_flag.as_deref(), &session, forget, json)
            }
        }
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
