//! Claude Code's command hook protocol.
//!
//! PreToolUse: the event JSON on stdin; the answer, always with exit status
//! 0, is `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": "allow" | "deny" | "ask",
//! "permissionDecisionReason": ...}}`, or `{}` for no decision.
//! PostToolUse: the taint is recorded, and the answer is `{}`.

use serde_json::{json, Map, Value};

use bashgate_analyzer::ir::{Command as Cmd, Part};

use super::shell::{Found, Script};
use super::{Event, FenceRoute, Kind, Protocol, Reply};

pub struct Claude;

impl Protocol for Claude {
    const KEY: &'static str = "claude";
    const EXPECTED: &'static str = "Claude Code's event JSON";
    const DEFERS_ALLOW: bool = true;
    // Claude Code runs every Bash command through CLAUDE_CODE_SHELL_PREFIX
    // after its own permission rules (verified with 2.1.330).
    const FENCE: FenceRoute = FenceRoute::Wrapper;

    fn decode(bytes: &[u8]) -> Result<Event, String> {
        let mut o = super::json_object(bytes, Self::EXPECTED)?;
        let text = |o: &Map<String, Value>, k: &str| {
            o.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let kind = match o.get("hook_event_name").and_then(Value::as_str) {
            Some("PreToolUse") => Kind::Pre,
            Some("PostToolUse") => Kind::Post,
            Some(other) => Kind::Other(other.to_string()),
            None if o.contains_key("tool_response") => Kind::Post,
            None => Kind::Pre,
        };
        Ok(Event {
            seen: super::seen_text(&o),
            call_id: super::call_id(&o),
            kind,
            session: text(&o, "session_id"),
            cwd: text(&o, "cwd").map(Into::into),
            tool: text(&o, "tool_name"),
            input: o.remove("tool_input").unwrap_or(Value::Null),
        })
    }

    fn script(s: &str) -> Script {
        script(s)
    }

    fn render(reply: Reply) -> Value {
        match reply {
            Reply::Decision(d) => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": d.permission.as_str(),
                    "permissionDecisionReason": d.reason,
                }
            }),
            // The rewritten command replaces the agent's. With no
            // permissionDecision the client's own rules and prompts still
            // apply to it.
            Reply::Fenced {
                decision,
                input,
                approve,
            } => {
                let mut out = json!({
                    "hookEventName": "PreToolUse",
                    "updatedInput": input,
                    "permissionDecisionReason": decision.reason,
                });
                if approve {
                    out["permissionDecision"] = json!("allow");
                }
                json!({ "hookSpecificOutput": out })
            }
            Reply::Nothing => json!({}),
            // Shown to the person; the call itself is not affected.
            Reply::Warning(m) => json!({ "systemMessage": m }),
        }
    }

    fn audit_event(kind: &Kind) -> &'static str {
        match kind {
            Kind::Post => "PostToolUse",
            _ => "PreToolUse",
        }
    }
}

/// How the line for a Bash command records the directory the command left
/// the shell in.
const CWD_MARK: &str = "pwd -P >| ";

/// What a script Claude Code hands its shell prefix is: the line it gives
/// its shell for a Bash command, with the agent's command inside one
/// `eval` (see [`agents_command`]), or one of its own programs.
fn script(script: &str) -> Script {
    let found = agents_command(script);
    // Claude Code tells its hooks and tool servers the project directory
    // (the client table's `project_dir_env`) and its Bash tool not, and a
    // Bash line always ends by recording the directory (`pwd -P >|`): only
    // a line with neither mark of a Bash command is one of the client's
    // own programs (this one's hook among them), run as it is.
    let told_project = bashgate::clients::get(Claude::KEY).is_some_and(|c| {
        c.project_dir_env
            .iter()
            .any(|v| std::env::var_os(v).is_some())
    });
    if found.is_some() || script.contains(CWD_MARK) || !told_project {
        Script::Agents(found)
    } else {
        Script::ClientsOwn
    }
}

