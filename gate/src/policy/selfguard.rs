//! Self-protection: the agent may not change what guards it. A session's
//! taint lives in the state directory and the rules in the configuration
//! and Claude Code's settings (which hold the hook itself); a command that
//! deletes a session file, rewrites `.bashgate.toml` or drops the hook from
//! `.claude/settings.json` would switch the gate off. Bash commands whose
//! path arguments or output redirects resolve into those places are denied
//! unless the program only reads, and so are Write/Edit calls on them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::paths::resolve;
use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step, Subject};
use crate::config::Config;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

/// The layer: Bash commands and the writing workspace tools.
pub struct SelfProtection;

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    cfg.always
        .self_protection
        .then(|| Box::new(SelfProtection) as Box<dyn PolicyLayer + Send + Sync>)
}

impl PolicyLayer for SelfProtection {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let cwd = call.tool.cwd;
        let guard = || SelfGuard::new(&env.config().state_dir(), env.config_file(), cwd);
        match &call.subject {
            Subject::Bash(b) => guard().check_bash(b).into(),
            Subject::Local if WRITERS.contains(&call.tool.tool) => {
                let g = guard();
                env.path_keys()
                    .iter()
                    .filter_map(|k| call.tool.input.get(k).and_then(Value::as_str))
                    .find_map(|p| g.check_path(call.tool.tool, cwd, p))
                    .into()
            }
            _ => Step::Pass,
        }
    }
}

/// Programs that only read the files they are given.
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "rg",
    "ls",
    "stat",
    "wc",
    "diff",
    "jq",
    "file",
    "md5sum",
    "sha256sum",
    "realpath",
    "readlink",
    "du",
    "tree",
    "bashgate",
];

/// Tools that write the file they name.
pub const WRITERS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

pub struct SelfGuard {
    protected: Vec<PathBuf>,
}

impl SelfGuard {
    pub fn new(state_dir: &Path, config_file: Option<&Path>, cwd: &Path) -> SelfGuard {
        let mut protected = vec![state_dir.to_path_buf()];
        protected.extend(config_file.map(Path::to_path_buf));
        for p in [
            ".bashgate.toml",
            ".claude/settings.json",
            ".claude/settings.local.json",
        ] {
            protected.push(cwd.join(p));
        }
        if let Some(h) = dirs::home_dir() {
            protected.push(h.join(".claude/settings.json"));
        }
        let protected = protected
            .iter()
            .filter_map(|p| resolve(cwd, &p.display().to_string()))
            .collect();
        SelfGuard { protected }
    }

    fn hit(&self, cwd: &Path, written: &str) -> Option<PathBuf> {
        let r = resolve(cwd, written)?;
        if let Some(p) = self.protected.iter().find(|p| r.starts_with(p)) {
            return Some(p.clone());
        }
        // A `.bashgate.toml` or `.claude/settings*.json` anywhere: the hook
        // discovers its configuration from the session's cwd, which the
        // agent can change with `cd`.
        let mut at = PathBuf::new();
        let mut last_was_claude = false;
        for c in r.components() {
            at.push(c);
            let name = c.as_os_str().to_string_lossy();
            if name == ".bashgate.toml" || (last_was_claude && name.starts_with("settings")) {
                return Some(at);
            }
            last_was_claude = name == ".claude";
        }
        if last_was_claude {
            return Some(at);
        }
        None
    }

    pub fn check_bash(&self, call: &BashCall) -> Option<Decision> {
        for (program, inv) in call.named() {
            if READERS.contains(&base_name(program)) {
                continue;
            }
            for a in inv.args.iter().flatten() {
                let v = match a.split_once('=') {
                    Some((k, v)) if k.starts_with('-') => v,
                    _ => a.as_str(),
                };
                if v.is_empty() || v.starts_with('-') || v.contains("://") {
                    continue;
                }
                if let Some(p) = self.hit(call.cwd, v) {
                    return Some(deny(&format!("`{}`", call.snippet(inv)), v, &p));
                }
            }
        }
        for r in &call.analysis.redirects {
            if !r.writes() {
                continue;
            }
            if let Some(t) = &r.target {
                if let Some(p) = self.hit(call.cwd, t) {
                    return Some(deny("this command", t, &p));
                }
            }
        }
        None
    }

    pub fn check_path(&self, tool: &str, cwd: &Path, written: &str) -> Option<Decision> {
        let p = self.hit(cwd, written)?;
        Some(deny(&format!("this {tool} call"), written, &p))
    }
}

fn deny(what: &str, written: &str, protected: &Path) -> Decision {
    let rule = GateRule::SelfProtection;
    Decision::deny(
        Layer::Always,
        rule,
        reason(
            what,
            &format!(
                "`{written}` is inside {}, which holds bashgate's own state, configuration or hook settings",
                protected.display()
            ),
            rule,
            "leave bashgate's files alone; ask the person to change its configuration or reset a session",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    fn denied(guard: &SelfGuard, cwd: &Path, cmd: &str) -> bool {
        let a = analyze(cmd);
        let call = BashCall {
            command: cmd,
            analysis: &a,
            cwd,
        };
        guard.check_bash(&call).is_some()
    }

    #[test]
    fn protects_state_config_and_hook_settings() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        let proj = t.path().join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        let cfg = t.path().join("cfg.toml");
        let g = SelfGuard::new(&state, Some(&cfg), &proj);
        let s = state.display();
        assert!(denied(&g, &proj, &format!("rm -rf {s}")));
        assert!(denied(&g, &proj, &format!("touch {s}/sessions/x.json")));
        assert!(denied(&g, &proj, &format!("echo x > {}", cfg.display())));
        assert!(denied(&g, &proj, "echo x >> .bashgate.toml"));
        assert!(denied(&g, &proj, "cp x deep/dir/.bashgate.toml"));
        assert!(denied(&g, &proj, "rm .claude/settings.local.json"));
        // `<>` opens for writing too (and creates the file).
        assert!(denied(&g, &proj, "echo x 1<> .bashgate.toml"));
        assert!(denied(&g, &proj, "bash -c 'echo x > .bashgate.toml'"));
        assert!(!denied(&g, &proj, &format!("cat {s}/sessions/x.json")));
        assert!(!denied(&g, &proj, "grep x .bashgate.toml"));
        assert!(!denied(&g, &proj, "echo x > notes.txt && rm -rf build"));
        assert!(!denied(
            &g,
            &proj,
            "curl https://example.com/.bashgate.toml"
        ));
        assert!(g
            .check_path("Write", &proj, ".claude/settings.json")
            .is_some());
        assert!(g.check_path("Write", &proj, "src/main.rs").is_none());
    }
}
