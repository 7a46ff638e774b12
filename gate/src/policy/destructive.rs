//! Destructive local commands (the protection profiles): deleting the home
//! directory, the filesystem root, system directories or the project;
//! writing to disks; throwing away git history or uncommitted work;
//! privilege; killing processes that are not the project's. `standard` asks
//! the person, `strict` denies, `minimal` lets the taint cascade decide as
//! before. The patterns are data (`data/destructive.toml`), matched against
//! the analyzer's resolved invocations, never against the command's text.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use bashgate_analyzer::argv::Sub;
use bashgate_analyzer::Invocation;
use serde::Deserialize;

use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step};
use crate::config::{Config, Profile};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

/// The tables, parsed once per process.
static DATA: LazyLock<Data> =
    LazyLock::new(|| crate::data::parse(crate::data::DESTRUCTIVE, "destructive"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    system_dirs: Vec<String>,
    top_dirs: Vec<String>,
    block_devices: Vec<String>,
    protected_branches: Vec<String>,
    rule: Vec<Rule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    programs: Vec<String>,
    #[serde(default)]
    program_prefixes: Vec<String>,
    #[serde(default)]
    subcommands: Vec<String>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    arg_prefixes: Vec<String>,
    /// Flags that must all be present, one of each group (`git branch
    /// --delete --force` is `git branch -D`).
    #[serde(default)]
    together: Vec<Vec<String>>,
    /// Flags that make the rule not apply (`git restore --staged` touches
    /// only the index).
    #[serde(default)]
    unless_flags: Vec<String>,
    #[serde(default)]
    target: Target,
    /// Leading operands that are not paths (chmod's mode, chown's owner).
    #[serde(default)]
    skip: usize,
    /// Wrappers whose own rule covers this program (`find -exec rm {}` is
    /// judged by where find looks).
    #[serde(default)]
    not_via: Vec<String>,
    what: String,
    instead: String,
}

/// Which arguments must name a protected place for the rule to apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Target {
    /// No condition on the arguments beyond the rule's flags.
    #[default]
    None,
    /// Some operand is a protected place.
    Operands,
    /// Some starting point (the operands before the first option) is the
    /// root, the home directory or a system directory.
    Roots,
    /// Some process name is not one the project may stop (seed 003's list).
    Processes,
}

pub struct Destructive {
    profile: Profile,
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    (cfg.profile != Profile::Minimal).then(|| {
        Box::new(Destructive {
            profile: cfg.profile,
        }) as Box<dyn PolicyLayer + Send + Sync>
    })
}

impl PolicyLayer for Destructive {
    fn check(&self, call: &Call, _env: &dyn Env) -> Step {
        let Some(b) = call.bash() else {
            return Step::Pass;
        };
        let Some((snippet, why, instead)) = find(b) else {
            return Step::Pass;
        };
        let rule = GateRule::Destructive;
        Step::Decide(match self.profile {
            Profile::Strict => Decision::deny(
                Layer::Destructive,
                rule,
                reason(&snippet, &why, rule, &instead),
            ),
            _ => Decision::ask(
                Layer::Destructive,
                rule,
                format!(
                    "bashgate asks the person about {snippet}: it {why} ({}). If that is not what was meant: {instead}.",
                    rule.tag()
                ),
            ),
        })
    }
}

/// The first destructive thing a command does: where, what, what instead.
fn find(b: &BashCall) -> Option<(String, String, String)> {
    if !b.analysis.invocations.iter().any(named_by_a_rule)
        && !b.analysis.redirects.iter().any(|r| r.writes())
    {
        // Nothing a rule is about: the tables need not be parsed.
        return None;
    }
    let data = &*DATA;
    let places = Places::new(b.cwd, data);
    for inv in &b.analysis.invocations {
        let Some(program) = inv.program.as_deref() else {
            continue;
        };
        let name = base_name(program);
        for r in &data.rule {
            if let Some(detail) = r.matches(name, inv, &places) {
                let why = match detail {
                    Some(d) => format!("{} ({d})", r.what),
                    None => r.what.clone(),
                };
                return Some((format!("`{}`", b.snippet(inv)), why, r.instead.clone()));
            }
        }
    }
    for r in b.analysis.redirects.iter().filter(|r| r.writes()) {
        if let Some(t) = r.target.as_deref() {
            if data.block_devices.iter().any(|d| t.starts_with(d.as_str())) {
                return Some((
                    format!("the redirect `{} {t}`", r.op),
                    "writes onto a disk device".into(),
                    "write to a file in the project".into(),
                ));
            }
        }
    }
    None
}

/// Whether some rule names the program (build.rs lists every rule's
/// programs and prefixes).
fn named_by_a_rule(inv: &Invocation) -> bool {
    inv.program.as_deref().is_some_and(|p| {
        names(
            crate::data::DESTRUCTIVE_PROGRAMS,
            crate::data::DESTRUCTIVE_PROGRAM_PREFIXES,
            base_name(p),
        )
    })
}

