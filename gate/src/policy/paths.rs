//! The path policy: the agent may touch only `allowed_dirs`. Path
//! arguments of every resolved invocation and every redirect target are
//! resolved against the hook's `cwd` (and any `cd` target in the command),
//! with `~` expanded, `..` applied and symlinks followed, then checked.
//! What static analysis cannot settle (a value known only at run time, a
//! program whose own file access is invisible) is reported as unsettled:
//! the Cop decides with the path prompt when configured, otherwise the
//! command counts as `unknown`.

use std::path::{Component, Path, PathBuf};

use bashgate_analyzer::Verdict;
use serde_json::Value;

use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step, Subject};
use crate::config::Config;
use crate::cop::Question;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

/// The layer: Bash commands and workspace tools, when `allowed_dirs` is set.
pub struct Paths {
    allowed_dirs: Vec<String>,
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    let allowed_dirs = cfg.allowed_dirs();
    (!allowed_dirs.is_empty())
        .then(|| Box::new(Paths { allowed_dirs }) as Box<dyn PolicyLayer + Send + Sync>)
}

impl PolicyLayer for Paths {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let cwd = call.tool.cwd;
        let policy = PathPolicy::new(&self.allowed_dirs, cwd);
        match &call.subject {
            Subject::Bash(b) => match policy.check(b) {
                PathOutcome::Inside => Step::Pass,
                PathOutcome::Outside { written, resolved } => {
                    Step::Decide(self.outside(&call.what(), &written, Some(&resolved)))
                }
                PathOutcome::Unsettled(why) if env.config().paths.cop => {
                    self.review(call, b, &why, env)
                }
                PathOutcome::Unsettled(_) => Step::Doubt,
            },
            Subject::Local => env
                .path_keys()
                .iter()
                .filter_map(|k| call.tool.input.get(k).and_then(Value::as_str))
                .find_map(|p| match resolve(cwd, p) {
                    Some(r) if policy.allows(&r) => None,
                    r => Some(self.outside(&call.what(), p, r.as_deref())),
                })
                .into(),
            Subject::Service(_) => Step::Pass,
        }
    }
}

impl Paths {
    fn outside(&self, what: &str, written: &str, resolved: Option<&Path>) -> Decision {
        let rule = GateRule::PathOutside;
        let at = resolved
            .map(|r| format!("resolves to {}", r.display()))
            .unwrap_or_else(|| "cannot be resolved".into());
        Decision::deny(
            Layer::Paths,
            rule,
            reason(
                what,
                &format!(
                    "`{written}` {at}, outside the allowed directories ({})",
                    self.allowed_dirs.join(", ")
                ),
                rule,
                "work on files inside the allowed directories",
            ),
        )
    }

    /// What static analysis could not settle goes to the Cop's path prompt.
    fn review(&self, call: &Call, b: &BashCall, why: &[String], env: &dyn Env) -> Step {
        let what = call.what();
        let cwd = b.cwd.display().to_string();
        let q = Question::Paths {
            command: b.command,
            allowed_dirs: &self.allowed_dirs,
            cwd: &cwd,
            unsettled: why,
        };
        let reviewed = env.review(&q).decide(
            Layer::Paths,
            env.config().on_error,
            |_| {
                format!(
                    "{what}: static analysis cannot tell which paths it touches ({})",
                    why.join("; ")
                )
            },
            |r| {
                let rule = GateRule::PathOutside;
                Decision::deny(
                    Layer::Paths,
                    rule,
                    reason(
                        &what,
                        &format!("the reviewer found it may reach a path outside the allowed directories: {r}"),
                        rule,
                        "work on files inside the allowed directories, with literal paths",
                    ),
                )
            },
        );
        match reviewed {
            Ok(_) => Step::Pass,
            Err(d) => Step::Decide(d),
        }
    }
}

/// Paths any command may name: devices that are not files.
const ALWAYS_ALLOWED: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/fd",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathOutcome {
    Inside,
    /// A path outside every allowed directory: as written, and resolved.
    Outside {
        written: String,
        resolved: PathBuf,
    },
    /// What static analysis could not settle, one line each.
    Unsettled(Vec<String>),
}

pub struct PathPolicy {
    allowed: Vec<PathBuf>,
}

