//! `bashgate-shell SCRIPT`: the shell wrapper a client runs every shell
//! command through, after its own permission rules have judged the command
//! the agent wrote (the client table's `shell_prefix_env`; see
//! hook/shell.rs for how it is named and checked).
//!
//! The hook decides before the client's rules and leaves its decision as a
//! ticket (`bashgate::runs`); here it is carried out: the script runs as it
//! is, or with the agent's command inside it replaced by the fenced line.
//! A command the hook left nothing for (its text was changed after the
//! hook, or the hook never saw it) is decided here as the hook would have,
//! and what the hook would have put to a person does not run. Whatever
//! goes wrong, the command does not run: the wrapper fails closed.
//!
//! The client runs other programs through the same setting (its hooks,
//! bashgate's among them, and its MCP servers); those are its own and run
//! as they are.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitCode};

use crate::hook::shell::{names, Script, SHELL_BINARY};
use crate::hook::{self, Client};
use bashgate::call::{FenceKind, FenceOffer};
use bashgate::decision::Permission;
use bashgate::engine::{Gate, ToolCall};
use bashgate::rewrite::{self, FencingSpec};
use bashgate::runs::{HowToRun, Tickets};

/// The status of a command the wrapper did not run, as a shell's for a
/// command that cannot be executed.
const NOT_RUN: u8 = 126;

/// `bashgate-shell SCRIPT`: runs it for the client whose setting names
/// this program, and returns its status only when it did not run it.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let script = match &args[..] {
        [script] => match script.to_str() {
            Some(s) => s.to_string(),
            None => return refuse("its text is not UTF-8"),
        },
        _ => {
            return refuse(&format!(
                "{SHELL_BINARY} is a client's shell wrapper and takes one script, not {} arguments",
                args.len()
            ))
        }
    };
    // The client is the one whose setting, which it hands to what it runs,
    // names this program.
    let me = std::env::current_exe().unwrap_or_default();
    let client = hook::CLIENTS.iter().find(|c| {
        c.described()
            .shell_prefix_env
            .as_deref()
            .and_then(|v| std::env::var(v).ok())
            .is_some_and(|v| names(&v, &me))
    });
    match client {
        Some(c) => refuse(&wrap(c, script)),
        None => refuse("no client's shell-wrapper setting names this program, so bashgate cannot tell whose command it is"),
    }
}

/// Says why the command did not run, with the status of one that could
/// not be executed.
fn refuse(why: &str) -> ExitCode {
    eprintln!("bashgate: the command did not run: {why}");
    ExitCode::from(NOT_RUN)
}

/// Runs `script` as the client asked, fenced where the gate decided so.
/// Returns only when it does not run it, with why.
fn wrap(client: &Client, script: String) -> String {
    let found = match (client.script)(&script) {
        Script::ClientsOwn => return exec(Command::new("/bin/sh").arg("-c").arg(&script)),
        Script::Agents(found) => found,
    };
    let c = client.described();
    let var = c.shell_session_env.as_deref().unwrap_or_default();
    let Some(session) = std::env::var(var).ok().filter(|s| !s.is_empty()) else {
        return format!(
            "{} did not say which session runs it ({var}), so bashgate cannot find its decision",
            c.name
        );
    };
    let command = found.as_ref().map_or(script.as_str(), |f| f.text.as_str());
    let how = match decision(&session, command, found.is_some()) {
        Ok(how) => how,
        Err(why) => return why,
    };
    match how {
        HowToRun::Plain => exec(Command::new(shell()).arg("-c").arg(&script)),
        HowToRun::Fenced(spec) => {
            let bashgate = match hook::gate_program() {
                Ok(b) => b,
                Err(why) => return format!("it was to run fenced, but {why}"),
            };
            match found {
                Some(f) => {
                    let line = rewrite::fenced(&bashgate, &spec.fencing(), &f.text);
                    let mut fenced = script.clone();
                    fenced.replace_range(f.word.start..f.word.end, &rewrite::quote(&line));
                    // `bashgate run` names the session in its audit record.
                    exec(
                        Command::new(shell())
                            .arg("-c")
                            .arg(&fenced)
                            .env("BASHGATE_SESSION", &session),
                    )
                }
                // The agent's command could not be told from the rest:
                // all of it runs fenced.
                None => exec(
                    Command::new(&bashgate)
                        .args(spec.fencing().run_args(&script))
                        .env("BASHGATE_SESSION", &session),
                ),
            }
        }
    }
}

