//! Codex CLI's command hook protocol (`hooks.json`, or `[hooks]` in
//! `config.toml`, under `~/.codex/` or a trusted project's `.codex/`).
//!
//! PreToolUse: the event JSON on stdin (`hook_event_name`, `session_id`,
//! `cwd`, `tool_name`, `tool_input`, `turn_id`, `model`); `tool_name` is
//! `Bash` for every shell tool and the command is `tool_input.command` (some
//! versions send `tool_input.cmd`). The answer, always with exit status 0,
//! is `{"hookSpecificOutput": {"hookEventName", "permissionDecision",
//! "permissionDecisionReason"}}`. Codex honours only `deny` (with a non-empty
//! reason) and `allow` together with `updatedInput`; it rejects `ask`. So:
//! - bashgate's ask becomes a deny whose reason says a person must approve
//!   the command, and how;
//! - a plain allow is `{}` (Codex's own approval policy decides);
//! - a fenced rewrite would have to be an allow, which would bypass Codex's
//!   own approval: the hook does not offer the fence ([`Protocol::FENCE`]
//!   is unavailable) and the old matrix applies.
//!
//! PostToolUse: the taint is recorded, and the answer is `{}`.

use std::path::Path;

use serde_json::{json, Value};

use bashgate::decision::Permission;

use super::names;
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Codex;

/// What Codex is told instead of the ask it cannot show.
pub const ASK_AS_DENY: &str = "bashgate wants a person to approve this command, and Codex hooks cannot ask: do not retry it or work around it; tell the user what you wanted to run and why, and let them run it themselves or allow it in bashgate's configuration";

impl Protocol for Codex {
    const KEY: &'static str = "codex";
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
                Some(t) => names::input(Self::KEY, t, input),
                None => input,
            },
            tool: tool.map(|t| names::tool(Self::KEY, &t)),
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

    fn project_untrusted(project: &Path, home: &Path) -> Option<String> {
        project_trust(project, home)
    }

    fn hooks_untrusted(file: &Path, root: &Value, home: Option<&Path>) -> Vec<String> {
        hook_trust(file, root, home)
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

/// Codex loads a project's `.codex/` only once the person trusted the
/// project (`trust_level = "trusted"` for it or a directory above it in
/// ~/.codex/config.toml).
fn project_trust(project: &Path, home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
    let cfg: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
    let trusted = project.ancestors().any(|dir| {
        cfg.get("projects")
            .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted")
    });
    (!trusted).then(|| format!("Codex loads an untrusted project's .codex/ disabled: trust {} (projects.\"{}\".trust_level = \"trusted\" in ~/.codex/config.toml, or answer Codex's trust prompt)", project.display(), project.display()))
}

/// Codex runs a hook only once the person trusted it: a `trusted_hash` under
/// `[hooks.state."FILE:EVENT:GROUP:HOOK"]` in ~/.codex/config.toml that
/// matches the hook as it is now (a changed hook is untrusted again). An
/// untrusted hook is skipped without a word, so each of bashgate's hooks is
/// checked.
fn hook_trust(file: &Path, root: &Value, home: Option<&Path>) -> Vec<String> {
    let Some(home) = home else {
        return vec![];
    };
    let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
    let cfg: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let mut problems = Vec::new();
    for (event, key_event) in [
        ("PreToolUse", "pre_tool_use"),
        ("PostToolUse", "post_tool_use"),
    ] {
        let Some(groups) = root["hooks"][event].as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let Some(hooks) = group["hooks"].as_array() else {
                continue;
            };
            for (h, hook) in hooks.iter().enumerate() {
                let Some(command) = hook["command"].as_str() else {
                    continue;
                };
                if !super::is_ours(command, Codex::KEY) {
                    continue;
                }
                let key = format!("{}:{key_event}:{g}:{h}", file.display());
                let want = trust_hash(key_event, group["matcher"].as_str(), hook);
                let have = cfg
                    .get("hooks")
                    .and_then(|x| x.get("state"))
                    .and_then(|x| x.get(key.as_str()))
                    .and_then(|x| x.get("trusted_hash"))
                    .and_then(toml::Value::as_str);
                if have != Some(want.as_str()) {
                    problems.push(format!("{event}: Codex has not trusted this hook (or it changed since), and skips it without a word: run `codex` in the project and trust bashgate's hooks when it lists them"));
                }
            }
        }
    }
    problems
}

/// The hash Codex records for a trusted hook: SHA-256 of the compact JSON,
/// keys sorted, of the event, the group's matcher and the hook (timeout 600
/// when unset, async false when unset).
fn trust_hash(event: &str, matcher: Option<&str>, hook: &Value) -> String {
    use sha2::{Digest, Sha256};
    // Keys in sorted order; serde_json keeps insertion order.
    let hook = serde_json::json!({
        "async": hook["async"].as_bool().unwrap_or(false),
        "command": hook["command"],
        "timeout": hook["timeout"].as_u64().unwrap_or(600),
        "type": hook["type"].as_str().unwrap_or("command"),
    });
    let mut v = serde_json::Map::new();
    v.insert("event_name".into(), Value::from(event));
    v.insert("hooks".into(), Value::Array(vec![hook]));
    if let Some(m) = matcher {
        v.insert("matcher".into(), Value::from(m));
    }
    let digest = Sha256::digest(Value::Object(v).to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
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

    #[test]
    fn codex_trust_hash_is_the_one_codex_records() {
        // Recorded by Codex CLI 0.169.0 for this hook, which then ran
        // without --dangerously-bypass-hook-trust.
        let hook =
            serde_json::json!({"type": "command", "command": "/tmp/cx/hook.sh", "timeout": 60});
        assert_eq!(
            trust_hash("pre_tool_use", Some(".*"), &hook),
            "sha256:8ed3f6641922fdab250ea1cb7ab2b2a102b21277002b1756642e1a72310d413a"
        );
    }

    /// Codex loads an untrusted project's hooks disabled, and skips a hook
    /// the person has not trusted.
    #[test]
    fn doctor_reports_an_untrusted_project_and_hook() {
        let t = tempfile::tempdir().unwrap();
        let (proj, home) = (t.path().join("p"), t.path().join("h"));
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        let c = bashgate::clients::get(Codex::KEY).unwrap();
        let exe = std::env::current_exe().unwrap();
        let file = proj.join(&c.hook_file);
        crate::init::install(c, &file, &format!("{} hook codex", exe.display()), 60).unwrap();
        let r = crate::doctor::tests::report(Codex::KEY, &proj, Some(&home), Some(""));
        assert_eq!(r.status, "broken");
        let problems = r.wirings[0].problems.join("\n");
        assert!(problems.contains("untrusted project"), "{problems}");
        assert!(problems.contains("has not trusted this hook"), "{problems}");
        let canon = proj.canonicalize().unwrap();
        std::fs::write(
            home.join(".codex/config.toml"),
            format!(
                "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                canon.display()
            ),
        )
        .unwrap();
        let root: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(project_trust(&canon, &home), None);
        assert_eq!(hook_trust(&file, &root, Some(&home)).len(), 2);
    }
}
