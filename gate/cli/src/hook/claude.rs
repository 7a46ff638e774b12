//! Claude Code's command hook protocol.
//!
//! PreToolUse: the event JSON on stdin; the answer, always with exit status
//! 0, is `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": "allow" | "deny" | "ask",
//! "permissionDecisionReason": ...}}`, or `{}` for no decision.
//! PostToolUse: the taint is recorded, and the answer is `{}`.

use serde_json::{json, Map, Value};

use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Claude;

impl Protocol for Claude {
    const EXPECTED: &'static str = "Claude Code's event JSON";
    const DEFERS_ALLOW: bool = true;
    // Claude Code runs every Bash command through CLAUDE_CODE_SHELL_PREFIX
    // after its own permission rules (verified with 2.1.330).
    const FENCE: FenceRoute = FenceRoute::Wrapper { client: "claude" };

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let text = |o: &Map<String, Value>, k: &str| {
            o.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let kind = match o.get("hook_event_name").and_then(Value::as_str) {
            Some("PreToolUse") => Kind::Pre,
            Some("PostToolUse") => Kind::Post,
            Some(other) => Kind::Other(other.to_string()),
            None if o.contains_key("tool_response") => Kind::Post,
            None => Kind::Pre,
        };
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: text(&o, "session_id"),
            cwd: text(&o, "cwd").map(Into::into),
            tool: text(&o, "tool_name"),
            input: o.remove("tool_input").unwrap_or(Value::Null),
        })
    }

    fn render(reply: Reply) -> Value {
        match reply {
            Reply::Decision(d) => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": d.permission.as_str(),
                    "permissionDecisionReason": d.reason,
                }
            }),
            // The rewritten command replaces the agent's. With no
            // permissionDecision the client's own rules and prompts still
            // apply to it.
            Reply::Fenced {
                decision,
                input,
                approve,
            } => {
                let mut out = json!({
                    "hookEventName": "PreToolUse",
                    "updatedInput": input,
                    "permissionDecisionReason": decision.reason,
                });
                if approve {
                    out["permissionDecision"] = json!("allow");
                }
                json!({ "hookSpecificOutput": out })
            }
            Reply::Nothing => json!({}),
            // Shown to the person; the call itself is not affected.
            Reply::Warning(m) => json!({ "systemMessage": m }),
        }
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "PostToolUse",
            _ => "PreToolUse",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_events_and_explains_bad_ones() {
        let e = Claude::decode(br#"{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(e.kind, Kind::Pre);
        assert_eq!(e.session.as_deref(), Some("s"));
        assert_eq!(e.input["command"], "ls");
        assert!(Claude::decode(b"").unwrap_err().contains("no input"));
        assert!(Claude::decode(b"not json")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(Claude::decode(b"[1]")
            .unwrap_err()
            .contains("not an object"));
        assert!(Claude::decode(b"{\"tool_input\":{\"command\":\"\xff\"}}")
            .unwrap_err()
            .contains("UTF-8"));
        let e = Claude::decode(br#"{"tool_name":"Read","tool_response":{}}"#).unwrap();
        assert_eq!(e.kind, Kind::Post);
        let e = Claude::decode(br#"{"hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(e.kind, Kind::Other("Stop".into()));
    }

    #[test]
    fn output_shape() {
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        let v = Claude::render(Reply::Decision(&d));
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            "because"
        );
        assert_eq!(Claude::render(Reply::Nothing), json!({}));
    }
}
