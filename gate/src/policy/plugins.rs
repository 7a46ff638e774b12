//! Plugin hooks: external programs, run in configured order after the
//! built-in layers, each given the request as JSON on stdin and answering
//! `{"decision": "allow" | "deny" | "ask", "reason": "..."}` on stdout.
//! A plugin that cannot start, exits non-zero, outlives its timeout or
//! answers anything else has failed; the caller applies `on_error`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Call, Env, PolicyLayer, Step, Subject};
use crate::config::{Config, PluginConfig};
use crate::decision::{Decision, Layer, Permission};
use crate::rules::GateRule;

/// The layer: the configured plugins, in order.
pub struct Plugins(Vec<PluginConfig>);

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    (!cfg.plugins.is_empty())
        .then(|| Box::new(Plugins(cfg.plugins.clone())) as Box<dyn PolicyLayer + Send + Sync>)
}

impl PolicyLayer for Plugins {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let t = call.tool;
        let mut request = json!({
            "hook_event_name": "PreToolUse",
            "session_id": t.session,
            "cwd": t.cwd.display().to_string(),
            "tool_name": t.tool,
            "tool_input": t.input,
            "taint": call.taint.as_ref().ok(),
        });
        if let Subject::Bash(b) = &call.subject {
            request["analysis"] = serde_json::to_value(b.analysis).unwrap_or(Value::Null);
        }
        env.before_slow();
        let mut asks: Vec<Decision> = Vec::new();
        for p in &self.0 {
            if !p.tools.is_empty() && !p.tools.iter().any(|x| x == t.tool) {
                continue;
            }
            let said = |a: &PluginAnswer| {
                if a.reason.is_empty() {
                    "no reason given".to_string()
                } else {
                    a.reason.clone()
                }
            };
            let rule = GateRule::PluginDeny;
            let d = match run(p, &request) {
                Ok(a) => match a.permission {
                    Permission::Allow => continue,
                    Permission::Deny => Decision::deny(
                        Layer::Plugin,
                        rule,
                        format!(
                            "bashgate stopped this {} call: plugin `{}` denied it: {} ({}).",
                            t.tool,
                            p.name,
                            said(&a),
                            rule.tag()
                        ),
                    ),
                    Permission::Ask => Decision::ask(
                        Layer::Plugin,
                        rule,
                        format!(
                            "bashgate asks the person: plugin `{}` wants approval: {}",
                            p.name,
                            said(&a)
                        ),
                    ),
                },
                Err(e) => Decision::on_error(
                    env.config().on_error,
                    Layer::Plugin,
                    &format!("plugin `{}` {e}", p.name),
                ),
            };
            match d.permission {
                Permission::Deny => return Step::Decide(d),
                Permission::Ask => asks.push(d),
                Permission::Allow => {}
            }
        }
        let mut asks = asks.into_iter();
        match asks.next() {
            None => Step::Pass,
            Some(mut first) => {
                for other in asks {
                    first.reason.push_str(" Also: ");
                    first.reason.push_str(&other.reason);
                }
                Step::Decide(first)
            }
        }
    }
}

const MAX_OUTPUT: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginAnswer {
    pub permission: Permission,
    pub reason: String,
}

/// Runs one plugin on a request.
pub fn run(p: &PluginConfig, request: &Value) -> Result<PluginAnswer, String> {
    let mut child = Command::new(&p.command[0])
        .args(&p.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", p.command[0]))?;
    let body = serde_json::to_vec(request).unwrap_or_default();
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&body);
        }
        drop(stdin);
    });
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(MAX_OUTPUT).read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    let (etx, erx) = mpsc::channel();
    let stderr = child.stderr.take();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr {
            let _ = s.take(4096).read_to_end(&mut buf);
        }
        let _ = etx.send(buf);
    });
    let deadline = Instant::now() + Duration::from_millis(p.timeout_ms);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not answer within {} ms", p.timeout_ms));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let _ = writer.join();
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(50));
    let out = rx
        .recv_timeout(left)
        .map_err(|_| "its output did not close in time".to_string())?;
    if !status.success() {
        let err = erx
            .recv_timeout(Duration::from_millis(50))
            .unwrap_or_default();
        let err = String::from_utf8_lossy(&err);
        return Err(format!(
            "exited with {status}{}",
            if err.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", crate::decision::excerpt(err.trim(), 200))
            }
        ));
    }
    parse_answer(&out)
}

/// Reads a plugin's answer.
pub fn parse_answer(out: &[u8]) -> Result<PluginAnswer, String> {
    let text =
        std::str::from_utf8(out).map_err(|_| "answered bytes that are not UTF-8".to_string())?;
    let v: Value = serde_json::from_str(text.trim()).map_err(|_| {
        format!(
            "answered something that is not a JSON object: `{}`",
            crate::decision::excerpt(text.trim(), 80)
        )
    })?;
    let obj = v
        .as_object()
        .ok_or_else(|| "answered JSON that is not an object".to_string())?;
    let permission = match obj.get("decision") {
        None | Some(Value::Null) => Permission::Allow,
        Some(Value::String(s)) => match s.as_str() {
            "allow" => Permission::Allow,
            "deny" | "block" => Permission::Deny,
            "ask" => Permission::Ask,
            other => return Err(format!("answered an unknown decision `{other}`")),
        },
        Some(_) => return Err("answered a decision that is not a string".to_string()),
    };
    let reason = obj
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok(PluginAnswer { permission, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(parse_answer(b"{}").unwrap().permission, Permission::Allow);
        let a = parse_answer(br#"{"decision":"deny","reason":"no rm -rf /"}"#).unwrap();
        assert_eq!(a.permission, Permission::Deny);
        assert_eq!(a.reason, "no rm -rf /");
        assert!(parse_answer(b"yes").is_err());
        assert!(parse_answer(b"").is_err());
        assert!(parse_answer(br#"{"decision":"maybe"}"#).is_err());
        assert!(parse_answer(b"[1]").is_err());
    }

    fn plugin(script: &str, timeout_ms: u64) -> PluginConfig {
        PluginConfig {
            name: "t".into(),
            command: vec!["sh".into(), "-c".into(), script.into()],
            timeout_ms,
            tools: vec![],
        }
    }

    #[test]
    fn real_processes() {
        let req = serde_json::json!({"tool_name": "Bash"});
        let a = run(
            &plugin(
                "cat >/dev/null; echo '{\"decision\":\"deny\",\"reason\":\"r\"}'",
                5000,
            ),
            &req,
        )
        .unwrap();
        assert_eq!(a.permission, Permission::Deny);
        assert!(run(&plugin("exit 3", 5000), &req)
            .unwrap_err()
            .contains("exited"));
        assert!(run(&plugin("sleep 5", 200), &req)
            .unwrap_err()
            .contains("within"));
        assert!(run(&plugin("echo garbage", 5000), &req).is_err());
        let p = PluginConfig {
            command: vec!["/nonexistent/plugin".into()],
            ..plugin("", 100)
        };
        assert!(run(&p, &req).unwrap_err().contains("cannot start"));
    }
}
