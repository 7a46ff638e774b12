//! GitHub Copilot CLI's command hook protocol (`.github/hooks/*.json`,
//! `{"version": 1, "hooks": {"preToolUse": [...], "postToolUse": [...]}}`).
//!
//! preToolUse: `{sessionId, timestamp, cwd, toolName, toolArgs}` on stdin
//! (`toolArgs` may be a JSON string), or the snake_case variant Copilot
//! sends to hooks configured under PascalCase event names (`session_id`,
//! `tool_name`, `tool_input`). The answer, always with exit status 0, is
//! `{"permissionDecision": "allow" | "deny" | "ask",
//! "permissionDecisionReason": ...}`, or `{}` for no decision.
//! postToolUse (it carries `toolResult`): the taint is recorded, and the
//! answer is `{}`.
//!
//! Since Copilot CLI 1.0.57 a hook that fails denies the call, but one
//! that times out lets the tool run, so `bashgate init copilot` writes a
//! timeout above bashgate's own budget.
//! Copilot documents `modifiedArgs` to rewrite a call; not verified against
//! the real client here, so the fence is not offered and the old matrix
//! applies.

use serde_json::{json, Map, Value};

use super::names;
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Copilot;

impl Protocol for Copilot {
    const KEY: &'static str = "copilot";
    const EXPECTED: &'static str = "GitHub Copilot CLI's hook event JSON";
    const DEFERS_ALLOW: bool = true;
    const FENCE: FenceRoute = FenceRoute::Unavailable(
        "this client cannot run a rewritten command without bashgate approving it in the person's place",
    );

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let first =
            |o: &Map<String, Value>, keys: &[&str]| keys.iter().find_map(|k| names::text(o, k));
        let named = first(&o, &["hookEventName", "hook_event_name"]);
        let kind = match named.as_deref() {
            Some("preToolUse" | "PreToolUse") => Kind::Pre,
            Some("postToolUse" | "PostToolUse") => Kind::Post,
            Some(other) => Kind::Other(other.to_string()),
            None if ["toolResult", "tool_result", "tool_response"]
                .iter()
                .any(|k| o.contains_key(*k)) =>
            {
                Kind::Post
            }
            None => Kind::Pre,
        };
        let tool = first(&o, &["toolName", "tool_name"]);
        let args = o
            .remove("toolArgs")
            .or_else(|| o.remove("tool_input"))
            .unwrap_or(Value::Null);
        // toolArgs may come as the JSON text of the arguments.
        let input = match args {
            Value::String(text) => serde_json::from_str(&text).map_err(|e| {
                format!("\"toolArgs\" is a string but not the JSON of the tool's arguments ({e})")
            })?,
            other => other,
        };
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: first(&o, &["sessionId", "session_id"]),
            cwd: first(&o, &["cwd"]).map(Into::into),
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
                "permissionDecision": d.permission.as_str(),
                "permissionDecisionReason": d.reason,
            }),
            // Not offered (its `FENCE` is unavailable); were it ever produced, the
            // person decides and nothing runs unasked.
            Reply::Fenced { decision, .. } => json!({
                "permissionDecision": "ask",
                "permissionDecisionReason": format!("bashgate would run this only fenced, which this client cannot do: {}", decision.reason),
            }),
            Reply::Nothing | Reply::Warning(_) => json!({}),
        }
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "copilot:postToolUse",
            _ => "copilot:preToolUse",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_both_payload_formats_and_string_args() {
        let e = Copilot::decode(br#"{"sessionId":"s","timestamp":1764000000000,"cwd":"/p","toolName":"bash","toolArgs":"{\"command\":\"ls -la\",\"description\":\"list\"}"}"#).unwrap();
        assert_eq!(
            (e.kind.clone(), e.tool.as_deref()),
            (Kind::Pre, Some("Bash"))
        );
        assert_eq!(e.input["command"], "ls -la");
        assert_eq!(e.session.as_deref(), Some("s"));
        let e = Copilot::decode(br#"{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/p","tool_name":"view","tool_input":{"path":"/p/.env"}}"#).unwrap();
        assert_eq!(
            (e.kind.clone(), e.tool.as_deref()),
            (Kind::Pre, Some("Read"))
        );
        let e = Copilot::decode(br#"{"sessionId":"s","toolName":"web_fetch","toolArgs":{"url":"https://x"},"toolResult":{"resultType":"success","textResultForLlm":"hi"}}"#).unwrap();
        assert_eq!((e.kind, e.tool.as_deref()), (Kind::Post, Some("WebFetch")));
        assert!(
            Copilot::decode(br#"{"sessionId":"s","toolName":"bash","toolArgs":"{not json"}"#)
                .unwrap_err()
                .contains("toolArgs")
        );
    }

    #[test]
    fn output_shape() {
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        assert_eq!(
            Copilot::render(Reply::Decision(&d)),
            json!({"permissionDecision": "deny", "permissionDecisionReason": "because"})
        );
        assert_eq!(Copilot::render(Reply::Nothing), json!({}));
    }
}