/// Whether a program called `name` is one of `programs` or starts with
/// one of `prefixes`: how a rule, and the list of them all, name programs.
fn names<S: AsRef<str>>(programs: &[S], prefixes: &[S], name: &str) -> bool {
    programs.iter().any(|p| p.as_ref() == name)
        || prefixes.iter().any(|p| name.starts_with(p.as_ref()))
}

impl Rule {
    /// `None` when the rule does not apply; `Some(detail)` when it does,
    /// with what made it apply when that helps the reason.
    fn matches(&self, name: &str, inv: &Invocation, places: &Places) -> Option<Option<String>> {
        if !names(&self.programs, &self.program_prefixes, name)
            || inv.via.iter().any(|v| self.not_via.contains(v))
        {
            return None;
        }
        let args: &[Option<String>] = &inv.args;
        let rest: &[Option<String>] = if self.subcommands.is_empty() {
            args
        } else {
            match inv.subcommand() {
                Sub::Found(i, s) if self.subcommands.iter().any(|x| x == s) => &args[i + 1..],
                // A subcommand known only at run time may be this one.
                Sub::Dynamic => {
                    return Some(Some("its subcommand is known only at run time".into()))
                }
                _ => return None,
            }
        };
        // Options as the analyzer's one reader read them, from the
        // subcommand's arguments on; an argument known only at run time
        // may be any of them.
        let from = args.len() - rest.len();
        let options = inv.options();
        let has = |flags: &[String]| flags.iter().any(|f| options.has_from(from, f));
        let conditions =
            !self.flags.is_empty() || !self.args.is_empty() || !self.arg_prefixes.is_empty();
        if conditions && !has(&self.flags) && !rest.iter().any(|a| self.hits(a.as_deref())) {
            return None;
        }
        if !self.together.iter().all(|group| has(group)) {
            return None;
        }
        if self
            .unless_flags
            .iter()
            .any(|f| options.given_from(from, f))
        {
            return None;
        }
        let shapes = &inv.shapes[inv.shapes.len().saturating_sub(rest.len())..];
        let operands = || {
            let mut past_options = false;
            rest.iter().zip(shapes).filter_map(move |(a, shape)| {
                if a.as_deref() == Some("--") {
                    past_options = true;
                    return None;
                }
                let option = !past_options && shape.starts_with('-') && shape.len() > 1;
                (!option).then_some(shape.as_str())
            })
        };
        match self.target {
            Target::None => Some(self.push_detail(name, inv, places)),
            Target::Operands => operands()
                .skip(self.skip)
                .find_map(|s| places.protected(s))
                .map(Some),
            Target::Roots => rest
                .iter()
                .zip(shapes)
                .take_while(|(_, s)| !s.starts_with(['-', '(', '!']))
                .find_map(|(_, s)| places.root(s))
                .map(Some),
            Target::Processes => {
                let allowed = super::allowlist::pkill_allowed();
                operands()
                    .find(|s| !allowed.iter().any(|a| a == s))
                    .map(|s| Some(format!("`{s}` is not one of the project's own processes")))
            }
        }
    }

    fn hits(&self, arg: Option<&str>) -> bool {
        let Some(a) = arg else {
            // An argument known only at run time may be any of them.
            return true;
        };
        self.args.iter().any(|x| x == a)
            || self.arg_prefixes.iter().any(|p| a.starts_with(p.as_str()))
    }

    /// For a force push: name the protected branch it targets.
    fn push_detail(&self, name: &str, inv: &Invocation, _places: &Places) -> Option<String> {
        if name != "git" || !self.subcommands.iter().any(|s| s == "push") {
            return None;
        }
        let branch = inv.args.iter().flatten().find_map(|a| {
            let b = a.trim_start_matches('+').rsplit(':').next().unwrap_or(a);
            let b = b.trim_start_matches("refs/heads/");
            DATA.protected_branches
                .iter()
                .any(|p| b == p || b.starts_with(&format!("{p}/")))
                .then(|| b.to_string())
        })?;
        Some(format!("`{branch}` is a protected branch"))
    }
}

/// The places a destructive command must not reach.
struct Places<'a> {
    cwd: PathBuf,
    home: Option<PathBuf>,
    data: &'a Data,
}

