//! The gate's smaller subcommands: init, audit, taint, config.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bashgate::audit::{self, Audit, Filter};
use bashgate::config::{self, Config};
use bashgate::remember;
use bashgate::taint::Store;

use crate::render;

pub(crate) fn load_config(flag: Option<&Path>) -> Result<(config::Source, Config), ExitCode> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    // Run by the person: the project they are in, else this directory.
    let project = config::project_root(&cwd).unwrap_or(cwd);
    let source = config::discover(flag, Some(&project));
    match config::load(&source) {
        Ok(c) => Ok((source, c)),
        Err(e) => {
            eprintln!("bashgate: {e}");
            Err(ExitCode::from(1))
        }
    }
}

/// Sets `profile = "NAME"` in the project's `.bashgate.toml`, keeping the
/// rest of the file; the result must be a valid configuration.
pub fn set_profile(project: &Path, name: &str) -> Result<(), ExitCode> {
    let path = project.join(".bashgate.toml");
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            eprintln!("bashgate init: cannot read {}: {e}", path.display());
            return Err(ExitCode::from(1));
        }
    };
    let text = with_profile(&old, name);
    if let Err(e) = config::parse(&text, &path) {
        eprintln!("bashgate init: --profile {name}: {e}");
        return Err(ExitCode::from(2));
    }
    if let Err(e) = std::fs::write(&path, &text) {
        eprintln!("bashgate init: cannot write {}: {e}", path.display());
        return Err(ExitCode::from(1));
    }
    println!(
        "bashgate init: {} sets profile = \"{name}\"",
        path.display()
    );
    Ok(())
}

