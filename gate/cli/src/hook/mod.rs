//! Agent hooks: one lifecycle for every client, parameterised by the
//! client's protocol.
//!
//! The lifecycle (`run`) reads the event from stdin within a size bound,
//! loads the configuration for the event's directory, decides locally or
//! through the host daemon (`--remote`), guards the decision with a budget
//! watchdog, answers once, and writes the audit record after the answer.
//! A [`Protocol`] only says how its client's event reads and how an answer
//! is written.
//!
//! Clients treat a crashed or silent hook as "proceed", so nothing here may
//! fail silently: bad input, a bad configuration, a panic, or a decision
//! that outlives the budget all become an answer with a reason.
//!
//! To add a client: its table in `gate/data/clients.toml` (where its hooks
//! and settings live, its tool names, whether it can ask), a module here
//! with a type implementing [`Protocol`], and that type in [`CLIENTS`].
//! Everything else (the `hook`, `init` and `uninstall` subcommands,
//! `bashgate-hook`, `doctor`, the shell wrapper, self-protection and the
//! fence) reads the two.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod json;
pub mod names;
// Only bashgate-hook reads its own command line.
#[allow(dead_code)]
pub mod program;
pub mod shell;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use bashgate::audit::{Audit, Record};
use bashgate::call::{Fence, FenceKind, FenceOffer};
use bashgate::config::{self, OnError};
use bashgate::decision::{Decision, Layer, Permission};
use bashgate::engine::{Gate, ToolCall};

/// Hook input above this size is refused (with an answer).
pub const MAX_INPUT: u64 = 16 << 20;

/// What an event asks of the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Before a tool runs: decide.
    Pre,
    /// After a tool ran: record what it read.
    Post,
    /// Anything else the client sends; not ours to decide.
    Other(String),
}

/// A client's event, decoded into what the gate needs.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: Kind,
    pub session: Option<String>,
    pub cwd: Option<PathBuf>,
    pub tool: Option<String>,
    pub input: Value,
    /// The client's id for the tool call, when it gives one (see
    /// [`call_id`]).
    pub call_id: Option<String>,
    /// After a tool ran: what it showed the agent (its output), when the
    /// client reports it (see [`seen_text`]).
    pub seen: Option<String>,
}

