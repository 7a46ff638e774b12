//! Self-protection: the agent may not change what guards it. A session's
//! taint lives in the state directory and the rules in the configuration
//! and the client's settings (which hold the hook itself); a command that
//! deletes a session file, rewrites `.bashgate.toml` or drops the hook from
//! a client's settings (every file the client table lists for every
//! client) would switch the gate off.
//!
//! What a command can touch comes from the analyzer's write model (the
//! files each invocation writes and removes, globs and run-time parts kept
//! as shapes) and, for programs it does not model, from every path argument
//! of a program that is not a reader. Denied: writing or removing a
//! protected file, a glob that can match one, removing a directory that
//! holds one, and bashgate's own state-changing subcommands. Asked, in a
//! tainted session: a tree written whose contents the command does not show
//! (an archive, a patch, a recursive copy, git restoring tracked files) into
//! a directory that holds a protected file, a write or removal whose target
//! is known only at run time, and code for an interpreter that names a
//! protected file.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use bashgate_analyzer::argv::Sub;
use bashgate_analyzer::Invocation;
use serde::Deserialize;
use serde_json::Value;

use super::paths::resolve;
use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step, Subject};
use crate::config::Config;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;
use bashgate_analyzer::glob::glob_match;

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
            Subject::Bash(b) => {
                let tainted = call.taint.as_ref().map_or(true, |t| t.any());
                guard().check_bash_tainted(b, tainted).into()
            }
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

/// Tools that write the file they name.
pub const WRITERS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

static DATA: LazyLock<Data> =
    LazyLock::new(|| crate::data::parse(crate::data::SELF_PROTECTION, "self_protection"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    readers: Vec<String>,
    bashgate_reads: Vec<String>,
    bashgate_changes: Vec<String>,
    interpreters: Vec<String>,
    bulk: Vec<Bulk>,
}

/// A program that writes a tree whose contents the command does not show.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bulk {
    programs: Vec<String>,
    /// Only with one of these flags (any, when empty).
    #[serde(default)]
    when: Vec<String>,
    /// Not with one of these flags or words (listing, dry runs).
    #[serde(default)]
    unless: Vec<String>,
    /// Only these subcommands (any, when empty).
    #[serde(default)]
    subcommands: Vec<String>,
    /// Options whose value is the directory written.
    #[serde(default)]
    dirs: Vec<String>,
    /// `last`: the last operand is the directory written; otherwise the
    /// working directory (or a `dirs` option's value).
    #[serde(default)]
    target: Option<String>,
    /// It writes only files git tracks (`git checkout`, `git stash`): a
    /// protected file the repository's index does not hold is out of its
    /// reach (git refuses to overwrite an untracked file without -f).
    #[serde(default)]
    tracked_only: bool,
}

/// Where a path lies relative to a protected one.
enum Place {
    /// The protected path itself or something inside it.
    Inside(PathBuf),
    /// A directory holding these protected paths (which exist).
    Above(Vec<PathBuf>),
}

pub struct SelfGuard {
    state_dir: PathBuf,
    config_file: Option<PathBuf>,
    cwd: PathBuf,
    /// Worked out on first use: resolving each path costs system calls,
    /// and most commands write nothing.
    protected: OnceCell<Vec<PathBuf>>,
}

impl SelfGuard {
    pub fn new(state_dir: &Path, config_file: Option<&Path>, cwd: &Path) -> SelfGuard {
        SelfGuard {
            state_dir: state_dir.to_path_buf(),
            config_file: config_file.map(Path::to_path_buf),
            cwd: cwd.to_path_buf(),
            protected: OnceCell::new(),
        }
    }

