//! `bashgate check`: the analyzer's verdict on one command, then what the
//! gate would decide for it here, as the hook would in a new session (or in
//! a session that has read untrusted content or secrets).
//!
//! The decision is a dry run: the session lives in a scratch directory, the
//! reviewer is not called, nothing is recorded or audited. Everything else
//! is the hook's: the person's configuration with this project's files as
//! the person lets them apply, the project's trust, this machine's fence.

use std::path::{Path, PathBuf};

use bashgate::call::{Fence, FenceKind, FenceOffer};
use bashgate::decision::Decision;
use bashgate::engine::{Gate, Outcome, Said, ToolCall};
use bashgate::taint::{Source, Store};
use bashgate_analyzer::Analysis;
use serde_json::{json, Value};

/// What the session is taken to have read before the command.
#[derive(Clone, Copy, Default)]
pub struct Before {
    pub untrusted: bool,
    pub secrets: bool,
}

impl Before {
    fn describe(self) -> &'static str {
        match (self.untrusted, self.secrets) {
            (false, false) => "in a new session",
            (true, false) => "after the agent read untrusted content",
            (false, true) => "after the agent read secrets",
            (true, true) => "after the agent read untrusted content and secrets",
        }
    }
}

/// The gate's dry-run answer and what it was decided with.
pub struct Tried {
    pub outcome: Outcome,
    pub before: Before,
    pub project: Option<PathBuf>,
    /// Why the fence cannot run a command here, when it cannot.
    pub no_fence: Option<String>,
    /// The project's configuration files that did not apply, and why.
    pub ignored: Vec<String>,
    /// The person has not trusted the project, so a session in it counts
    /// as having read untrusted content from its start.
    pub untrusted_project: bool,
}

/// The session name the scratch state holds.
const SESSION: &str = "bashgate-check";

/// Decides `command` as the hook would for a client's shell tool.
pub fn decide(config_flag: Option<&Path>, command: &str, before: Before) -> Tried {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let real = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    let project = bashgate::config::repository_root(&real).unwrap_or(real);
    let input = json!({ "command": command });
    let person = bashgate::config::discover(config_flag, None);
    let anchored = bashgate::config::load(&person)
        .and_then(|c| crate::hook::with_project(person, c, Some(project.clone())));
    let anchored = match anchored {
        Ok(a) => a,
        Err(e) => {
            // As the hook: a broken configuration asks, and the always-on
            // denials still hold.
            let offer = FenceOffer::known(Fence::not_offered());
            let d = Gate::always_on(&bash_call(&cwd, &input, &offer), &Default::default())
                .unwrap_or_else(|| Decision::bad_config(&e.to_string()));
            return Tried {
                outcome: Outcome::bare(d),
                before,
                project: Some(project),
                no_fence: None,
                ignored: Vec::new(),
                untrusted_project: false,
            };
        }
    };
    let crate::hook::Anchored {
        source,
        loaded: bashgate::config::Loaded { config, ignored },
        project,
        ..
    } = anchored;
    let untrusted = crate::hook::untrusted_project(&config, project.as_deref());
    let untrusted_project = untrusted.is_some();
    let state_dir = config.state_dir();
    let fence = crate::hook::fence_offer(&config.confine, &state_dir, FenceKind::Full);
    let writes_fence = crate::hook::fence_offer(&config.confine, &state_dir, FenceKind::Writes);
    let no_fence = match &fence {
        Fence::Offered => None,
        Fence::Unavailable(why) => Some(why.clone()),
    };
    let ignored = ignored
        .iter()
        .map(bashgate::config::Ignored::describe)
        .collect();
    // A scratch session: nothing the person's sessions hold is read or
    // changed. Without one, the decision cannot be a new session's.
    let scratch = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            let d = Decision::on_error(
                config.on_error,
                bashgate::decision::Layer::State,
                &format!("cannot make a scratch session ({e})"),
            );
            return Tried {
                outcome: Outcome::bare(d),
                before,
                project,
                no_fence,
                ignored,
                untrusted_project,
            };
        }
    };
    // Only the session lives there: the configuration keeps the person's
    // state directory, which the gate protects.
    let store = Store::new(scratch.path());
    let read = |flag: &str, what: &str| Source {
        flag: flag.into(),
        tool: "bashgate check".into(),
        detail: format!("taken as read by `bashgate check`: {what}"),
        at_ms: 0,
    };
    let _ = store.update(SESSION, |s| {
        if before.untrusted {
            s.add_source(read("corruption", "untrusted content"));
        }
        if before.secrets {
            s.add_source(read("secret", "a secret"));
        }
    });
    let gate = Gate::builder(config)
        .store(Box::new(Store::new(scratch.path())))
        .config_file(source.path().map(Path::to_path_buf))
        .untrusted_project(untrusted)
        .project(project.clone())
        .nobody_asked()
        .dry_run()
        .build();
    let offer = FenceOffer::known_each(fence, writes_fence);
    let outcome = gate.decide_guarded(&bash_call(&cwd, &input, &offer));
    Tried {
        outcome,
        before,
        project,
        no_fence,
        ignored,
        untrusted_project,
    }
}

