//! `bashgate doctor`: whether bashgate is actually enforced here. For each
//! agent client: is it installed, is bashgate wired into its settings (the
//! project's and the user's), and would that wiring fire (the hook binary
//! exists, the matcher matches the shell tool, the before-tool event is
//! wired, the timeout is above bashgate's budget, the project is trusted
//! where the client requires it). The failure this exists for: hooks that
//! are installed but silently never run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;

use crate::init::{Shape, Wiring, CLIENTS, HOOK_TIMEOUT_S};

/// The client's executable names, and its shell tool's name as its
/// matchers see it (the client table).
fn client_facts(client: &str) -> (&'static [String], &'static str) {
    match bashgate::clients::get(client) {
        Some(c) => (&c.executables, &c.shell_tool),
        None => (&[], "Bash"),
    }
}

#[derive(Serialize)]
pub struct ClientReport {
    pub client: &'static str,
    /// The client's executable on PATH, if any.
    pub installed: Option<PathBuf>,
    pub wirings: Vec<WiringReport>,
    /// `enforced`; `not installed` (wired, but the client is not on PATH);
    /// `not wired`; or `broken` (wired, but no wiring would fire).
    pub status: &'static str,
}

#[derive(Serialize)]
pub struct WiringReport {
    pub file: PathBuf,
    /// `project`, `local` (the person's own file in the project), `user`
    /// or `managed`.
    pub scope: &'static str,
    /// The events bashgate's hook is wired to.
    pub events: Vec<String>,
    /// Why it would not fire (empty: it would).
    pub problems: Vec<String>,
    /// How a command bashgate lets through only fenced runs with this
    /// client (`None`: the client has no shell-wrapper setting).
    pub fenced: Option<String>,
}

pub fn clients(cwd: &Path, home: Option<&Path>, path_var: Option<&str>) -> Vec<ClientReport> {
    CLIENTS
        .iter()
        .map(|w| client(w, cwd, home, path_var))
        .collect()
}

