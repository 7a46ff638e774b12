//! `bashgate hook json`: a framework-neutral hook protocol.
//!
//! Reads one JSON object on stdin:
//!
//! ```json
//! {"tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s1", "cwd": "/work"}
//! ```
//!
//! and writes one JSON object on stdout, always with exit status 0:
//!
//! ```json
//! {"decision": "allow" | "deny" | "ask", "reason": "..."}
//! ```
//!
//! or, for a command that may run only fenced (`[confine]`), a decision no
//! caller can mistake for a plain allow:
//!
//! ```json
//! {"decision": "allow-confined", "reason": "...", "command": "<run this instead>", "tool_input": {...}}
//! ```
//!
//! `tool_name` defaults to `Bash`, `session_id` to `default`, `cwd` to the
//! hook's working directory. Every request is a decision to make.

use serde_json::{json, Map, Value};

use super::{Event, FenceRoute, Kind, Protocol, Reply};

/// The session used when the input names none.
pub const DEFAULT_SESSION: &str = "default";

pub struct JsonHook;

impl Protocol for JsonHook {
    // Not a client of the table: a caller's own application.
    const KEY: &'static str = "json";
    const EXPECTED: &'static str =
        "a JSON object: {\"tool_name\", \"tool_input\", \"session_id\", \"cwd\"}";
    const DEFERS_ALLOW: bool = false;
    // The application runs the input this hook hands back.
    const FENCE: FenceRoute = FenceRoute::Rewrite;

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let text = |o: &Map<String, Value>, k: &str| -> Result<Option<String>, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("\"{k}\" in the hook input is not a string")),
            }
        };
        let tool = text(&o, "tool_name")?.unwrap_or_else(|| "Bash".into());
        let session = text(&o, "session_id")?.unwrap_or_else(|| DEFAULT_SESSION.into());
        let cwd = text(&o, "cwd")?.map(Into::into);
        let input = match o.remove("tool_input") {
            Some(v @ Value::Object(_)) => v,
            None | Some(Value::Null) => {
                return Err("the hook input has no \"tool_input\" object \
                     (for a shell command: {\"tool_input\": {\"command\": \"...\"}})"
                    .into())
            }
            Some(_) => return Err("\"tool_input\" in the hook input is not an object".into()),
        };
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind: Kind::Pre,
            session: Some(session),
            cwd,
            tool: Some(tool),
            input,
        })
    }

    /// Exactly `decision` and `reason`.
    fn render(reply: Reply) -> Value {
        match reply {
            Reply::Decision(d) => json!({ "decision": d.permission.as_str(), "reason": d.reason }),
            Reply::Fenced {
                decision, input, ..
            } => json!({
                "decision": "allow-confined",
                "reason": decision.reason,
                "command": input["command"],
                "tool_input": input,
            }),
            // Never produced for this protocol (every request is decided and
            // allows are not deferred). Were it ever, the caller runs nothing
            // unasked: a missing decision must not read as an allow.
            Reply::Nothing | Reply::Warning(_) => json!({
                "decision": "ask",
                "reason": "bashgate made no decision about this call; approve it only if you expect it",
            }),
        }
    }

    fn audit_event(_: &Kind) -> &'static str {
        "hook-json"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;
    use std::path::Path;

    #[test]
    fn decodes_requests_with_defaults() {
        let r = JsonHook::decode(
            br#"{"tool_name":"Bash","tool_input":{"command":"ls"},"session_id":"s","cwd":"/p"}"#,
        )
        .unwrap();
        assert_eq!(r.tool.as_deref(), Some("Bash"));
        assert_eq!(r.session.as_deref(), Some("s"));
        assert_eq!(r.cwd.as_deref(), Some(Path::new("/p")));
        assert_eq!(r.input["command"], "ls");
        let r = JsonHook::decode(br#"{"tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(
            (r.tool.as_deref(), r.session.as_deref()),
            (Some("Bash"), Some("default"))
        );
        assert_eq!(r.cwd, None);
    }

    #[test]
    fn explains_bad_input() {
        let e = |b: &[u8]| JsonHook::decode(b).unwrap_err();
        assert!(e(b"").contains("no input"));
        assert!(e(b"{").contains("not valid JSON"));
        assert!(e(b"[]").contains("not an object"));
        assert!(e(b"{}").contains("tool_input"));
        assert!(e(br#"{"tool_input":"ls"}"#).contains("not an object"));
        assert!(e(br#"{"tool_input":{},"session_id":3}"#).contains("session_id"));
        assert!(e(b"{\"tool_input\":{\"command\":\"\xff\"}}").contains("UTF-8"));
    }

    #[test]
    fn output_has_exactly_decision_and_reason() {
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        assert_eq!(
            JsonHook::render(Reply::Decision(&d)),
            json!({"decision": "deny", "reason": "because"})
        );
    }
}
