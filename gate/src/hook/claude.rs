//! `bashgate hook claude`: a Claude Code command hook.
//!
//! PreToolUse: reads the event JSON on stdin and answers, always with exit
//! status 0, `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": "allow" | "deny" | "ask",
//! "permissionDecisionReason": ...}}`. PostToolUse: records the session's
//! taint from what the tool read, and answers `{}`.
//!
//! Claude Code treats a hook's exit status 1 and its timeouts as "proceed",
//! so nothing here may fail silently: bad input, a bad configuration, a
//! panic, or a decision that outlives the budget all become an `on_error`
//! answer with a reason.

use std::io::{self, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{answer, audit_path, base_record, gate_error, start_watchdog, write_audit};
use crate::config;
use crate::decision::{Decision, Layer, Permission};
use crate::engine::{Gate, Outcome, ToolCall};

/// Hook input above this size is refused (with an answer).
pub const MAX_INPUT: u64 = 16 << 20;

pub fn pre_tool_use_output(d: &Decision, defer_allow: bool) -> Value {
    if defer_allow && d.permission == Permission::Allow {
        return json!({});
    }
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": d.permission.as_str(),
            "permissionDecisionReason": d.reason,
        }
    })
}

/// A decoded event.
#[derive(Debug)]
struct Event {
    name: String,
    session: Option<String>,
    cwd: Option<PathBuf>,
    tool: Option<String>,
    input: Value,
}

fn decode(bytes: &[u8]) -> Result<Event, String> {
    let mut o = super::json_object(bytes, "Claude Code's event JSON")?;
    let text = |o: &serde_json::Map<String, Value>, k: &str| {
        o.get(k).and_then(Value::as_str).map(str::to_string)
    };
    let name = text(&o, "hook_event_name").unwrap_or_else(|| {
        if o.contains_key("tool_response") {
            "PostToolUse".into()
        } else {
            "PreToolUse".into()
        }
    });
    Ok(Event {
        session: text(&o, "session_id").filter(|s| !s.is_empty()),
        cwd: text(&o, "cwd").filter(|s| !s.is_empty()).map(PathBuf::from),
        tool: text(&o, "tool_name").filter(|s| !s.is_empty()),
        input: o.remove("tool_input").unwrap_or(Value::Null),
        name,
    })
}

fn process_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// Runs the hook; the process exit status is always 0.
pub fn run(config_flag: Option<&Path>, remote: Option<&str>) {
    let mut buf = Vec::new();
    let read = io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut buf);
    let event = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if buf.len() as u64 > MAX_INPUT => Err(format!(
            "the hook input is larger than {} MiB",
            MAX_INPUT >> 20
        )),
        Ok(_) => decode(&buf),
    };
    drop(buf);
    let cwd = event
        .as_ref()
        .ok()
        .and_then(|e| e.cwd.clone())
        .unwrap_or_else(process_cwd);
    let source = config::discover(config_flag, &cwd);
    let config = match config::load(&source) {
        Ok(c) => c,
        Err(e) => {
            let d = Decision::new(
                Permission::Ask,
                Layer::Config,
                Some(crate::rules::GATE_ERROR),
                format!(
                    "bashgate's configuration is invalid, so it cannot check this call: {e}. \
                     Fix the configuration; until then every call asks the person."
                ),
            );
            if is_pre(&event) {
                answer(&pre_tool_use_output(&d, false));
            } else {
                answer(&json!({}));
                eprintln!("bashgate: {e}");
            }
            return;
        }
    };
    let defer_allow = config.hook.defer_allow;
    let remote = remote
        .map(str::to_string)
        .or_else(|| config.remote.url.clone())
        .map(|url| (url, config.clone()));
    let audit_path = audit_path(&config);
    let audit_on = config.audit.enabled;
    let (budget_ms, on_error, pre) = (config.hook.budget_ms, config.on_error, is_pre(&event));
    let mut gate = Gate::new(config);
    gate.config_file = source.path().map(Path::to_path_buf);
    gate.on_slow(Box::new(move || {
        start_watchdog(budget_ms, on_error, pre.then_some(render_watchdog))
    }));
    let event = match event {
        Ok(e) => e,
        Err(why) => {
            let d = gate_error(&gate, Layer::Input, &why);
            answer(&pre_tool_use_output(&d, false));
            if audit_on {
                write_audit(
                    &audit_path,
                    base_record("unknown", "PreToolUse", "?", &cwd, &d),
                );
            }
            return;
        }
    };
    if let Some((url, config)) = &remote {
        remote_event(
            config,
            gate.config_file.clone(),
            url,
            &event,
            &cwd,
            defer_allow,
        );
        return;
    }
    if event.name == "PostToolUse" {
        post(
            &gate,
            &event,
            &cwd,
            audit_on.then_some(audit_path.as_path()),
        );
        return;
    }
    if event.name != "PreToolUse" {
        // Other events are not ours to decide; answer nothing.
        answer(&json!({}));
        return;
    }
    let (Some(session), Some(tool)) = (event.session.as_deref(), event.tool.as_deref()) else {
        let missing = if event.session.is_none() {
            "session_id"
        } else {
            "tool_name"
        };
        let d = gate_error(
            &gate,
            Layer::Input,
            &format!("the PreToolUse event has no \"{missing}\""),
        );
        answer(&pre_tool_use_output(&d, false));
        if audit_on {
            let r = base_record(
                event.session.as_deref().unwrap_or("unknown"),
                "PreToolUse",
                event.tool.as_deref().unwrap_or("?"),
                &cwd,
                &d,
            );
            write_audit(&audit_path, r);
        }
        return;
    };
    let call = ToolCall {
        session,
        cwd: &cwd,
        tool,
        input: &event.input,
    };
    let outcome =
        catch_unwind(AssertUnwindSafe(|| gate.decide(&call))).unwrap_or_else(|_| Outcome {
            decision: gate_error(
                &gate,
                Layer::Input,
                "bashgate hit an internal error (a bug; please report it)",
            ),
            command: None,
            verdict: None,
            analysis: None,
            taint: None,
        });
    answer(&pre_tool_use_output(&outcome.decision, defer_allow));
    if audit_on {
        let mut r = base_record(session, "PreToolUse", tool, &cwd, &outcome.decision);
        r.command = outcome
            .command
            .clone()
            .or_else(|| Some(crate::decision::excerpt(&event.input.to_string(), 2000)));
        r.verdict = outcome.verdict.map(|v| v.as_str().to_string());
        r.findings = outcome
            .analysis
            .as_ref()
            .map(|a| serde_json::to_string(&a.findings).unwrap_or_default());
        if let Some(t) = outcome.taint {
            r.corruption = Some(t.corruption);
            r.secret = Some(t.secret);
        }
        write_audit(&audit_path, r);
    }
}

