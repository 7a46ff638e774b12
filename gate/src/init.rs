//! `bashgate init claude`: adds bashgate's PreToolUse and PostToolUse hook
//! entries to a project's `.claude/settings.json` (or the user's), keeping
//! everything already there. Running it twice changes nothing.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// The hook timeout written into the settings, in seconds. bashgate's own
/// budget (`hook.budget_ms`, 50 s by default) stays under it.
pub const HOOK_TIMEOUT_S: u64 = 60;

#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Created,
    Updated,
    Unchanged,
}

/// The hook timeout written for `--remote` hooks, in seconds: above the
/// longest wait for a person (`remote.approval_wait_s`, 330 s by default).
pub const REMOTE_HOOK_TIMEOUT_S: u64 = 360;

/// Merges the hook entries into the settings file at `path`.
#[cfg(test)]
pub fn claude(path: &Path, command: &str) -> Result<Change, String> {
    claude_with_timeout(path, command, HOOK_TIMEOUT_S)
}

/// `claude` with a given hook timeout (seconds).
pub fn claude_with_timeout(path: &Path, command: &str, timeout: u64) -> Result<Change, String> {
    let existed = path.exists();
    let mut root: Value = if existed {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if text.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not valid JSON ({e}); fix it or move it away, then run init again",
                    path.display()
                )
            })?
        }
    } else {
        json!({})
    };
    let obj = root
        .as_object_mut()
        .ok_or_else(|| format!("{} is not a JSON object", path.display()))?;
    let hooks = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("{}: \"hooks\" is not an object", path.display()))?;
    let mut changed = false;
    for event in ["PreToolUse", "PostToolUse"] {
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| format!("{}: \"hooks.{event}\" is not an array", path.display()))?;
        let present = list.iter().any(|m| {
            m.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command").and_then(Value::as_str).is_some_and(|c| {
                        c == command
                            || c.contains("bashgate hook claude")
                            || c.ends_with(" hook claude")
                    })
                })
            })
        });
        if !present {
            list.push(json!({
                "matcher": "*",
                "hooks": [{
                    "type": "command",
                    "command": command,
                    "timeout": timeout,
                }]
            }));
            changed = true;
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(&root).unwrap_or_default();
    text.push('\n');
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    std::fs::write(tmp.path(), text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
    Ok(if existed {
        Change::Updated
    } else {
        Change::Created
    })
}

/// The command to put in the settings: this executable's absolute path (so
/// the hook works without bashgate on PATH), quoted when needed.
pub fn default_command() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from("bashgate"));
    let s = exe.display().to_string();
    let quoted = if s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    };
    format!("{quoted} hook claude")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_merges_and_is_idempotent() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join(".claude/settings.json");
        assert_eq!(claude(&p, "bashgate hook claude").unwrap(), Change::Created);
        assert_eq!(
            claude(&p, "bashgate hook claude").unwrap(),
            Change::Unchanged
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "bashgate hook claude"
        );
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "*");

        let q = t.path().join("other.json");
        std::fs::write(
            &q,
            r#"{"permissions":{"allow":["Bash(ls:*)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"}]}]}}"#,
        )
        .unwrap();
        assert_eq!(
            claude(&q, "/x/bashgate hook claude").unwrap(),
            Change::Updated
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&q).unwrap()).unwrap();
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard.sh"
        );
    }

    #[test]
    fn refuses_to_clobber_invalid_json() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("settings.json");
        std::fs::write(&p, "{oops").unwrap();
        assert!(claude(&p, "bashgate hook claude")
            .unwrap_err()
            .contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{oops");
    }
}
