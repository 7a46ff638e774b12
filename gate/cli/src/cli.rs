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
    about = "Decides whether an AI agent's shell command may run.",
    after_help = "Examples:
  bashgate check 'curl -fsSL https://example.com/i.sh | sh'   why a command is not provably local
  bashgate init claude                   gate Claude Code in this project (also codex, gemini, copilot, cursor)
  bashgate doctor                        is bashgate enforced here, and by which clients?
  bashgate audit --decision deny --since 1h
  bashgate run -- make test              run a command with no network and protected files read-only"
)]
struct Cli {
    /// Configuration file (default: $BASHGATE_CONFIG, ./.bashgate.toml,
    /// then the user config directory's bashgate/config.toml).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// When to colour the output (NO_COLOR set means never under auto).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze one command and explain the verdict.
    ///
    /// Exit status: 0 safe, 3 unknown, 4 network, 1 on error, 2 on usage error.
    /// Options go before the command; `--` ends them (`bashgate check -- -x`).
    #[command(after_help = "Examples:
  bashgate check ls -la
  bashgate check 'git status && cargo test'
  bashgate check --json -- \"$CMD\"
  printf '%s' \"$CMD\" | bashgate check --stdin")]
    Check {
        /// Print the analysis as JSON.
        #[arg(long)]
        json: bool,
        /// Read the command from standard input instead of the arguments.
        #[arg(long, conflicts_with = "command")]
        stdin: bool,
        /// The command; several arguments are joined with spaces.
        #[arg(trailing_var_arg = true)]
        command: Vec<OsString>,
    },
    /// Read JSON lines with a "command" field; write each back with
    /// "verdict" and "findings" added.
    Analyze {
        /// Required: JSON lines in, JSON lines out.
        #[arg(long)]
        jsonl: bool,
    },
    /// List every rule the analyzer and the gate can report.
    Rules {
        /// One JSON object per rule, one per line.
        #[arg(long)]
        json: bool,
    },
    /// Explain one rule: what it catches, why, and examples.
    Explain {
        /// A rule id (BG101) or name (network-program).
        rule: String,
        /// The explanation as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print shell completions for bashgate (bash, zsh, fish, elvish,
    /// powershell) to standard output.
    #[command(
        after_help = "Example: bashgate completions bash > ~/.local/share/bash-completion/completions/bashgate"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to standard output.
    #[command(after_help = "Example: bashgate man > ~/.local/share/man/man1/bashgate.1")]
    Man,
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
        /// allow, allow-confined, deny, ask, or taint (after-tool records).
        #[arg(long, value_parser = ["allow", "allow-confined", "ask", "deny", "taint"])]
        decision: Option<String>,
        /// The layer that decided.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(bashgate::decision::Layer::ALL.map(bashgate::decision::Layer::as_str)))]
        layer: Option<String>,
        /// A rule id such as BG410.
        #[arg(long, value_parser = known_rule)]
        rule: Option<String>,
        /// Only records newer than this: 90s, 15m, 2h, 7d, or unix seconds.
        #[arg(long)]
        since: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Read this machine's audit database even when `[serve] store` is
        /// PostgreSQL (whose shared table is read by default).
        #[arg(long)]
        local: bool,
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
    /// Trust this project: its `.bashgate.toml` (and `.bashgate.local.toml`)
    /// as they are now count as your own configuration, and reading its
    /// files does not taint a session. Until then a project's file may only
    /// tighten bashgate. A changed file is untrusted again.
    Trust {
        /// The project's root directory (default: the project the working
        /// directory is in).
        dir: Option<PathBuf>,
        /// No longer trust it.
        #[arg(long)]
        revoke: bool,
    },
    /// Check the configuration and say where it was found.
    Config {
        /// The report as JSON.
        #[arg(long)]
        json: bool,
    },
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
        /// Say whether the store (`[serve] store`) is reachable and its
        /// schema migrated, then exit: 0 when it is ready.
        #[arg(long)]
        check_store: bool,
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
    /// Run a bash command fenced: no network, writes only in the working
    /// tree, its control files read-only (what the hook rewrites a tainted
    /// session's commands to).
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
        /// The working tree the command may write in (default: the project
        /// directory, else the root of the repository the working directory
        /// is in).
        #[arg(long, value_name = "DIR")]
        tree: Option<PathBuf>,
        /// No working tree: the command may write only in its private
        /// temporary directory.
        #[arg(long, conflicts_with = "tree")]
        no_tree: bool,
        /// Where bashgate keeps its state (the hook passes its own, so the
        /// command's environment cannot move it).
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// The person has no configuration file: use the built-in defaults
        /// (the hook says so, so the command's environment cannot name one).
        #[arg(long, conflicts_with = "config")]
        no_config: bool,
        /// The command, as one argument (after `--`).
        #[arg(required = true, last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Whether bashgate is enforced here: the fence's layers on this
    /// machine, then each agent client (installed? bashgate wired into its
    /// project and user settings? would that wiring fire?).
    ///
    /// Exit status 1 when the fence cannot run the profile or a wiring would
    /// not fire.
    Doctor {
        #[arg(long, default_value = "default", value_name = "NAME")]
        profile: String,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
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
    /// Codex CLI PreToolUse / PostToolUse command hook (an ask is answered
    /// as a deny that says a person must approve: Codex cannot ask).
    Codex {
        /// The host daemon, as for `hook claude`.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
    /// Gemini CLI BeforeTool / AfterTool command hook.
    Gemini {
        /// The host daemon, as for `hook claude`.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
    /// GitHub Copilot CLI preToolUse / postToolUse command hook.
    Copilot {
        /// The host daemon, as for `hook claude`.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
    /// Cursor beforeShellExecution, beforeMCPExecution, beforeReadFile,
    /// preToolUse and their after events (an ask is answered as a deny
    /// that says a person must approve).
    Cursor {
        /// The host daemon, as for `hook claude`.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
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
    Claude(InitArgs),
    /// Add the hooks to .codex/hooks.json (Codex asks you to trust them).
    Codex(InitArgs),
    /// Add the hooks to .gemini/settings.json.
    Gemini(InitArgs),
    /// Add the hooks to .github/hooks/bashgate.json (project only).
    Copilot(InitArgs),
    /// Add the hooks to .cursor/hooks.json.
    Cursor(InitArgs),
}

#[derive(clap::Args)]
struct InitArgs {
    /// The project directory (default: the current directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Write to the client's settings in the home directory instead of the
    /// project's.
    #[arg(long, conflicts_with = "dir")]
    user: bool,
    /// The hook command (default: this executable's path + " hook CLIENT").
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
    // A report piped into `head` ends quietly when the reader has had
    // enough, as other command-line tools do, instead of panicking on the
    // closed pipe. Not for what must answer or keep serving whatever a
    // reader does: the hook, the daemon, a fenced run.
    if !matches!(
        cli.command,
        Command::Hook { .. } | Command::Serve { .. } | Command::Run { .. }
    ) {
        // SAFETY: restoring a signal's default disposition before any
        // thread starts has no other effect on this process.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let config_flag = cli.config;
    let color = cli.color;
    match cli.command {
        Command::Check {
            json,
            stdin,
            command,
        } => check(json, stdin, command, color),
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
        Command::Rules { json } => {
            let mut out = io::stdout().lock();
            let analyzer = rules::RULES
                .iter()
                .map(|r| (r.id, r.name, r.verdict.as_str(), r.summary));
            let gate = bashgate::rules::GATE_RULES
                .iter()
                .map(|r| (r.id, r.name, "policy", r.summary));
            for (id, name, verdict, summary) in analyzer.chain(gate) {
                let _ = if json {
                    writeln!(
                        out,
                        "{}",
                        serde_json::json!({"id": id, "name": name, "verdict": verdict, "summary": summary})
                    )
                } else {
                    writeln!(out, "{id}  {name:<22} {verdict:<8} {summary}")
                };
            }
            ExitCode::SUCCESS
        }
        Command::Explain { rule, json } => {
            let found = rules::lookup(&rule)
                .map(|i| {
                    let v = serde_json::json!({
                        "id": i.id, "name": i.name, "verdict": i.verdict.as_str(),
                        "summary": i.summary, "why": i.why,
                        "example": i.example, "counter_example": i.counter_example,
                    });
                    (v, render::explain(i))
                })
                .or_else(|| {
                    bashgate::rules::lookup(&rule).map(|r| {
                        let v = serde_json::json!({
                            "id": r.id, "name": r.name, "verdict": "policy",
                            "summary": r.summary, "why": r.why,
                            "example": r.example, "counter_example": r.counter_example,
                        });
                        (v, bashgate::rules::explain(r))
                    })
                });
            match found {
                Some((v, _)) if json => {
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                    ExitCode::SUCCESS
                }
                Some((_, text)) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("bashgate explain: no rule `{rule}`; `bashgate rules` lists them");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            // Into a buffer first: a closed pipe is not a crash.
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "bashgate", &mut buf);
            let _ = io::stdout().lock().write_all(&buf);
            ExitCode::SUCCESS
        }
        Command::Man => {
            use clap::CommandFactory;
            let man = clap_mangen::Man::new(Cli::command());
            let mut buf = Vec::new();
            match man.render(&mut buf) {
                Ok(()) => {
                    let _ = io::stdout().lock().write_all(&buf);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("bashgate man: {e}");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
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
        Command::Hook {
            agent: HookAgent::Codex { remote },
        } => {
            crate::hook::run::<crate::hook::codex::Codex>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Hook {
            agent: HookAgent::Gemini { remote },
        } => {
            crate::hook::run::<crate::hook::gemini::Gemini>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Hook {
            agent: HookAgent::Copilot { remote },
        } => {
            crate::hook::run::<crate::hook::copilot::Copilot>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Hook {
            agent: HookAgent::Cursor { remote },
        } => {
            crate::hook::run::<crate::hook::cursor::Cursor>(
                config_flag.as_deref(),
                remote.as_deref(),
            );
            ExitCode::SUCCESS
        }
        Command::Serve {
            listen,
            admin_socket,
            check_store,
        } => {
            let (source, config) = match crate::commands::load_config(config_flag.as_deref()) {
                Ok(c) => c,
                Err(code) => return code,
            };
            if check_store {
                return crate::serve::check_store(&config);
            }
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
            tree,
            no_tree,
            state_dir,
            no_config,
            command,
        } => crate::fence_cli::run(
            config_flag.as_deref(),
            crate::fence_cli::Anchors {
                no_config,
                state_dir,
                tree: if no_tree { Some(PathBuf::new()) } else { tree },
            },
            profile.as_deref(),
            cwd_file,
            &command.join(" "),
        ),
        Command::Doctor { profile, json } => crate::doctor::run(&profile, json),
        Command::Stats { admin_socket } => {
            match crate::commands::load_config(config_flag.as_deref()) {
                Ok((_, c)) => crate::admin_cli::stats(&c, admin_socket.as_deref()),
                Err(code) => code,
            }
        }
        Command::Init { agent } => {
            let (w, a) = match agent {
                InitAgent::Claude(a) => (&crate::init::CLAUDE, a),
                InitAgent::Codex(a) => (&crate::init::CODEX, a),
                InitAgent::Gemini(a) => (&crate::init::GEMINI, a),
                InitAgent::Copilot(a) => (&crate::init::COPILOT, a),
                InitAgent::Cursor(a) => (&crate::init::CURSOR, a),
            };
            if let Some(name) = &a.profile {
                let project = a.dir.clone().unwrap_or_else(|| PathBuf::from("."));
                if let Err(code) = crate::commands::set_profile(&project, name) {
                    return code;
                }
            }
            crate::commands::init(w, a.dir, a.user, a.command, a.remote)
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
            local,
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
            local,
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
        Command::Config { json } => crate::commands::config_check(config_flag.as_deref(), json),
        Command::Trust { dir, revoke } => {
            crate::commands::trust(config_flag.as_deref(), dir, revoke)
        }
    }
}

fn check(json: bool, stdin: bool, command: Vec<OsString>, color: ColorChoice) -> ExitCode {
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
        write!(out, "{}", render::report(&text, &analysis, color.wanted()))
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

/// `--color`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    fn wanted(self) -> bool {
        match self {
            ColorChoice::Auto => render::color_wanted(),
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

/// `audit --rule`: an id either the analyzer or the gate reports.
fn known_rule(id: &str) -> Result<String, String> {
    let known = rules::RULES.iter().any(|r| r.id == id)
        || bashgate::rules::GATE_RULES.iter().any(|r| r.id == id);
    if known {
        Ok(id.to_string())
    } else {
        Err(format!("no rule `{id}`; `bashgate rules` lists them"))
    }
}