    /// Every protected path, resolved.
    fn protected(&self) -> &[PathBuf] {
        self.protected.get_or_init(|| {
            let cwd = &self.cwd;
            // Every configuration file that could come into force, not just
            // the one in force now.
            let mut protected = crate::config::own_files(&self.state_dir);
            protected.extend(self.config_file.clone());
            for p in [crate::config::PROJECT_FILE, crate::config::LOCAL_FILE] {
                protected.push(cwd.join(p));
            }
            // Every client's settings here, as they exist (for a glob in
            // a command, `cp x .agent/setting?.json`, to be matched
            // against); `place` finds them wherever else they lie.
            for p in crate::clients::settings_patterns() {
                match p.rsplit_once('/') {
                    Some((dir, name)) if name.contains('*') => {
                        let entries = std::fs::read_dir(cwd.join(dir)).into_iter().flatten();
                        protected.extend(entries.flatten().map(|e| e.path()).filter(|f| {
                            f.file_name()
                                .is_some_and(|n| glob_match(name, &n.to_string_lossy()))
                        }));
                    }
                    _ => protected.push(cwd.join(p)),
                }
            }
            // Every client's settings in the home directory (a pattern
            // with `*` is found by `place` wherever it lies).
            if let Some(h) = dirs::home_dir() {
                protected.extend(
                    crate::clients::user_settings()
                        .filter(|p| !p.contains('*'))
                        .map(|p| h.join(p)),
                );
            }
            let mut protected: Vec<PathBuf> = protected
                .iter()
                .filter_map(|p| resolve(cwd, &p.display().to_string()))
                .collect();
            protected.sort();
            protected.dedup();
            protected
        })
    }

    /// Where a literal path lies relative to the protected ones.
    fn place(&self, cwd: &Path, written: &str) -> Option<Place> {
        let r = resolve(cwd, written)?;
        if let Some(p) = self.protected().iter().find(|p| r.starts_with(p)) {
            return Some(Place::Inside(p.clone()));
        }
        // A `.bashgate.toml` anywhere (a project's configuration is never
        // the agent's to write, wherever the project's root is).
        let mut at = PathBuf::new();
        for c in r.components() {
            at.push(c);
            let name = c.as_os_str();
            if name == crate::config::PROJECT_FILE || name == crate::config::LOCAL_FILE {
                return Some(Place::Inside(at));
            }
        }
        // Any client's settings anywhere (the client table), or a directory
        // on the way to them: each client reads its project's and the
        // home directory's, and which directory is a project is not ours
        // to guess.
        let names: Vec<String> = r
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        for pattern in client_settings() {
            let p: Vec<&str> = pattern.split('/').collect();
            for i in 0..names.len() {
                let n = p.len().min(names.len() - i);
                if (0..n).all(|k| glob_match(p[k], &names[i + k])) {
                    return Some(Place::Inside(r.components().take(i + n).collect()));
                }
            }
        }
        let under: Vec<PathBuf> = self
            .protected()
            .iter()
            .filter(|p| p.starts_with(&r) && p.exists())
            .cloned()
            .collect();
        (!under.is_empty()).then_some(Place::Above(under))
    }

    /// Where a shape with wildcards (a glob, or `*` for a run-time part)
    /// can lie: any protected path it can match, or whose directory it can.
    fn place_pattern(&self, cwd: &Path, shape: &str) -> Option<Place> {
        let base = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let abs = if let Some(rest) = shape.strip_prefix("~/") {
            dirs::home_dir()?.join(rest).display().to_string()
        } else if shape.starts_with('/') {
            shape.to_string()
        } else {
            format!("{}/{shape}", base.display())
        };
        let abs = abs.replace("/./", "/");
        let abs = match abs.trim_end_matches('/') {
            "" => "/".to_string(),
            t => t.to_string(),
        };
        let mut under = Vec::new();
        for p in self.protected() {
            let text = p.display().to_string();
            let literal = &abs[..abs.find(['*', '?', '[']).unwrap_or(abs.len())];
            // A glob expands only to files that exist.
            if p.exists() && (glob_match(&abs, &text) || literal.starts_with(&format!("{text}/"))) {
                return Some(Place::Inside(p.clone()));
            }
            if p.exists()
                && p.ancestors()
                    .skip(1)
                    .any(|a| a != Path::new("/") && glob_match(&abs, &a.display().to_string()))
            {
                under.push(p.clone());
            }
        }
        (!under.is_empty()).then_some(Place::Above(under))
    }

    /// Where a shape can lie. A shape that starts with a run-time part can
    /// be anywhere: that is for the caller to weigh, not a place.
    fn place_shape(&self, cwd: &Path, shape: &str) -> Option<Place> {
        if shape.starts_with('*') {
            return None;
        }
        if shape.contains(['*', '?', '[']) {
            self.place_pattern(cwd, shape)
        } else {
            self.place(cwd, shape)
        }
    }

