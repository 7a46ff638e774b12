//! `bashgate hook json`: a framework-neutral hook.
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
//! `tool_name` defaults to `Bash`, `session_id` to `default`, `cwd` to the
//! hook's working directory. Bad input, a bad configuration, an internal
//! error or a decision that outlives `hook.budget_ms` all become the
//! configured `on_error` answer with a reason that says what happened.

use std::io::{self, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{answer, audit_path, base_record, gate_error, start_watchdog, write_audit};
use crate::config::{self, Config};
use crate::decision::{excerpt, Decision, Layer, Permission};
use crate::engine::{Gate, Outcome, ToolCall};

/// Input above this size is refused (with an answer).
pub const MAX_INPUT: u64 = 16 << 20;

/// The session used when the input names none.
pub const DEFAULT_SESSION: &str = "default";

/// One decoded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub tool: String,
    pub input: Value,
    pub session: String,
    pub cwd: Option<PathBuf>,
}

/// The answer's JSON: exactly `decision` and `reason`.
pub fn output(d: &Decision) -> Value {
    json!({ "decision": d.permission.as_str(), "reason": d.reason })
}

pub fn decode(bytes: &[u8]) -> Result<Request, String> {
    let mut o = super::json_object(
        bytes,
        "a JSON object: {\"tool_name\", \"tool_input\", \"session_id\", \"cwd\"}",
    )?;
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
    let cwd = text(&o, "cwd")?.map(PathBuf::from);
    let input = match o.remove("tool_input") {
        Some(v @ Value::Object(_)) => v,
        None | Some(Value::Null) => {
            return Err("the hook input has no \"tool_input\" object \
                 (for a shell command: {\"tool_input\": {\"command\": \"...\"}})"
                .into())
        }
        Some(_) => return Err("\"tool_input\" in the hook input is not an object".into()),
    };
    Ok(Request {
        tool,
        input,
        session,
        cwd,
    })
}

/// Reads stdin, bounded; the decoded request or why it cannot be used.
pub fn read_request() -> Result<Request, String> {
    let mut buf = Vec::new();
    match io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut buf) {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if buf.len() as u64 > MAX_INPUT => Err(format!(
            "the hook input is larger than {} MiB",
            MAX_INPUT >> 20
        )),
        Ok(_) => decode(&buf),
    }
}

fn process_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// Loads the configuration for a request's working directory. A bad
/// configuration is an `ask` decision that says so.
pub fn load_config(
    config_flag: Option<&Path>,
    cwd: &Path,
) -> Result<(Config, Option<PathBuf>), Decision> {
    let source = config::discover(config_flag, cwd);
    match config::load(&source) {
        Ok(c) => Ok((c, source.path().map(Path::to_path_buf))),
        Err(e) => Err(Decision::new(
            Permission::Ask,
            Layer::Config,
            Some(crate::rules::GATE_ERROR),
            format!(
                "bashgate's configuration is invalid, so it cannot check this call: {e}. \
                 Fix the configuration; until then every call asks the person."
            ),
        )),
    }
}

