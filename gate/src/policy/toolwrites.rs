//! A tainted session's file-writing tools (Write, Edit, MultiEdit,
//! NotebookEdit, and other clients' tools renamed to them) cannot be run
//! inside the fence, so they are held to the fence's allowlist by decision
//! instead: a write inside the project's working tree, outside its control
//! places (`.git`, a client's settings, editor and toolchain settings), is
//! the work; anywhere else (a git hook, `~/.bashrc`, a file in `/etc`, a
//! link out of the tree) goes to the person, as a command the fence could
//! not hold would (`strict` denies). Paths are resolved as the kernel
//! would, links (dangling ones too) followed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{paths::resolve, selfguard::WRITERS, Call, Env, PolicyLayer, Step, Subject};
use crate::config::{Config, Profile};
use crate::decision::{excerpt, Decision, Layer};
use crate::rules::GateRule;

pub struct ToolWrites {
    profile: Profile,
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(ToolWrites {
        profile: cfg.profile,
    }))
}

impl PolicyLayer for ToolWrites {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        if !matches!(call.subject, Subject::Local) || !WRITERS.contains(&call.tool.tool) {
            return Step::Pass;
        }
        // An unreadable taint counts as tainted.
        if call.taint.as_ref().is_ok_and(|t| !t.any()) {
            return Step::Pass;
        }
        let tree = env
            .project()
            .map(|t| std::fs::canonicalize(t).unwrap_or_else(|_| t.to_path_buf()));
        for key in env.path_keys() {
            let Some(written) = call.tool.input.get(key).and_then(Value::as_str) else {
                continue;
            };
            if let Some(why) = outside(call.tool.cwd, written, tree.as_deref()) {
                return Step::Decide(self.decide(call.tool.tool, written, &why));
            }
        }
        Step::Pass
    }
}

/// Why writing `written` is outside what a fenced command may write, if it
/// is.
fn outside(cwd: &Path, written: &str, tree: Option<&Path>) -> Option<String> {
    let Some(r) = resolve(cwd, written) else {
        return Some("its path cannot be resolved".into());
    };
    let Some(tree) = tree else {
        return Some("the session has no project tree to write in".into());
    };
    let Ok(inner) = r.strip_prefix(tree) else {
        return Some(format!(
            "{} is outside the project's working tree ({})",
            r.display(),
            tree.display()
        ));
    };
    let names = crate::fence::protected::control_names();
    let mut at = PathBuf::from(tree);
    for c in inner.components() {
        at.push(c);
        if names.iter().any(|n| c.as_os_str() == n.as_str()) {
            return Some(format!(
                "{} is a control place (what it holds decides what git, the agent's client, an editor or a toolchain does next)",
                at.display()
            ));
        }
    }
    None
}

impl ToolWrites {
    fn decide(&self, tool: &str, written: &str, why: &str) -> Decision {
        let rule = GateRule::WriteOutsideTree;
        let what = format!("this {tool} call to `{}`", excerpt(written, 120));
        let why =
            format!("the session is tainted and {why}; a fenced command could not write there");
        let instead = "write inside the project's working tree, or ask the person";
        match self.profile {
            Profile::Strict => Decision::deny(
                Layer::ToolWrites,
                rule,
                super::reason(&what, &why, rule, instead),
            ),
            _ => Decision::ask(
                Layer::ToolWrites,
                rule,
                format!(
                    "bashgate asks the person about {what}: {why} ({}). Otherwise: {instead}.",
                    rule.tag()
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_trees_work_is_writable() {
        let d = tempfile::tempdir().unwrap();
        let tree = std::fs::canonicalize(d.path()).unwrap().join("proj");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::os::unix::fs::symlink("/etc/cron.d/x", tree.join("out")).unwrap();
        let t = Some(tree.as_path());
        assert_eq!(outside(&tree, "src/main.rs", t), None);
        assert_eq!(outside(&tree, "new/dir/file.txt", t), None);
        for bad in [
            ".git/hooks/pre-commit",
            "sub/.git/config",
            ".vscode/tasks.json",
            "../other/file",
            "/etc/profile.d/x.sh",
            "~/.bashrc",
            "out",
        ] {
            assert!(outside(&tree, bad, t).is_some(), "{bad}");
        }
        assert!(outside(&tree, "src/main.rs", None).is_some());
    }
}