/// The file with its top-level `profile` line set to `name` (replaced where
/// it is, or added first).
fn with_profile(text: &str, name: &str) -> String {
    let line = format!("profile = \"{name}\"");
    let mut out = Vec::new();
    let mut replaced = false;
    let mut top = true;
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with('[') {
            top = false;
        }
        let key = t.split(['=', ' ', '\t']).next().unwrap_or("");
        if top && !replaced && key == "profile" {
            out.push(line.clone());
            replaced = true;
        } else {
            out.push(l.to_string());
        }
    }
    if !replaced {
        out.insert(0, line);
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// `bashgate init CLIENT`: bashgate's hook entries into the client's
/// settings (the project's, or with `user` the home directory's).
pub fn init(
    w: &crate::init::Client,
    dir: Option<PathBuf>,
    user: bool,
    command: Option<String>,
    remote: Option<String>,
) -> ExitCode {
    if let Some(url) = &remote {
        if let Err(e) = bashgate::endpoint::Target::parse(url) {
            eprintln!("bashgate init: --remote {e}");
            return ExitCode::from(2);
        }
    }
    let path = match settings_path("init", w, dir, user) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let chosen = command.is_none();
    let mut command = command.unwrap_or_else(|| crate::init::default_command(&w.key));
    let mut timeout = crate::init::HOOK_TIMEOUT_S;
    if let Some(url) = &remote {
        command = format!("{command} --remote {url}");
        timeout = crate::init::REMOTE_HOOK_TIMEOUT_S;
    }
    match crate::init::install(w, &path, &command, timeout) {
        Ok(change) => {
            let what = match change {
                crate::init::Change::Created => "created",
                crate::init::Change::Updated => "added the bashgate hooks to",
                crate::init::Change::Unchanged => "already has the bashgate hooks:",
            };
            println!("bashgate init: {what} {}", path.display());
            let events: Vec<String> = w
                .wiring
                .events
                .iter()
                .map(|e| match &e.matcher {
                    Some(m) => format!("{} (matcher \"{m}\")", e.name),
                    None => e.name.clone(),
                })
                .collect();
            println!("  {} run: {command}", events.join(", "));
            let portable = w.blocking_exit.is_some();
            if chosen && !user && portable && crate::init::names_a_path(&command) {
                eprintln!(
                    "bashgate init: {} is not on your PATH, so {} names it by its path on this machine, where a teammate's checkout would not find it; put its directory on PATH and run init again for settings that work on every machine with bashgate",
                    crate::hook::HOOK_BINARY,
                    path.display()
                );
            }
            let shell = crate::hook::shell::beside(&crate::init::hook_program());
            let fenced_asks = "bashgate asks about the commands it would otherwise run fenced";
            match crate::init::install_wrapper(w, &path, &shell) {
                None => {}
                Some(_) if !shell.is_file() => eprintln!(
                    "bashgate init: {} is not installed beside {}; until it is, {fenced_asks}",
                    crate::hook::shell::SHELL_BINARY,
                    crate::init::hook_program().display()
                ),
                Some(Ok(crate::init::Wrapper::Set(_, named))) => println!(
                    "  commands that may run only fenced run through bashgate's shell wrapper, {named}"
                ),
                Some(Ok(crate::init::Wrapper::KeptOther(v))) => eprintln!(
                    "bashgate init: the settings already run commands through {v:?}; kept. Without bashgate's shell wrapper there, {fenced_asks}"
                ),
                Some(Err(e)) => eprintln!("bashgate init: {e}; {fenced_asks}"),
            }
            if !user {
                let root = path
                    .ancestors()
                    .nth(w.hook_file.split('/').count())
                    .unwrap_or(Path::new("."));
                let state = load_config(None)
                    .map(|(_, c)| c.state_dir())
                    .unwrap_or_else(|_| config::default_state_dir());
                match trust_project(&state, root, false) {
                    Ok(msg) => println!("  {msg}"),
                    Err(e) => eprintln!("bashgate init: {e}"),
                }
            }
            if let Some(note) = &w.after_init {
                println!("  {note}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate init: {e}");
            ExitCode::from(1)
        }
    }
}

/// `bashgate init config`: the commented starter configuration, written to
/// the person's configuration file (never over one, unless `force`).
pub fn init_config(flag: Option<&Path>, print: bool, force: bool) -> ExitCode {
    if print {
        print!("{}", config::STARTER);
        return ExitCode::SUCCESS;
    }
    let Some(path) = flag.map(Path::to_path_buf).or_else(config::user_file_path) else {
        eprintln!("bashgate init config: cannot find your configuration directory; name a file with --config");
        return ExitCode::from(1);
    };
    if path.exists() && !force {
        eprintln!(
            "bashgate init config: {} is already there; --force replaces it, --print shows the starter",
            path.display()
        );
        return ExitCode::from(1);
    }
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, config::STARTER));
    match written {
        Ok(()) => {
            println!("bashgate init config: wrote {}; every setting in it is at its default and commented out", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate init config: cannot write {}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}

/// The client's settings file `init` and `uninstall` change: the
/// project's (in `dir`, default here), or with `user` the home directory's.
fn settings_path(
    verb: &str,
    w: &crate::init::Client,
    dir: Option<PathBuf>,
    user: bool,
) -> Result<PathBuf, ExitCode> {
    if !user {
        let dir = dir.unwrap_or_else(|| PathBuf::from("."));
        // A project's settings there would be the person's own for every
        // project (and the whole home trusted as one project).
        let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
        if real == Path::new("/") || Some(&real) == home.as_ref() {
            eprintln!(
                "bashgate {verb}: {} is not a project but your {} directory; run it in a project's directory (or --dir DIR), or with --user for every project",
                real.display(),
                if real == Path::new("/") { "root" } else { "home" }
            );
            return Err(ExitCode::from(2));
        }
        return Ok(dir.join(&w.hook_file));
    }
    let Some(file) = &w.user_hook_file else {
        eprintln!(
            "bashgate {verb}: {} reads hooks only from the project ({}); use --dir",
            w.name, w.hook_file
        );
        return Err(ExitCode::from(2));
    };
    match dirs::home_dir() {
        Some(h) => Ok(h.join(file)),
        None => {
            eprintln!("bashgate {verb}: cannot find the home directory; use --dir");
            Err(ExitCode::from(1))
        }
    }
}

/// `bashgate uninstall CLIENT`: bashgate's hooks out of the client's
/// settings.
pub fn uninstall(w: &crate::init::Client, dir: Option<PathBuf>, user: bool) -> ExitCode {
    let path = match settings_path("uninstall", w, dir, user) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match crate::init::uninstall(w, &path) {
        Ok(crate::init::Change::Unchanged) => {
            println!(
                "bashgate uninstall: {} has no bashgate hooks",
                path.display()
            );
            ExitCode::SUCCESS
        }
        Ok(_) => {
            println!(
                "bashgate uninstall: took bashgate's hooks out of {}; from the client's next session bashgate no longer checks its tool calls",
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate uninstall: {e}");
            ExitCode::from(1)
        }
    }
}

pub fn audit(
    flag: Option<&Path>,
    mut filter: Filter,
    since: Option<String>,
    json: bool,
    local: bool,
) -> ExitCode {
    let (_, c) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some(s) = since {
        match audit::parse_since(&s, bashgate::taint::now_ms() as i64) {
            Some(ms) => filter.since_ms = Some(ms),
            None => {
                eprintln!("bashgate audit: --since `{s}` is not a duration (90s, 15m, 2h, 7d) or unix seconds");
                return ExitCode::from(2);
            }
        }
    }
    // A fleet's daemons audit into their shared store.
    let engine = match bashgate_store::Engine::of(&c) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("bashgate audit: {e}");
            return ExitCode::from(2);
        }
    };
    let rows = if engine.is_postgres() && !local {
        engine
            .open()
            .and_then(|s| s.query_audit(&filter))
            .map_err(|e| e.to_string())
    } else {
        Audit::new(c.audit_path())
            .query(&filter)
            .map_err(|e| e.to_string())
    };
    let rows = match rows {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bashgate audit: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = io::stdout().lock();
    for r in &rows {
        let line = if json {
            r.to_json().to_string()
        } else {
            let taint = match (r.corruption, r.secret) {
                (Some(true), Some(true)) => " taint=untrusted+secret",
                (Some(true), Some(false)) => " taint=untrusted",
                (Some(false), Some(true)) => " taint=secret",
                (Some(false), Some(false)) => " taint=none",
                _ => "",
            };
            format!(
                "{}  {:<6} {:<10} {:<12} {}{}{}  session={}{}\n    {}",
                r.time,
                audit::shown_word(&r.decision),
                r.layer,
                r.tool,
                r.rule
                    .as_deref()
                    .map(|x| format!("{x} "))
                    .unwrap_or_default(),
                r.verdict
                    .as_deref()
                    .map(|v| format!("[{v}] "))
                    .unwrap_or_default(),
                r.command
                    .as_deref()
                    .map(|c| bashgate::decision::excerpt(c, 100))
                    .unwrap_or_default(),
                r.session,
                taint,
                r.reason
            )
        };
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    if rows.is_empty() && !json {
        eprintln!("bashgate audit: no records match; the hooks record every call they see (`bashgate check` records nothing)");
    }
    ExitCode::SUCCESS
}

pub fn taint_show(flag: Option<&Path>, session: &str, json: bool) -> ExitCode {
    let (_, c) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let store = Store::new(&c.state_dir());
    match store.load(session) {
        Ok(mut s) => {
            if let Some(why) = store.lost(session) {
                s.assume_lost(&why);
            }
            if json {
                println!(
                    "{}",
                    serde_json::json!({"session": session, "taint": s.taint, "sources": s.sources})
                );
            } else {
                println!("session {session}: {}", s.taint.describe());
                for src in &s.sources {
                    println!("  {:<10} {:<14} {}", src.flag, src.tool, src.detail);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate taint: {e}");
            ExitCode::from(1)
        }
    }
}

pub fn taint_clear(flag: Option<&Path>, session: &str) -> ExitCode {
    let (_, c) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match Store::new(&c.state_dir()).clear(session) {
        Ok(true) => {
            println!("bashgate taint: cleared session {session}");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("bashgate taint: session {session} had no state");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate taint: {e}");
            ExitCode::from(1)
        }
    }
}

/// `bashgate approvals` on the hook's own state (the daemon's goes through
/// `admin_cli::approvals`). `forget`: `Some(None)` forgets every answer,
/// `Some(Some(id))` one.
pub fn approvals(
    flag: Option<&Path>,
    session: &str,
    forget: Option<Option<String>>,
    json: bool,
) -> ExitCode {
    let (_, c) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let store = Store::new(&c.state_dir());
    if let Some(id) = forget {
        let mut outcome = Ok(0);
        let r = store.update(session, |s| {
            outcome = remember::forget(s, id.as_deref());
        });
        return match r.map_err(|e| e.to_string()).and(outcome) {
            Ok(n) => {
                println!("{}", render::forgotten(session, n));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("bashgate approvals: {e}");
                ExitCode::from(1)
            }
        };
    }
    match store.load(session) {
        Ok(s) => {
            let rows = remember::list(&s);
            if json {
                println!(
                    "{}",
                    serde_json::json!({"session": session, "remembered": rows})
                );
            } else {
                print!("{}", render::remembered(session, &rows));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate approvals: {e}");
            ExitCode::from(1)
        }
    }
}

pub fn config_check(flag: Option<&Path>, json: bool) -> ExitCode {
    let (source, _) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (c, ignored) = match config::load_all(&source) {
        Ok(l) => (l.config, l.ignored),
        Err(e) => {
            eprintln!("bashgate: {e}");
            return ExitCode::from(1);
        }
    };
    // The daemon's store is read where it is built; said here too.
    if let Err(e) = bashgate_store::Engine::of(&c) {
        eprintln!("bashgate: {e}");
        return ExitCode::from(1);
    }
    // The layers this configuration turns on, in the order they run.
    let mut layers: Vec<&str> = bashgate::LAYERS
        .iter()
        .filter(|(_, build)| build(&c).is_some())
        .map(|(layer, _)| layer.as_str())
        .collect();
    if c.taint.cascade {
        layers.push(bashgate::decision::Layer::Cascade.as_str());
    }
    if json {
        let files: Vec<_> = source
            .layers
            .iter()
            .rev()
            .map(|(kind, p)| serde_json::json!({"path": p, "kind": kind.as_str()}))
            .collect();
        let v = serde_json::json!({
            "files": files,
            "settings": config::merged_text(&source),
            "state_dir": c.state_dir(),
            "layers": layers,
            "on_error": c.on_error.as_str(),
            "untrusted": ignored.iter().map(|i| serde_json::json!({"path": i.file, "ignored": i.keys})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return if ignored.iter().any(|i| i.unreadable.is_some()) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        };
    }
    // A project's file is the person's only as they trusted it.
    let trusted =
        bashgate::trust::Trusted::load(&source.state_dir.clone().unwrap_or_else(|| c.state_dir()));
    let label = |kind: &config::LayerKind, p: &Path| match kind {
        config::LayerKind::Project | config::LayerKind::Local => {
            let root = p.parent().unwrap_or(Path::new("/"));
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let content = std::fs::read(p).unwrap_or_default();
            if trusted.file(root, name, &content) {
                format!("{}, trusted as it is", kind.as_str())
            } else {
                format!(
                    "{}, not trusted as it is: it may only tighten the gate",
                    kind.as_str()
                )
            }
        }
        k => k.as_str().to_string(),
    };
    // Most specific first: the file whose settings win.
    match source.layers.last() {
        None => println!("configuration: built-in defaults (no configuration file found)"),
        Some((kind, p)) => println!("configuration: {} ({})", p.display(), label(kind, p)),
    }
    for (kind, p) in source.layers.iter().rev().skip(1) {
        println!("  under it: {} ({})", p.display(), label(kind, p));
    }
    let settings = config::merged_text(&source);
    if !settings.trim().is_empty() {
        println!("settings from these files (the rest are the built-in defaults):");
        for line in settings.lines() {
            println!("  {line}");
        }
    }
    for i in &ignored {
        println!("not applied: {}", i.describe());
    }
    println!("state directory: {}", c.state_dir().display());
    println!("layers: {}", layers.join(" → "));
    println!("on_error: {}", c.on_error.as_str());
    // A file that cannot be read is a mistake to fix, whoever's it is.
    if ignored.iter().any(|i| i.unreadable.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `bashgate trust`: the person trusts the project at `dir` (default: the
/// project the working directory is in) with its configuration files as
/// they are now, or with `revoke` no longer trusts it.
pub fn trust(flag: Option<&Path>, dir: Option<PathBuf>, revoke: bool) -> ExitCode {
    let (_, c) = match load_config(flag) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = dir.or_else(|| config::project_root(&cwd)).unwrap_or(cwd);
    if !root.is_dir() {
        eprintln!("bashgate trust: {} is not a directory", root.display());
        return ExitCode::from(2);
    }
    match trust_project(&c.state_dir(), &root, revoke) {
        Ok(msg) => {
            println!("bashgate trust: {msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate trust: {e}");
            ExitCode::from(1)
        }
    }
}

/// Records (or revokes) the person's trust in the project at `root`; what
/// was done, in a sentence.
pub(crate) fn trust_project(state_dir: &Path, root: &Path, revoke: bool) -> Result<String, String> {
    let mut t = bashgate::trust::Trusted::read(state_dir)
        .map_err(|e| format!("{e}; remove or fix it first"))?;
    let names = [config::PROJECT_FILE, config::LOCAL_FILE];
    let done = if revoke {
        if t.revoke(root) {
            format!(
                "{} is no longer trusted: its configuration files may only tighten bashgate",
                root.display()
            )
        } else {
            format!("{} was not trusted", root.display())
        }
    } else {
        t.trust(root, &names)
            .map_err(|e| format!("cannot read the configuration in {}: {e}", root.display()))?;
        let files: Vec<String> = names
            .iter()
            .filter(|n| root.join(n).is_file())
            .map(|n| n.to_string())
            .collect();
        if files.is_empty() {
            format!("{} is trusted (it has no bashgate configuration file; one added later is not trusted until you run this again)", root.display())
        } else {
            format!("{} is trusted with {} as they are now (a change to them is not trusted until you run this again)", root.display(), files.join(" and "))
        }
    };
    t.save(state_dir).map_err(|e| {
        format!(
            "cannot write {}: {e}",
            state_dir.join(bashgate::trust::FILE).display()
        )
    })?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::with_profile;

    #[test]
    fn the_profile_line_is_set_in_place_or_added_first() {
        assert_eq!(with_profile("", "strict"), "profile = \"strict\"\n");
        assert_eq!(
            with_profile(
                "on_error = \"deny\"\n[paths]\nallowed_dirs = [\".\"]\n",
                "minimal"
            ),
            "profile = \"minimal\"\non_error = \"deny\"\n[paths]\nallowed_dirs = [\".\"]\n"
        );
        assert_eq!(
            with_profile("# mine\nprofile = \"standard\"\n[cop]\n", "strict"),
            "# mine\nprofile = \"strict\"\n[cop]\n"
        );
    }
}