/// The directories a command's relative paths may be read from: the
/// hook's `cwd`, and every directory the analyzer says it may move to (`cd`,
/// `pushd`, `env -C`; `cd` alone: the home directory).
pub(crate) struct WorkingDirs {
    pub bases: Vec<PathBuf>,
    /// Why a relative path could mean anywhere: a move to a directory
    /// known only at run time.
    pub unknown: Option<String>,
}

pub(crate) fn working_dirs(call: &BashCall) -> WorkingDirs {
    let a = call.analysis;
    let mut bases = vec![call.cwd.to_path_buf()];
    bases.extend(a.working_dirs.iter().filter_map(|d| resolve(call.cwd, d)));
    WorkingDirs {
        bases,
        unknown: a.working_dir_unknown.then(|| {
            "change of directory to a place known only at run time (`cd \"$d\"`, `cd -`, `popd`)"
                .into()
        }),
    }
}

impl PathPolicy {
    /// Resolves `allowed_dirs` (relative entries against `cwd`).
    pub fn new(allowed_dirs: &[String], cwd: &Path) -> PathPolicy {
        let mut allowed: Vec<PathBuf> = allowed_dirs
            .iter()
            .filter_map(|d| resolve(cwd, d))
            .collect();
        allowed.extend(ALWAYS_ALLOWED.iter().map(PathBuf::from));
        PathPolicy { allowed }
    }

    pub fn allows(&self, p: &Path) -> bool {
        self.allowed.iter().any(|a| p.starts_with(a))
    }

    pub fn check(&self, call: &BashCall) -> PathOutcome {
        let dirs = working_dirs(call);
        let bases = dirs.bases;
        let mut unsettled: Vec<String> = dirs.unknown.into_iter().collect();
        for inv in &call.analysis.invocations {
            let Some(program) = inv.program.as_deref() else {
                unsettled.push("a program whose name is known only at run time".into());
                continue;
            };
            if inv.verdict != Verdict::Safe {
                unsettled.push(format!(
                    "`{}` runs code whose file access cannot be seen",
                    base_name(program)
                ));
            }
            if program.contains('/') {
                if let Some(o) = self.outside(&bases, program) {
                    return o;
                }
            }
            for a in &inv.args {
                match a {
                    None => unsettled.push(format!(
                        "`{}` gets an argument known only at run time",
                        base_name(program)
                    )),
                    Some(a) => {
                        if let Some(c) = candidate(a) {
                            if let Some(o) = self.outside(&bases, c) {
                                return o;
                            }
                        }
                    }
                }
            }
        }
        for r in call.analysis.redirects.iter().filter(|r| r.is_file()) {
            match &r.target {
                None => unsettled.push(format!(
                    "a `{}` redirect to a target known only at run time",
                    r.op
                )),
                Some(t) => {
                    if let Some(o) = self.outside(&bases, t) {
                        return o;
                    }
                }
            }
        }
        unsettled.dedup();
        if unsettled.is_empty() {
            PathOutcome::Inside
        } else {
            PathOutcome::Unsettled(unsettled)
        }
    }

    fn outside(&self, bases: &[PathBuf], written: &str) -> Option<PathOutcome> {
        for b in bases {
            let Some(resolved) = resolve(b, written) else {
                continue;
            };
            if !self.allows(&resolved) {
                return Some(PathOutcome::Outside {
                    written: written.to_string(),
                    resolved,
                });
            }
        }
        None
    }
}

/// The part of an argument that may name a path: the whole word, the value
/// of `--opt=value`, or `-Xpath` when the path is attached. URLs are not
/// paths.
fn candidate(arg: &str) -> Option<&str> {
    let v = if let Some(rest) = arg.strip_prefix('-') {
        if let Some(i) = arg.find('=') {
            &arg[i + 1..]
        } else if !rest.starts_with('-') && rest.len() > 1 {
            let tail = &rest[1..];
            if tail.starts_with(['/', '~', '.']) {
                tail
            } else {
                return None;
            }
        } else {
            return None;
        }
    } else {
        arg
    };
    if v.is_empty() || v.contains("://") {
        return None;
    }
    Some(v)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
}

/// Resolves a path as the kernel would from `base`: `~` expanded, each
/// component applied in turn with symlinks followed where they exist, and
/// what does not exist applied lexically. `None` for `~user` forms.
pub fn resolve(base: &Path, written: &str) -> Option<PathBuf> {
    resolve_within(base, written, 0)
}

/// How many symbolic links one resolution follows (the kernel's own
/// limit): past it, opening the path fails anyway.
const MAX_LINKS: usize = 40;

