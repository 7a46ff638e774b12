//! `bashgate run` and `bashgate doctor`: the fence's command-line surface.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bashgate::audit::{Audit, Record};
use bashgate::config::{self, Config};
use bashgate::decision::{Decision, Layer};
use bashgate::fence::protected;
use bashgate_fence::{self as fence, Profile, RunSpec};

/// What the hook decided for a fenced run, from the person's side (see
/// `rewrite::Fencing`); each is `None` when a person runs `bashgate run`
/// by hand, and then found as for any other subcommand.
pub struct Anchors {
    /// `--no-config`: the person has no configuration file.
    pub no_config: bool,
    pub state_dir: Option<PathBuf>,
    /// `Some(empty)`: `--no-tree`.
    pub tree: Option<PathBuf>,
}

/// Runs `command` fenced with `profile`; the exit status is the command's.
pub fn run(
    config_flag: Option<&Path>,
    anchors: Anchors,
    profile: Option<&str>,
    cwd_file: Option<PathBuf>,
    command: &str,
) -> ExitCode {
    fence::steps::start();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let hooked = anchors.no_config || anchors.state_dir.is_some();
    let mut source = if hooked {
        // The person's file as the hook named it, and the project's files
        // in the tree the hook named; nothing from this process's
        // environment, which the command's shell (the agent's) sets.
        let mut layers: Vec<_> = config_flag
            .filter(|_| !anchors.no_config)
            .map(|f| (config::LayerKind::Flag, f.to_path_buf()))
            .into_iter()
            .collect();
        if let Some(t) = anchors
            .tree
            .as_deref()
            .filter(|t| !t.as_os_str().is_empty())
        {
            layers.extend(config::project_layers(t));
        }
        config::Source {
            layers,
            state_dir: None,
        }
    } else {
        config::discover(config_flag, config::project_root(&cwd).as_deref())
    };
    source.state_dir = anchors.state_dir.clone();
    // A broken configuration still gets the built-in protected set.
    let config = config::load(&source).unwrap_or_else(|e| {
        eprintln!("bashgate run: {e}; using the built-in protected paths");
        Config::default()
    });
    fence::steps::mark("configuration");
    let tree = anchors.tree;
    let name = profile.unwrap_or(&config.confine.profile);
    let profile = match Profile::named(name) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bashgate run: cannot confine: {e}");
            return ExitCode::from(126);
        }
    };
    let home = dirs::home_dir();
    let tree = match tree {
        Some(t) if t.as_os_str().is_empty() => None,
        Some(t) => Some(t),
        None => config::work_tree(&cwd),
    }
    .and_then(|t| writable_tree(t, home.as_deref()));
    // Control files are kept from the tree's top down to the working
    // directory (from the repository's root when the command runs outside
    // the tree).
    let root = tree
        .clone()
        .filter(|t| cwd.starts_with(t))
        .or_else(|| config::project_root(&cwd))
        .unwrap_or_else(|| cwd.clone());
    let state_dir = match &source.state_dir {
        Some(d) => d.clone(),
        None => config.state_dir(),
    };
    // Made now, so it is protected as it exists (not quarantined when the
    // audit log creates it).
    let _ = bashgate::private::create_dir(&state_dir);
    let path_var = std::env::var_os("PATH");
    let mut extra = config.confine.protect.clone();
    if let Some(v) = std::env::var_os("BASHGATE_PROTECT") {
        extra.extend(std::env::split_paths(&v));
    }
    let at = protected::Places {
        home: home.as_deref(),
        project_root: &root,
        cwd: &cwd,
        state_dir: &state_dir,
        path_var: path_var.as_deref(),
    };
    let left_behind = fence::left_behind_file(&state_dir);
    // What an earlier run left and the person has since removed is done.
    if fence::left_behind(&state_dir).is_empty() {
        let _ = std::fs::remove_file(&left_behind);
    }
    fence::steps::mark("state directory");
    let writable = protected::writable(tree.as_deref(), &at, &config.confine.writable, &profile);
    // Without a private side (the fence for writes, in a session that has
    // read nothing untrusted) the run keeps no watch on control places.
    let private = profile.private;
    let tmp = std::env::temp_dir();
    let tmp = std::fs::canonicalize(&tmp).unwrap_or(tmp);
    let private_tmp = private || !writable.trees.iter().any(|t| tmp.starts_with(t));
    let spec = RunSpec {
        command: command.to_string(),
        // Read-only mounts need the namespaces.
        protect: if profile.namespaces {
            protected::default_protected(&at, &extra)
        } else {
            Vec::new()
        },
        writable,
        tree: tree.filter(|_| private),
        control_names: protected::control_names(),
        installed_names: protected::installed_names(),
        cwd_file,
        left_behind: private.then_some(left_behind),
        private_tmp,
        profile,
    };
    fence::steps::mark("protected list");
    let audit = config.audit.enabled.then(|| {
        config
            .audit
            .path
            .clone()
            .unwrap_or_else(|| state_dir.join("audit.db"))
    });
    run_spec(&spec, audit, &cwd)
}

