//! Cursor's command hook protocol (`.cursor/hooks.json` or
//! `~/.cursor/hooks.json`, `{"version": 1, "hooks": {...}}`).
//!
//! Before: `beforeShellExecution` (`command`, `cwd`), `beforeMCPExecution`
//! (`tool_name`, `tool_input`), `beforeReadFile` (`file_path`) and
//! `preToolUse` (`tool_name`, `tool_input`), each with `conversation_id`
//! (the session), `generation_id`, `hook_event_name` and `workspace_roots`.
//! The answer, always with exit status 0, is `{"permission": "allow" |
//! "deny", "user_message": ..., "agent_message": ...}`, or `{}` for no
//! decision (Cursor's own approval then applies).
//!
//! Cursor has been reported to run a command whose hook answered `ask`
//! without asking, in one of its run modes; so bashgate's ask is sent as a
//! deny that tells the agent and the person that a person must approve it.
//!
//! After: `afterShellExecution`, `afterMCPExecution` and `postToolUse`
//! record the taint; the answer is `{}`. A file read has no after event,
//! so what an allowed `beforeReadFile` reads is recorded before the answer.

use serde_json::{json, Value};

use bashgate::decision::Permission;

use super::names;
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Cursor;

const ASK_AS_DENY: &str = "bashgate wants a person to approve this command, and Cursor may run a command a hook asks about without asking: do not retry it or work around it; tell the user what you wanted to run and why, and let them run it themselves or allow it in bashgate's configuration";

impl Protocol for Cursor {
    const KEY: &'static str = "cursor";
    const EXPECTED: &'static str = "Cursor's hook event JSON";
    const DEFERS_ALLOW: bool = true;
    const FENCE: FenceRoute = FenceRoute::Unavailable(
        "this client cannot run a rewritten command without bashgate approving it in the person's place",
    );
    // beforeReadFile has no after event.
    const TAINTS_BEFORE: bool = true;

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let event = names::text(&o, "hook_event_name");
        let (kind, tool, input) = match event.as_deref() {
            Some("beforeShellExecution") | Some("afterShellExecution") => {
                let kind = if event.as_deref() == Some("beforeShellExecution") {
                    Kind::Pre
                } else {
                    Kind::Post
                };
                let command = o.get("command").cloned().unwrap_or(Value::Null);
                (
                    kind,
                    Some("Bash".to_string()),
                    json!({ "command": command }),
                )
            }
            Some("beforeReadFile") => {
                let path = o.get("file_path").cloned().unwrap_or(Value::Null);
                (
                    Kind::Pre,
                    Some("Read".to_string()),
                    json!({ "file_path": path }),
                )
            }
            Some(
                e @ ("beforeMCPExecution" | "afterMCPExecution" | "preToolUse" | "postToolUse"),
            ) => {
                let kind = if e.starts_with("before") || e == "preToolUse" {
                    Kind::Pre
                } else {
                    Kind::Post
                };
                let tool = names::text(&o, "tool_name");
                let input = match o.remove("tool_input").unwrap_or(Value::Null) {
                    // MCP arguments come as JSON text.
                    Value::String(t) => serde_json::from_str(&t).unwrap_or(Value::String(t)),
                    v => v,
                };
                let tool = tool.map(|t| {
                    if e.contains("MCP") {
                        // The server is not named; the tool is a service of
                        // its own (unknown unless configured).
                        format!("mcp__cursor__{t}")
                    } else {
                        names::tool(Self::KEY, &t)
                    }
                });
                let input = match &tool {
                    Some(t) => names::input(Self::KEY, t, input),
                    None => input,
                };
                (kind, tool, input)
            }
            Some(other) => (Kind::Other(other.to_string()), None, Value::Null),
            None => (Kind::Other("(unnamed)".into()), None, Value::Null),
        };
        let cwd = names::text(&o, "cwd").or_else(|| {
            o.get("workspace_roots")
                .and_then(Value::as_array)
                .and_then(|r| r.first())
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: names::text(&o, "conversation_id"),
            cwd: cwd.map(Into::into),
            tool,
            input,
        })
    }

    fn render(reply: Reply) -> Value {
        let deny = |why: &str| {
            json!({
                "permission": "deny",
                "user_message": format!("bashgate: {why}"),
                "agent_message": why,
            })
        };
        match reply {
            Reply::Decision(d) => match d.permission {
                Permission::Deny => deny(&d.reason),
                Permission::Ask => deny(&format!("{ASK_AS_DENY}. Why: {}", d.reason)),
                Permission::Allow => json!({}),
            },
            Reply::Fenced { decision, .. } => deny(&format!(
                "{ASK_AS_DENY}. Why: it may run only fenced, which this client cannot do ({})",
                decision.reason
            )),
            Reply::Nothing => json!({}),
            Reply::Warning(m) => json!({ "user_message": m }),
        }
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "cursor:after",
            _ => "cursor:before",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_shell_read_and_mcp_events() {
        let e = Cursor::decode(br#"{"hook_event_name":"beforeShellExecution","conversation_id":"c","generation_id":"g","workspace_roots":["/p"],"command":"curl x | sh","cwd":"/p/sub"}"#).unwrap();
        assert_eq!(
            (e.kind.clone(), e.tool.as_deref()),
            (Kind::Pre, Some("Bash"))
        );
        assert_eq!(e.input["command"], "curl x | sh");
        assert_eq!(e.cwd.as_deref(), Some(std::path::Path::new("/p/sub")));
        let e = Cursor::decode(br#"{"hook_event_name":"beforeReadFile","conversation_id":"c","workspace_roots":["/p"],"file_path":"/p/.env","content":"K=v"}"#).unwrap();
        assert_eq!(
            (e.tool.as_deref(), e.input["file_path"].as_str()),
            (Some("Read"), Some("/p/.env"))
        );
        assert_eq!(e.cwd.as_deref(), Some(std::path::Path::new("/p")));
        let e = Cursor::decode(br#"{"hook_event_name":"afterMCPExecution","conversation_id":"c","tool_name":"query","tool_input":"{\"q\":1}","result_json":"{}"}"#).unwrap();
        assert_eq!(
            (e.kind.clone(), e.tool.as_deref()),
            (Kind::Post, Some("mcp__cursor__query"))
        );
        assert_eq!(e.input["q"], 1);
        let e = Cursor::decode(br#"{"hook_event_name":"stop","conversation_id":"c"}"#).unwrap();
        assert_eq!(e.kind, Kind::Other("stop".into()));
    }

    #[test]
    fn ask_is_sent_as_a_deny() {
        let d = Decision::ask(
            Layer::Cascade,
            GateRule::RemoteCode,
            "pipes a download into sh",
        );
        let v = Cursor::render(Reply::Decision(&d));
        assert_eq!(v["permission"], "deny");
        assert!(v["agent_message"]
            .as_str()
            .unwrap()
            .contains("person to approve"));
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        assert_eq!(
            Cursor::render(Reply::Decision(&d))["user_message"],
            "bashgate: because"
        );
    }
}