/// The Bash call `check` decides.
fn bash_call<'a>(cwd: &'a Path, input: &'a Value, fence: &'a FenceOffer<'a>) -> ToolCall<'a> {
    ToolCall {
        call_id: None,
        session: SESSION,
        cwd,
        tool: "Bash",
        input,
        fence,
    }
}

/// The decision's one word: allow, fenced, ask or deny.
fn word(d: &Decision) -> &'static str {
    use bashgate::decision::Permission;
    match d.permission {
        Permission::Allow if d.confined() => "fenced",
        Permission::Allow => "allow",
        Permission::Ask => "ask",
        Permission::Deny => "deny",
    }
}

/// What the word means for the command, in a person's terms.
fn meaning(d: &Decision) -> &'static str {
    use bashgate::decision::Permission;
    match d.permission {
        Permission::Allow if d.fence == Some(bashgate::call::FenceKind::Writes) => {
            "it runs with its writes bounded: only the working tree, the temporary directories and the caches may change; the network is allowed"
        }
        Permission::Allow if d.confined() => {
            "it runs inside the fence: no network, protected files read-only"
        }
        Permission::Allow => "bashgate has no objection; your client's own rules decide",
        Permission::Ask => "you are asked before it runs",
        Permission::Deny => "it does not run; the agent is told why",
    }
}

fn rule_of(d: &Decision) -> String {
    d.rule
        .map(|r| format!(" {} {}", r.id(), r.name()))
        .unwrap_or_default()
}

/// The text `check` prints under the analyzer's report.
pub fn report(t: &Tried) -> String {
    use std::fmt::Write as _;
    let d = &t.outcome.decision;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "gate: {}  ({}; {})",
        word(d),
        t.before.describe(),
        meaning(d)
    );
    if t.outcome.said.is_empty() {
        let _ = writeln!(out, "  {}{}: {}", d.layer.as_str(), rule_of(d), d.reason);
    }
    for said in &t.outcome.said {
        let _ = match said {
            Said::Decided(s) | Said::Bounded(s) => writeln!(
                out,
                "  {:<6} {}{}: {}{}",
                word(s),
                s.layer.as_str(),
                rule_of(s),
                s.reason,
                if matches!(said, Said::Bounded(_)) {
                    " (only if it does not run fenced)"
                } else {
                    ""
                }
            ),
            Said::Doubted => writeln!(
                out,
                "  doubt  paths: where the command reaches could not be settled, so it counts as at least unknown"
            ),
            Said::ReviewerSkipped => writeln!(
                out,
                "  note   the reviewer would be asked here; `check` does not call it, so this shows the answer without it"
            ),
        };
    }
    if let (Some(why), false) = (&t.no_fence, d.confined()) {
        let _ = writeln!(out, "  note   the fence cannot run commands here: {why}");
    }
    if let (true, Some(p)) = (t.untrusted_project, &t.project) {
        let _ = writeln!(
            out,
            "  note   you have not trusted {} (`bashgate trust`), so a session there counts as having read untrusted content from its start",
            p.display()
        );
    }
    for i in &t.ignored {
        let _ = writeln!(out, "  note   {i}");
    }
    out
}

/// `check --json`: the analysis and the gate's dry-run answer.
pub fn json(command: &str, analysis: &Analysis, t: &Tried) -> Value {
    let d = &t.outcome.decision;
    json!({
        "command": command,
        "verdict": analysis.verdict,
        "findings": analysis.findings,
        "invocations": analysis.invocations,
        "gate": {
            "decision": word(d),
            "permission": d.permission,
            "layer": d.layer,
            "rule": d.rule,
            "reason": d.reason,
            "session": {
                "untrusted_content": t.before.untrusted,
                "secrets": t.before.secrets,
            },
            "project": t.project,
            "project_trusted": !t.untrusted_project,
            "said": t.outcome.said,
            "fence": t.no_fence.as_deref().unwrap_or("offered"),
            "ignored": t.ignored,
        },
    })
}