/// The agent's command in `script`, when the script is of the shape Claude
/// Code gives its shell: its own set-up, then `eval WORD < /dev/null`, then
/// `pwd -P >| FILE` (the directory the command left the shell in). WORD
/// must be quoted text and nothing else, so that what `eval` runs is its
/// value exactly, and it must be the only `eval` in the script. Anything
/// else is not taken apart (`None`).
fn agents_command(script: &str) -> Option<Found> {
    let commands = bashgate_analyzer::syntax(script)?;
    let mut simple = Vec::new();
    for c in &commands {
        simples(c, &mut simple);
    }
    let name = |s: &bashgate_analyzer::ir::Simple| s.words.first().and_then(|w| w.static_value());
    let evals: Vec<_> = simple
        .iter()
        .filter(|s| name(s).as_deref() == Some("eval"))
        .collect();
    let [eval] = evals[..] else {
        return None;
    };
    let tracks_cwd = simple.iter().any(|s| {
        name(s).as_deref() == Some("pwd")
            && s.words.len() == 2
            && s.words[1].static_value().as_deref() == Some("-P")
            && s.redirects.iter().any(|r| r.op == ">|")
    });
    if !tracks_cwd || eval.words.len() != 2 || !eval.assignments.is_empty() {
        return None;
    }
    let word = &eval.words[1];
    let literal = word.parts.iter().all(|p| match p {
        Part::Lit { quoted: true, .. } => true,
        // Unquoted text that no expansion touches.
        Part::Lit { text, .. } => text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./,:=+@%-".contains(&b)),
        Part::Dynamic(_) => false,
    });
    let text = word.static_value().filter(|_| literal)?;
    Some(Found {
        text,
        word: word.span,
    })
}