/// The text a finished call showed the agent: every string in the
/// client's report of its result, under whichever name the client gives
/// it, up to `bashgate::MAX_SEEN` bytes.
pub(crate) fn seen_text(o: &serde_json::Map<String, Value>) -> Option<String> {
    fn strings(v: &Value, out: &mut String) {
        if out.len() >= bashgate::MAX_SEEN {
            return;
        }
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(m) => m.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let v = [
        "tool_response",
        "tool_output",
        "toolResult",
        "tool_result",
        "output",
    ]
    .iter()
    .find_map(|k| o.get(*k))?;
    let mut out = String::new();
    strings(v, &mut out);
    (!out.trim().is_empty()).then_some(out)
}

/// The client's id for a tool call, under any of the names clients give it
/// (`tool_use_id`, `toolCallId`, ...).
pub(crate) fn call_id(o: &serde_json::Map<String, Value>) -> Option<String> {
    ["tool_use_id", "toolUseId", "tool_call_id", "toolCallId"]
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// What the hook answers.
pub enum Reply<'a> {
    /// A decision about a call that is about to run.
    Decision(&'a Decision),
    /// An allow that holds only for the call as rewritten to run under
    /// `bashgate run`'s fence: `input` is the tool input to run instead.
    /// `approve` is whether bashgate may also approve it on the client's
    /// behalf (the person stands behind it, or `auto_approve` covers it).
    Fenced {
        decision: &'a Decision,
        input: &'a Value,
        approve: bool,
    },
    /// Nothing to decide (an event after a tool ran, or one we do not
    /// handle): the client goes on as it would without the hook.
    Nothing,
    /// Nothing to decide, but something the person must be told (shown by
    /// clients that can show it).
    Warning(&'a str),
}

/// How a command that may run only fenced gets to run fenced.
pub enum FenceRoute {
    /// The client runs its shell commands through bashgate's wrapper
    /// (`shell.rs`), named in the client table's `shell_prefix_env`: the
    /// hook leaves its decision there and the command's text stays the
    /// agent's, so the client's own rules judge what the agent wrote.
    Wrapper,
    /// The caller runs the tool input the hook hands back (the JSON hook's
    /// application): the fenced line replaces the command.
    Rewrite,
    /// Neither: a rewritten command would be judged by the client's own
    /// rules (or run only if bashgate approved it in the person's place),
    /// so the fence is not offered, for the reason given, and the decision
    /// is the one without confinement.
    Unavailable(&'static str),
}

/// How one client speaks: its event in, its answer out; and what else
/// about it only code can say.
pub trait Protocol {
    /// Its key in the client table (`gate/data/clients.toml`), as in
    /// `bashgate hook KEY`.
    const KEY: &'static str;
    /// What the client sends on stdin, for the message when it does not.
    const EXPECTED: &'static str;
    /// Whether the client has permission rules of its own. Then bashgate
    /// answers an allow with no decision, so those rules and prompts still
    /// apply (bashgate only ever adds protection), unless `auto_approve`
    /// lets it approve a read-only command.
    const DEFERS_ALLOW: bool;
    /// How a command the gate lets through only fenced gets to run fenced
    /// with this client, as verified against the real client.
    const FENCE: FenceRoute;
    /// Whether the client has no after-tool event for some calls it asks
    /// about (Cursor's file reads): the taint of an allowed call is then
    /// recorded before the answer.
    const TAINTS_BEFORE: bool = false;
    fn decode(bytes: &[u8]) -> Result<Event, String>;
    fn render(reply: Reply) -> Value;
    /// The event name in the audit log.
    fn audit_event(kind: &Kind) -> &'static str;
    /// Why the client would not load the hooks of the project at
    /// `project` (it wants the person to trust the project first), for
    /// `bashgate doctor`; `home` is the person's home directory.
    fn project_untrusted(_project: &Path, _home: &Path) -> Option<String> {
        None
    }
    /// Why the client would skip bashgate's hooks in the settings file
    /// `file` (parsed: `root`), for `bashgate doctor`.
    fn hooks_untrusted(_file: &Path, _root: &Value, _home: Option<&Path>) -> Vec<String> {
        Vec::new()
    }
    /// What a script the client runs through its shell wrapper is (see
    /// [`FenceRoute::Wrapper`]). By default all of it is the agent's.
    fn script(_script: &str) -> shell::Script {
        shell::Script::Agents(None)
    }
}

/// One client bashgate has a hook for, as the surfaces use it: its
/// [`Protocol`] as plain functions.
// Each program built from these files uses part of it (`bashgate-hook`
// only `run`, the shell wrapper only `script`).
#[allow(dead_code)]
pub struct Client {
    /// Its key in the client table and in `bashgate hook KEY`.
    pub key: &'static str,
    /// Runs one hook invocation (see [`run`]).
    pub run: fn(Option<&Path>, Option<&str>),
    /// See [`Protocol::project_untrusted`].
    pub project_untrusted: fn(&Path, &Path) -> Option<String>,
    /// See [`Protocol::hooks_untrusted`].
    pub hooks_untrusted: fn(&Path, &Value, Option<&Path>) -> Vec<String>,
    /// See [`Protocol::script`].
    pub script: fn(&str) -> shell::Script,
}

impl Client {
    const fn of<P: Protocol>() -> Client {
        Client {
            key: P::KEY,
            run: run::<P>,
            project_untrusted: P::project_untrusted,
            hooks_untrusted: P::hooks_untrusted,
            script: P::script,
        }
    }

    /// What the client table says about it.
    #[allow(dead_code)]
    pub fn described(&self) -> &'static bashgate::clients::Client {
        bashgate::clients::get(self.key).expect("every hook's client is in gate/data/clients.toml")
    }
}

/// Every client bashgate has a hook for, in the order `doctor` reports
/// them. The framework-neutral JSON hook is not a client of the table.
pub const CLIENTS: [Client; 5] = [
    Client::of::<claude::Claude>(),
    Client::of::<codex::Codex>(),
    Client::of::<gemini::Gemini>(),
    Client::of::<copilot::Copilot>(),
    Client::of::<cursor::Cursor>(),
];

/// Whether a hook command is bashgate's hook for `client` (any binary
/// path, `bashgate hook CLIENT` or `bashgate-hook CLIENT`, with or without
/// `--remote`).
pub fn is_ours(command: &str, client: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let hook = |w: &str| {
        let w = w.trim_matches(|c| c == '\'' || c == '"');
        w == "hook" || w.rsplit('/').next() == Some(HOOK_BINARY)
    };
    words.windows(2).any(|w| hook(w[0]) && w[1] == client) && command.contains("bashgate")
}

/// The client `bashgate hook KEY` speaks for.
pub fn client(key: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.key == key)
}

/// The hook input as a JSON object, or why it is not one. `expected` says
/// what should have come on stdin.
pub(crate) fn json_object(
    bytes: &[u8],
    expected: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "the hook received no input (expected {expected} on stdin)"
        ));
    }
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(format!(
            "the hook input is not valid UTF-8 (at byte {})",
            e.valid_up_to()
        ));
    }
    // A key named twice is not read either way: the client may have meant
    // the other one.
    let v: Value = bashgate::json::from_slice(bytes)
        .map_err(|e| format!("the hook input is not valid JSON ({e})"))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err("the hook input is JSON but not an object".into()),
    }
}

