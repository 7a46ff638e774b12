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
//! Verified against Gemini CLI 0.61.0 (tests/tests/gemini_cli.rs): a deny's
//! reason reaches the model as "Tool execution blocked: REASON"; a rewrite
//! in `hookSpecificOutput.tool_input` runs (the plain fenced line: Gemini
//! CLI refuses `$( )` in commands), and Gemini CLI checks its own
//! policy again on the rewritten input (a rewrite never skips a
//! confirmation the person asked for), so the fence is offered; in
//! headless mode (`-p`) an `ask` ends the session without running the
//! command.

use serde_json::{json, Value};

use super::names::{self, ClientName};
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Gemini;

impl Protocol for Gemini {
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
                Some(t) => names::input(ClientName::Gemini, t, input),
                None => input,
            },
            tool: tool.map(|t| names::tool(ClientName::Gemini, &t)),
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

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "gemini:AfterTool",
            _ => "gemini:BeforeTool",
        }
    }
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
}
