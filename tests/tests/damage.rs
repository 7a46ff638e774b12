//! Destruction measured as damage, not as verdicts (issue 36). Each
//! destructive command runs for real in a disposable world under a guard's
//! decision, and what it destroyed is recorded:
//! - files outside the project lost or changed (the home directory's
//!   documents, keys, data, another repository, dotfiles);
//! - history lost (a commit no ref reaches any more, or the repository
//!   gone);
//! - uncommitted work lost (an edit to a tracked file, an untracked file,
//!   an ignored `.env`).
//!
//! The guards: none (every command runs: the damage each case can do), and
//! bashgate's default profile in an untainted session (the person's own
//! project) and in a tainted one (a project not trusted), and the
//! `minimal` profile untainted, which leaves destructive commands to the
//! taint cascade: what the fence for writes bounds on its own. Asked or
//! denied counts as stopped (the person would be asked; a person who
//! approves has decided); fenced runs under `bashgate run` with the
//! profile the hook named; allowed runs as it is.
//!
//! The world is jailed: an unprivileged user (`nobody`), new user, mount,
//! network and pid namespaces, the world as the root directory with the
//! system's directories bound in (owned by root, so read-only to it), and
//! a 10 s timeout. Nothing real is touched and nothing leaves the machine.
//! Where that cannot be built (not root, no user namespaces) the test says
//! so and passes without measuring.
//!
//! `cargo test -p bashgate-tests --test damage -- --nocapture` prints the
//! figures; `BASHGATE_UPDATE_DOCS=1` rewrites them in docs/accuracy.md.
//! `BASHGATE_DAMAGE_CASES=FILE` measures other cases instead (JSON lines
//! with a `command`, such as another guard's own suite, kept outside the
//! repository), printing the figures and the damaging cases.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::Value;

/// The jail's side, run inside `unshare` as `nobody`: bind the system in,
/// make the world the root, run the command from the project.
const JAIL: &str = r#"set -e
W=$1
mount --bind "$W" "$W"
for d in usr etc opt; do
  if [ -d "/$d" ]; then mkdir -p "$W/$d"; mount --rbind "/$d" "$W/$d"; fi
done
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ]; then ln -sfn "$(readlink "/$d")" "$W/$d"
  elif [ -d "/$d" ]; then mkdir -p "$W/$d"; mount --rbind "/$d" "$W/$d"; fi
done
mkdir -p "$W/dev" "$W/proc" "$W/bashgate"
for n in null zero urandom random; do : > "$W/dev/$n"; mount --bind "/dev/$n" "$W/dev/$n"; done
mount -t proc proc "$W/proc"
mount --bind "$BASHGATE_DIR" "$W/bashgate"
cd "$W"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
cd /home/dev/project
exec /usr/bin/env -i HOME=/home/dev PATH=/usr/local/bin:/usr/bin:/bin TMPDIR=/tmp LANG=C.UTF-8 \
  timeout -s KILL 10 /bin/bash -c "$2" </dev/null
"#;

/// The fenced line, as the hook's rewrite runs it, with the world's paths.
fn fenced_line(profile: &str, command: &str) -> String {
    format!(
        "/bashgate/bashgate run --profile {profile} --tree /home/dev/project \
         --state-dir /home/dev/.local/state/bashgate --no-config -c {}",
        bashgate::rewrite::quote(command)
    )
}

/// The uncommitted edit, the untracked file and the ignored file.
const EDITED: &str = "fn main() { println!(\"work in progress\"); }\n";
const UNTRACKED: (&str, &str) = ("notes/todo.md", "- finish the parser\n");
const IGNORED: (&str, &str) = (".env", "API_KEY=example-not-a-secret\n");

#[derive(Deserialize)]
struct Corpus {
    destructive: Vec<String>,
    /// Places only the run knows, with a named end: fenced, not asked,
    /// in an untainted session; held to the same claim.
    bounded: Vec<String>,
}

/// What a guard did with a case, and what the case destroyed.
#[derive(Debug, Default, Clone)]
struct Outcome {
    stopped: bool,
    fenced: bool,
    outside: Vec<String>,
    history: bool,
    uncommitted: Vec<String>,
}

impl Outcome {
    fn damaged(&self) -> bool {
        !self.outside.is_empty() || self.history || !self.uncommitted.is_empty()
    }
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
}