/// How `command` of `session` runs: the hook's ticket when it left one
/// (only for a command found exactly, `exact`), else the gate's decision
/// made here.
fn decision(session: &str, command: &str, exact: bool) -> Result<HowToRun, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory ({e})"))?;
    let anchored = hook::anchor(None, Some(session), &cwd)
        .map_err(|e| format!("bashgate's configuration cannot be read ({e})"))?;
    let hook::Anchored {
        source,
        loaded,
        project,
        person_file,
    } = anchored;
    let config = loaded.config;
    let state_dir = config.state_dir();
    let tickets = Tickets::new(&state_dir);
    let audit = config.audit.enabled.then(|| config.audit_path());
    if exact {
        match tickets.take(session, command) {
            Ok(Some(HowToRun::Plain)) => {
                // The fence records a fenced run; this one, here.
                let d = bashgate::decision::Decision::allow(
                    bashgate::decision::Layer::Person,
                    "ran as it is, as the hook decided: it put the command to the person (or a daemon allowed it), and the client ran it",
                );
                let mut r = bashgate::audit::Record::decided(session, "shell", "Bash", &cwd, &d);
                r.command = Some(command.to_string());
                hook::write_audit(audit.as_deref(), r);
                return Ok(HowToRun::Plain);
            }
            Ok(Some(how)) => return Ok(how),
            Ok(None) => {}
            Err(e) => return Err(format!("bashgate's decision for it cannot be read ({e})")),
        }
    }
    let spec = FencingSpec {
        profile: config.confine.profile.clone(),
        tree: project.clone(),
        state_dir: state_dir.clone(),
        config: person_file,
    };
    let probe = {
        let (confine, state_dir) = (config.confine.clone(), state_dir.clone());
        move |kind| hook::fence_offer(&confine, &state_dir, kind)
    };
    if tickets.decided_elsewhere(session) {
        // The session's taint is the daemon's: it runs fenced.
        return match probe(FenceKind::Full) {
            bashgate::call::Fence::Offered => Ok(HowToRun::Fenced(spec)),
            bashgate::call::Fence::Unavailable(why) => Err(format!(
                "bashgate's daemon decides this session and left no decision for this command, and it cannot run fenced here ({why})"
            )),
        };
    }
    let untrusted = hook::untrusted_project(&config, project.as_deref());
    // Nobody is asked here: what would be asked about is not run.
    let gate = Gate::builder(config)
        .config_file(source.path().map(Path::to_path_buf))
        .untrusted_project(untrusted)
        .project(project)
        .nobody_asked()
        .build();
    let input = serde_json::json!({ "command": command });
    let call = ToolCall {
        session,
        cwd: &cwd,
        tool: "Bash",
        input: &input,
        call_id: None,
        fence: &FenceOffer::probed(&probe),
    };
    let outcome = gate.decide_guarded(&call);
    hook::write_audit(
        audit.as_deref(),
        bashgate::audit::Record::of_outcome(&call, "shell", &outcome),
    );
    let d = &outcome.decision;
    match d.permission {
        Permission::Allow => match d.fence {
            Some(kind) => Ok(HowToRun::Fenced(spec.of_kind(kind))),
            None => Ok(HowToRun::Plain),
        },
        _ => Err(format!(
            "it reached the shell without bashgate's decision, and bashgate would not let it run unasked: {}",
            d.reason
        )),
    }
}

/// The shell the client runs its commands with: its `SHELL` when that is
/// bash or zsh, else bash.
fn shell() -> OsString {
    std::env::var_os("SHELL")
        .filter(|s| {
            let p = Path::new(s);
            p.is_absolute() && p.file_name().is_some_and(|n| n == "bash" || n == "zsh")
        })
        .unwrap_or_else(|| "bash".into())
}

/// Replaces this process with `c`; returns why it could not.
fn exec(c: &mut Command) -> String {
    let e = c.exec();
    format!("{:?} could not be started ({e})", c.get_program())
}