/// Every simple command in `c`, substitutions' aside (Claude Code's own
/// set-up has none the agent writes).
fn simples<'a>(c: &'a Cmd, out: &mut Vec<&'a bashgate_analyzer::ir::Simple>) {
    match c {
        Cmd::Simple(s) => out.push(s),
        Cmd::Pipeline(p) => p.stages.iter().for_each(|s| simples(s, out)),
        Cmd::Compound(k) => k.body.iter().for_each(|s| simples(s, out)),
        Cmd::Function(f) => simples(&f.body, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::decision::{Decision, Layer};
    use bashgate::GateRule;

    #[test]
    fn decodes_events_and_explains_bad_ones() {
        let e = Claude::decode(br#"{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(e.kind, Kind::Pre);
        assert_eq!(e.session.as_deref(), Some("s"));
        assert_eq!(e.input["command"], "ls");
        assert!(Claude::decode(b"").unwrap_err().contains("no input"));
        assert!(Claude::decode(b"not json")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(Claude::decode(b"[1]")
            .unwrap_err()
            .contains("not an object"));
        assert!(Claude::decode(b"{\"tool_input\":{\"command\":\"\xff\"}}")
            .unwrap_err()
            .contains("UTF-8"));
        let e = Claude::decode(br#"{"tool_name":"Read","tool_response":{}}"#).unwrap();
        assert_eq!(e.kind, Kind::Post);
        let e = Claude::decode(br#"{"hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(e.kind, Kind::Other("Stop".into()));
    }

    #[test]
    fn output_shape() {
        let d = Decision::deny(Layer::Always, GateRule::RemoteCode, "because");
        let v = Claude::render(Reply::Decision(&d));
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            "because"
        );
        assert_eq!(Claude::render(Reply::Nothing), json!({}));
    }

    /// The shape Claude Code 2.1.330 gives its shell (its set-up, then the
    /// command), with `cmd` quoted as it quotes it.
    fn script(quoted: &str) -> String {
        format!(
            "source /h/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && \
             {{ \\builtin shopt -u extglob || \\builtin setopt NO_EXTENDED_GLOB; }} >/dev/null 2>&1 || true && \
             {{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; }} >/dev/null 2>&1 || true && \
             {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && \
             eval {quoted} < /dev/null && pwd -P >| /tmp/claude-a2b8-cwd"
        )
    }

    #[test]
    fn finds_the_agents_command_exactly() {
        for (quoted, text) in [
            ("'echo hi > out.txt && pwd'", "echo hi > out.txt && pwd"),
            (
                r#"'cd /tmp && echo '"'"'it'"'"''"'"'s'"'"' "$HOME"'"#,
                r#"cd /tmp && echo 'it''s' "$HOME""#,
            ),
            ("ls", "ls"),
            ("'eval x; pwd -P >| y'", "eval x; pwd -P >| y"),
        ] {
            let s = script(quoted);
            let f = agents_command(&s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(f.text, text);
            assert_eq!(&s[f.word.start..f.word.end], quoted);
        }
    }

    #[test]
    fn leaves_every_other_shape_alone() {
        for s in [
            // What eval runs is not the word's text.
            script("\"$__CLAUDE_CC_COMMAND_TEXT\""),
            script("~/x"),
            script("'a' *"),
            script("{a,b}"),
            // Two evals, no eval, no directory tracking, a broken script.
            format!("eval 'a' && {}", script("'b'")),
            "source /x && pwd -P >| /tmp/c".to_string(),
            "eval 'make test' < /dev/null".to_string(),
            script("'unterminated"),
            "/usr/bin/bashgate-hook claude".to_string(),
            String::new(),
        ] {
            assert_eq!(agents_command(&s), None, "{s}");
        }
    }

    fn wired(proj: &std::path::Path, file: &std::path::Path) {
        let c = bashgate::clients::get(Claude::KEY).unwrap();
        let exe = std::env::current_exe().unwrap();
        std::fs::create_dir_all(proj).unwrap();
        crate::init::install(c, file, &format!("{} hook claude", exe.display()), 60).unwrap();
    }

    #[test]
    fn doctor_finds_the_local_install_off_path() {
        use crate::doctor::tests::{program, report};
        let t = tempfile::tempdir().unwrap();
        let (proj, home) = (t.path().join("p"), t.path().join("h"));
        wired(&proj, &proj.join(".claude/settings.json"));
        let status = || {
            let c = report(Claude::KEY, &proj, Some(&home), Some(""));
            (c.status, c.installed)
        };
        assert_eq!(status().0, "not installed");
        // The local install, run through a shell alias.
        std::fs::create_dir_all(home.join(".claude/local")).unwrap();
        program(&home.join(".claude/local/claude"));
        let (s, at) = status();
        assert_eq!(at, Some(home.join(".claude/local/claude")));
        assert_eq!(s, "enforced");
    }

    #[test]
    fn doctor_says_how_a_fenced_command_runs() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("p");
        let file = proj.join(".claude/settings.json");
        wired(&proj, &file);
        let fenced = || {
            let c = crate::doctor::tests::report(Claude::KEY, &proj, None, Some(""));
            c.wirings[0].fenced.clone().unwrap()
        };
        assert!(fenced().contains("is not set here"), "{}", fenced());
        let wrapper = t.path().join(crate::hook::shell::SHELL_BINARY);
        let c = bashgate::clients::get(Claude::KEY).unwrap();
        crate::init::install_wrapper(c, &file, &wrapper)
            .unwrap()
            .unwrap();
        assert!(fenced().contains("does not exist"), "{}", fenced());
        crate::doctor::tests::program(&wrapper);
        assert!(fenced().contains("run fenced through"), "{}", fenced());
    }

    #[test]
    fn doctor_reports_what_turns_the_hooks_off_or_narrows_them() {
        use crate::doctor::tests::{program, report};
        let t = tempfile::tempdir().unwrap();
        let (proj, home, bin) = (t.path().join("p"), t.path().join("h"), t.path().join("bin"));
        for d in [&home, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        program(&bin.join("claude"));
        let file = proj.join(".claude/settings.json");
        wired(&proj, &file);
        let status = || {
            let c = report(Claude::KEY, &proj, Some(&home), bin.to_str());
            let problems: Vec<String> = c.wirings.iter().flat_map(|w| w.problems.clone()).collect();
            (c.status, problems.join("\n"))
        };
        assert_eq!(status().0, "enforced", "{}", status().1);
        // Turned off in the person's own file beside it.
        let local = proj.join(".claude/settings.local.json");
        std::fs::write(&local, r#"{"disableAllHooks": true}"#).unwrap();
        let (s, why) = status();
        assert_eq!(s, "broken");
        assert!(why.contains("disableAllHooks"), "{why}");
        std::fs::remove_file(&local).unwrap();
        // The after-tool matcher narrowed to the shell tool: reads no
        // longer taint.
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v["hooks"]["PostToolUse"][0]["matcher"] = Value::from("Bash");
        std::fs::write(&file, v.to_string()).unwrap();
        let (s, why) = status();
        assert_eq!(s, "broken");
        assert!(
            why.contains("leaves out Read, WebFetch, WebSearch"),
            "{why}"
        );
        // Hooks in the person's local file count; an invalid file says why.
        std::fs::remove_file(&file).unwrap();
        wired(&proj, &local);
        assert_eq!(status().0, "enforced", "{}", status().1);
        std::fs::write(&file, "{ not json").unwrap();
        let c = report(Claude::KEY, &proj, Some(&home), bin.to_str());
        let project = c.wirings.iter().find(|w| w.scope == "project").unwrap();
        assert!(
            project.problems[0].contains("not valid JSON"),
            "{:?}",
            project.problems
        );
    }
}