fn client(w: &Wiring, cwd: &Path, home: Option<&Path>, path_var: Option<&str>) -> ClientReport {
    let (exes, _) = client_facts(w.client);
    let described = bashgate::clients::get(w.client);
    let installed = exes.iter().find_map(|e| on_path(e, path_var)).or_else(|| {
        let (c, h) = (described?, home?);
        c.install_paths
            .iter()
            .map(|p| h.join(p))
            .find(|p| is_executable(p))
    });
    let mut wirings = Vec::new();
    let mut places = vec![("project", cwd.join(w.project_file()))];
    if let Some(c) = described {
        places.extend(c.local_hook_files.iter().map(|f| ("local", cwd.join(f))));
    }
    if let (Some(h), Some(f)) = (home, w.user_file()) {
        places.push(("user", h.join(f)));
    }
    if let Some(c) = described {
        places.extend(
            c.managed_files
                .iter()
                .map(|f| ("managed", PathBuf::from(f))),
        );
    }
    // A setting that turns every hook off, in any file the client reads.
    let off: Vec<String> = described
        .and_then(|c| c.hooks_off_key.as_deref().map(|k| (c, k)))
        .map(|(c, key)| {
            places
                .iter()
                .filter(|(_, f)| {
                    std::fs::read_to_string(f)
                        .ok()
                        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                        .is_some_and(|v| v[key] == Value::Bool(true))
                })
                .map(|(_, f)| {
                    format!(
                        "\"{key}\": true in {}: {} runs no hooks at all",
                        f.display(),
                        c.name
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    for (scope, file) in &places {
        if let Some(mut r) = wiring(w, scope, file, cwd, home, path_var) {
            r.problems.extend(off.iter().cloned());
            wirings.push(r);
        }
    }
    let status = if wirings.is_empty() {
        "not wired"
    } else if !wirings.iter().any(|r| r.problems.is_empty()) {
        "broken"
    } else if installed.is_none() {
        "not installed"
    } else {
        "enforced"
    };
    ClientReport {
        client: w.client,
        installed,
        wirings,
        status,
    }
}

/// What one settings file wires, or `None` when it has no bashgate hook.
fn wiring(
    w: &Wiring,
    scope: &'static str,
    file: &Path,
    cwd: &Path,
    home: Option<&Path>,
    path_var: Option<&str>,
) -> Option<WiringReport> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut problems = Vec::new();
    let root: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            // Whatever it holds, the client reads none of it: bashgate's
            // hooks in it would not fire, and none elsewhere can be seen
            // in it.
            problems.push(format!(
                "the file is not valid JSON ({e}): the client ignores it, with any hooks in it"
            ));
            return Some(WiringReport {
                file: file.to_path_buf(),
                scope,
                events: vec![],
                problems,
                fenced: None,
            });
        }
    };
    let (_, shell_tool) = client_facts(w.client);
    let mut events = Vec::new();
    for (event, _) in w.events {
        let Some(list) = root["hooks"][*event].as_array() else {
            continue;
        };
        for item in list {
            for (command, matcher, timeout, hook) in hooks_of(w, item) {
                if !crate::init::is_ours(&command, w.client) {
                    continue;
                }
                events.push(event.to_string());
                // What makes a failing hook stop the call, where the
                // client has it (Claude Code's `onFailure`).
                if let Some(c) = bashgate::clients::get(w.client) {
                    for (k, v) in &c.hook_fields {
                        if hook.get(k) != Some(v) {
                            problems.push(format!(
                                "{event}: the hook has no \"{k}\": {v}, so if it cannot start (bashgate missing on this machine) or times out, {} runs the call unchecked (`bashgate init {}` adds it)",
                                c.name, w.client
                            ));
                        }
                    }
                }
                if let Some(p) = binary_problem(&command, path_var) {
                    problems.push(format!("{event}: {p}"));
                }
                if let Some(m) = &matcher {
                    if !matcher_matches(w.client, m, shell_tool) {
                        problems.push(format!(
                            "{event}: the matcher {m:?} does not match the shell tool {shell_tool:?}"
                        ));
                    }
                    // After a tool ran, what it read taints the session.
                    if w.events.get(1).is_some_and(|(after, _)| after == event) {
                        let missed = read_tools(w.client)
                            .into_iter()
                            .filter(|t| !matcher_matches(w.client, m, t))
                            .collect::<Vec<_>>();
                        if !missed.is_empty() {
                            problems.push(format!(
                                "{event}: the matcher {m:?} leaves out {}: what the agent reads with them does not taint the session, so commands after it are judged as if it had read nothing",
                                missed.join(", ")
                            ));
                        }
                    }
                }
                if let Some(p) = remote_problem(&command) {
                    problems.push(format!("{event}: {p}"));
                }
                if let Some(t) = timeout {
                    let secs = match w.shape {
                        Shape::Grouped { timeout_ms: true } => t / 1000,
                        _ => t,
                    };
                    if secs < HOOK_TIMEOUT_S {
                        problems.push(format!("{event}: the timeout ({secs} s) is below bashgate's decision budget; a slow decision (the reviewer, a person) would be cut off and the client may run the command anyway"));
                    }
                }
            }
        }
    }
    if events.is_empty() {
        return None;
    }
    let before = w.events[0].0;
    if !events.iter().any(|e| e == before) {
        problems.push(format!(
            "only after-tool events are wired: nothing is checked before a command runs ({before} is missing)"
        ));
    }
    if scope == "project" {
        if let Some(p) = trust_problem(w.client, cwd, home) {
            problems.push(p);
        }
    }
    if w.client == "codex" {
        problems.extend(codex_hook_trust(file, &root, home));
    }
    events.dedup();
    Some(WiringReport {
        file: file.to_path_buf(),
        scope,
        events,
        problems,
        fenced: fenced_through(w, &root, path_var),
    })
}

/// What a settings file says about the client's shell wrapper: the
/// program a fenced command runs through, or why it will be asked about.
fn fenced_through(w: &Wiring, root: &Value, path_var: Option<&str>) -> Option<String> {
    let var = bashgate::clients::get(w.client)?
        .shell_prefix_env
        .as_deref()?;
    let wrapper = crate::hook::shell::SHELL_BINARY;
    Some(match root["env"][var].as_str() {
        Some(v) if crate::init::is_a_wrapper(v) => {
            let found = if v.contains('/') {
                Some(PathBuf::from(v))
            } else {
                on_path(v, path_var)
            };
            if found.is_some_and(|p| is_executable(&p)) {
                format!("commands bashgate lets through only fenced run fenced through {v} ({var})")
            } else {
                format!("{var} names {v}, which does not exist or is not executable: the client cannot run any shell command through it")
            }
        }
        Some(v) => format!("{var} names {v}, not bashgate's {wrapper}: commands bashgate would run fenced are asked about instead"),
        None => format!("{var} is not set here (`bashgate init {}` sets it): commands bashgate would run fenced are asked about instead, unless another settings file sets it", w.client),
    })
}

/// The client's names for the tools whose reads taint a session (files,
/// web pages, searches).
fn read_tools(client: &str) -> Vec<String> {
    let Some(c) = bashgate::clients::get(client) else {
        return Vec::new();
    };
    ["Read", "WebFetch", "WebSearch"]
        .iter()
        .flat_map(|gate_name| {
            let named: Vec<String> = c
                .tools
                .iter()
                .filter(|(_, g)| g.as_str() == *gate_name)
                .map(|(n, _)| n.clone())
                .collect();
            // A client with no table of names uses the gate's.
            if c.tools.is_empty() {
                vec![gate_name.to_string()]
            } else {
                named
            }
        })
        .collect()
}

/// Why a hook that asks a daemon (`--remote URL`) would get no decision:
/// no session token in this environment, or nothing listening there.
fn remote_problem(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    words.find(|w| *w == "--remote")?;
    let url = words.next()?.trim_matches(|c| c == '\'' || c == '"');
    let target = match bashgate::endpoint::Target::parse(url) {
        Ok(t) => t,
        Err(e) => return Some(format!("--remote {url}: {e}")),
    };
    let token_env = crate::commands::load_config(None)
        .map(|(_, c)| c.remote.token_env)
        .unwrap_or_else(|_| "BASHGATE_TOKEN".into());
    if std::env::var(&token_env).map_or(true, |t| t.trim().is_empty()) {
        return Some(format!("the hook asks the daemon at {url}, but ${token_env} is not set here, so the daemon refuses it (`bashgate session create` on the host makes a token)"));
    }
    let reached = match &target {
        bashgate::endpoint::Target::Tcp(addr) => {
            use std::net::ToSocketAddrs;
            addr.to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .is_some_and(|a| {
                    std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2))
                        .is_ok()
                })
        }
        bashgate::endpoint::Target::Unix(p) => std::os::unix::net::UnixStream::connect(p).is_ok(),
    };
    (!reached).then(|| format!("the hook asks the daemon at {url}, and nothing answers there: is `bashgate serve` running on the host, and is its socket or port in this container? Until it answers, calls that need it are decided by on_error"))
}