fn resolve_within(base: &Path, written: &str, links: usize) -> Option<PathBuf> {
    let expanded: PathBuf = if written == "~" {
        home()?
    } else if let Some(rest) = written.strip_prefix("~/") {
        home()?.join(rest)
    } else if written.starts_with('~') {
        return None;
    } else {
        PathBuf::from(written)
    };
    let mut cur = if expanded.is_absolute() {
        PathBuf::from("/")
    } else {
        std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf())
    };
    let mut exists = true;
    for comp in expanded.components() {
        match comp {
            Component::RootDir | Component::Prefix(_) => cur = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(c) => {
                cur.push(c);
                if !exists {
                    continue;
                }
                // `cur`'s directory is already free of links: only this
                // component can be one (one lstat, not a realpath of the
                // whole prefix each time).
                match std::fs::symlink_metadata(&cur) {
                    Ok(m) if m.file_type().is_symlink() && links < MAX_LINKS => {
                        // Followed whether or not its target exists:
                        // writing through a link to nothing creates the
                        // target, so the target is the path written.
                        let target = std::fs::read_link(&cur).ok()?;
                        let dir = cur.parent().unwrap_or(Path::new("/")).to_path_buf();
                        cur = resolve_within(&dir, &target.to_string_lossy(), links + 1)?;
                        exists = std::fs::symlink_metadata(&cur).is_ok();
                    }
                    Ok(_) => {}
                    Err(_) => exists = false,
                }
            }
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    fn outcome(dir: &Path, allowed: &[&str], cmd: &str) -> PathOutcome {
        let a = analyze(cmd);
        let call = BashCall {
            command: cmd,
            analysis: &a,
            cwd: dir,
        };
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        PathPolicy::new(&allowed, dir).check(&call)
    }

    #[test]
    fn inside_and_outside() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("proj");
        std::fs::create_dir_all(proj.join("src")).unwrap();
        let p = proj.to_str().unwrap();
        assert_eq!(outcome(&proj, &[p], "cat src/main.rs"), PathOutcome::Inside);
        assert_eq!(
            outcome(&proj, &[p], "ls > out.txt 2>/dev/null"),
            PathOutcome::Inside
        );
        assert!(matches!(
            outcome(&proj, &[p], "cat /etc/passwd"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "cat ../secret"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "cat src/../../x"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "ls > /tmp/x"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "tar -xf a.tar -C /etc"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "awk '{print}' /etc/shadow"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "sort --output=/etc/x y"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "cd /etc && cat passwd"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "cat ~/.ssh/id_rsa"),
            PathOutcome::Outside { .. }
        ));
        assert!(matches!(
            outcome(&proj, &[p], "bash -c 'echo x > /etc/y'"),
            PathOutcome::Outside { .. }
        ));
        // Relative allowed dirs resolve against cwd.
        assert_eq!(outcome(&proj, &["."], "cat src/x"), PathOutcome::Inside);
    }

    #[test]
    fn symlinks_are_followed() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("proj");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, proj.join("link")).unwrap();
        let p = proj.to_str().unwrap();
        assert!(matches!(
            outcome(&proj, &[p], "cat link/secret"),
            PathOutcome::Outside { .. }
        ));
        // `link/..` is the parent of the link's target, as the kernel sees it.
        assert_eq!(outcome(&proj, &[p], "ls link/../proj"), PathOutcome::Inside);
        assert!(matches!(
            outcome(&proj, &[p], "ls link/.."),
            PathOutcome::Outside { .. }
        ));
    }

    #[test]
    fn what_cannot_be_settled() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().to_str().unwrap();
        assert!(matches!(
            outcome(t.path(), &[p], "cat $FILE"),
            PathOutcome::Unsettled(_)
        ));
        assert!(matches!(
            outcome(t.path(), &[p], "echo x > \"$out\""),
            PathOutcome::Unsettled(_)
        ));
        assert!(matches!(
            outcome(t.path(), &[p], "python script.py"),
            PathOutcome::Unsettled(_)
        ));
    }

    #[test]
    fn candidates() {
        assert_eq!(candidate("--file=/etc/x"), Some("/etc/x"));
        assert_eq!(candidate("-C/etc"), Some("/etc"));
        assert_eq!(candidate("-la"), None);
        assert_eq!(candidate("https://example.com/x"), None);
        assert_eq!(candidate("src/x"), Some("src/x"));
    }
}