/// Runs one hook invocation for client `P`; the process exit status is 0.
pub fn run<P: Protocol>(config_flag: Option<&Path>, remote: Option<&str>) {
    let _ = START.set(Instant::now());
    // A client that never closes stdin still gets a decision in time.
    let event = read_event::<P>();
    let cwd = event
        .as_ref()
        .ok()
        .and_then(|e| e.cwd.clone())
        .unwrap_or_else(process_cwd);
    let decides = !matches!(&event, Ok(e) if e.kind != Kind::Pre);
    let session_id = event.as_ref().ok().and_then(|e| e.session.as_deref());
    let anchored = match anchor(config_flag, session_id, &cwd) {
        Ok(a) => a,
        Err(e) => {
            if decides {
                // A broken configuration asks; it never weakens the
                // always-on denials.
                let always = event.as_ref().ok().and_then(|ev| {
                    let call = ToolCall {
                        session: ev.session.as_deref().unwrap_or("unknown"),
                        cwd: &cwd,
                        tool: ev.tool.as_deref()?,
                        input: &ev.input,
                        call_id: None,
                        fence: &FenceOffer::known(Fence::not_offered()),
                    };
                    Gate::always_on(&call, &Default::default())
                });
                let d = always.unwrap_or_else(|| Decision::bad_config(&e.to_string()));
                answer(&P::render(Reply::Decision(&d)));
            } else {
                answer(&P::render(Reply::Nothing));
                eprintln!("bashgate: {e}");
            }
            return;
        }
    };
    let Anchored {
        source,
        loaded: config::Loaded { config, ignored },
        project,
        person_file,
    } = anchored;
    let config_file = source.path().map(Path::to_path_buf);
    let untrusted = untrusted_project(&config, project.as_deref());
    let anchored_project = project.clone();
    let audit = config.audit.enabled.then(|| config.audit_path());
    let remote = remote
        .map(str::to_string)
        .or_else(|| config.remote.url.clone());
    let auto_approve = config.hook.auto_approve;
    let ignored: Vec<String> = ignored.iter().map(config::Ignored::describe).collect();
    // An allow is bashgate having no objection; the client's own rules then
    // decide. It is passed on as an approval only when the person stands
    // behind it (they approved this command), or when the command is
    // provably read-only and the user asked bashgate to approve those.
    let how = bashgate::rewrite::FencingSpec {
        profile: config.confine.profile.clone(),
        tree: project.clone(),
        state_dir: config.state_dir(),
        config: person_file.clone(),
    };
    let how_for = move |kind: FenceKind| how.of_kind(kind);
    let tickets = bashgate::runs::Tickets::new(&config.state_dir());
    let left_for = &tickets;
    let shell_tool = match P::FENCE {
        FenceRoute::Wrapper => bashgate::clients::get(P::KEY).map(|c| c.shell_tool.as_str()),
        _ => None,
    };
    // `left`: the session, when the client's shell wrapper takes this
    // call's decision, and whether a daemon decides it.
    let reply = move |d: &Decision, read_only: bool, input: &Value, left: Option<(&str, bool)>| {
        let approved = d.by_person() || (auto_approve && read_only);
        let fenced = if d.permission == Permission::Allow {
            d.fence
        } else {
            None
        };
        if let (Some((session, elsewhere)), Some(command)) =
            (left, input.get("command").and_then(Value::as_str))
        {
            // The client runs the command as the agent wrote it, through
            // the wrapper, which takes this decision. A plain allow needs
            // none: the wrapper decides a command it finds nothing for as
            // the hook would (unless a daemon decides the session). A
            // question does: if the person approves, the wrapper alone
            // would not run it.
            let ticket = if let Some(kind) = fenced {
                Some(bashgate::runs::HowToRun::Fenced(how_for(kind)))
            } else if d.permission == Permission::Ask
                || (d.permission == Permission::Allow && elsewhere)
            {
                Some(bashgate::runs::HowToRun::Plain)
            } else {
                None
            };
            // Unleft, the wrapper decides the command itself, as the hook
            // did; what the hook put to a person, it then does not run.
            if let Some(t) = ticket {
                if let Err(e) = left_for.leave(session, command, &t) {
                    eprintln!("bashgate: the decision for the shell wrapper was not left ({e}); it decides the command when it runs");
                }
            }
        } else if let Some(kind) = fenced {
            let how = how_for(kind);
            let how = how.fencing();
            return match fenced_input(input, &how) {
                Ok(input) => P::render(Reply::Fenced {
                    decision: d,
                    input: &input,
                    approve: approved,
                }),
                // Never the command unfenced.
                Err(why) => P::render(Reply::Decision(&Decision::on_error(
                    OnError::Ask,
                    Layer::Input,
                    &format!("it was to run fenced, but {why}"),
                ))),
            };
        }
        if P::DEFERS_ALLOW && d.permission == Permission::Allow && !approved {
            P::render(Reply::Nothing)
        } else if d.permission == Permission::Ask && !ignored.is_empty() {
            // The person deciding should know what the project wanted.
            let mut told = d.clone();
            told.reason = format!("{} ({})", d.reason, ignored.join("; "));
            P::render(Reply::Decision(&told))
        } else {
            P::render(Reply::Decision(d))
        }
    };
    let failed = |why: &str| Decision::on_error(config.on_error, Layer::Input, why);

    let event = match event {
        Ok(e) => e,
        Err(why) => {
            let d = failed(&why);
            answer(&P::render(Reply::Decision(&d)));
            write_audit(
                audit.as_deref(),
                Record::decided("unknown", P::audit_event(&Kind::Pre), "?", &cwd, &d),
            );
            return;
        }
    };
    if let Kind::Other(_) = event.kind {
        answer(&P::render(Reply::Nothing));
        return;
    }
    let (Some(session), Some(tool)) = (event.session.as_deref(), event.tool.as_deref()) else {
        let missing = if event.session.is_none() {
            "session_id"
        } else {
            "tool_name"
        };
        if event.kind == Kind::Pre {
            let d = failed(&format!("the event has no \"{missing}\""));
            answer(&P::render(Reply::Decision(&d)));
            write_audit(
                audit.as_deref(),
                Record::decided(
                    event.session.as_deref().unwrap_or("unknown"),
                    P::audit_event(&event.kind),
                    event.tool.as_deref().unwrap_or("?"),
                    &cwd,
                    &d,
                ),
            );
        } else {
            answer(&P::render(Reply::Nothing));
            eprintln!(
                "bashgate: an event after a tool ran has no \"{missing}\"; taint not recorded"
            );
        }
        return;
    };
    // What the probe needs, copied out: the engine takes the configuration.
    let confine = config.confine.clone();
    let state_dir = config.state_dir();
    let probe = move |kind| {
        if let FenceRoute::Wrapper = P::FENCE {
            // The wrapper reads the person's configuration as found
            // without a flag: one the hook was given, it would not.
            if config_flag.is_some() {
                return Fence::Unavailable(format!(
                    "the hook runs with --config, which {}'s shell wrapper is not given",
                    P::KEY
                ));
            }
            if let Err(why) = shell::installed(P::KEY) {
                return Fence::Unavailable(why);
            }
        }
        fence_offer(&confine, &state_dir, kind)
    };
    let fence = match P::FENCE {
        _ if event.kind != Kind::Pre => FenceOffer::known(Fence::not_offered()),
        FenceRoute::Unavailable(why) => FenceOffer::known(Fence::Unavailable(why.into())),
        FenceRoute::Wrapper | FenceRoute::Rewrite => FenceOffer::probed(&probe),
    };
    // Whether this call is the shell tool's, whose decision the client's
    // wrapper takes.
    let wrapped = event.kind == Kind::Pre && shell_tool == Some(tool);
    if event.kind == Kind::Pre && shell_tool.is_some() {
        // A new call: an earlier call's ticket to run as it is is over.
        if let Err(e) = tickets.supersede(session) {
            let d = failed(&format!(
                "an earlier decision for the shell wrapper cannot be removed ({e})"
            ));
            answer(&P::render(Reply::Decision(&d)));
            return;
        }
    }
    let call = ToolCall {
        session,
        cwd: &cwd,
        tool,
        input: &event.input,
        call_id: event.call_id.as_deref(),
        fence: &fence,
    };

    if let Some(url) = &remote {
        // A report that did not reach the daemon is kept here until it does.
        let local = bashgate::taint::Store::new(&config.state_dir());
        match event.kind {
            Kind::Pre => {
                if let Some(why) = local.lost(session) {
                    if let Err(e) = crate::remote::report_lost(&config, url, &why) {
                        let d = failed(&format!(
                            "an earlier taint report for this session has not reached the daemon ({why}) and cannot be sent now ({e})"
                        ));
                        answer(&P::render(Reply::Decision(&d)));
                        return;
                    }
                    let _ = local.clear(session);
                }
                let d = crate::remote::decide_hook(&config, config_file, url, &call);
                // The session's taint is the daemon's: every decision is
                // left for the wrapper, and it judges nothing itself.
                let left = wrapped.then_some((session, true));
                let marked = match wrapped {
                    true => tickets.mark_decided_elsewhere(session),
                    false => Ok(()),
                };
                match marked {
                    Ok(()) => answer(&reply(&d, false, call.input, left)),
                    Err(e) => answer(&P::render(Reply::Decision(&failed(&format!(
                        "bashgate cannot mark this session as the daemon's for the shell wrapper ({e})"
                    ))))),
                };
            }
            _ => {
                // A secret the call's output showed is found here, where
                // the project's files are; the daemon judges what the call
                // read from its name and input.
                let shown = event.seen.as_deref().and_then(|seen| {
                    Gate::builder(config.clone())
                        .project(anchored_project.clone())
                        .build()
                        .secret_shown(&call, seen)
                });
                // Report first: the next decision must see this taint.
                let reported = crate::remote::report(&config, url, &call).and_then(|()| {
                    shown.map_or(Ok(()), |why| {
                        crate::remote::report_flag(&config, url, "secret", &why)
                    })
                });
                match reported {
                    Ok(()) => {
                        answer(&P::render(Reply::Nothing));
                    }
                    Err(e) => {
                        let why = format!("the daemon at {url} did not take it: {e}");
                        local.mark_lost(session, &why);
                        let msg = format!("bashgate could not report what this {tool} call read to the daemon ({e}); the session's next call reports it as tainted with untrusted content and secrets before anything else is decided");
                        answer(&P::render(Reply::Warning(&msg)));
                        eprintln!("bashgate: {msg}");
                    }
                }
            }
        }
        return;
    }

    let (budget_ms, on_error) = (config.hook.budget_ms, config.on_error);
    let pre = event.kind == Kind::Pre;
    // Only recording what a call read (after it ran, or before for a
    // client with no after event) reads a fenced line back.
    let fence_runner = if !pre || P::TAINTS_BEFORE {
        gate_program().ok()
    } else {
        None
    };
    let gate = Gate::builder(config)
        .config_file(config_file)
        .untrusted_project(untrusted)
        .fence_runner(fence_runner)
        .project(anchored_project)
        .on_slow(Box::new(move || {
            let render: fn(&Decision) -> Value = |d| P::render(Reply::Decision(d));
            start_watchdog(
                budget_ms,
                on_error,
                if pre {
                    render
                } else {
                    |_| P::render(Reply::Nothing)
                },
            )
        }))
        .build();
    if pre {
        let mut outcome = gate.decide_guarded(&call);
        // A client with no event after a read: what the read brings in is
        // recorded before it is allowed, or it is not allowed.
        if P::TAINTS_BEFORE && outcome.decision.permission == Permission::Allow {
            if let Err(e) = gate.record(&call) {
                let why = format!("what this {tool} call would read cannot be recorded ({e})");
                gate.mark_lost(session, &why);
                outcome.decision = Decision::on_error(on_error, Layer::State, &why);
            }
        }
        let left = wrapped.then_some((session, false));
        answer(&reply(
            &outcome.decision,
            outcome.read_only,
            call.input,
            left,
        ));
        for w in &outcome.warnings {
            eprintln!("bashgate: {w}");
        }
        let mut record = Record::of_outcome(&call, P::audit_event(&event.kind), &outcome);
        // Passed to the client as an approval on the person's behalf.
        if auto_approve && outcome.read_only && record.decision == "pass" {
            record.decision = "allow".into();
        }
        write_audit(audit.as_deref(), record);
    } else {
        record_taint::<P>(
            &gate,
            &call,
            event.seen.as_deref(),
            P::audit_event(&event.kind),
            audit.as_deref(),
        );
        // `record_taint` answers as soon as the state is written.
    }
}