    /// Without the session's taint: as if tainted.
    #[cfg(test)]
    pub fn check_bash(&self, call: &BashCall) -> Option<Decision> {
        self.check_bash_tainted(call, true)
    }

    pub fn check_bash_tainted(&self, call: &BashCall, tainted: bool) -> Option<Decision> {
        let data = &*DATA;
        let mut asked: Option<Decision> = None;
        // After a `cd`, a relative path names a place under the new
        // directory: every directory the command may be in is checked.
        let dirs = super::paths::working_dirs(call);
        let place = |written: &str| first_place(dirs.bases.iter().map(|b| self.place(b, written)));
        let place_shape =
            |shape: &str| first_place(dirs.bases.iter().map(|b| self.place_shape(b, shape)));
        for (program, inv) in call.named() {
            let name = base_name(program);
            let what = || format!("`{}`", call.snippet(inv));
            // The hook program run by hand speaks as the client (a forged
            // post-tool event is a forged approval): never the agent's.
            if name == "bashgate-hook" {
                return Some(hook_by_hand(&what()));
            }
            if name == "bashgate" {
                if let Some(d) = bashgate_changes(inv, &what()) {
                    return Some(d);
                }
                continue;
            }
            // What find hands a program it runs (`{}`, read as a glob over
            // its starting points) is only what find's tests can match.
            let found = |shape: &str, p: &Path| {
                shape.ends_with("**")
                    && run_by_find(call, inv).is_some_and(|f| !find_may_match(f, p))
            };
            // The analyzer's write model: what it writes and removes.
            for shape in &inv.writes {
                match place_shape(shape) {
                    Some(Place::Inside(p)) if found(shape, &p) => {}
                    Some(Place::Inside(p)) => return Some(deny(&what(), shape, &p)),
                    Some(Place::Above(ps)) => {
                        if let Some(p) = ps.iter().find(|p| copies_name_into(inv, p)) {
                            return Some(deny(&what(), shape, p));
                        }
                    }
                    _ => {}
                }
            }
            for shape in &inv.removes {
                match place_shape(shape) {
                    Some(Place::Inside(p)) if found(shape, &p) => {}
                    Some(Place::Inside(p)) => return Some(deny(&what(), shape, &p)),
                    // find removes what its expression matches under its
                    // starting points, not the starting points themselves.
                    Some(Place::Above(ps)) => {
                        if let Some(p) =
                            ps.iter().find(|p| name != "find" || find_may_match(inv, p))
                        {
                            return Some(deny(&what(), shape, p));
                        }
                    }
                    _ => {}
                }
            }
            if tainted {
                if let Some(shape) = inv
                    .writes
                    .iter()
                    .chain(&inv.removes)
                    .find(|s| s.starts_with('*') && self.may_end(s))
                {
                    asked.get_or_insert_with(|| {
                        ask(&what(), &format!("it writes or removes `{shape}`, a path known only at run time, and the session is tainted; it could be one of bashgate's files"))
                    });
                }
                if let Some(why) = &dirs.unknown {
                    if let Some(shape) = inv
                        .writes
                        .iter()
                        .chain(&inv.removes)
                        .find(|s| !s.starts_with(['/', '~']))
                    {
                        asked.get_or_insert_with(|| {
                            ask(&what(), &format!("it writes or removes `{shape}` after a {why}, and the session is tainted; it could be one of bashgate's files"))
                        });
                    }
                }
            }
            // Trees written over protected files: asked in a tainted
            // session (untainted, `git checkout main` in a project with
            // a client's settings committed is everyday work).
            if tainted {
                if let Some(d) = self.bulk(call, inv) {
                    asked.get_or_insert(d);
                }
            }
            if data.readers.iter().any(|r| r == name) {
                continue;
            }
            // Programs the analyzer does not model: every path argument.
            for a in inv.args.iter().flatten() {
                let v = match a.split_once('=') {
                    Some((k, v)) if !k.contains('/') => v,
                    _ => a.as_str(),
                };
                if v.is_empty() || v.starts_with('-') || v.contains("://") {
                    continue;
                }
                if let Some(Place::Inside(p)) = place(v) {
                    return Some(deny(&what(), v, &p));
                }
            }
            // Code for an interpreter that names a protected file.
            if tainted && is_interpreter(name) {
                if let Some(marker) = inv.args.iter().flatten().find_map(|a| self.mentions(a)) {
                    asked.get_or_insert_with(|| {
                        ask(&what(), &format!("code for `{name}` names `{marker}`, one of bashgate's files, and the session is tainted"))
                    });
                }
            }
        }
        for r in &call.analysis.redirects {
            if !r.writes() {
                continue;
            }
            let shape = r.target.clone();
            if let Some(t) = &shape {
                if let Some(Place::Inside(p)) = place(t) {
                    return Some(deny("this command", t, &p));
                }
            }
        }
        asked
    }

