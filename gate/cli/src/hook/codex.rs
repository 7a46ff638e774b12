//! Codex CLI's command hook protocol (`hooks.json`, or `[hooks]` in
//! `config.toml`, under `~/.codex/` or a trusted project's `.codex/`).
//!
//! PreToolUse: the event JSON on stdin, shaped like Claude Code's plus
//! `turn_id` and `model`; `tool_name` is `Bash` for every shell tool and the
//! command is `tool_input.command` (some versions send `tool_input.cmd`).
//! The answer, always with exit status 0, is Claude Code's
//! `hookSpecificOutput` shape. Codex honours only `deny` (with a non-empty
//! reason) and `allow` together with `updatedInput`; it rejects `ask`. So:
//! - bashgate's ask becomes a deny whose reason says a person must approve
//!   the command, and how;
//! - a plain allow is `{}` (Codex's own approval policy decides);
//! - a fenced rewrite would have to be an allow, which would bypass Codex's
//!   own approval: the hook does not offer the fence ([`Protocol::FENCE`]
//!   is unavailable) and the old matrix applies.
//!
//! PostToolUse: the taint is recorded, and the answer is `{}`.

use serde_json::{json, Value};

use bashgate::decision::Permission;

use super::names::{self, ClientName};
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Codex;

/// What Codex is told instead of the ask it cannot show.
pub const ASK_AS_DENY: &str = "bashgate wants a person to approve this command, and Codex hooks cannot ask: do not retry it or work around it; tell the user what you wanted to run and why, and let them run it themselves or allow it in bashgate's configuration";

impl Protocol for Codex {
    const EXPECTED: &'static str = "Codex CLI's hook event JSON";
    const DEFERS_ALLOW: bool = true;
    const FENCE: FenceRoute = FenceRoute::Unavailable(
        "this client cannot run a rewritten command without bashgate approving it in the person's place",
    );

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let kind = match o.get("hook_event_name").and_then(Value::as_str) {
            Some("PreToolUse") => Kind::Pre,
            Some("PostToolUse") => Kind::Post,
            Some(other) => Kind::Other(other.to_string()),
            None if o.contains_key("tool_response") || o.contains_key("tool_output") => Kind::Post,
            None => Kind::Pre,
        };
        let tool = names::text(&o, "tool_name");
        let mut input = o.remove("tool_input").unwrap_or(Value::Null);
        // `cmd` in some versions; an array of words in others.
        if let Value::Object(i) = &mut input {
            if !i.contains_key("command") {
                if let Some(cmd) = i.get("cmd").cloned() {
                    i.insert("command".into(), cmd);
                }
            }
            if let Some(Value::Array(words)) = i.get("command") {
                let line = argv_line(words);
                i.insert("command".into(), line.map_or(Value::Null, Value::String));
            }
        }
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: names::text(&o, "session_id"),
            cwd: names::text(&o, "cwd").map(Into::into),
            input: match &tool {
                Some(t) => names::input(ClientName::Codex, t, input),
                None => input,
            },
            tool: tool.map(|t| names::tool(ClientName::Codex, &t)),
        })
    }

    fn render(reply: Reply) -> Value {
        let deny = |reason: &str| {
            json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            })
        };
        match reply {
            Reply::Decision(d) => match d.permission {
                Permission::Deny => deny(&d.reason),
                Permission::Ask => deny(&format!("{ASK_AS_DENY}. Why: {}", d.reason)),
                // Codex ignores an allow without updatedInput; no decision
                // leaves the call to Codex's own approval policy.
                Permission::Allow => json!({}),
            },
            // Not offered to Codex (its `FENCE` is unavailable). Were it ever
            // produced, nothing runs unfenced.
            Reply::Fenced { decision, .. } => deny(&format!(
                "{ASK_AS_DENY}. Why: it may run only fenced, which this client cannot do ({})",
                decision.reason
            )),
            Reply::Nothing => json!({}),
            Reply::Warning(m) => json!({ "systemMessage": m }),
        }
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "codex:PostToolUse",
            _ => "codex:PreToolUse",
        }
    }
}

/// A command given as words (`["bash", "-lc", "ls"]`) as one shell line:
/// the script of `bash -c`/`-lc`, or the words quoted. `None` when a word
/// is not a string.
fn argv_line(words: &[Value]) -> Option<String> {
    let words: Vec<&str> = words.iter().map(Value::as_str).collect::<Option<_>>()?;
    if let [shell, flag, script] = words.as_slice() {
        let shell = shell.rsplit('/').next().unwrap_or(shell);
        if matches!(shell, "bash" | "sh") && matches!(*flag, "-c" | "-lc") {
            return Some(script.to_string());
        }
    }
    Some(
        words
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_command_and_cmd_and_word_lists() {
        let e = Codex::decode(br#"{"session_id":"s","turn_id":"t","model":"m","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(
            (e.kind.clone(), e.tool.as_deref()),
            (Kind::Pre, Some("Bash"))
        );
        assert_eq!(e.input["command"], "ls");
        let e = Codex::decode(br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"cmd":"curl x"}}"#).unwrap();
        assert_eq!(e.input["command"], "curl x");
        let e = Codex::decode(br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["bash","-lc","ls | wc"]}}"#).unwrap();
        assert_eq!(e.input["command"], "ls | wc");
        let e = Codex::decode(
            br#"{"session_id":"s","tool_name":"Bash","tool_input":{"command":["rm","-rf","a b"]}}"#,
        )
        .unwrap();
        assert_eq!(e.input["command"], "'rm' '-rf' 'a b'");
    }

    #[test]
    fn ask_becomes_a_deny_that_says_to_ask_the_person() {
        let d = Decision::ask(
            Layer::Cascade,
            GateRule::RemoteCode,
            "it pipes a download into bash",
        );
        let v = Codex::render(Reply::Decision(&d));
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("person to approve") && reason.contains("pipes a download"));
        let d = Decision::allow(Layer::Cascade, "fine");
        assert_eq!(Codex::render(Reply::Decision(&d)), json!({}));
    }
}