/// The configuration, and what the person's side decides for the whole
/// session: the project's root (the client's project directory, else the
/// repository root the session's first event was in, kept in the session's
/// state) and the person's own configuration file.
pub(crate) struct Anchored {
    pub(crate) source: config::Source,
    pub(crate) loaded: config::Loaded,
    pub(crate) project: Option<PathBuf>,
    /// The person's file (`--config`, `$BASHGATE_CONFIG` or the user's).
    pub(crate) person_file: Option<PathBuf>,
}

pub(crate) fn anchor(
    config_flag: Option<&Path>,
    session: Option<&str>,
    cwd: &Path,
) -> Result<Anchored, config::ConfigError> {
    let person = config::discover(config_flag, None);
    let person_config = config::load(&person)?;
    let named = config::client_project_dir();
    let project = match session {
        None => named,
        Some(session) => {
            let store = bashgate::taint::Store::new(&person_config.state_dir());
            let kept = store.load(session).ok().and_then(|s| s.project);
            match (named, kept) {
                (Some(p), Some(k)) if p == k => Some(p),
                (None, Some(k)) => Some(k),
                // Kept, so the client's shell wrapper, which is not told
                // the client's project directory, finds the same one.
                (Some(named), _) => {
                    let _ = store.update(session, |s| s.project = Some(named.clone()));
                    Some(named)
                }
                (None, None) => {
                    // The directory itself, not its spelling (`proj/../other`).
                    let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
                    let here = config::repository_root(&real).unwrap_or(real);
                    // Kept, so nothing made later (a `build/.git`) moves
                    // it; the first event to keep one wins. Unkept (the
                    // state cannot be written), this event's answer holds.
                    store
                        .update(session, |s| s.project.get_or_insert(here.clone()).clone())
                        .ok()
                        .or(Some(here))
                }
            }
        }
    };
    with_project(person, person_config, project)
}