/// Runs the hook with the local engine; the exit status is always 0.
pub fn run(config_flag: Option<&Path>, remote: Option<&str>) {
    let request = read_request();
    let cwd = request
        .as_ref()
        .ok()
        .and_then(|r| r.cwd.clone())
        .unwrap_or_else(process_cwd);
    let (config, config_file) = match load_config(config_flag, &cwd) {
        Ok(c) => c,
        Err(d) => {
            answer(&output(&d));
            return;
        }
    };
    if let Some(url) = remote
        .map(str::to_string)
        .or_else(|| config.remote.url.clone())
    {
        let d = match &request {
            Ok(r) => crate::remote::decide_hook(&config, config_file, &url, r, &cwd),
            Err(why) => crate::cascade::on_error(config.on_error, Layer::Input, why),
        };
        answer(&output(&d));
        return;
    }
    let audit_file = audit_path(&config);
    let audit_on = config.audit.enabled;
    let (budget_ms, on_error) = (config.hook.budget_ms, config.on_error);
    let mut gate = Gate::new(config);
    gate.config_file = config_file;
    gate.on_slow(Box::new(move || {
        start_watchdog(budget_ms, on_error, Some(output))
    }));
    let request = match request {
        Ok(r) => r,
        Err(why) => {
            let d = gate_error(&gate, Layer::Input, &why);
            answer(&output(&d));
            if audit_on {
                write_audit(
                    &audit_file,
                    base_record("unknown", "hook-json", "?", &cwd, &d),
                );
            }
            return;
        }
    };
    let outcome = decide(&gate, &request, &cwd);
    answer(&output(&outcome.decision));
    if audit_on {
        write_audit(
            &audit_file,
            outcome_record(&request, "hook-json", &cwd, &outcome),
        );
    }
}

/// The engine's decision for a request; a panic is an `on_error` answer.
pub fn decide(gate: &Gate, request: &Request, cwd: &Path) -> Outcome {
    let call = ToolCall {
        session: &request.session,
        cwd,
        tool: &request.tool,
        input: &request.input,
    };
    catch_unwind(AssertUnwindSafe(|| gate.decide(&call))).unwrap_or_else(|_| Outcome {
        decision: gate_error(
            gate,
            Layer::Input,
            "bashgate hit an internal error (a bug; please report it)",
        ),
        command: None,
        verdict: None,
        analysis: None,
        taint: None,
    })
}

/// The audit record of a decided request.
pub fn outcome_record(
    request: &Request,
    event: &str,
    cwd: &Path,
    outcome: &Outcome,
) -> crate::audit::Record {
    let mut r = base_record(
        &request.session,
        event,
        &request.tool,
        cwd,
        &outcome.decision,
    );
    r.command = outcome
        .command
        .clone()
        .or_else(|| Some(excerpt(&request.input.to_string(), 2000)));
    r.verdict = outcome.verdict.map(|v| v.as_str().to_string());
    r.findings = outcome
        .analysis
        .as_ref()
        .map(|a| serde_json::to_string(&a.findings).unwrap_or_default());
    if let Some(t) = outcome.taint {
        r.corruption = Some(t.corruption);
        r.secret = Some(t.secret);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_requests_with_defaults() {
        let r = decode(
            br#"{"tool_name":"Bash","tool_input":{"command":"ls"},"session_id":"s","cwd":"/p"}"#,
        )
        .unwrap();
        assert_eq!(r.tool, "Bash");
        assert_eq!(r.session, "s");
        assert_eq!(r.cwd.as_deref(), Some(Path::new("/p")));
        assert_eq!(r.input["command"], "ls");
        let r = decode(br#"{"tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!((r.tool.as_str(), r.session.as_str()), ("Bash", "default"));
        assert_eq!(r.cwd, None);
    }

    #[test]
    fn explains_bad_input() {
        assert!(decode(b"").unwrap_err().contains("no input"));
        assert!(decode(b"{").unwrap_err().contains("not valid JSON"));
        assert!(decode(b"[]").unwrap_err().contains("not an object"));
        assert!(decode(b"{}").unwrap_err().contains("tool_input"));
        assert!(decode(br#"{"tool_input":"ls"}"#)
            .unwrap_err()
            .contains("not an object"));
        assert!(decode(br#"{"tool_input":{},"session_id":3}"#)
            .unwrap_err()
            .contains("session_id"));
        assert!(decode(b"{\"tool_input\":{\"command\":\"\xff\"}}")
            .unwrap_err()
            .contains("UTF-8"));
    }

    #[test]
    fn output_has_exactly_decision_and_reason() {
        let d = Decision::deny(Layer::Always, "BG418", "because");
        assert_eq!(output(&d), json!({"decision": "deny", "reason": "because"}));
    }
}