fn git(dir: &Path, args: &[&str]) {
    sh(Command::new("git")
        .args([
            "-c",
            "user.name=Dev",
            "-c",
            "user.email=dev@example.com",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1"));
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The world every case starts from: `root/home/dev` with the project.
fn template(root: &Path) {
    let home = root.join("home/dev");
    write(&home, "Documents/thesis.tex", "\\chapter{Results}\n");
    write(&home, "Documents/taxes/2025.pdf", "%PDF-1.4 fake\n");
    write(&home, ".ssh/id_ed25519", "fake private key\n");
    write(&home, ".ssh/known_hosts", "github.com ssh-ed25519 AAAA\n");
    write(&home, "data/measurements.csv", "t,v\n0,1\n");
    write(&home, ".bashrc", "export EDITOR=vi\n");
    write(&home, ".config/app/config.toml", "theme = \"dark\"\n");
    let other = home.join("projects/other");
    write(&other, "main.py", "print('other')\n");
    git(&other, &["init", "-q"]);
    git(&other, &["add", "."]);
    git(&other, &["commit", "-qm", "other"]);
    let p = home.join("project");
    write(&p, "README.md", "# project\n");
    write(&p, "src/main.rs", "fn main() {}\n");
    write(&p, ".gitignore", ".env\n");
    git(&p, &["init", "-q"]);
    git(&p, &["add", "."]);
    git(&p, &["commit", "-qm", "first"]);
    write(&p, "src/lib.rs", "pub fn f() {}\n");
    git(&p, &["add", "."]);
    git(&p, &["commit", "-qm", "second"]);
    git(&p, &["branch", "feature"]);
    write(&p, "src/main.rs", EDITED);
    write(&p, UNTRACKED.0, UNTRACKED.1);
    write(&p, IGNORED.0, IGNORED.1);
    std::fs::create_dir_all(home.join(".local/state/bashgate")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    sh(Command::new("chown").args(["-R", "65534:65534"]).arg(root));
    sh(Command::new("chmod").args(["1777"]).arg(root.join("tmp")));
}

/// Every file, directory and link under the home directory outside the
/// project and bashgate's state, with what it holds.
fn outside(home: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(home).unwrap().display().to_string();
            if rel == "project" || rel.starts_with(".local/state") {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let what = if m.file_type().is_symlink() {
                format!("link {:?}", std::fs::read_link(&p).ok())
            } else if m.is_dir() {
                stack.push(p);
                "dir".into()
            } else {
                format!("file {:?}", std::fs::read(&p).ok())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// The commits some ref reaches (none: no repository).
fn commits(project: &Path) -> Vec<String> {
    if !project.join(".git").exists() {
        return Vec::new();
    }
    let out = Command::new("git")
        .args(["-c", "safe.directory=*", "rev-list", "--all"])
        .current_dir(project)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// The uncommitted work that is gone.
fn uncommitted_lost(project: &Path) -> Vec<String> {
    let mut lost = Vec::new();
    for (rel, text) in [("src/main.rs", EDITED), UNTRACKED, IGNORED] {
        if std::fs::read_to_string(project.join(rel)).ok().as_deref() != Some(text) {
            lost.push(rel.to_string());
        }
    }
    lost
}

/// Whether the jail can be built here: root (to hand the world to
/// `nobody`) and user namespaces for it.
fn jail_missing(world: &Path, bin_dir: &Path) -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: the world cannot be handed to an unprivileged user".into());
    }
    let (code, out) = jailed(world, bin_dir, "true");
    (code != 0).then(|| format!("the jail could not be built here: {out}"))
}

/// Runs `command` in the jailed world; its exit status and output.
fn jailed(world: &Path, bin_dir: &Path, command: &str) -> (i32, String) {
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", "env"])
        .arg(format!("BASHGATE_DIR={}", bin_dir.display()))
        .args([
            "unshare",
            "-r",
            "-m",
            "-n",
            "-p",
            "-f",
            "--kill-child",
            "--",
        ])
        .args(["bash", "-c", JAIL, "jail"])
        .arg(world)
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// bashgate's decision for `command` through the built `bashgate hook
/// json`, in the template world, the project trusted or not.
fn decide(root: &Path, state: &Path, command: &str, n: usize) -> String {
    let (home, proj) = (root.join("home/dev"), root.join("home/dev/project"));
    let at = bashgate_tests::HookPlace {
        home: &home,
        state,
        config: &state.join("config.toml"),
        cwd: &proj,
    };
    let v = bashgate_tests::hook_json(&at, command, &format!("d{n}"));
    let decision = v["decision"].as_str().unwrap_or("deny");
    // A fenced decision names its profile on the line it rewrote.
    if decision != "allow-confined" {
        return decision.to_string();
    }
    let line = v["command"].as_str().unwrap_or_default();
    let profile = ["default", bashgate_fence::WRITES]
        .into_iter()
        .find(|p| line.contains(&format!("--profile {}", bashgate::rewrite::quote(p))))
        .unwrap_or_else(|| panic!("a fenced line with no profile the harness knows: {line}"));
    format!("{decision}:{profile}")
}

/// Runs one case in a fresh copy of the template under a decision.
fn run_case(
    template: &Path,
    scratch: &Path,
    bin_dir: &Path,
    command: &str,
    decision: &str,
) -> Outcome {
    let mut o = Outcome::default();
    if decision == "ask" || decision == "deny" {
        o.stopped = true;
        return o;
    }
    let world = scratch.join("world");
    if world.exists() {
        sh(Command::new("rm").arg("-rf").arg(&world));
    }
    sh(Command::new("cp").arg("-a").arg(template).arg(&world));
    let home = world.join("home/dev");
    let project = home.join("project");
    let before_outside = outside(&home);
    let before_commits = commits(&project);
    let line = if let Some(profile) = decision.strip_prefix("allow-confined:") {
        o.fenced = true;
        fenced_line(profile, command)
    } else {
        command.to_string()
    };
    jailed(&world, bin_dir, &line);
    let after = outside(&home);
    for (k, v) in &before_outside {
        match after.get(k) {
            None => o.outside.push(format!("lost {k}")),
            Some(w) if w != v => o.outside.push(format!("changed {k}")),
            _ => {}
        }
    }
    let now = commits(&project);
    o.history = before_commits.iter().any(|c| !now.contains(c));
    o.uncommitted = uncommitted_lost(&project);
    o
}

/// The cases: `BASHGATE_DAMAGE_CASES` (JSON lines with `command`), else
/// the destructive corpus written for bashgate.
fn cases() -> (Vec<String>, bool) {
    if let Some(path) = std::env::var_os("BASHGATE_DAMAGE_CASES") {
        let text = std::fs::read_to_string(&path).unwrap();
        let v = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["command"].as_str().map(str::to_string))
            .collect();
        return (v, false);
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/destructive.toml");
    let c: Corpus = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (c.destructive.into_iter().chain(c.bounded).collect(), true)
}

/// The `minimal` guard's row: like the no-guard row, its unfenced
/// commands may meet the time limit on a busy machine, so it is measured,
/// not compared.
const MINIMAL: &str = "bashgate `minimal`, untainted (destructive commands not asked)";
const MINIMAL_ROW: &str = "| bashgate `minimal`";

/// What a guard is held to.
#[derive(Clone, Copy)]
enum Claim {
    Nothing,
    /// Nothing outside the project lost or changed, and no history lost.
    NoDamageOutsideOrToHistory,
    /// What it runs in the fence for writes changes nothing outside the
    /// project (history is in the project, where work is written; what
    /// is provably local runs as it is, for the destructive layer to ask
    /// about, which `minimal` leaves off).
    FencedRunsStayInside,
}

#[test]
fn destruction_measured_as_damage() {
    let dir = tempfile::tempdir().unwrap();
    sh(Command::new("chmod").arg("755").arg(dir.path()));
    let root = dir.path().join("template");
    template(&root);
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    sh(Command::new("chmod").arg("755").arg(&scratch));
    // The built binary's directory, bound into the world for the fence.
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::copy(bashgate_tests::bashgate_bin(), bin_dir.join("bashgate")).unwrap();
    sh(Command::new("chmod").arg("-R").arg("755").arg(&bin_dir));
    let probe = scratch.join("probe");
    sh(Command::new("cp").arg("-a").arg(&root).arg(&probe));
    if let Some(why) = jail_missing(&probe, &bin_dir) {
        bashgate_tests::require::skipped("root and a user-namespace jail", &why);
        return;
    }
    // The guards' state: the person's own project (trusted), or not.
    // A third state: trusted, under the `minimal` profile, where only the
    // fence for writes stands between a destructive command and the home
    // directory.
    let trusted = dir.path().join("state-trusted");
    let untrusted = dir.path().join("state-untrusted");
    let fence_alone = dir.path().join("state-fence-alone");
    for (s, config) in [
        (&trusted, ""),
        (&untrusted, ""),
        (&fence_alone, "profile = \"minimal\"\n"),
    ] {
        std::fs::create_dir_all(s).unwrap();
        std::fs::write(s.join("config.toml"), config).unwrap();
    }
    for s in [&trusted, &fence_alone] {
        let t = Command::new(bashgate_tests::bashgate_bin())
            .arg("trust")
            .arg(root.join("home/dev/project"))
            .env("BASHGATE_STATE_DIR", s)
            .env("BASHGATE_CONFIG", s.join("config.toml"))
            .output()
            .unwrap();
        assert!(t.status.success(), "{t:?}");
    }

    let (cases, own) = cases();
    // Each guard, and what it promises.
    let guards: [(&str, Option<&Path>, Claim); 4] = [
        ("no guard", None, Claim::Nothing),
        (
            "bashgate, untainted",
            Some(&trusted),
            Claim::NoDamageOutsideOrToHistory,
        ),
        (
            "bashgate, tainted (untrusted project)",
            Some(&untrusted),
            Claim::NoDamageOutsideOrToHistory,
        ),
        (MINIMAL, Some(&fence_alone), Claim::FencedRunsStayInside),
    ];
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (name, state, claim) in guards {
        let outcomes: Vec<(String, Outcome)> = cases
            .iter()
            .enumerate()
            .map(|(n, c)| {
                let decision = match state {
                    None => "allow".to_string(),
                    Some(s) => decide(&root, s, c, n),
                };
                (c.clone(), run_case(&root, &scratch, &bin_dir, c, &decision))
            })
            .collect();
        let count = |f: &dyn Fn(&Outcome) -> bool| outcomes.iter().filter(|(_, o)| f(o)).count();
        rows.push(format!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            count(&|o| o.stopped),
            count(&|o| o.fenced),
            count(&|o| !o.outside.is_empty()),
            count(&|o| o.history),
            count(&|o| !o.uncommitted.is_empty()),
            count(&|o| o.damaged()),
        ));
        for (c, o) in outcomes.iter().filter(|(_, o)| o.damaged()) {
            // The first few paths say what kind of damage it was.
            let shown: Vec<&String> = o.outside.iter().take(3).collect();
            let line = format!(
                "{name}: `{c}`{}: outside {} {shown:?}, history lost {}, uncommitted lost {:?}",
                if o.fenced { " (fenced)" } else { "" },
                o.outside.len(),
                o.history,
                o.uncommitted
            );
            eprintln!("{line}");
            let broken = match claim {
                Claim::Nothing => false,
                Claim::NoDamageOutsideOrToHistory => !o.outside.is_empty() || o.history,
                Claim::FencedRunsStayInside => o.fenced && !o.outside.is_empty(),
            };
            if broken {
                failures.push(line);
            }
        }
    }
    let table = format!(
        "| guard | stopped | fenced | damage outside the project | history lost | uncommitted work lost | any damage |\n\
         | --- | --: | --: | --: | --: | --: | --: |\n{}\n",
        rows.join("\n")
    );
    eprintln!("{} cases\n{table}", cases.len());
    if !own {
        return;
    }
    report(&table, cases.len());
    assert!(
        failures.is_empty(),
        "bashgate let damage happen outside the project or to history:\n{}",
        failures.join("\n")
    );
}

/// The figures in `docs/accuracy.md` are these; with
/// `BASHGATE_UPDATE_DOCS=1` the block is rewritten instead.
fn report(table: &str, cases: usize) {
    use bashgate_corpus::report::{block, DAMAGE_BEGIN, DAMAGE_END};
    let fresh = format!(
        "{DAMAGE_BEGIN}\n\n## Destruction measured as damage\n\n\
         The {cases} destructive commands of `tests/corpus/destructive.toml` (with those \
         whose place only the run knows, which an untainted session runs fenced) run for real, \
         each in a fresh disposable world (a home directory with documents, keys, data, \
         dotfiles and another repository; the project with two commits and a branch, an \
         uncommitted edit, an untracked file and an ignored `.env`), jailed (user `nobody`, \
         new user, mount, network and pid namespaces, the world as the root directory, a \
         10 s timeout), under each guard's decision through the built `bashgate hook json`: \
         stopped (asked or denied), fenced (run under `bashgate run` with the profile the \
         hook named: in an untainted session, the fence for writes) or run as it is. \
         The `minimal` row leaves destructive commands to the taint cascade: what it \
         runs fenced there shows what the fence for writes holds on its own (a provably \
         local command runs as it is, and `minimal` does not ask about it).\n\n\
         {table}\n\
         Without a guard (and under `minimal`, for what it runs unfenced), a command that \
         walks the whole system may meet the time limit before it reaches the home \
         directory on a busy machine, so those rows vary by a case or two from run to run.\n\n\
         Reproduce: `cargo test -p bashgate-tests --test damage -- --nocapture` (as root; \
         `BASHGATE_DAMAGE_CASES=FILE` measures other cases, JSON lines with a `command`).\n\n\
         {DAMAGE_END}"
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/accuracy.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let current =
        block(&doc, DAMAGE_BEGIN, DAMAGE_END).expect("docs/accuracy.md has the damage block");
    // Without a guard, a command that walks the whole system (`find /
    // -exec rm -rf {} \;`) may meet the time limit before it reaches the
    // home directory on a slower or busier machine: that row is measured,
    // not compared. The guards' rows are exact.
    let compared = |b: &str| {
        b.lines()
            .filter(|l| !l.starts_with("| no guard |") && !l.starts_with(MINIMAL_ROW))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if compared(current) == compared(&fresh) {
        return;
    }
    if std::env::var_os("BASHGATE_UPDATE_DOCS").is_some() {
        std::fs::write(path, doc.replacen(current, &fresh, 1)).unwrap();
        return;
    }
    panic!("docs/accuracy.md's damage figures are stale: rerun with BASHGATE_UPDATE_DOCS=1");
}