/// The person's configuration, with the project's files over it where the
/// person lets them apply.
pub(crate) fn with_project(
    person: config::Source,
    person_config: config::Config,
    project: Option<PathBuf>,
) -> Result<Anchored, config::ConfigError> {
    let person_file = person.path().map(Path::to_path_buf);
    // `--config` and `$BASHGATE_CONFIG` name the one file in force.
    let alone = matches!(
        person.layers.first(),
        Some((config::LayerKind::Flag | config::LayerKind::Env, _))
    );
    let layers = match &project {
        Some(root) if !alone => config::project_layers(root),
        _ => Vec::new(),
    };
    if layers.is_empty() {
        return Ok(Anchored {
            source: person,
            loaded: config::Loaded {
                config: person_config,
                ignored: Vec::new(),
            },
            project,
            person_file,
        });
    }
    let mut source = person;
    source.layers.extend(layers);
    let loaded = config::load_all(&source)?;
    Ok(Anchored {
        source,
        loaded,
        project,
        person_file,
    })
}

/// The session's project when the person has not trusted it and that
/// taints (`[taint] untrusted_projects`).
pub(crate) fn untrusted_project(
    config: &config::Config,
    project: Option<&Path>,
) -> Option<PathBuf> {
    let p = project?;
    let on = config.taint.untrusted_projects;
    (on && !bashgate::trust::Trusted::load(&config.state_dir()).project(p)).then(|| p.to_path_buf())
}