    /// A tree written into a directory that holds a protected file.
    fn bulk(&self, call: &BashCall, inv: &Invocation) -> Option<Decision> {
        let program = base_name(inv.program.as_deref()?);
        // The entry for this program and subcommand (a subcommand known
        // only at run time may be any: the first entry's).
        let sub = inv.subcommand();
        let b = DATA.bulk.iter().find(|b| {
            b.programs.iter().any(|p| p == program)
                && (b.subcommands.is_empty()
                    || match sub {
                        Sub::Found(_, s) => b.subcommands.iter().any(|x| x == s),
                        Sub::Dynamic => true,
                        Sub::None => false,
                    })
        })?;
        let args = &inv.args;
        // Options as the analyzer's one reader read them (tar's dash-less
        // first cluster included); a word known only at run time may be
        // any option.
        let options = inv.options();
        let listed = b.unless.iter().any(|u| {
            if u.starts_with('-') {
                options.given_from(0, u)
            } else {
                args.iter().flatten().any(|a| a == u)
            }
        });
        if listed {
            return None;
        }
        if !b.when.is_empty() && !b.when.iter().any(|f| options.has(f)) {
            return None;
        }
        // The directory it writes into: the value of its directory option
        // (as the one reader reads values), else its last operand.
        let mut target = options.last_value(&b.dirs);
        if target.is_none() && b.target.as_deref() == Some("last") {
            target = options
                .operands
                .last()
                .and_then(|&i| inv.shapes.get(i))
                .map(String::as_str);
        }
        let target = target.unwrap_or(".");
        let what = format!("`{}`", call.snippet(inv));
        if target.starts_with('*') {
            return Some(ask(&what, &format!("it writes a tree into `{target}`, a directory known only at run time, and the session is tainted")));
        }
        let p = match self.place_shape(call.cwd, target)? {
            Place::Inside(p) => Some(p),
            Place::Above(ps) => ps.into_iter().find(|p| !b.tracked_only || tracked(p)),
        }?;
        if b.tracked_only && !tracked(&p) {
            return None;
        }
        Some(ask(
            &what,
            &format!(
                "it writes files the command does not name into `{target}`, which holds {}, one of bashgate's own files",
                p.display()
            ),
        ))
    }

    /// Whether a path whose start is known only at run time (`*.o`,
    /// `*/settings.json`) may be a protected file or a directory holding
    /// one: its literal end can end one of them (`*.o` cannot be a
    /// settings file, the state directory or anything in it but a file
    /// bashgate never reads).
    fn may_end(&self, shape: &str) -> bool {
        let tail = shape.rsplit('*').next().unwrap_or("");
        if tail.is_empty() || tail.contains(['?', '[']) {
            return true;
        }
        let ends = |p: &str| p.ends_with(tail) || tail.ends_with(p);
        // What the state directory holds, two levels down (sessions/x.json).
        let state = std::fs::read_dir(&self.state_dir)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|e| {
                let inner = std::fs::read_dir(e.path()).into_iter().flatten().flatten();
                std::iter::once(e.path()).chain(inner.map(|i| i.path()))
            });
        let mut state = state;
        if state.any(|p| p.to_str().is_some_and(ends)) {
            return true;
        }
        self.protected().iter().any(|p| {
            p.ancestors()
                .any(|a| a.to_str().is_some_and(|a| !a.is_empty() && ends(a)))
        }) || client_settings().any(|pattern| {
            // A glob or a directory of settings (`.agent/settings*`,
            // `.github/hooks`) holds files of the kinds clients read
            // (`.json`, `.toml`: every named settings file's extension).
            let last = pattern.rsplit('/').next().unwrap_or(pattern);
            if last.contains('*') || !last.contains('.') {
                client_settings()
                    .filter_map(|p| p.rsplit('/').next())
                    .filter(|l| !l.contains('*'))
                    .filter_map(|l| l.rfind('.').map(|i| &l[i..]))
                    .any(ends)
            } else {
                ends(pattern)
            }
        })
    }

    /// A protected file's name inside a word (code, not a path).
    fn mentions(&self, word: &str) -> Option<String> {
        for m in [".bashgate", "bashgate/config.toml"] {
            if word.contains(m) {
                return Some(m.to_string());
            }
        }
        // A client's settings, up to the first wildcard.
        for p in client_settings() {
            let m = p.split('*').next().unwrap_or(p);
            if m.contains('/') && word.contains(m) {
                return Some(m.to_string());
            }
        }
        self.protected()
            .iter()
            .map(|p| p.display().to_string())
            .find(|p| word.contains(p.as_str()))
    }

    pub fn check_path(&self, tool: &str, cwd: &Path, written: &str) -> Option<Decision> {
        match self.place(cwd, written)? {
            Place::Inside(p) => Some(deny(&format!("this {tool} call"), written, &p)),
            Place::Above(_) => None,
        }
    }
}

