//! The git guard: `git push`, `pull` and `rebase` (configurable) are
//! blocked with a message saying what to do instead. Checked on resolved
//! invocations, so `cd repo && git push`, `git -C repo push` and
//! `bash -c 'git pull'` are all caught, while `echo git push` is not.

use bashgate_analyzer::argv::Sub;

use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step};
use crate::config::{Config, GitGuardConfig};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

pub struct GitGuard(GitGuardConfig);

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    cfg.git_guard
        .enabled
        .then(|| Box::new(GitGuard(cfg.git_guard.clone())) as Box<dyn PolicyLayer + Send + Sync>)
}

impl PolicyLayer for GitGuard {
    fn check(&self, call: &Call, _env: &dyn Env) -> Step {
        call.bash().and_then(|b| check(&self.0, b)).into()
    }
}

pub fn check(cfg: &GitGuardConfig, call: &BashCall) -> Option<Decision> {
    for (program, inv) in call.named() {
        if base_name(program) != "git" {
            continue;
        }
        // The subcommand is found with the catalog's git option table.
        let why = match inv.subcommand() {
            Sub::Found(_, s) if cfg.subcommands.iter().any(|b| b == s) => {
                format!("`git {s}` is blocked")
            }
            Sub::Dynamic => "the git subcommand is known only at run time".to_string(),
            _ => continue,
        };
        let rule = GateRule::GitGuard;
        // The configured message says what to do instead, in its own words.
        let mut text = reason(&format!("`{}`", call.snippet(inv)), &why, rule, "");
        text.push(' ');
        text.push_str(cfg.message.trim());
        return Some(Decision::deny(Layer::GitGuard, rule, text));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;
    use std::path::Path;

    fn blocked(cmd: &str) -> bool {
        let a = analyze(cmd);
        let call = BashCall {
            command: cmd,
            analysis: &a,
            cwd: Path::new("/"),
        };
        check(&GitGuardConfig::default(), &call).is_some()
    }

    // The specified cases: push, pull and rebase blocked, the rest not.
    #[test]
    fn git_guard_examples() {
        assert!(blocked("git push origin main"));
        assert!(blocked("git pull"));
        assert!(blocked("git rebase origin/main"));
        assert!(!blocked("git status"));
        assert!(!blocked("git diff HEAD"));
        assert!(!blocked("echo hello"));
    }

    #[test]
    fn resolved_and_not_fooled_by_data() {
        assert!(blocked("cd repo && git push"));
        assert!(blocked("git -C repo push"));
        assert!(blocked("bash -c 'git pull --rebase'"));
        assert!(blocked("env GIT_DIR=x git push"));
        assert!(!blocked("echo git push"));
        assert!(!blocked("grep -rn 'git push' docs/"));
        assert!(!blocked("git log --grep=push"));
    }

    #[test]
    fn message_is_configurable() {
        let cfg = GitGuardConfig {
            message: "Use the sync_worktree_to_main tool".into(),
            ..Default::default()
        };
        let a = analyze("git push");
        let call = BashCall {
            command: "git push",
            analysis: &a,
            cwd: Path::new("/"),
        };
        let d = check(&cfg, &call).unwrap();
        assert!(d.reason.contains("sync_worktree_to_main"), "{}", d.reason);
        assert!(d.reason.contains("BG407"));
    }
}