/// Whether this hook can run a command fenced on this machine: the
/// configuration wants it and the kernel offers the profile's layers.
pub(crate) fn fence_offer(
    confine: &config::ConfineConfig,
    state_dir: &std::path::Path,
    kind: FenceKind,
) -> Fence {
    if confine.when == config::ConfineWhen::Never {
        return Fence::Unavailable("confine.when = \"never\"".into());
    }
    let profile = match kind {
        FenceKind::Full => confine.profile.as_str(),
        FenceKind::Writes if confine.untainted == config::UntaintedFence::Off => {
            return Fence::Unavailable("confine.untainted = \"off\"".into())
        }
        FenceKind::Writes => bashgate_fence::WRITES,
    };
    match bashgate_fence::probe_cached(state_dir).can_run(profile) {
        Ok(()) => Fence::Offered,
        Err(why) => Fence::Unavailable(why.to_string()),
    }
}

/// The tool input with its command rewritten to run under `bashgate run`.
fn fenced_input(input: &Value, how: &bashgate::rewrite::Fencing) -> Result<Value, String> {
    let command = input
        .get("command")
        .and_then(Value::as_str)
        .ok_or("the call has no command to run")?;
    let exe = gate_program()?;
    let mut out = input.clone();
    out["command"] = Value::String(bashgate::rewrite::fenced(&exe, how, command));
    Ok(out)
}