/// The hook commands of one list item: (command, matcher, timeout, the
/// hook's own object).
fn hooks_of(w: &Wiring, item: &Value) -> Vec<(String, Option<String>, Option<u64>, Value)> {
    match w.shape {
        Shape::Grouped { .. } => {
            let matcher = item["matcher"].as_str().map(str::to_string);
            item["hooks"]
                .as_array()
                .map(|hs| {
                    hs.iter()
                        .filter_map(|h| {
                            let c = h["command"].as_str()?.to_string();
                            Some((c, matcher.clone(), h["timeout"].as_u64(), h.clone()))
                        })
                        .collect()
                })
                .unwrap_or_default()
        }
        Shape::Flat {
            command_key,
            timeout_key,
            ..
        } => item[command_key]
            .as_str()
            .map(|c| {
                let t = timeout_key.and_then(|k| item[k].as_u64());
                // Copilot's default timeout when none is written.
                let t = t.or(if timeout_key.is_some() {
                    Some(30)
                } else {
                    None
                });
                vec![(c.to_string(), None, t, item.clone())]
            })
            .unwrap_or_default(),
    }
}

/// Whether a matcher selects the shell tool. Claude Code reads `*` and
/// empty as everything and otherwise a regular expression, as the others do.
fn matcher_matches(client: &str, matcher: &str, tool: &str) -> bool {
    if matcher.is_empty() || (client == "claude" && matcher == "*") {
        return true;
    }
    match regex::Regex::new(&format!("^(?:{matcher})$")) {
        Ok(re) => re.is_match(tool) || regex::Regex::new(matcher).is_ok_and(|r| r.is_match(tool)),
        Err(_) => false,
    }
}