impl<'a> Places<'a> {
    fn new(cwd: &Path, data: &'a Data) -> Places<'a> {
        Places {
            cwd: cwd.to_path_buf(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .or_else(dirs::home_dir),
            data,
        }
    }

    /// Why an operand (its shape: `*` for run-time parts) is protected.
    fn protected(&self, shape: &str) -> Option<String> {
        if let Some(w) = self.root(shape) {
            return Some(w);
        }
        let trimmed = shape.trim_end_matches('/');
        let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
        if last == ".git" {
            return Some(format!("`{shape}` is the repository itself"));
        }
        let resolved = self.resolve(shape);
        if self.cwd.starts_with(&resolved) {
            return Some(format!("`{shape}` is the project or a directory above it"));
        }
        if matches!(trimmed, "." | ".." | "./*" | "*" | "../*") {
            return Some(format!("`{shape}` is the whole project"));
        }
        None
    }

    /// A starting point that may be anywhere (its leading part is known
    /// only at run time), or the root, the home directory or a system
    /// directory.
    fn root(&self, shape: &str) -> Option<String> {
        // `*` alone, or a run-time part before the first `/`: it can be
        // anywhere. (`*.o` stays in the working directory.)
        if shape == "*" || shape.is_empty() {
            return Some(
                "an operand is known only at run time (a variable, a glob or a substitution), so it may be anywhere"
                    .into(),
            );
        }
        if shape.starts_with("*/") || (shape.starts_with('*') && shape.contains('/')) {
            return Some(format!(
                "`{shape}` starts with a part known only at run time"
            ));
        }
        self.system_root(shape)
    }

    /// The root, the home directory or a system directory.
    fn system_root(&self, shape: &str) -> Option<String> {
        let p = shape.trim_end_matches("/*").trim_end_matches('/');
        if p.is_empty() {
            return Some(format!("`{shape}` is the filesystem root"));
        }
        if p == "~" || p == "$HOME" {
            return Some(format!("`{shape}` is the home directory"));
        }
        let resolved = self.resolve(shape);
        if self.home.as_ref().is_some_and(|h| *h == resolved) {
            return Some(format!("`{shape}` is the home directory"));
        }
        let abs = resolved.to_string_lossy();
        if let Some(d) = self
            .data
            .system_dirs
            .iter()
            .find(|d| abs == d.as_str() || abs.starts_with(&format!("{d}/")))
        {
            return Some(format!("`{shape}` is in the system directory {d}"));
        }
        let parent = resolved.parent().map(|p| p.to_string_lossy().into_owned());
        self.data
            .top_dirs
            .iter()
            .find(|d| abs == d.as_str() || parent.as_deref() == Some(d.as_str()))
            .map(|d| format!("`{shape}` is {d} or directly inside it"))
    }

    /// A path as written, made absolute against the working directory, with
    /// `~` expanded and `.`/`..` applied (lexically: nothing is read).
    fn resolve(&self, shape: &str) -> PathBuf {
        let expanded = match (shape.strip_prefix('~'), &self.home) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                h.join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(shape),
        };
        let mut out = if expanded.is_absolute() {
            PathBuf::from("/")
        } else {
            self.cwd.clone()
        };
        for c in expanded.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::Normal(n) => out.push(n),
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    #[test]
    fn the_names_listed_at_build_time_are_the_rules_names() {
        let names = |of: fn(&Rule) -> &Vec<String>| {
            let mut names: Vec<&str> = DATA.rule.iter().flat_map(of).map(String::as_str).collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        let programs = names(|r| &r.programs);
        let prefixes = names(|r| &r.program_prefixes);
        assert_eq!(programs, crate::data::DESTRUCTIVE_PROGRAMS);
        assert_eq!(prefixes, crate::data::DESTRUCTIVE_PROGRAM_PREFIXES);
        assert!(programs.contains(&"rm") && !prefixes.is_empty());
    }

    fn hit(cmd: &str) -> bool {
        let a = analyze(cmd);
        let b = BashCall {
            command: cmd,
            analysis: &a,
            cwd: Path::new("/home/dev/project"),
        };
        find(&b).is_some()
    }

    #[test]
    fn destructive_and_not() {
        for c in [
            "rm -rf ~",
            "rm -rf /",
            "rm -fr /*",
            "rm -rf .",
            "rm -r .git",
            "rm -rf $HOME",
            "rm -rf ..",
            "rm -rf /home/dev/project",
            "rm -rf /etc/nginx",
            "sudo ls",
            "git push --force origin main",
            "git -C repo reset --hard",
            "git clean -fdx",
            "dd if=/dev/zero of=/dev/sda",
            "mkfs.ext4 /dev/sdb1",
            "chmod -R 777 /",
            "find / -name x -delete",
            "pkill sshd",
            "cat img > /dev/sda",
        ] {
            assert!(hit(c), "{c}");
        }
        for c in [
            "rm -rf ./build",
            "rm -rf node_modules dist",
            "rm -rf build/*",
            "rm -f foo.o",
            "rm notes.txt",
            "rm -rf /tmp/x",
            "echo rm -rf /",
            "git push origin feature",
            "git reset --soft HEAD~1",
            "git clean -n",
            "git branch -d merged",
            "chmod -R u+w ./src",
            "find . -name '*.o' -delete",
            "dd if=a of=disk.img",
            "kill %1",
            "pkill node",
        ] {
            assert!(!hit(c), "{c}");
        }
    }
}