/// The program that runs the hooks alone (gate/cli/src/bin/bashgate-hook.rs),
/// installed beside `bashgate`.
pub const HOOK_BINARY: &str = "bashgate-hook";

/// The `bashgate` program that runs a fenced command (`bashgate run`) for
/// this hook: see [`fence_runner`].
pub(crate) fn gate_program() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("bashgate cannot find its own binary ({e})"))?;
    let gate = fence_runner(&exe);
    if gate.is_file() {
        Ok(gate)
    } else {
        Err(format!(
            "bashgate, which runs it, is not installed beside {}",
            exe.display()
        ))
    }
}

/// The program that runs a fenced command for the hook program `exe`:
/// `exe` itself, or the `bashgate` installed beside it when `exe` is the
/// hook program or the shell wrapper (which have no `run`).
pub fn fence_runner(exe: &Path) -> PathBuf {
    if exe
        .file_name()
        .is_some_and(|n| n == HOOK_BINARY || n == shell::SHELL_BINARY)
    {
        exe.with_file_name("bashgate")
    } else {
        exe.to_path_buf()
    }
}

/// Reads stdin, bounded in size and in time, and decodes it. Input still
/// open at [`READ_DEADLINE`] is an error, answered `on_error` like any
/// unreadable event.
fn read_event<P: Protocol>() -> Result<Event, String> {
    let buf = read_input::<P>(READ_DEADLINE)?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(format!(
            "the hook input is larger than {} MiB",
            MAX_INPUT >> 20
        ));
    }
    P::decode(&buf)
}

/// Stdin to its end (at most `MAX_INPUT + 1` bytes), waiting with poll(2)
/// between reads so that the deadline needs no thread: starting one costs
/// about 0.1 ms, a tenth of the hook's own work.
#[cfg(target_os = "linux")]
fn read_input<P: Protocol>(deadline: Duration) -> Result<Vec<u8>, String> {
    use std::os::fd::{AsFd, AsRawFd};
    let unreadable = |e: io::Error| format!("cannot read the hook input: {e}");
    // A duplicate of fd 0, read directly: Stdin's own buffer could hold
    // bytes that poll(2) does not see.
    let mut input = std::fs::File::from(
        io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(unreadable)?,
    );
    let end = START.get().copied().unwrap_or_else(Instant::now) + deadline;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let ms = i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
        let mut ready = libc::pollfd {
            fd: input.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the duration of the call.
        match unsafe { libc::poll(&mut ready, 1, ms) } {
            0 => {
                return Err(format!(
                    "the client did not finish sending the event within {} s",
                    deadline.as_secs()
                ))
            }
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(unreadable(e));
            }
            // Readable, closed or failed: the read says which.
            _ => match input.read(&mut chunk) {
                Ok(0) => return Ok(buf),
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() as u64 > MAX_INPUT {
                        return Ok(buf);
                    }
                }
                // A non-blocking stdin the parent left behind: poll again.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) => return Err(unreadable(e)),
            },
        }
    }
}

/// Elsewhere: a read to the end, with a watchdog thread for the deadline.
#[cfg(not(target_os = "linux"))]
fn read_input<P: Protocol>(deadline: Duration) -> Result<Vec<u8>, String> {
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        if flag.load(Ordering::SeqCst) || ANSWERED.load(Ordering::SeqCst) {
            return;
        }
        let d = Decision::on_error(
            OnError::default(),
            Layer::Input,
            &format!(
                "the client did not finish sending the event within {} s",
                deadline.as_secs()
            ),
        );
        if answer(&P::render(Reply::Decision(&d))) {
            std::process::exit(0);
        }
    });
    let mut buf = Vec::new();
    let read = io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut buf);
    done.store(true, Ordering::SeqCst);
    read.map(|_| buf)
        .map_err(|e| format!("cannot read the hook input: {e}"))
}