/// Whether find's expression may match `p` or a directory holding it: a
/// `-name`/`-iname`/`-path`/`-ipath` test that can match, or no name test
/// at all (or one it cannot judge, such as `-regex`).
fn find_may_match(inv: &Invocation, p: &Path) -> bool {
    let args = &inv.args;
    let mut tests = 0;
    for (i, a) in args.iter().enumerate() {
        let Some(a) = a.as_deref() else { return true };
        let Some(pat) = args.get(i + 1) else { continue };
        match a {
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                tests += 1;
                let Some(pat) = pat.as_deref() else {
                    return true;
                };
                let fold = a.starts_with("-i");
                let cmp = |s: &str| {
                    if fold {
                        s.to_lowercase()
                    } else {
                        s.to_string()
                    }
                };
                let pat = cmp(pat);
                let hit = if a.ends_with("name") && !a.contains("whole") {
                    p.ancestors()
                        .filter_map(Path::file_name)
                        .any(|n| glob_match(&pat, &cmp(&n.to_string_lossy())))
                } else {
                    // A path test sees the path as find prints it: any
                    // suffix of the real one may be it.
                    let full = cmp(&p.display().to_string());
                    let pat = pat.trim_start_matches("./");
                    glob_match(&format!("*{pat}"), &full) || glob_match(&format!("*{pat}/*"), &full)
                };
                if hit {
                    return true;
                }
            }
            "-regex" | "-iregex" | "-lname" | "-ilname" => return true,
            _ => {}
        }
    }
    tests == 0
}

/// Whether git may hold `p` in the index of the repository around it (an
/// index that cannot be read may).
fn tracked(p: &Path) -> bool {
    let Some(top) = p.ancestors().skip(1).find(|d| d.join(".git").exists()) else {
        // Not in a repository: git writes nothing there.
        return false;
    };
    let Ok(rel) = p.strip_prefix(top) else {
        return true;
    };
    super::gitindex::Index::of(top).may_track(rel)
}

/// The find whose `-exec` runs `inv`, when one does.
fn run_by_find<'a>(call: &'a BashCall, inv: &Invocation) -> Option<&'a Invocation> {
    if !inv.via.iter().any(|v| v == "find") {
        return None;
    }
    call.analysis.invocations.iter().find(|f| {
        f.program.as_deref().map(base_name) == Some("find")
            && f.span.start <= inv.span.start
            && inv.span.end <= f.span.end
    })
}

/// Whether `inv` copies a file named like `p` into the directory above it
/// (`cp config.toml ~/.config/bashgate/`).
fn copies_name_into(inv: &Invocation, p: &Path) -> bool {
    let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return false;
    };
    inv.shapes.iter().any(|s| {
        let last = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
        last == name || last.contains(['*', '?', '['])
    })
}

