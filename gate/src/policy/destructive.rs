//! Destructive local commands (the protection profiles): deleting,
//! moving away or overwriting anything outside the project, the project
//! itself or its repository; writing to disks; throwing away git history
//! or uncommitted work; interpreter code that deletes or starts programs;
//! privilege; killing processes that are not the project's. `standard`
//! asks the person, `strict` denies, `minimal` lets the taint cascade
//! decide as before. Where a command may change files is an allowlist (the
//! project's inside and scratch directories), never a list of dangerous
//! places. The patterns are data (`data/destructive.toml`), matched against
//! the analyzer's resolved invocations and write model, never against the
//! command's text.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use bashgate_analyzer::argv::Sub;
use bashgate_analyzer::Invocation;
use serde::Deserialize;

use super::gitindex::{Changed, Index};
use super::paths::{resolve, working_dirs};
use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step};
use crate::config::{Config, Profile};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;
use bashgate_analyzer::glob::glob_match;

/// The tables, parsed once per process.
static DATA: LazyLock<Data> =
    LazyLock::new(|| crate::data::parse(crate::data::DESTRUCTIVE, "destructive"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    block_devices: Vec<String>,
    protected_branches: Vec<String>,
    find: FindData,
    rule: Vec<Rule>,
    code: Vec<Code>,
}

/// How find's expression is read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindData {
    /// Tests that narrow what find matches: with one, find from the
    /// project's top is not "the whole project".
    narrowing: Vec<String>,
    /// Actions that run a program on what find matches.
    exec: Vec<String>,
    /// Programs that only read, which find may run on anything it finds.
    exec_reads: Vec<String>,
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
    /// The rule applies only with at least this many operands after the
    /// subcommand (`git checkout REV PATH`).
    #[serde(default)]
    operands_at_least: usize,
    /// Wrappers whose own rule covers this program (`find -exec rm {}` is
    /// judged by the find rule).
    #[serde(default)]
    not_via: Vec<String>,
    /// Inside the project too, for a path holding a tracked file whose
    /// changes are not committed: its working copy is lost (`rm`).
    #[serde(default)]
    uncommitted: bool,
    what: String,
    instead: String,
}

/// Code an interpreter is given on its command line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Code {
    language: String,
    programs: Vec<String>,
    #[serde(default)]
    program_prefixes: Vec<String>,
    /// The options whose value is the code.
    options: Vec<String>,
    /// Calls that delete files or start programs, as substrings.
    calls: Vec<String>,
}

/// Which arguments must be outside the places a command may change for
/// the rule to apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Target {
    /// No condition on the arguments beyond the rule's flags.
    #[default]
    None,
    /// Some operand is not a place the command may change.
    Operands,
    /// find: it deletes or runs a changing program under a starting point
    /// that is not a place it may change.
    Tree,
    /// Some process name is not one the project may stop (the built-in
    /// `[pkill]` list in `data/allowlist.toml`).
    Processes,
    /// git push: a branch it updates is protected (`protected_branches`):
    /// one named as a destination, the current branch when none is named,
    /// any with `--all`.
    Branch,
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
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let Some(b) = call.bash() else {
            return Step::Pass;
        };
        let project = env.project().unwrap_or(b.cwd);
        let Some(Found {
            snippet,
            why,
            instead,
            bounded,
        }) = find(b, project)
        else {
            return Step::Pass;
        };
        let rule = GateRule::Destructive;
        let decision = match self.profile {
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
        };
        // In a session that has read nothing untrusted, a fence that
        // bounds writes settles a change whose place only its start hides.
        // Tainted, the start may be the attacker's choice: asked.
        let untainted = call.taint.as_ref().is_ok_and(|t| !t.any());
        match bounded {
            Some(place) if self.profile == Profile::Standard && untainted => Step::Bounded {
                ask: decision,
                why: format!("the fence keeps `{place}` inside the project, the temporary directories or the caches, and its named end keeps it off the project itself and its history"),
            },
            _ => Step::Decide(decision),
        }
    }
}

/// A destructive thing a command does.
struct Found {
    /// Where in the command.
    snippet: String,
    why: String,
    instead: String,
    /// The place, when it is one a fence bounding writes settles.
    bounded: Option<String>,
}

