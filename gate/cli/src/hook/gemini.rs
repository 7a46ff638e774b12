//! Gemini CLI's command hook protocol (`hooks.BeforeTool` and
//! `hooks.AfterTool` in `.gemini/settings.json`).
//!
//! BeforeTool: the event JSON on stdin (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `timestamp`); the answer,
//! always with exit status 0, is `{"decision": "allow" | "deny" | "ask",
//! "reason": ...}`, a rewrite as `hookSpecificOutput.tool_input`, or `{}`
//! for no decision (Gemini CLI's own approval then applies). AfterTool: the
//! taint is recorded and the answer is `{}`.
//!
//! Verified against Gemini CLI 0.61.0 (tests/tests/agent_clients.rs): a deny's
//! reason reaches the model as "Tool execution blocked: REASON"; a rewrite
//! in `hookSpecificOutput.tool_input` runs (the plain fenced line: Gemini
//! CLI refuses `$( )` in commands), and Gemini CLI checks its own
//! policy again on the rewritten input (a rewrite never skips a
//! confirmation the person asked for), so the fence is offered; in
//! headless mode (`-p`) an `ask` ends the session without running the
//! command.

use std::path::Path;

use serde_json::{json, Value};

use super::names;
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Gemini;

impl Protocol for Gemini {
    const KEY: &'static str = "gemini";
    const EXPECTED: &'static str = "Gemini CLI's hook event JSON";
    const DEFERS_ALLOW: bool = true;
    // Gemini CLI's policy rules judge a command after this hook has
    // changed it, and it has no setting that runs its commands through a
    // wrapper (verified with 0.61.0): the person's rules would judge
    // bashgate's line instead of the agent's, so nothing is rewritten.
    const FENCE: FenceRoute = FenceRoute::Unavailable(
        "Gemini CLI's own rules would judge a rewritten command instead of the agent's, and it has no setting that runs its commands through bashgate's wrapper",
    );

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let kind = match o.get("hook_event_name").and_then(Value::as_str) {
            Some("BeforeTool") => Kind::Pre,
            Some("AfterTool") => Kind::Post,
            Some(other) => Kind::Other(other.to_string()),
            None if o.contains_key("tool_response") => Kind::Post,
            None => Kind::Pre,
        };
        let tool = names::text(&o, "tool_name");
        let input = o.remove("tool_input").unwrap_or(Value::Null);
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: names::text(&o, "session_id"),
            cwd: names::text(&o, "cwd").map(Into::into),
            input: match &tool {
                Some(t) => names::input(Self::KEY, t, input),
                None => input,
            },
            tool: tool.map(|t| names::tool(Self::KEY, &t)),
        })
    }

    fn render(reply: Reply) -> Value {
        match reply {
            Reply::Decision(d) => json!({
                "decision": d.permission.as_str(),
                "reason": d.reason,
            }),
            // The rewritten input replaces the agent's; without a decision
            // Gemini CLI's own approval still applies to it.
            Reply::Fenced {
                decision,
                input,
                approve,
            } => {
                let mut out = json!({
                    "reason": decision.reason,
                    "hookSpecificOutput": {
                        "hookEventName": "BeforeTool",
                        "tool_input": input,
                    },
                });
                if approve {
                    out["decision"] = json!("allow");
                }
                out
            }
            Reply::Nothing => json!({}),
            Reply::Warning(m) => json!({ "systemMessage": m }),
        }
    }

    fn project_untrusted(project: &Path, home: &Path) -> Option<String> {
        project_trust(project, home)
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "gemini:AfterTool",
            _ => "gemini:BeforeTool",
        }
    }
}

/// Gemini CLI loads a folder's settings (and hooks) only when the person
/// trusts it, unless they turned folder trust off.
fn project_trust(project: &Path, home: &Path) -> Option<String> {
    let settings: Value = std::fs::read_to_string(home.join(".gemini/settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    if settings["security"]["folderTrust"]["enabled"] == Value::Bool(false) {
        return None;
    }
    if std::env::var_os("GEMINI_CLI_TRUST_WORKSPACE").is_some_and(|v| v == "true") {
        return None;
    }
    let trusted: Value = std::fs::read_to_string(home.join(".gemini/trustedFolders.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    // TRUST_FOLDER trusts a folder and what is under it; TRUST_PARENT the
    // folder's parent and what is under that.
    let ok = trusted.as_object().is_some_and(|rules| {
        rules.iter().any(|(path, rule)| {
            let path = Path::new(path);
            match rule.as_str() {
                Some("TRUST_FOLDER") => project.starts_with(path),
                Some("TRUST_PARENT") => path.parent().is_some_and(|p| project.starts_with(p)),
                _ => false,
            }
        })
    });
    (!ok).then(|| format!("{} is not a trusted folder for Gemini CLI, which then ignores the project's settings and refuses to run headless: trust it (Gemini CLI's trust dialog, or \"{}\": \"TRUST_FOLDER\" in ~/.gemini/trustedFolders.json)", project.display(), project.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_shell_and_after_events() {
        let e = Gemini::decode(br#"{"session_id":"s","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-11-24T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"ls","description":"list"}}"#).unwrap();
        assert_eq!(e.kind, Kind::Pre);
        assert_eq!(e.tool.as_deref(), Some("Bash"));
        assert_eq!(e.input["command"], "ls");
        let e = Gemini::decode(br#"{"session_id":"s","hook_event_name":"AfterTool","tool_name":"web_fetch","tool_input":{"prompt":"https://x"},"tool_response":{"llmContent":"hi"}}"#).unwrap();
        assert_eq!(e.kind, Kind::Post);
        assert_eq!(e.tool.as_deref(), Some("WebFetch"));
        let e = Gemini::decode(br#"{"hook_event_name":"SessionStart"}"#).unwrap();
        assert_eq!(e.kind, Kind::Other("SessionStart".into()));
    }

    #[test]
    fn output_shape() {
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        assert_eq!(
            Gemini::render(Reply::Decision(&d)),
            json!({"decision": "deny", "reason": "because"})
        );
        assert_eq!(Gemini::render(Reply::Nothing), json!({}));
    }

    /// Gemini CLI ignores an untrusted folder's settings, hooks and all.
    #[test]
    fn doctor_reports_an_untrusted_folder() {
        use crate::doctor::tests::{program, report};
        let t = tempfile::tempdir().unwrap();
        let (proj, home, bin) = (t.path().join("p"), t.path().join("h"), t.path().join("b"));
        for d in [&proj, &home, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        program(&bin.join("gemini"));
        let c = bashgate::clients::get(Gemini::KEY).unwrap();
        let exe = std::env::current_exe().unwrap();
        let good = format!("{} hook gemini", exe.display());
        crate::init::install(c, &proj.join(&c.hook_file), &good, 60).unwrap();
        let r = report(Gemini::KEY, &proj, Some(&home), bin.to_str());
        assert_eq!(r.status, "broken");
        assert!(r.wirings[0].problems[0].contains("trusted folder"));
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let canon = proj.canonicalize().unwrap();
        std::fs::write(
            home.join(".gemini/trustedFolders.json"),
            format!("{{\"{}\": \"TRUST_PARENT\"}}", canon.join("sub").display()),
        )
        .unwrap();
        assert_eq!(
            report(Gemini::KEY, &proj, Some(&home), bin.to_str()).status,
            "enforced"
        );
        // Wired and would fire, but no `gemini` on this PATH runs it.
        assert_eq!(
            report(Gemini::KEY, &proj, Some(&home), Some("")).status,
            "not installed"
        );
    }
}