fn is_interpreter(name: &str) -> bool {
    DATA.interpreters.iter().any(|i| {
        name == i
            || name
                .strip_prefix(i.as_str())
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// Running the hook program itself: whatever it is given, it records
/// events and answers as the client would.
fn hook_by_hand(what: &str) -> Decision {
    refuse(
        what,
        "it runs bashgate's hook by hand, which would report events (a command having run, so approved) as the agent's client",
        "ask the person to run it",
    )
}

/// Self-protection's denial: what, why, what to do instead.
fn refuse(what: &str, why: &str, instead: &str) -> Decision {
    let rule = GateRule::SelfProtection;
    Decision::deny(
        Layer::SelfProtection,
        rule,
        reason(what, why, rule, instead),
    )
}

/// bashgate's own subcommands that change state are the person's.
fn bashgate_changes(inv: &Invocation, what: &str) -> Option<Decision> {
    let data = &*DATA;
    let words: Vec<Option<&str>> = inv
        .args
        .iter()
        .map(Option::as_deref)
        .filter(|a| !a.is_some_and(|a| a.starts_with("--config")))
        .collect();
    let first = words.first().copied().flatten();
    let second = words.get(1).copied().flatten();
    let reads = match first {
        None if words.is_empty() => true,
        Some(f) => {
            let two = second.map(|s| format!("{f} {s}"));
            data.bashgate_reads
                .iter()
                .any(|r| r == f || Some(r) == two.as_ref())
                && !inv.args.iter().flatten().any(|a| {
                    data.bashgate_changes
                        .iter()
                        .any(|c| a == c || a.starts_with(&format!("{c}=")))
                })
        }
        None => false,
    };
    if reads {
        return None;
    }
    Some(refuse(
        what,
        "it would change bashgate's own state or configuration (clearing taint, forgetting answers, installing hooks, answering approvals), which is the person's to do",
        "ask the person to run it",
    ))
}

/// Every client's settings, in projects and at home (the client table).
/// The place a path has from whichever working directory puts it inside a
/// protected path, else above one.
fn first_place(places: impl Iterator<Item = Option<Place>>) -> Option<Place> {
    let mut above = None;
    for p in places.flatten() {
        match p {
            Place::Inside(_) => return Some(p),
            Place::Above(_) => {
                above.get_or_insert(p);
            }
        }
    }
    above
}

fn client_settings() -> impl Iterator<Item = &'static str> {
    crate::clients::settings_patterns().chain(crate::clients::user_settings())
}

fn deny(what: &str, written: &str, protected: &Path) -> Decision {
    refuse(
        what,
        &format!(
            "it can change `{written}`, which is or holds {}, part of bashgate's own state, configuration or hook settings",
            protected.display()
        ),
        "leave bashgate's files alone; ask the person to change its configuration or reset a session",
    )
}

fn ask(what: &str, why: &str) -> Decision {
    let rule = GateRule::SelfProtection;
    Decision::ask(
        Layer::SelfProtection,
        rule,
        format!(
            "bashgate asks the person about {what}: {why} ({}). If that is not what was meant: name the files to change, outside bashgate's own.",
            rule.tag()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's project settings file, from the client table.
    fn settings() -> &'static str {
        &crate::clients::all().values().next().unwrap().hook_file
    }

    /// A client's local settings file (the person's own, in the project).
    fn local_settings() -> &'static str {
        crate::clients::all()
            .values()
            .find_map(|c| c.local_hook_files.first())
            .unwrap()
    }
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
        assert!(denied(&g, &proj, &format!("rm {}", local_settings())));
        // `<>` opens for writing too (and creates the file).
        assert!(denied(&g, &proj, "echo x 1<> .bashgate.toml"));
        assert!(denied(&g, &proj, "bash -c 'echo x > .bashgate.toml'"));
        assert!(!denied(&g, &proj, &format!("cat {s}/sessions/x.json")));
        assert!(!denied(&g, &proj, "grep x .bashgate.toml"));
        assert!(!denied(&g, &proj, "echo x > notes.txt && rm -rf build"));
        // What find hands the program it runs is what its tests match.
        let f = settings();
        std::fs::create_dir_all(proj.join(f).parent().unwrap()).unwrap();
        std::fs::write(proj.join(f), "{}").unwrap();
        let g = SelfGuard::new(&state, Some(&cfg), &proj);
        assert!(!denied(&g, &proj, "find . -name '*.txt' -exec rm {} \\;"));
        assert!(!denied(&g, &proj, "find . -exec echo -delete \\; -print"));
        assert!(denied(&g, &proj, "find . -exec rm {} +"));
        assert!(denied(&g, &proj, "find . -name '*.json' -exec rm {} +"));
        assert!(denied(
            &g,
            &proj,
            &format!("find . -name '*.txt' -exec rm {{}} {f} \\;")
        ));
        assert!(!denied(
            &g,
            &proj,
            "curl https://example.com/.bashgate.toml"
        ));
        assert!(g.check_path("Write", &proj, f).is_some());
        assert!(g.check_path("Write", &proj, "src/main.rs").is_none());
    }

    /// A path whose start is known only at run time is asked about in a
    /// tainted session when its literal end can end one of bashgate's
    /// files or a directory holding one; `rm -f *.o` cannot.
    #[test]
    fn a_run_time_start_is_asked_only_where_it_can_end_a_protected_path() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        std::fs::create_dir_all(state.join("sessions")).unwrap();
        std::fs::write(state.join("audit.db"), "").unwrap();
        std::fs::write(state.join("sessions/s1.json"), "{}").unwrap();
        let proj = t.path().join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        let cfg = t.path().join("cfg.toml");
        let g = SelfGuard::new(&state, Some(&cfg), &proj);
        // `check_bash` decides as in a tainted session.
        let asked = |cmd: &str| denied(&g, &proj, cmd);
        for cmd in [
            "rm -f \"$X\"",
            "rm -f \"$X\".db",
            "rm -f \"$X\"/s1.json",
            "echo x | tee \"$X\"/settings.json",
            "rm -rf \"$X\"/bashgate",
            "cp a \"$X\".toml",
        ] {
            assert!(asked(cmd), "{cmd}");
        }
        for cmd in ["rm -f *.o", "rm -rf \"$X\"/build", "tee \"$OUT\".log"] {
            assert!(!asked(cmd), "{cmd}");
        }
    }

    /// git writes only what it tracks: `git checkout main` or `git stash`
    /// in a project whose client settings git does not track cannot change
    /// them; once tracked, a tainted session is asked.
    #[test]
    fn git_reaches_a_protected_file_only_when_it_tracks_it() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("proj");
        let f = settings();
        std::fs::create_dir_all(proj.join(f).parent().unwrap()).unwrap();
        std::fs::write(proj.join(f), "{}").unwrap();
        std::fs::write(proj.join("README"), "x").unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "init.defaultBranch=main",
                ])
                .args(args)
                .current_dir(&proj)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "README"]);
        git(&["commit", "-qm", "x"]);
        let g = SelfGuard::new(&t.path().join("state"), None, &proj);
        // `check_bash` decides as in a tainted session.
        let asked = |cmd: &str| denied(&g, &proj, cmd);
        let everyday = [
            "git checkout main",
            "git switch main",
            "git stash",
            "git reset --hard HEAD",
            "git restore README",
        ];
        for cmd in everyday {
            assert!(!asked(cmd), "untracked settings: {cmd}");
        }
        for cmd in ["git reset HEAD~1", "git restore --help", "git stash list"] {
            assert!(!asked(cmd), "{cmd}");
        }
        // A patch writes whatever names it holds, tracked or not.
        assert!(asked("git apply fix.patch"));
        git(&["add", f]);
        for cmd in everyday {
            assert!(asked(cmd), "tracked settings: {cmd}");
        }
    }

    /// A relative path after `cd` names a place under the new directory:
    /// `cd STATE/.. && rm -rf state` removes the state as surely as
    /// `rm -rf STATE` does.
    #[test]
    fn a_path_after_cd_is_judged_where_the_command_moved() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("home/.local/state/bashgate");
        std::fs::create_dir_all(&state).unwrap();
        let proj = t.path().join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        let cfg = t.path().join("home/.config/bashgate/config.toml");
        let g = SelfGuard::new(&state, Some(&cfg), &proj);
        let home = t.path().join("home").display().to_string();
        for cmd in [
            format!("cd {home} && rm -rf .local/state/bashgate"),
            format!("cd {home}/.local && rm -rf state"),
            format!("cd {home}/.config/bashgate && echo x > config.toml"),
            format!("pushd {home}/.local/state >/dev/null; rm -r bashgate"),
            format!("cd {home}; touch .local/state/bashgate/sessions/x.json"),
            format!("env -C {home} rm -rf .local/state/bashgate"),
            format!("env --chdir={home}/.config/bashgate touch config.toml"),
        ] {
            assert!(denied(&g, &proj, &cmd), "{cmd}");
        }
        // The project's own work after a cd stays allowed.
        for cmd in [
            "cd sub && rm -rf build".to_string(),
            format!("cd {home} && ls -la && cat .local/state/bashgate/x"),
        ] {
            assert!(!denied(&g, &proj, &cmd), "{cmd}");
        }
        // A cd to a place known only at run time, tainted: asked.
        let cmd = "cd \"$D\" && rm -rf state";
        let a = analyze(cmd);
        let call = BashCall {
            command: cmd,
            analysis: &a,
            cwd: &proj,
        };
        let d = g.check_bash_tainted(&call, true).unwrap();
        assert_eq!(d.permission, crate::decision::Permission::Ask);
        assert!(g.check_bash_tainted(&call, false).is_none());
    }

    #[test]
    fn every_clients_hook_settings_are_protected_in_the_project_and_at_home() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("proj");
        std::fs::create_dir_all(proj.join("sub")).unwrap();
        let g = SelfGuard::new(&t.path().join("state"), None, &proj.join("sub"));
        let home = dirs::home_dir().unwrap();
        for (name, c) in crate::clients::all() {
            let mut files = vec![proj.join(&c.hook_file), proj.join("sub").join(&c.hook_file)];
            files.extend(c.user_hook_file.iter().map(|f| home.join(f)));
            for f in files {
                let f = f.display();
                for cmd in [
                    format!("echo '{{}}' > {f}"),
                    format!("rm -f {f}"),
                    format!("sed -i s/bashgate/true/ {f}"),
                ] {
                    assert!(denied(&g, &proj, &cmd), "{name}: {cmd}");
                }
                assert!(
                    g.check_path("Write", &proj, &f.to_string()).is_some(),
                    "{name}: {f}"
                );
                assert!(!denied(&g, &proj, &format!("cat {f}")), "{name}: {f}");
            }
            // The directory holding them, removed whole.
            let dir = c.hook_file.split('/').next().unwrap();
            assert!(
                denied(&g, &proj, &format!("rm -rf {}", proj.join(dir).display())),
                "{name}"
            );
        }
        // A link to one that does not exist yet: writing through it
        // creates it.
        let links = t.path().join("links");
        std::fs::create_dir_all(&links).unwrap();
        std::os::unix::fs::symlink(proj.join(local_settings()), links.join("a")).unwrap();
        std::os::unix::fs::symlink("b", links.join("c")).unwrap();
        let user = crate::clients::all()
            .values()
            .find_map(|c| c.user_hook_file.as_deref())
            .unwrap();
        std::os::unix::fs::symlink(home.join(user), links.join("b")).unwrap();
        for link in ["a", "c"] {
            let link = links.join(link).display().to_string();
            let link = link.as_str();
            assert!(g.check_path("Write", &proj, link).is_some(), "{link}");
            assert!(
                denied(&g, &proj, &format!("echo '{{}}' > {link}")),
                "{link}"
            );
        }
        // Work beside them is not the gate's business.
        assert!(!denied(&g, &proj, "echo x > .github/workflows/ci.yml"));
        let top = settings().split('/').next().unwrap();
        assert!(!denied(&g, &proj, &format!("echo x > {top}-notes.md")));
        // bashgate's own programs, which the settings name.
        let exe = std::env::current_exe().unwrap();
        assert!(g
            .check_path("Write", &proj, &exe.display().to_string())
            .is_some());
        assert!(denied(
            &g,
            &proj,
            &format!("cp /tmp/evil {}", exe.display())
        ));
        // The hook program itself, run by hand, is the client speaking.
        for cmd in [
            "echo '{}' | bashgate-hook CLIENT",
            "env bashgate-hook CLIENT < ev.json",
            "/usr/local/bin/bashgate-hook --version",
        ] {
            let cmd = cmd.replace(
                "CLIENT",
                &crate::clients::all().values().next().unwrap().key,
            );
            assert!(denied(&g, &proj, &cmd), "{cmd}");
        }
    }
}
