//! Agent integrations. Each adapter decodes its host's event, asks the
//! engine (or the host daemon), and answers in its host's format within its
//! host's budget.

pub mod claude;
pub mod json;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::audit::{self, Audit, Record};
use crate::cascade;
use crate::config::{Config, OnError};
use crate::decision::{Decision, Layer};
use crate::engine::Gate;
use crate::taint;

/// The hook's input as a JSON object, or why it is not one. `expected`
/// says what should have come on stdin.
pub(crate) fn json_object(
    bytes: &[u8],
    expected: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "the hook received no input (expected {expected} on stdin)"
        ));
    }
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(format!(
            "the hook input is not valid UTF-8 (at byte {})",
            e.valid_up_to()
        ));
    }
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("the hook input is not valid JSON ({e})"))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err("the hook input is JSON but not an object".into()),
    }
}

static ANSWERED: AtomicBool = AtomicBool::new(false);

/// Writes the answer once; later calls (the watchdog racing the decision)
/// write nothing.
pub(crate) fn answer(v: &Value) -> bool {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return false;
    }
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
    true
}

/// Answers `on_error` (rendered by `render`, or `{}` when there is nothing
/// to decide) and exits if the decision is not made within the budget.
/// Started only before an operation that may block.
pub(crate) fn start_watchdog(
    budget_ms: u64,
    on_error: OnError,
    render: Option<fn(&Decision) -> Value>,
) {
    let budget = Duration::from_millis(budget_ms);
    std::thread::spawn(move || {
        std::thread::sleep(budget);
        if ANSWERED.load(Ordering::SeqCst) {
            return;
        }
        let v = match render {
            Some(render) => {
                let d = cascade::on_error(
                    on_error,
                    Layer::Input,
                    &format!(
                        "the decision took longer than hook.budget_ms ({} ms)",
                        budget.as_millis()
                    ),
                );
                render(&d)
            }
            None => serde_json::json!({}),
        };
        if answer(&v) {
            std::process::exit(0);
        }
    });
}

pub(crate) fn gate_error(gate: &Gate, layer: Layer, why: &str) -> Decision {
    cascade::on_error(gate.on_error_mode(), layer, why)
}

pub(crate) fn audit_path(config: &Config) -> PathBuf {
    config
        .audit
        .path
        .clone()
        .unwrap_or_else(|| config.state_dir().join("audit.db"))
}

pub(crate) fn base_record(
    session: &str,
    event: &str,
    tool: &str,
    cwd: &Path,
    d: &Decision,
) -> Record {
    let now = taint::now_ms() as i64;
    Record {
        time: audit::rfc3339(now),
        unix_ms: now,
        session: session.to_string(),
        event: event.to_string(),
        tool: tool.to_string(),
        cwd: Some(cwd.display().to_string()),
        layer: d.layer.as_str().to_string(),
        rule: d.rule.clone(),
        decision: d.permission.as_str().to_string(),
        reason: d.reason.clone(),
        ..Default::default()
    }
}

/// Writes an audit record; a failure is reported on stderr and changes
/// nothing else.
pub(crate) fn write_audit(path: &Path, r: Record) {
    if let Err(e) = Audit::new(path.to_path_buf()).write(&r) {
        eprintln!("bashgate: audit record not written: {e}");
    }
}