/// The first destructive thing a command does: where, what, what instead.
/// One that a fence bounding writes settles is kept only while nothing
/// else is found.
fn find(b: &BashCall, project: &Path) -> Option<Found> {
    let invs = &b.analysis.invocations;
    if !invs
        .iter()
        .any(|i| named_by_a_rule(i) || !i.writes.is_empty() || !i.removes.is_empty())
        && !b.analysis.redirects.iter().any(|r| r.writes())
    {
        // Nothing a rule is about: the tables need not be parsed.
        return None;
    }
    let data = &*DATA;
    let places = Places::new(b, project, data);
    let mut settled: Option<Found> = None;
    // Returns a finding the fence does not settle; keeps the first it does.
    macro_rules! found {
        ($snippet:expr, $why:expr, $instead:expr, $bounded:expr) => {{
            let f = Found {
                snippet: $snippet,
                why: $why,
                instead: $instead.into(),
                bounded: $bounded,
            };
            if f.bounded.is_none() {
                return Some(f);
            }
            settled = settled.or(Some(f));
        }};
    }
    for inv in invs {
        let Some(program) = inv.program.as_deref() else {
            continue;
        };
        let name = base_name(program);
        let snippet = || format!("`{}`", b.snippet(inv));
        for r in &data.rule {
            if let Some(Hit { detail, bounded }) = r.matches(name, inv, &places) {
                let why = match detail {
                    Some(d) => format!("{} ({d})", r.what),
                    None => r.what.clone(),
                };
                found!(snippet(), why, r.instead.clone(), bounded);
            }
        }
        if let Some((language, call)) = data.code.iter().find_map(|c| c.calls_in(name, inv)) {
            found!(
                snippet(),
                format!("runs {language} code that deletes files or starts programs (`{call}`)"),
                "do the work with commands bashgate can read, or ask the person",
                None
            );
        }
        // The write model: what it deletes, moves away or overwrites. find
        // and what it runs are the find rule's.
        if name == "find" || inv.via.iter().any(|v| v == "find") {
            continue;
        }
        for shape in &inv.removes {
            if let Some(why) = places.changes(shape).denied() {
                found!(
                    snippet(),
                    format!("deletes or moves away files ({})", why.text),
                    "change only files inside the project; leave the rest to the person",
                    why.bounded
                );
            }
        }
        for shape in &inv.writes {
            if let Some(why) = places.writes(shape) {
                found!(
                    snippet(),
                    format!("overwrites files ({})", why.text),
                    "write inside the project or a temporary directory",
                    why.bounded
                );
            }
        }
    }
    for r in b.analysis.redirects.iter().filter(|r| r.writes()) {
        let Some(t) = r.target.as_deref() else {
            // A target known only at run time: judged as a write.
            if r.op.contains(">>") {
                continue;
            }
            found!(
                format!("the redirect `{} …`", r.op),
                "overwrites a file known only at run time, which may be anywhere".into(),
                "write to a file in the project, named",
                None
            );
            continue;
        };
        if data.block_devices.iter().any(|d| t.starts_with(d.as_str())) {
            found!(
                format!("the redirect `{} {t}`", r.op),
                "writes onto a disk device".into(),
                "write to a file in the project",
                None
            );
        }
        // Appending destroys nothing.
        if r.op.contains(">>") {
            continue;
        }
        if let Some(why) = places.writes(t) {
            found!(
                format!("the redirect `{} {t}`", r.op),
                format!("overwrites a file ({})", why.text),
                "write inside the project or a temporary directory",
                why.bounded
            );
        }
    }
    settled
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
    /// `None` when the rule does not apply; `Some` when it does, with what
    /// made it apply when that helps the reason.
    fn matches(&self, name: &str, inv: &Invocation, places: &Places) -> Option<Hit> {
        self.applies(name, inv, places).map(|h| match h {
            Applies::Plain(detail) => Hit {
                detail,
                bounded: None,
            },
            Applies::At(why) => Hit {
                detail: Some(why.text),
                bounded: why.bounded,
            },
        })
    }

    fn applies(&self, name: &str, inv: &Invocation, places: &Places) -> Option<Applies> {
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
                    return Some(Applies::Plain(Some(
                        "its subcommand is known only at run time".into(),
                    )))
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
        // The operands as the one reader read them (option values are
        // not operands: `chmod -R --reference=f`).
        let operands = || {
            options
                .operands
                .iter()
                .filter(move |&&i| i >= from)
                .filter_map(|&i| inv.shapes.get(i).map(String::as_str))
        };
        if operands().count() < self.operands_at_least {
            return None;
        }
        match self.target {
            Target::None => Some(Applies::Plain(self.push_detail(name, inv, places))),
            Target::Operands => {
                let outside = worst(operands().skip(self.skip).map(|s| places.changes(s)));
                // Work git cannot restore is never a fence's to settle.
                let lost = || {
                    operands()
                        .skip(self.skip)
                        .find_map(|s| places.uncommitted(s))
                };
                match outside {
                    Some(why) if why.bounded.is_none() => Some(Applies::At(why)),
                    _ if self.uncommitted => lost()
                        .map(|text| {
                            Applies::At(Why {
                                text,
                                bounded: None,
                            })
                        })
                        .or(outside.map(Applies::At)),
                    _ => outside.map(Applies::At),
                }
            }
            Target::Tree => find_tree(rest, shapes, places).map(Applies::At),
            Target::Branch => {
                // After the remote, the refspecs.
                let specs: Vec<&str> = operands().skip(1).collect();
                let all = options.has_from(from, "--all") || options.has_from(from, "--branches");
                // git's own options may point it at another repository.
                let elsewhere = ["-C", "--git-dir", "--work-tree"]
                    .iter()
                    .any(|o| options.given.iter().any(|(i, g)| *i < from && g == o));
                let repo = if elsewhere || places.bases.len() > 1 || places.unknown_cd.is_some() {
                    None
                } else {
                    places.bases.first().and_then(|b| repository_of(b))
                };
                let current = repo.as_deref().and_then(current_branch);
                let destinations: Vec<Result<String, String>> = if all {
                    vec![Err("every branch (--all)".into())]
                } else if specs.is_empty() {
                    vec![repo
                        .as_deref()
                        .ok_or_else(|| "the repository it pushes from is not known".to_string())
                        .and_then(bare_push_destination)]
                } else {
                    specs
                        .iter()
                        .map(|spec| {
                            let spec = spec.trim_start_matches('+');
                            match spec.rsplit_once(':') {
                                Some((_, dst)) => Ok(dst.to_string()),
                                // `HEAD` and `@` push the current branch to
                                // its own name.
                                None if matches!(spec, "HEAD" | "@") => current
                                    .clone()
                                    .ok_or_else(|| "the current branch is not known".into()),
                                None => Ok(spec.to_string()),
                            }
                        })
                        .collect()
                };
                destinations.into_iter().find_map(|d| {
                    let dst = match d {
                        Ok(dst) => dst,
                        Err(why) => {
                            return Some(Applies::Plain(Some(format!(
                                "where it pushes may be a protected branch: {why}"
                            ))))
                        }
                    };
                    let name = dst.trim_start_matches("refs/heads/");
                    // A branch known only at run time may be a protected one.
                    let protected = name.contains('*')
                        || DATA
                            .protected_branches
                            .iter()
                            .any(|p| name == p || name.starts_with(&format!("{p}/")));
                    protected.then(|| {
                        Applies::Plain(Some(format!(
                            "it updates `{name}`, which may be a protected branch"
                        )))
                    })
                })
            }
            Target::Processes => {
                let allowed = super::allowlist::pkill_allowed();
                operands()
                    .find(|s| !allowed.iter().any(|a| a == s))
                    .map(|s| {
                        Applies::Plain(Some(format!(
                            "`{s}` is not one of the project's own processes"
                        )))
                    })
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

/// The top of the repository `dir` is in: the nearest directory at or
/// above it holding `.git`.
fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The branch a push with no refspec updates on the remote, as git's
/// configuration says (`push.default`, a remote's `push` refspecs, the
/// branch's upstream); why not, when that cannot be told. git is asked
/// for its configuration only (`git config` runs nothing the repository
/// names).
fn bare_push_destination(repo: &Path) -> Result<String, String> {
    let current = current_branch(repo).ok_or("the current branch is not known")?;
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "config",
            "--get-regexp",
            r"^(push\.default|remote\..*\.push|branch\..*\.merge)$",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git's configuration could not be read ({e})"))?;
    // Status 1: none of the keys is set.
    if !out.status.success() && out.status.code() != Some(1) {
        return Err("git's configuration could not be read".into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut default = None;
    let mut upstream = None;
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        if key.starts_with("remote.") && key.ends_with(".push") {
            return Err(format!(
                "git's configuration sets where it pushes ({key} = {value})"
            ));
        }
        if key == "push.default" {
            default = Some(value.to_string());
        } else if key == format!("branch.{current}.merge") {
            upstream = Some(value.to_string());
        }
    }
    match default.as_deref().unwrap_or("simple") {
        "simple" | "current" | "nothing" => Ok(current),
        "upstream" | "tracking" => {
            upstream.ok_or_else(|| "push.default = upstream, and the branch has none".into())
        }
        other => Err(format!("push.default = {other}")),
    }
}

/// The branch checked out in `project` (`.git/HEAD`, through a `.git`
/// file's `gitdir:`), when it is one.
fn current_branch(project: &Path) -> Option<String> {
    let dot_git = project.join(".git");
    let dir = if dot_git.is_file() {
        bashgate_fence::git::gitdir_named(&dot_git)?
    } else {
        dot_git
    };
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}

/// find's own reading: its starting points, whether it deletes or runs a
/// program that is not a reader on what it finds, and whether a test
/// narrows what it finds. Why, when a starting point is not a place it
/// may change.
fn find_tree(args: &[Option<String>], shapes: &[String], places: &Places) -> Option<Why> {
    let find = &places.data.find;
    // Leading options -H -L -P -D opts -O level, then starting points.
    let mut i = 0;
    while let Some(Some(a)) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            a if a.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut starts: Vec<&str> = Vec::new();
    while let Some(s) = shapes.get(i) {
        if args[i].is_some() && (s.starts_with('-') || matches!(s.as_str(), "(" | "!" | ",")) {
            break;
        }
        starts.push(s);
        i += 1;
    }
    if starts.is_empty() {
        starts.push(".");
    }
    let (mut changes, mut narrowed) = (false, false);
    let mut program: Option<String> = None;
    while i < args.len() {
        let Some(a) = args[i].as_deref() else {
            // A word known only at run time may be -delete.
            changes = true;
            i += 1;
            continue;
        };
        i += 1;
        if a == "-delete" {
            changes = true;
        } else if find.exec.iter().any(|e| e == a) {
            // The program, then its arguments up to `;` or `+`.
            let run = args.get(i).cloned().flatten();
            let reads = run
                .as_deref()
                .is_some_and(|p| find.exec_reads.iter().any(|r| r == base_name(p)));
            if !reads {
                changes = true;
                program = program.or(run);
            }
            while let Some(w) = args.get(i) {
                i += 1;
                if matches!(w.as_deref(), Some(";" | "+")) {
                    break;
                }
            }
        } else if find.narrowing.iter().any(|n| n == a) {
            narrowed = true;
        }
    }
    if !changes {
        return None;
    }
    let runs = program
        .map(|p| format!(", running `{p}`"))
        .unwrap_or_default();
    let outside = worst(starts.iter().map(|s| match places.changes(s) {
        // Narrowed, find from the project's top changes only some files.
        Where::Project if narrowed => Where::Fine,
        w => w,
    }));
    // Everything under a starting point goes: its uncommitted work too.
    let lost = || {
        (!narrowed)
            .then(|| starts.iter().find_map(|s| places.uncommitted(s)))
            .flatten()
            .map(|text| Why {
                text,
                bounded: None,
            })
    };
    match outside {
        Some(why) if why.bounded.is_none() => Some(why),
        _ => lost().or(outside),
    }
    .map(|why| Why {
        text: format!("{}{runs}", why.text),
        ..why
    })
}

impl Code {
    /// The language and the call, when `inv` runs this language's code
    /// that holds one of its calls.
    fn calls_in(&self, name: &str, inv: &Invocation) -> Option<(&str, &str)> {
        if !names(&self.programs, &self.program_prefixes, name) {
            return None;
        }
        let mut code: Vec<&str> = Vec::new();
        let mut next_is_code = false;
        for a in &inv.shapes {
            if std::mem::take(&mut next_is_code) {
                code.push(a);
                continue;
            }
            if a == "--" || (!a.starts_with('-') && !code.is_empty()) {
                break;
            }
            for o in &self.options {
                if let Some(v) = a.strip_prefix(&format!("{o}=")) {
                    code.push(v);
                } else if a == o
                    // At the end of a cluster of single letters: `-lne`.
                    || (o.len() == 2
                        && !a.starts_with("--")
                        && a.len() > 2
                        && a.ends_with(&o[1..]))
                {
                    next_is_code = true;
                } else if o.len() == 2 && !a.starts_with("--") && a.starts_with(o.as_str()) {
                    // Attached: `-cCODE`.
                    code.push(&a[2..]);
                }
            }
        }
        // No code on the line: a here-document may be the program
        // (`python3 <<EOF`, `node - <<'EOF'`).
        let operands = inv.shapes.iter().any(|a| !a.starts_with('-') || a == "-");
        if code.is_empty() && (!operands || inv.shapes.iter().any(|a| a == "-")) {
            code.extend(inv.stdin.as_deref());
        }
        code.iter().find_map(|c| {
            self.calls
                .iter()
                .find(|call| c.contains(call.as_str()))
                .map(|call| (self.language.as_str(), call.as_str()))
        })
    }
}

/// Where a path is, for a command that changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Where {
    /// Strictly inside the project (not its repository), or inside a
    /// scratch directory.
    Fine,
    /// The project's top directory itself (or `*` there).
    Project,
    /// The project's `.git`, something in it, or a glob that can match it.
    Repository,
    /// Outside the project and the scratch directories, or not known: why.
    Outside(String),
    /// Known only at run time up to a named end (`$TMPDIR/build`): a fence
    /// bounding writes keeps it inside the project, the scratch
    /// directories or the caches, and the end keeps it off the project's
    /// top and its repository. Why it is asked without one, and the shape.
    Bounded(String, String),
}

/// Why a command may not change a place as it stands.
struct Why {
    text: String,
    /// The place, when a fence bounding writes settles it.
    bounded: Option<String>,
}

/// What a rule that applies says.
struct Hit {
    detail: Option<String>,
    bounded: Option<String>,
}

/// How a rule applies: plainly (with a detail), or at a place.
enum Applies {
    Plain(Option<String>),
    At(Why),
}

/// The worst of the places: one a fence does not settle before one it does.
fn worst(places: impl Iterator<Item = Where>) -> Option<Why> {
    let mut settled = None;
    for w in places {
        match w.denied() {
            Some(why) if why.bounded.is_none() => return Some(why),
            Some(why) => settled = settled.or(Some(why)),
            None => {}
        }
    }
    settled
}

impl Where {
    /// Why the command may not change it there (`None`: it may).
    fn denied(self) -> Option<Why> {
        let plain = |text: &str| {
            Some(Why {
                text: text.into(),
                bounded: None,
            })
        };
        match self {
            Where::Fine => None,
            Where::Project => plain("that is the whole project"),
            Where::Repository => plain("that is the repository itself, its history"),
            Where::Outside(why) => plain(&why),
            Where::Bounded(why, shape) => Some(Why {
                text: why,
                bounded: Some(shape),
            }),
        }
    }
}

/// The places a destructive command may change: by allowlist.
struct Places<'a> {
    /// The directories a relative path may be read from (after `cd`).
    bases: Vec<PathBuf>,
    unknown_cd: Option<String>,
    project: PathBuf,
    home: Option<PathBuf>,
    scratch: Vec<PathBuf>,
    /// The index of the repository the project is in, read when first
    /// needed.
    index: std::cell::OnceCell<(PathBuf, Index)>,
    data: &'a Data,
}

impl<'a> Places<'a> {
    fn new(b: &BashCall, project: &Path, data: &'a Data) -> Places<'a> {
        let dirs = working_dirs(b);
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let project = canon(project);
        let home = resolve(Path::new("/"), "~");
        let scratch = crate::fence::protected::scratch_dirs(&project, home.as_deref());
        Places {
            bases: dirs.bases,
            unknown_cd: dirs.unknown,
            home,
            project,
            scratch,
            index: std::cell::OnceCell::new(),
            data,
        }
    }

    /// Why deleting `shape` inside the project loses work git cannot
    /// restore, when it does: it is, or holds, a tracked file whose
    /// changes are not committed (nor staged). Paths outside, the
    /// project's top and its repository are [`Places::changes`]'s.
    fn uncommitted(&self, shape: &str) -> Option<String> {
        if shape.is_empty() || shape.starts_with('*') {
            return None;
        }
        let relative = !shape.starts_with(['/', '~']);
        let bases: &[PathBuf] = if relative {
            &self.bases
        } else {
            &self.bases[..1]
        };
        let (top, index) = self.index.get_or_init(|| {
            let top = repository_of(&self.project).unwrap_or_else(|| self.project.clone());
            let index = Index::of(&top);
            (top, index)
        });
        bases.iter().find_map(|base| {
            let resolved = resolve(base, shape)?;
            let inside = resolved.strip_prefix(&self.project).ok()?;
            if inside.as_os_str().is_empty() || inside.starts_with(".git") {
                return None;
            }
            let rel = resolved.strip_prefix(top).ok()?;
            index.changed_under(rel).map(|changed| match changed {
                Changed::File(file) => {
                    format!("`{shape}` holds `{file}`, whose changes are not committed")
                }
                Changed::Unknown(why) => format!(
                    "`{shape}` may hold changes that are not committed, and bashgate cannot tell ({why})"
                ),
            })
        })
    }

    /// Where `shape` (a path as written, `*` for parts known only at run
    /// time) is, for a command that deletes, moves or empties it; the worst
    /// over every directory the command may be in.
    fn changes(&self, shape: &str) -> Where {
        if shape.is_empty() || shape == "*" {
            return Where::Outside(
                "an operand is known only at run time (a variable, a glob or a substitution), so it may be anywhere"
                    .into(),
            );
        }
        if shape.starts_with('*') && shape.contains('/') {
            let why = format!(
                "`{shape}` starts with a part known only at run time, so it may be anywhere"
            );
            return if self.named_end(shape) {
                Where::Bounded(why, shape.to_string())
            } else {
                Where::Outside(why)
            };
        }
        let relative = !shape.starts_with(['/', '~']);
        if relative {
            if let Some(why) = &self.unknown_cd {
                return Where::Outside(format!("`{shape}` is read after a {why}"));
            }
        }
        let bases: &[PathBuf] = if relative {
            &self.bases
        } else {
            &self.bases[..1]
        };
        let mut worst = Where::Fine;
        for base in bases {
            let w = self.at(base, shape);
            if w != Where::Fine {
                worst = w;
                if matches!(worst, Where::Outside(_)) {
                    break;
                }
            }
        }
        worst
    }

    /// Whether what follows a shape's run-time start names one place
    /// that is neither the project's top, nor holds it, nor is the
    /// repository: literal names, none `.`, `..` or `.git`, no glob, and
    /// not a run of the project's own path's names (`$X/dev/project` may
    /// be the project). Inside `.git` it still may be, if the start leads
    /// there: the session's own mistake, not the common one.
    fn named_end(&self, shape: &str) -> bool {
        let Some((_, end)) = shape.split_once('/') else {
            return false;
        };
        if end.ends_with('/') {
            return false;
        }
        let names: Vec<&str> = end.split('/').filter(|n| !n.is_empty()).collect();
        let own: Vec<&str> = self
            .project
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect();
        !names.is_empty()
            && names
                .iter()
                .all(|n| !matches!(*n, "." | ".." | ".git") && !n.contains(['*', '?', '[', '~']))
            && !own.windows(names.len()).any(|w| w == names.as_slice())
    }

    fn at(&self, base: &Path, shape: &str) -> Where {
        let Some(resolved) = resolve(base, shape) else {
            return Where::Outside(format!("`{shape}` is in another user's home directory"));
        };
        // The nearest of the project, the home directory and the scratch
        // directories that holds the path decides (a home under /tmp is
        // still a home; a temporary directory under the home is scratch).
        let depth = |p: &Path| p.components().count();
        let scratch = self
            .scratch
            .iter()
            .filter(|s| resolved.starts_with(s) && resolved != **s)
            .map(|s| depth(s))
            .max();
        let home = self
            .home
            .as_deref()
            .filter(|h| resolved.starts_with(h))
            .map(depth);
        let project = resolved
            .starts_with(&self.project)
            .then(|| depth(&self.project));
        if scratch.is_some() && scratch > home && scratch > project {
            return Where::Fine;
        }
        if let Ok(inside) = resolved.strip_prefix(&self.project) {
            let parts: Vec<&str> = inside
                .components()
                .filter_map(|c| match c {
                    Component::Normal(n) => n.to_str(),
                    _ => None,
                })
                .collect();
            let top = parts.first().copied();
            return match top {
                None => Where::Project,
                Some(".git") => Where::Repository,
                Some(t) if parts.len() == 1 && t.contains(['*', '?', '[']) => {
                    if glob_match(t, ".git") {
                        Where::Repository
                    } else if t == "*" {
                        Where::Project
                    } else {
                        Where::Fine
                    }
                }
                Some(_) => Where::Fine,
            };
        }
        let why = if resolved == Path::new("/") {
            format!("`{shape}` is the filesystem root")
        } else if self.home.as_deref() == Some(resolved.as_path()) {
            format!("`{shape}` is the home directory")
        } else if self.project.starts_with(&resolved) {
            format!("`{shape}` holds the project")
        } else {
            format!("`{shape}` is outside the project ({})", resolved.display())
        };
        Where::Outside(why)
    }

    /// Why a command may not overwrite `shape` (`None`: it may): outside
    /// the project and the scratch directories. Devices that are not disks
    /// are not files.
    fn writes(&self, shape: &str) -> Option<Why> {
        if shape.starts_with("/dev/") || shape == "/dev" {
            return self
                .data
                .block_devices
                .iter()
                .any(|d| shape.starts_with(d.as_str()))
                .then(|| Why {
                    text: format!("`{shape}` is a disk device"),
                    bounded: None,
                });
        }
        match self.changes(shape) {
            w @ (Where::Outside(_) | Where::Bounded(..)) => w.denied(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    #[test]
    fn the_names_listed_at_build_time_are_the_rules_names() {
        let names = |rule: fn(&Rule) -> &Vec<String>, code: fn(&Code) -> &Vec<String>| {
            let mut names: Vec<&str> = DATA
                .rule
                .iter()
                .flat_map(rule)
                .chain(DATA.code.iter().flat_map(code))
                .map(String::as_str)
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        let programs = names(|r| &r.programs, |c| &c.programs);
        let prefixes = names(|r| &r.program_prefixes, |c| &c.program_prefixes);
        assert_eq!(programs, crate::data::DESTRUCTIVE_PROGRAMS);
        assert_eq!(prefixes, crate::data::DESTRUCTIVE_PROGRAM_PREFIXES);
        assert!(programs.contains(&"rm") && programs.contains(&"node"));
        assert!(prefixes.contains(&"python"));
    }

    const PROJECT: &str = "/home/dev/project";

    /// What the layer finds in `cmd`, run in the project `at`.
    fn found_in(cmd: &str, at: &Path) -> Option<Found> {
        let a = analyze(cmd);
        let b = BashCall {
            command: cmd,
            analysis: &a,
            cwd: at,
        };
        find(&b, at)
    }

    fn why(cmd: &str) -> Option<String> {
        found_in(cmd, Path::new(PROJECT)).map(|f| f.why)
    }

    /// Runs git in `dir`, away from the machine's configuration.
    fn git_in(dir: &Path, args: &[&str]) {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
    }

    fn hit(cmd: &str) -> bool {
        why(cmd).is_some()
    }

    /// Whether what `cmd` destroys is settled by a fence bounding writes
    /// (`None`: nothing destructive).
    fn bounded(cmd: &str) -> Option<bool> {
        found_in(cmd, Path::new(PROJECT)).map(|f| f.bounded.is_some())
    }

    #[test]
    fn a_lease_is_asked_where_git_would_push_a_protected_branch() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        let git = |args: &[&str]| git_in(&top, args);
        git(&["init", "-q", "-b", "feature", "."]);
        let why = |cmd: &str| found_in(cmd, &top).map(|f| f.why);
        // On a branch of its own, with git's defaults: its own name.
        for c in [
            "git push --force-with-lease",
            "git push --force-with-lease origin",
            "git push --force-with-lease origin HEAD",
            "git push --force-with-lease origin feature",
        ] {
            assert_eq!(why(c), None, "{c}");
        }
        for c in [
            "git push --force-with-lease origin HEAD:main",
            "git push --force-with-lease origin feature:refs/heads/master",
            "git push --force-with-lease --all",
            "git -C ../other push --force-with-lease",
            "cd sub && git push --force-with-lease",
        ] {
            assert!(why(c).is_some(), "{c}");
        }
        // Configuration that sends the branch elsewhere.
        git(&["config", "push.default", "upstream"]);
        git(&["config", "branch.feature.merge", "refs/heads/main"]);
        let w = why("git push --force-with-lease").unwrap_or_default();
        assert!(w.contains("`main`"), "{w}");
        git(&["config", "branch.feature.merge", "refs/heads/feature"]);
        assert_eq!(why("git push --force-with-lease"), None);
        git(&["config", "push.default", "matching"]);
        assert!(why("git push --force-with-lease").is_some());
        git(&["config", "push.default", "simple"]);
        git(&[
            "config",
            "remote.origin.push",
            "+refs/heads/*:refs/heads/main",
        ]);
        let w = why("git push --force-with-lease").unwrap_or_default();
        assert!(w.contains("remote.origin.push"), "{w}");
        // On a protected branch, HEAD is it.
        git(&["config", "--unset", "remote.origin.push"]);
        git(&["checkout", "-q", "-b", "main"]);
        for c in [
            "git push --force-with-lease",
            "git push --force-with-lease origin @",
        ] {
            assert!(why(c).is_some(), "{c}");
        }
    }

    #[test]
    fn deleting_a_tracked_file_whose_changes_are_not_committed_is_asked() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        let git = |args: &[&str]| git_in(&top, args);
        git(&["init", "-q", "."]);
        for (f, text) in [
            ("src/main.rs", "fn main() {}\n"),
            ("src/lib.rs", "// lib\n"),
            ("docs/a.md", "a\n"),
            (".gitignore", "build/\n"),
        ] {
            std::fs::create_dir_all(top.join(f).parent().unwrap()).unwrap();
            std::fs::write(top.join(f), text).unwrap();
        }
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        std::fs::create_dir_all(top.join("build")).unwrap();
        std::fs::write(top.join("build/out"), "x").unwrap();
        std::fs::write(top.join("notes.txt"), "untracked").unwrap();
        std::fs::write(top.join("src/main.rs"), "fn main() { edited(); }\n").unwrap();
        let why = |cmd: &str| found_in(cmd, &top).map(|f| f.why);
        for c in [
            "rm -rf src",
            "rm src/main.rs",
            "rm -f src/*.rs",
            "rm -r ./src/",
            "shred -u src/main.rs",
            "truncate -s 0 src/main.rs",
            "find src -delete",
            "cd src && rm main.rs",
        ] {
            let w = why(c).unwrap_or_default();
            assert!(
                w.contains("src/main.rs") && w.contains("not committed"),
                "{c}: {w}"
            );
        }
        // What git restores, what it ignores, what it never had, and a
        // change already staged: nothing of the person's work is lost.
        for c in [
            "rm -rf docs",
            "rm src/lib.rs",
            "rm -rf build",
            "rm notes.txt",
            "mv src/main.rs src/app.rs",
            "chmod -R u+w src",
            "find src -name '*.o' -delete",
        ] {
            assert_eq!(why(c), None, "{c}");
        }
        git(&["add", "src/main.rs"]);
        assert_eq!(why("rm -rf src"), None);
    }

    #[test]
    fn a_run_time_start_with_a_named_end_is_settled_by_the_fence() {
        for c in [
            "rm -rf $TMPDIR/build",
            "rm -rf \"${TMPDIR:-/tmp}/build\"",
            "rm -f \"$OUT/a/b.txt\"",
            "cp x \"$DEST/y\"",
            "find \"$B/obj\" -name '*.o' -delete",
            "rm -rf $T/build ./dist",
        ] {
            assert_eq!(bounded(c), Some(true), "{c}");
        }
        // The end may be the project's top, its repository, what holds the
        // project, or anything; or something else in the command is not
        // settled by a fence.
        for c in [
            "rm -rf $TMPDIR",
            "rm -rf \"$X/\"",
            "rm -rf $X/.git",
            "rm -rf $X/.git/hooks",
            "rm -rf $X/project",
            "rm -rf $X/home/dev",
            "rm -rf $X/dev/project",
            "rm -rf $X/../y",
            "rm -rf \"$X\"/*",
            "rm -rf $T/build /etc",
            "rm -rf /etc $T/build",
            "rm -rf $T/build; git clean -fdx",
        ] {
            assert_eq!(bounded(c), Some(false), "{c}");
        }
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
            "rm -rf /var/tmp/foo",
            "echo rm -rf /",
            "git push origin feature",
            "git reset --soft HEAD~1",
            "git reset HEAD~1",
            "git clean -n",
            "git clean -nd",
            "git branch -d merged",
            "chmod -R u+w ./src",
            "find . -name '*.o' -delete",
            "find . -name '*.txt' -exec rm {} \\;",
            "find . -exec echo -delete \\; -print",
            "find / -name '*.log' -exec grep -l x {} +",
            "dd if=a of=disk.img",
            "kill %1",
            "pkill node",
            "git checkout main",
            "git checkout -bfeature",
            "git checkout -b fix origin/fix",
            "git checkout --orphan gh-pages main",
            "git switch -c new",
            "git stash",
            "git restore --staged file.txt",
            "git restore --help",
            "python3 -c 'import os; print(os.getcwd())'",
            "node -e 'console.log(1)'",
            "perl -lne 'print if /x/' file",
            "python3 <<EOF\nprint(1)\nEOF",
            "python3 tool.py <<EOF\nos.remove this text is data\nEOF",
            "cargo build > build.log 2>&1",
            "echo x >> ~/notes.txt",
            "cp src/a.rs /tmp/a.rs",
            "echo hi > /dev/null",
            "parallel rm -rf {} ::: build dist",
        ] {
            assert_eq!(why(c), None, "{c}");
        }
    }

    /// What is outside the project is an allowlist's complement: nothing
    /// names the home directory's contents one by one.
    #[test]
    fn outside_the_project_is_asked_whatever_it_is() {
        for c in [
            "rm -rf ~/projects",
            "rm -rf ~/.ssh",
            "rm ~/Documents/thesis.tex",
            "rm -rf ../other-repo",
            "rm -rf /opt/x",
            "rmdir ~/empty",
            "unlink ~/x",
            "mv ~/Documents/a ./a",
            "mv build ~/build",
            "cp a.txt ~/.bashrc",
            "echo > ~/Documents/notes.txt",
            "truncate -s 0 ~/data.db",
            "shred ~/key",
            "sed -i s/a/b/ ~/.profile",
            "parallel rm -rf {} ::: ~/a ~/b",
            "ls | parallel rm -rf {}",
            "parallel rm -rf ::: ~/a",
            "echo / | parallel rm -rf",
            "xargs rm -rf < list",
            "rm -rf \"$DIR\"/x",
            "find ~ -name '*.bak' -delete",
            "find .. -delete",
            "find . -delete",
            "find . -type f -exec sed -i s/a/b/ {} +",
            "find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
            "rm -rf .*",
            "rm -rf .g*",
            "rm -rf *",
            "rm -rf .git/objects",
            "env -C ~ rm -rf projects",
            "cd ~ && rm -rf projects",
            "cd \"$1\" && rm -f out.txt",
        ] {
            assert!(hit(c), "{c}");
        }
    }

    #[test]
    fn git_discards_in_every_spelling() {
        for c in [
            "env - git reset --hard",
            "env -i git reset --hard",
            "env -S 'git reset --hard'",
            "command -p git reset --hard",
            "git switch -f main",
            "git switch --discard-changes main",
            "git checkout -f main",
            "git checkout -qf main",
            "git checkout -- file.txt",
            "git checkout HEAD -- src/",
            "git checkout .",
            "git restore file.txt",
            "git restore -W --staged file.txt",
            "git clean -d",
            "git clean -xdf",
            "git reset --merge",
            "git stash drop",
            "git rm -f file",
            "git worktree remove --force ../wt",
            "git checkout HEAD file.txt",
            "git checkout main a.txt b.txt",
            "git branch -f feature HEAD~3",
            "env -S 'PATH=/usr/bin' git reset --hard",
            "env -SPATH=/usr/bin git reset --hard",
        ] {
            assert!(hit(c), "{c}");
        }
    }

    #[test]
    fn interpreter_one_liners_that_delete_or_run_programs() {
        for c in [
            "python3 -c \"import shutil; shutil.rmtree('/home/dev/data')\"",
            "python -c 'import os; os.remove(\"x\")'",
            "node -e \"require('child_process').execSync('rm -rf ~/data')\"",
            "node --eval=\"require('fs').rmSync('x', {recursive: true})\"",
            "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(\"/x\")'",
            "perl -e 'system(\"rm -rf /x\")'",
            "perl -le 'unlink glob \"*\"'",
            "php -r 'unlink(\"x\");'",
            "python3 <<EOF\nimport shutil\nshutil.rmtree('/tmp/test')\nEOF",
            "python3 - <<'EOF'\nimport os\nos.remove('x')\nEOF",
            "node <<EOF\nrequire('fs').rmSync('/etc', { recursive: true });\nEOF",
            "perl <<< 'unlink glob \"/etc/*\"'",
        ] {
            let w = why(c).unwrap_or_else(|| panic!("{c}"));
            assert!(
                w.contains("code that deletes files or starts programs"),
                "{c}: {w}"
            );
        }
    }

    #[test]
    fn reasons_say_where() {
        assert_eq!(
            why("rm -rf ~").as_deref(),
            Some("deletes (`~` is the home directory)")
        );
        assert_eq!(
            why("rm -rf .").as_deref(),
            Some("deletes (that is the whole project)")
        );
        let w = why("rm -rf /opt/x").unwrap();
        assert!(
            w.contains("`/opt/x` is outside the project (/opt/x)"),
            "{w}"
        );
    }
}