fn process_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// After a tool ran: its taint into the session, then the answer.
fn record_taint<P: Protocol>(
    gate: &Gate,
    call: &ToolCall,
    seen: Option<&str>,
    event: &str,
    audit: Option<&Path>,
) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gate.record_seen(call, seen)
    }));
    let failure = match &result {
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some("an internal error (a bug; please report it)".to_string()),
        Ok(Ok(_)) => None,
    };
    let Some(why) = failure else {
        answer(&P::render(Reply::Nothing));
        return record_sources(result, call, event, audit);
    };
    // The agent may have filled the disk itself: never let a lost taint
    // read as a clean session.
    let kept = gate.mark_lost(call.session, &why);
    let msg = if kept {
        format!("bashgate could not record what this {} call read ({why}); the session is now treated as tainted with untrusted content and secrets until `bashgate taint clear --session {}`", call.tool, call.session)
    } else {
        format!("bashgate could not record what this {} call read ({why}), nor mark the session as tainted: later commands in this session may be allowed as if nothing untrusted was read. Fix the state directory, then review this session", call.tool)
    };
    answer(&P::render(Reply::Warning(&msg)));
    eprintln!("bashgate: {msg}");
    let d = Decision::allow(Layer::State, msg);
    let mut r = Record::decided(call.session, event, call.tool, call.cwd, &d);
    r.decision = "taint".into();
    r.command = call.command().map(str::to_string);
    r.corruption = Some(true);
    r.secret = Some(true);
    write_audit(audit, r);
}

/// The audit record of the taint a finished call added.
fn record_sources(
    result: std::thread::Result<Result<Vec<bashgate::taint::Source>, bashgate::taint::StateError>>,
    call: &ToolCall,
    event: &str,
    audit: Option<&Path>,
) {
    match result {
        Ok(Ok(sources)) if !sources.is_empty() => {
            let d = Decision::allow(
                Layer::State,
                sources
                    .iter()
                    .map(|s| format!("{} taint: {}", s.flag, s.detail))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            let mut r = Record::decided(call.session, event, call.tool, call.cwd, &d);
            r.decision = "taint".into();
            r.command = call.command().map(str::to_string);
            r.corruption = Some(sources.iter().any(|s| s.flag == "corruption"));
            r.secret = Some(sources.iter().any(|s| s.flag == "secret"));
            write_audit(audit, r);
        }
        _ => {}
    }
}

static ANSWERED: AtomicBool = AtomicBool::new(false);

/// Writes the answer once; later calls (the watchdog racing the decision)
/// write nothing.
fn answer(v: &Value) -> bool {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return false;
    }
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
    true
}

/// When the hook started: every deadline counts from here.
static START: OnceLock<Instant> = OnceLock::new();

/// How long the client may take to send the event before bashgate decides
/// without it (the configuration is not read yet: the default `on_error`).
const READ_DEADLINE: Duration = Duration::from_secs(10);

/// Answers `on_error` (rendered by `render`) and exits once `budget_ms`
/// have passed since the hook started without a decision. Started only
/// before an operation that may block, so the fast path spawns no thread.
fn start_watchdog(budget_ms: u64, on_error: OnError, render: fn(&Decision) -> Value) {
    let budget = Duration::from_millis(budget_ms);
    std::thread::spawn(move || {
        let spent = START.get().map(Instant::elapsed).unwrap_or_default();
        std::thread::sleep(budget.saturating_sub(spent));
        if ANSWERED.load(Ordering::SeqCst) {
            return;
        }
        let d = Decision::on_error(
            on_error,
            Layer::Input,
            &format!(
                "the decision took longer than hook.budget_ms ({} ms)",
                budget.as_millis()
            ),
        );
        if answer(&render(&d)) {
            std::process::exit(0);
        }
    });
}

/// Writes an audit record when the audit is on; a failure is reported on
/// stderr and changes nothing else.
pub(crate) fn write_audit(path: Option<&Path>, r: Record) {
    let Some(path) = path else {
        return;
    };
    if let Err(e) = Audit::new(path.to_path_buf()).append(&r) {
        eprintln!("bashgate: audit record not written: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every client of the table has a hook, and every hook a client of the
    /// table: a client cannot be described and left unspoken for, or
    /// spoken for and left unprotected.
    #[test]
    fn the_hooks_and_the_client_table_name_the_same_clients() {
        let hooks: Vec<&str> = CLIENTS.iter().map(|c| c.key).collect();
        let table: Vec<&str> = bashgate::clients::all()
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = hooks.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, table);
        for key in hooks {
            assert_eq!(client(key).map(|c| c.described().key.as_str()), Some(key));
        }
        assert!(client("json").is_none());
    }
}