/// Why the hook command's program would not start, if it would not.
fn binary_problem(command: &str, path_var: Option<&str>) -> Option<String> {
    // The portable command (`init::portable_command`) names its program
    // after `command -v`, found through PATH.
    let first = match crate::init::portable_program(command) {
        Some(program) => program.to_string(),
        None => first_word(command)?,
    };
    if first.contains('/') {
        let p = Path::new(&first);
        if !is_executable(p) {
            return Some(format!(
                "the hook program {first} does not exist or is not executable"
            ));
        }
        // A command to run fenced is handed to the `bashgate` beside it.
        if !is_executable(&crate::hook::fence_runner(p)) {
            return Some(format!(
                "{first} needs bashgate installed beside it (a fenced command runs through `bashgate run`)"
            ));
        }
    } else if !matches!(first.as_str(), "env" | "docker" | "podman" | "sh" | "bash") {
        let Some(found) = on_path(&first, path_var) else {
            return Some(format!("the hook program {first} is not on PATH"));
        };
        if first == crate::hook::HOOK_BINARY && !is_executable(&crate::hook::fence_runner(&found)) {
            return Some(format!(
                "{} needs bashgate installed beside it (a fenced command runs through `bashgate run`)",
                found.display()
            ));
        }
    }
    None
}

/// The first word of a shell command, with simple quoting removed.
fn first_word(command: &str) -> Option<String> {
    let t = command.trim_start();
    if let Some(rest) = t.strip_prefix('\'') {
        let end = rest.find('\'')?;
        return Some(rest[..end].to_string());
    }
    if let Some(rest) = t.strip_prefix('"') {
        let end = rest.find('"')?;
        return Some(rest[..end].to_string());
    }
    t.split_whitespace().next().map(str::to_string)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn on_path(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    crate::hook::shell::find_in(path_var.map(std::ffi::OsStr::new), name)
}

/// Clients that load a project's hooks only when the person trusts it.
fn trust_problem(client: &str, cwd: &Path, home: Option<&Path>) -> Option<String> {
    let home = home?;
    let project = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    match client {
        "codex" => {
            let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
            let cfg: toml::Value =
                toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
            let trusted = project.ancestors().any(|dir| {
                cfg.get("projects")
                    .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
                    .and_then(|p| p.get("trust_level"))
                    .and_then(toml::Value::as_str)
                    == Some("trusted")
            });
            (!trusted).then(|| format!("Codex loads an untrusted project's .codex/ disabled: trust {} (projects.\"{}\".trust_level = \"trusted\" in ~/.codex/config.toml, or answer Codex's trust prompt)", project.display(), project.display()))
        }
        "gemini" => {
            // Folder trust is on unless the person turned it off; an
            // untrusted folder's settings (and hooks) are not loaded.
            let settings: Value = std::fs::read_to_string(home.join(".gemini/settings.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            if settings["security"]["folderTrust"]["enabled"] == Value::Bool(false) {
                return None;
            }
            if std::env::var_os("GEMINI_CLI_TRUST_WORKSPACE").is_some_and(|v| v == "true") {
                return None;
            }
            let trusted: Value = std::fs::read_to_string(home.join(".gemini/trustedFolders.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            // TRUST_FOLDER trusts a folder and what is under it;
            // TRUST_PARENT the folder's parent and what is under that.
            let ok = trusted.as_object().is_some_and(|rules| {
                rules.iter().any(|(path, rule)| {
                    let path = Path::new(path);
                    match rule.as_str() {
                        Some("TRUST_FOLDER") => project.starts_with(path),
                        Some("TRUST_PARENT") => {
                            path.parent().is_some_and(|p| project.starts_with(p))
                        }
                        _ => false,
                    }
                })
            });
            (!ok).then(|| format!("{} is not a trusted folder for Gemini CLI, which then ignores the project's settings and refuses to run headless: trust it (Gemini CLI's trust dialog, or \"{}\": \"TRUST_FOLDER\" in ~/.gemini/trustedFolders.json)", project.display(), project.display()))
        }
        _ => None,
    }
}

/// `bashgate doctor`: the fence's layers, then each client. Exit status 1
/// when the fence cannot run the profile or a wiring would not fire.
pub fn run(profile: &str, json: bool) -> ExitCode {
    let probe = bashgate::fence::probe();
    let fence = probe.can_run(profile);
    let writes = probe.can_run(bashgate::fence::WRITES);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let home = dirs::home_dir();
    let path_var = std::env::var("PATH").ok();
    let reports = clients(&cwd, home.as_deref(), path_var.as_deref());
    let broken = reports.iter().any(|r| r.status == "broken");
    let enforced = reports.iter().any(|r| r.status == "enforced");
    let project = project_trust(&cwd);
    if json {
        let v = serde_json::json!({
            "fence": {
                "profile": profile,
                "layers": probe.lines(),
                "can_confine": fence.is_ok(),
                "why_not": fence.as_ref().err(),
                "can_bound_writes": writes.is_ok(),
                "why_writes_not": writes.as_ref().err(),
            },
            "clients": reports,
            "project": project,
            "enforced": enforced && project.config_error.is_none(),
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for line in probe.lines() {
            println!("{line}");
        }
        match &fence {
            Ok(()) => println!("bashgate run --profile {profile}: can confine commands here"),
            Err(why) => println!(
                "bashgate run --profile {profile}: CANNOT confine here: {why}. Tainted sessions then ask as before."
            ),
        }
        match &writes {
            Ok(()) => println!(
                "bashgate run --profile {}: can bound writes here (an untainted session's commands that cannot be proven local)",
                bashgate::fence::WRITES
            ),
            Err(why) => println!(
                "bashgate run --profile {}: CANNOT bound writes here: {why}. An untainted session's commands run with their writes unbounded.",
                bashgate::fence::WRITES
            ),
        }
        println!();
        for r in &reports {
            let installed = match &r.installed {
                Some(p) => format!("installed ({})", p.display()),
                None => "not found".to_string(),
            };
            let status = match r.status {
                "not installed" => "WIRED, BUT THE CLIENT IS NOT HERE".to_string(),
                s => s.to_uppercase(),
            };
            println!("{}: {installed}, {status}", r.client);
            for w in &r.wirings {
                println!(
                    "  {} {}: {}",
                    w.scope,
                    w.file.display(),
                    w.events.join(", ")
                );
                for p in &w.problems {
                    println!("    will not fire: {p}");
                }
                if let Some(f) = &w.fenced {
                    println!("    {f}");
                }
            }
            if r.wirings.is_empty() && r.installed.is_some() {
                println!("  bashgate is not wired in: `bashgate init {}`", r.client);
            }
            if r.status == "not installed" {
                println!(
                    "  the client is not on PATH (nor where it installs itself), so nothing runs these hooks on this machine"
                );
            }
        }
        println!();
        for line in &project.lines {
            println!("{line}");
        }
        println!();
        if let (true, Some(_)) = (enforced, &project.config_error) {
            println!("THE HOOKS ARE WIRED, BUT THE CONFIGURATION IS BROKEN: every tool call is asked about until it is fixed");
        } else if enforced {
            let by: Vec<&str> = reports
                .iter()
                .filter(|r| r.status == "enforced")
                .map(|r| r.client)
                .collect();
            println!("ENFORCED here by: {}", by.join(", "));
        } else {
            println!("NOTHING IS ENFORCED: no installed client here runs bashgate's hooks");
        }
    }
    if fence.is_err() || broken || !enforced || project.config_error.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether the person trusts the project the working directory is in, and
/// what its configuration asked for that is not applied.
#[derive(serde::Serialize)]
struct ProjectTrust {
    root: Option<PathBuf>,
    trusted: bool,
    /// The configuration cannot be read: every call is then asked about.
    config_error: Option<String>,
    /// Sentences for the person (the report's text).
    lines: Vec<String>,
}

fn project_trust(cwd: &Path) -> ProjectTrust {
    let root = bashgate::config::project_root(cwd).or_else(|| Some(cwd.to_path_buf()));
    let source = bashgate::config::discover(None, root.as_deref());
    let (state_dir, ignored) = match bashgate::config::load_all(&source) {
        Ok(l) => (l.config.state_dir(), l.ignored),
        Err(e) => {
            return ProjectTrust {
                root,
                trusted: false,
                lines: vec![format!(
                    "configuration: {e}; until it is fixed, every tool call is asked about"
                )],
                config_error: Some(e.to_string()),
            }
        }
    };
    let record = bashgate::trust::Trusted::read(&state_dir);
    let trusted = match (&record, &root) {
        (Ok(t), Some(r)) => t.project(r),
        _ => false,
    };
    let mut lines = Vec::new();
    if let Err(e) = &record {
        lines.push(format!(
            "trust record: {e}; no project is trusted until it is fixed"
        ));
    }
    match &root {
        Some(r) if trusted => lines.push(format!("project {}: trusted by you", r.display())),
        Some(r) => lines.push(format!(
            "project {}: NOT trusted (reading its files taints a session; its bashgate configuration may only tighten); `bashgate trust` to trust it",
            r.display()
        )),
        None => lines.push("no project here (no repository root or client project directory)".into()),
    }
    lines.extend(ignored.iter().map(bashgate::config::Ignored::describe));
    ProjectTrust {
        root,
        trusted,
        lines,
        config_error: None,
    }
}

/// Codex runs a hook only once the person trusted it: a `trusted_hash` under
/// `[hooks.state."FILE:EVENT:GROUP:HOOK"]` in ~/.codex/config.toml that
/// matches the hook as it is now (a changed hook is untrusted again). An
/// untrusted hook is skipped without a word, so each of bashgate's hooks is
/// checked.
fn codex_hook_trust(file: &Path, root: &Value, home: Option<&Path>) -> Vec<String> {
    let Some(home) = home else {
        return vec![];
    };
    let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
    let cfg: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let mut problems = Vec::new();
    for (event, key_event) in [
        ("PreToolUse", "pre_tool_use"),
        ("PostToolUse", "post_tool_use"),
    ] {
        let Some(groups) = root["hooks"][event].as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let Some(hooks) = group["hooks"].as_array() else {
                continue;
            };
            for (h, hook) in hooks.iter().enumerate() {
                let Some(command) = hook["command"].as_str() else {
                    continue;
                };
                if !crate::init::is_ours(command, "codex") {
                    continue;
                }
                let key = format!("{}:{key_event}:{g}:{h}", file.display());
                let want = codex_trust_hash(key_event, group["matcher"].as_str(), hook);
                let have = cfg
                    .get("hooks")
                    .and_then(|x| x.get("state"))
                    .and_then(|x| x.get(key.as_str()))
                    .and_then(|x| x.get("trusted_hash"))
                    .and_then(toml::Value::as_str);
                if have != Some(want.as_str()) {
                    problems.push(format!("{event}: Codex has not trusted this hook (or it changed since), and skips it without a word: run `codex` in the project and trust bashgate's hooks when it lists them"));
                }
            }
        }
    }
    problems
}

/// The hash Codex records for a trusted hook: SHA-256 of the compact JSON,
/// keys sorted, of the event, the group's matcher and the hook (timeout 600
/// when unset, async false when unset).
fn codex_trust_hash(event: &str, matcher: Option<&str>, hook: &Value) -> String {
    use sha2::{Digest, Sha256};
    // Keys in sorted order; serde_json keeps insertion order.
    let hook = serde_json::json!({
        "async": hook["async"].as_bool().unwrap_or(false),
        "command": hook["command"],
        "timeout": hook["timeout"].as_u64().unwrap_or(600),
        "type": hook["type"].as_str().unwrap_or("command"),
    });
    let mut v = serde_json::Map::new();
    v.insert("event_name".into(), Value::from(event));
    v.insert("hooks".into(), Value::Array(vec![hook]));
    if let Some(m) = matcher {
        v.insert("matcher".into(), Value::from(m));
    }
    let digest = Sha256::digest(Value::Object(v).to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init::{install, CLAUDE, CODEX, GEMINI};

    /// An empty file the person may run, standing in for a program.
    fn program(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, "").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_hook_binary_needs_bashgate_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let hook = d.path().join(crate::hook::HOOK_BINARY);
        let gate = d.path().join("bashgate");
        for p in [&hook, &gate] {
            program(p);
        }
        let command = format!("{} claude", hook.display());
        assert_eq!(binary_problem(&command, None), None);
        std::fs::remove_file(&gate).unwrap();
        let why = binary_problem(&command, None).unwrap();
        assert!(why.contains("needs bashgate installed beside it"), "{why}");
    }

    #[test]
    fn reports_wired_broken_and_missing() {
        let t = tempfile::tempdir().unwrap();
        let (proj, home) = (t.path().join("p"), t.path().join("h"));
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let exe = std::env::current_exe().unwrap();
        let good = format!("{} hook gemini", exe.display());
        install(&GEMINI, &proj.join(GEMINI.project_file()), &good, 60).unwrap();
        install(
            &CODEX,
            &proj.join(CODEX.project_file()),
            "/nonexistent/bashgate hook codex",
            60,
        )
        .unwrap();
        let r = clients(&proj, Some(&home), Some(""));
        // Gemini CLI ignores an untrusted folder's settings.
        let gemini = r.iter().find(|x| x.client == "gemini").unwrap();
        assert_eq!(gemini.status, "broken");
        assert!(gemini.wirings[0].problems[0].contains("trusted folder"));
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let canon = proj.canonicalize().unwrap();
        std::fs::write(
            home.join(".gemini/trustedFolders.json"),
            format!("{{\"{}\": \"TRUST_PARENT\"}}", canon.join("sub").display()),
        )
        .unwrap();
        let r = clients(&proj, Some(&home), Some(""));
        let by = |c: &str| r.iter().find(|x| x.client == c).unwrap();
        // Wired and would fire, but no `gemini` on this PATH runs it.
        assert_eq!(by("gemini").status, "not installed");
        let bin = t.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        program(&bin.join("gemini"));
        let with_gemini = clients(&proj, Some(&home), bin.to_str());
        let g = with_gemini.iter().find(|x| x.client == "gemini").unwrap();
        assert_eq!(g.status, "enforced");
        assert_eq!(by("claude").status, "not wired");
        let codex = by("codex");
        assert_eq!(codex.status, "broken");
        let problems = codex.wirings[0].problems.join("\n");
        assert!(problems.contains("does not exist"), "{problems}");
        assert!(problems.contains("untrusted"), "{problems}");
    }

    #[test]
    fn claude_codes_local_install_off_path_is_found() {
        let t = tempfile::tempdir().unwrap();
        let (proj, home) = (t.path().join("p"), t.path().join("h"));
        std::fs::create_dir_all(&proj).unwrap();
        let exe = std::env::current_exe().unwrap();
        let hook = format!("{} hook claude", exe.display());
        install(&CLAUDE, &proj.join(CLAUDE.project_file()), &hook, 60).unwrap();
        let status = || {
            let r = clients(&proj, Some(&home), Some(""));
            let c = r.into_iter().find(|x| x.client == "claude").unwrap();
            (c.status, c.installed)
        };
        assert_eq!(status().0, "not installed");
        // Claude Code's local install, run through a shell alias.
        std::fs::create_dir_all(home.join(".claude/local")).unwrap();
        program(&home.join(".claude/local/claude"));
        let (s, at) = status();
        assert_eq!(at, Some(home.join(".claude/local/claude")));
        assert_eq!(s, "enforced");
    }

    #[test]
    fn says_how_a_fenced_command_runs_with_claude_code() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("p");
        let file = proj.join(CLAUDE.project_file());
        let exe = std::env::current_exe().unwrap();
        install(
            &CLAUDE,
            &file,
            &format!("{} hook claude", exe.display()),
            60,
        )
        .unwrap();
        let fenced = || {
            let r = clients(&proj, None, Some(""));
            let c = r.into_iter().find(|x| x.client == "claude").unwrap();
            c.wirings[0].fenced.clone().unwrap()
        };
        assert!(fenced().contains("is not set here"), "{}", fenced());
        let wrapper = t.path().join(crate::hook::shell::SHELL_BINARY);
        crate::init::install_wrapper(&CLAUDE, &file, &wrapper)
            .unwrap()
            .unwrap();
        assert!(fenced().contains("does not exist"), "{}", fenced());
        program(&wrapper);
        assert!(fenced().contains("run fenced through"), "{}", fenced());
        // Gemini CLI has no such setting: nothing to say.
        let g = proj.join(GEMINI.project_file());
        install(&GEMINI, &g, &format!("{} hook gemini", exe.display()), 60).unwrap();
        let r = clients(&proj, None, Some(""));
        let gemini = r.into_iter().find(|x| x.client == "gemini").unwrap();
        assert!(gemini.wirings[0].fenced.is_none());
    }

    #[test]
    fn what_turns_claude_codes_hooks_off_or_narrows_them_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let (proj, home, bin) = (t.path().join("p"), t.path().join("h"), t.path().join("bin"));
        for d in [&proj, &home, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        program(&bin.join("claude"));
        let file = proj.join(CLAUDE.project_file());
        let exe = std::env::current_exe().unwrap();
        install(
            &CLAUDE,
            &file,
            &format!("{} hook claude", exe.display()),
            60,
        )
        .unwrap();
        let status = || {
            let r = clients(&proj, Some(&home), bin.to_str());
            let c = r.into_iter().find(|x| x.client == "claude").unwrap();
            let problems: Vec<String> = c.wirings.iter().flat_map(|w| w.problems.clone()).collect();
            (c.status, problems.join("\n"))
        };
        assert_eq!(status().0, "enforced", "{}", status().1);
        // Turned off in the person's own file beside it.
        let local = proj.join(".claude/settings.local.json");
        std::fs::write(&local, r#"{"disableAllHooks": true}"#).unwrap();
        let (s, why) = status();
        assert_eq!(s, "broken");
        assert!(why.contains("disableAllHooks"), "{why}");
        std::fs::remove_file(&local).unwrap();
        // The after-tool matcher narrowed to the shell tool: reads no
        // longer taint.
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v["hooks"]["PostToolUse"][0]["matcher"] = Value::from("Bash");
        std::fs::write(&file, v.to_string()).unwrap();
        let (s, why) = status();
        assert_eq!(s, "broken");
        assert!(
            why.contains("leaves out Read, WebFetch, WebSearch"),
            "{why}"
        );
        // Hooks in the person's local file count; an invalid file says why.
        std::fs::remove_file(&file).unwrap();
        install(
            &CLAUDE,
            &local,
            &format!("{} hook claude", exe.display()),
            60,
        )
        .unwrap();
        assert_eq!(status().0, "enforced", "{}", status().1);
        std::fs::write(&file, "{ not json").unwrap();
        let r = clients(&proj, Some(&home), bin.to_str());
        let c = r.into_iter().find(|x| x.client == "claude").unwrap();
        let project = c.wirings.iter().find(|w| w.scope == "project").unwrap();
        assert!(
            project.problems[0].contains("not valid JSON"),
            "{:?}",
            project.problems
        );
    }

    #[test]
    fn the_portable_hook_command_is_found_through_path() {
        let t = tempfile::tempdir().unwrap();
        let command = crate::init::portable_command("claude", 2);
        assert!(crate::init::is_ours(&command, "claude"), "{command}");
        let why = binary_problem(&command, t.path().to_str()).unwrap();
        assert!(why.contains("bashgate-hook is not on PATH"), "{why}");
        for name in [crate::hook::HOOK_BINARY, "bashgate"] {
            program(&t.path().join(name));
        }
        assert_eq!(binary_problem(&command, t.path().to_str()), None);
    }

    #[test]
    fn codex_trust_hash_is_the_one_codex_records() {
        // Recorded by Codex CLI 0.169.0 for this hook, which then ran
        // without --dangerously-bypass-hook-trust.
        let hook =
            serde_json::json!({"type": "command", "command": "/tmp/cx/hook.sh", "timeout": 60});
        assert_eq!(
            codex_trust_hash("pre_tool_use", Some(".*"), &hook),
            "sha256:8ed3f6641922fdab250ea1cb7ab2b2a102b21277002b1756642e1a72310d413a"
        );
    }

    #[test]
    fn matchers_that_miss_the_shell_tool_are_reported() {
        assert!(matcher_matches("gemini", ".*", "run_shell_command"));
        assert!(matcher_matches(
            "gemini",
            "run_shell_command|read_file",
            "run_shell_command"
        ));
        assert!(!matcher_matches("gemini", "Bash", "run_shell_command"));
        assert!(!matcher_matches("codex", "*", "Bash"));
        assert!(matcher_matches("claude", "*", "Bash"));
    }
}