/// The working tree, unless it holds the home directory (the filesystem's
/// root, or a dotfiles repository at home): all of that is no place to
/// give a fenced command, which then writes only in its private temporary
/// directory.
fn writable_tree(tree: PathBuf, home: Option<&Path>) -> Option<PathBuf> {
    if tree.parent().is_none() || home.is_some_and(|h| h.starts_with(&tree)) {
        eprintln!(
            "bashgate run: the working tree would be {}, which holds the home directory: only the command's private temporary directory is writable",
            tree.display()
        );
        return None;
    }
    Some(tree)
}

#[cfg(target_os = "linux")]
fn run_spec(spec: &RunSpec, audit: Option<PathBuf>, cwd: &Path) -> ExitCode {
    let mut report = |layers: &fence::Layers| {
        // Written before the command starts, outside the fence's writes.
        if let Some(path) = &audit {
            let d = Decision::allow_confined(
                Layer::Cascade,
                format!("ran fenced ({}): {}", spec.profile.name, layers.describe()),
            );
            let session = std::env::var("BASHGATE_SESSION").unwrap_or_else(|_| "run".into());
            let mut r = Record::decided(&session, "run", "Bash", cwd, &d);
            r.command = Some(spec.command.clone());
            if let Err(e) = Audit::new(path.clone()).append(&r) {
                eprintln!("bashgate run: audit record not written: {e}");
            }
        }
        fence::steps::mark("audit record");
    };
    let tell = |n: fence::Notice| tell(&spec.profile, n);
    let code = fence::run(spec, &mut report, &tell);
    if code == fence::CANNOT_CONFINE {
        if let Some(path) = &audit {
            let d = Decision::deny(
                Layer::Input,
                bashgate::GateRule::GateError,
                "the fence could not be set up; nothing ran",
            );
            let mut r = Record::decided("run", "run", "Bash", cwd, &d);
            r.command = Some(spec.command.clone());
            let _ = Audit::new(path.clone()).append(&r);
        }
    }
    fence::steps::mark("done");
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// Words each notice of the fence on stderr, where the agent reads it.
#[cfg(target_os = "linux")]
fn tell(profile: &Profile, notice: fence::Notice) {
    use fence::Notice;
    match notice {
        Notice::CannotConfine(why) => eprintln!("bashgate run: cannot confine: {why}"),
        Notice::FailedFenced if !profile.network => eprintln!(
            "bashgate: ran with writes bounded (only the working tree, the temporary directories and the caches may change; the network is allowed): a failure above may be the fence. To write elsewhere, ask the person to run it or to add the place to [confine] writable"
        ),
        Notice::FailedFenced => eprintln!(
            "bashgate: ran confined (no network; writes only in the working tree, its control files read-only): a failure above may be the fence"
        ),
        Notice::Quarantined { path, to } => eprintln!(
            "bashgate: the command created {}, which the fence protects; moved to {}",
            path.display(),
            to.display()
        ),
        Notice::NotQuarantined { path, error } => eprintln!(
            "bashgate: the command created {}, which the fence protects, and it could not be moved aside ({error}): remove it before going on; until then bashgate asks about every command",
            path.display()
        ),
        Notice::WritesNotConfined(why) => eprintln!("bashgate run: {why}"),
        Notice::Restored { path, target } => eprintln!(
            "bashgate: the command removed {}, a link the fence protects; put back (pointing to {})",
            path.display(),
            target.display()
        ),
    }
}

#[cfg(not(target_os = "linux"))]
fn run_spec(_: &RunSpec, _: Option<PathBuf>, _: &Path) -> ExitCode {
    eprintln!("bashgate run: cannot confine: the fence needs Linux");
    ExitCode::from(126)
}