/// `--remote`: PreToolUse is decided locally when it can be, else by the
/// daemon; PostToolUse reports what the tool read to the daemon.
fn remote_event(
    config: &crate::config::Config,
    config_file: Option<PathBuf>,
    url: &str,
    event: &Event,
    cwd: &Path,
    defer_allow: bool,
) {
    let (Some(session), Some(tool)) = (event.session.clone(), event.tool.clone()) else {
        if event.name == "PreToolUse" {
            let d = crate::cascade::on_error(
                config.on_error,
                Layer::Input,
                "the PreToolUse event has no \"session_id\" or \"tool_name\"",
            );
            answer(&pre_tool_use_output(&d, false));
        } else {
            answer(&json!({}));
        }
        return;
    };
    let request = crate::hook::json::Request {
        tool,
        input: event.input.clone(),
        session,
        cwd: Some(cwd.to_path_buf()),
    };
    match event.name.as_str() {
        "PreToolUse" => {
            let d = crate::remote::decide_hook(config, config_file, url, &request, cwd);
            answer(&pre_tool_use_output(&d, defer_allow));
        }
        "PostToolUse" => {
            // Report first: the next PreToolUse must see this taint.
            if let Err(e) = crate::remote::report(config, url, &request, cwd) {
                eprintln!("bashgate: taint not reported to the daemon at {url}: {e}");
            }
            answer(&json!({}));
        }
        _ => {
            answer(&json!({}));
        }
    }
}

fn render_watchdog(d: &Decision) -> Value {
    pre_tool_use_output(d, false)
}

fn is_pre(event: &Result<Event, String>) -> bool {
    !matches!(event, Ok(e) if e.name != "PreToolUse")
}

fn post(gate: &Gate, event: &Event, cwd: &Path, audit: Option<&Path>) {
    let (Some(session), Some(tool)) = (event.session.as_deref(), event.tool.as_deref()) else {
        answer(&json!({}));
        eprintln!(
            "bashgate: PostToolUse event without session_id or tool_name; taint not recorded"
        );
        return;
    };
    let call = ToolCall {
        session,
        cwd,
        tool,
        input: &event.input,
    };
    let result = catch_unwind(AssertUnwindSafe(|| gate.record(&call)));
    answer(&json!({}));
    match result {
        Ok(Ok(sources)) if !sources.is_empty() => {
            if let Some(path) = audit {
                let d = Decision::allow(
                    Layer::State,
                    sources
                        .iter()
                        .map(|s| format!("{} taint: {}", s.flag, s.detail))
                        .collect::<Vec<_>>()
                        .join("; "),
                );
                let mut r = base_record(session, "PostToolUse", tool, cwd, &d);
                r.decision = "taint".into();
                r.command = event
                    .input
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                r.corruption = Some(sources.iter().any(|s| s.flag == "corruption"));
                r.secret = Some(sources.iter().any(|s| s.flag == "secret"));
                write_audit(path, r);
            }
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => eprintln!("bashgate: taint not recorded: {e}"),
        Err(_) => {
            eprintln!("bashgate: internal error while recording taint (a bug; please report it)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_events_and_explains_bad_ones() {
        let e = decode(br#"{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(e.name, "PreToolUse");
        assert_eq!(e.session.as_deref(), Some("s"));
        assert_eq!(e.input["command"], "ls");
        assert!(decode(b"").unwrap_err().contains("no input"));
        assert!(decode(b"not json").unwrap_err().contains("not valid JSON"));
        assert!(decode(b"[1]").unwrap_err().contains("not an object"));
        assert!(decode(b"{\"tool_input\":{\"command\":\"\xff\"}}")
            .unwrap_err()
            .contains("UTF-8"));
        let e = decode(br#"{"tool_name":"Read","tool_response":{}}"#).unwrap();
        assert_eq!(e.name, "PostToolUse");
    }

    #[test]
    fn output_shape() {
        let d = Decision::deny(Layer::Always, "BG418", "because");
        let v = pre_tool_use_output(&d, false);
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            "because"
        );
        let a = Decision::allow(Layer::Cascade, "ok");
        assert_eq!(pre_tool_use_output(&a, true), json!({}));
    }
}
