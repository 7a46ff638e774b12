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

use bashgate::clients::Shape;

use crate::hook::{Client, CLIENTS};
use crate::init::HOOK_TIMEOUT_S;

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

fn client(w: &Client, cwd: &Path, home: Option<&Path>, path_var: Option<&str>) -> ClientReport {
    let c = w.described();
    let installed = c
        .executables
        .iter()
        .find_map(|e| on_path(e, path_var))
        .or_else(|| {
            let h = home?;
            c.install_paths
                .iter()
                .map(|p| h.join(p))
                .find(|p| is_executable(p))
        });
    let mut wirings = Vec::new();
    let mut places = vec![("project", cwd.join(&c.hook_file))];
    places.extend(c.local_hook_files.iter().map(|f| ("local", cwd.join(f))));
    if let (Some(h), Some(f)) = (home, &c.user_hook_file) {
        places.push(("user", h.join(f)));
    }
    places.extend(
        c.managed_files
            .iter()
            .map(|f| ("managed", PathBuf::from(f))),
    );
    // A setting that turns every hook off, in any file the client reads.
    let off: Vec<String> = c
        .hooks_off_key
        .as_deref()
        .map(|key| {
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
        client: w.key,
        installed,
        wirings,
        status,
    }
}

/// What one settings file wires, or `None` when it has no bashgate hook.
fn wiring(
    w: &Client,
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
    let c = w.described();
    let shell_tool = c.shell_tool.as_str();
    let mut events = Vec::new();
    for event in &c.wiring.events {
        let event = event.name.as_str();
        let Some(list) = root["hooks"][event].as_array() else {
            continue;
        };
        for item in list {
            for (command, matcher, timeout, hook) in hooks_of(c, item) {
                if !crate::init::is_ours(&command, w.key) {
                    continue;
                }
                events.push(event.to_string());
                // What makes a failing hook stop the call, where the
                // client has it.
                for (k, v) in &c.hook_fields {
                    if hook.get(k) != Some(v) {
                        problems.push(format!(
                            "{event}: the hook has no \"{k}\": {v}, so if it cannot start (bashgate missing on this machine) or times out, {} runs the call unchecked (`bashgate init {}` adds it)",
                            c.name, w.key
                        ));
                    }
                }
                if let Some(p) = binary_problem(&command, path_var) {
                    problems.push(format!("{event}: {p}"));
                }
                if let Some(m) = &matcher {
                    if !matcher_matches(c, m, shell_tool) {
                        problems.push(format!(
                            "{event}: the matcher {m:?} does not match the shell tool {shell_tool:?}"
                        ));
                    }
                    // After a tool ran, what it read taints the session.
                    if c.wiring
                        .events
                        .get(1)
                        .is_some_and(|after| after.name == event)
                    {
                        let missed = read_tools(c)
                            .into_iter()
                            .filter(|t| !matcher_matches(c, m, t))
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
                    let secs = match c.wiring.shape {
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
    let before = &c.wiring.events[0].name;
    if !events.iter().any(|e| e == before) {
        problems.push(format!(
            "only after-tool events are wired: nothing is checked before a command runs ({before} is missing)"
        ));
    }
    if let (true, Some(home)) = (scope == "project", home) {
        let project = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        problems.extend((w.project_untrusted)(&project, home));
    }
    problems.extend((w.hooks_untrusted)(file, &root, home));
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
fn fenced_through(w: &Client, root: &Value, path_var: Option<&str>) -> Option<String> {
    let var = w.described().shell_prefix_env.as_deref()?;
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
        None => format!("{var} is not set here (`bashgate init {}` sets it): commands bashgate would run fenced are asked about instead, unless another settings file sets it", w.key),
    })
}

/// The client's names for the tools whose reads taint a session (files,
/// web pages, searches).
fn read_tools(c: &bashgate::clients::Client) -> Vec<String> {
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
fn hooks_of(
    c: &bashgate::clients::Client,
    item: &Value,
) -> Vec<(String, Option<String>, Option<u64>, Value)> {
    match &c.wiring.shape {
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
            default_timeout_s,
            ..
        } => item[command_key]
            .as_str()
            .map(|command| {
                let t = timeout_key.as_ref().and_then(|k| item[k].as_u64());
                // The client's own timeout when none is written.
                let t = t.or(*default_timeout_s);
                vec![(command.to_string(), None, t, item.clone())]
            })
            .unwrap_or_default(),
    }
}

/// Whether a matcher selects the tool. Empty is everything, and `*` where
/// the client reads it so; otherwise a matcher is a regular expression.
fn matcher_matches(c: &bashgate::clients::Client, matcher: &str, tool: &str) -> bool {
    if matcher.is_empty() || (c.wiring.star_matches_all && matcher == "*") {
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

/// `bashgate doctor`: the fence's layers, then each client. Exit status 1
/// when the fence cannot run the profile or a wiring would not fire.
pub fn run(profile: &str, json: bool) -> ExitCode {
    let probe = bashgate_fence::probe();
    let fence = probe.can_run(profile);
    let writes = probe.can_run(bashgate_fence::WRITES);
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
                "why_not": fence.as_ref().err().map(ToString::to_string),
                "can_bound_writes": writes.is_ok(),
                "why_writes_not": writes.as_ref().err().map(ToString::to_string),
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
                bashgate_fence::WRITES
            ),
            Err(why) => println!(
                "bashgate run --profile {}: CANNOT bound writes here: {why}. An untainted session's commands run with their writes unbounded.",
                bashgate_fence::WRITES
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::init::install;

    /// An empty file the person may run, standing in for a program.
    pub(crate) fn program(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, "").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The report on the client `key`.
    pub(crate) fn report(
        key: &str,
        proj: &Path,
        home: Option<&Path>,
        path: Option<&str>,
    ) -> ClientReport {
        clients(proj, home, path)
            .into_iter()
            .find(|r| r.client == key)
            .unwrap()
    }

    #[test]
    fn the_hook_binary_needs_bashgate_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let hook = d.path().join(crate::hook::HOOK_BINARY);
        let gate = d.path().join("bashgate");
        for p in [&hook, &gate] {
            program(p);
        }
        let command = format!("{} {}", hook.display(), CLIENTS[0].key);
        assert_eq!(binary_problem(&command, None), None);
        std::fs::remove_file(&gate).unwrap();
        let why = binary_problem(&command, None).unwrap();
        assert!(why.contains("needs bashgate installed beside it"), "{why}");
    }

    /// Each client wired with a hook program that does not exist is
    /// broken; with one that does, it is enforced where the client is on
    /// PATH (and the project trusted where the client wants it), else not
    /// installed; unwired, it says so.
    #[test]
    fn reports_wired_broken_and_missing() {
        for w in &CLIENTS {
            let c = w.described();
            let t = tempfile::tempdir().unwrap();
            let (proj, home, bin) = (t.path().join("p"), t.path().join("h"), t.path().join("b"));
            for d in [&proj, &home, &bin] {
                std::fs::create_dir_all(d).unwrap();
            }
            assert_eq!(
                report(w.key, &proj, Some(&home), Some("")).status,
                "not wired"
            );
            let file = proj.join(&c.hook_file);
            let missing = format!("/nonexistent/bashgate hook {}", w.key);
            install(c, &file, &missing, 60).unwrap();
            let r = report(w.key, &proj, Some(&home), Some(""));
            assert_eq!(r.status, "broken", "{}", w.key);
            let problems = r.wirings[0].problems.join("\n");
            assert!(problems.contains("does not exist"), "{problems}");
            let exe = std::env::current_exe().unwrap();
            install(c, &file, &format!("{} hook {}", exe.display(), w.key), 60).unwrap();
            program(&bin.join(&c.executables[0]));
            let r = report(w.key, &proj, Some(&home), bin.to_str());
            // What it says about the fence only where the client has a
            // shell-wrapper setting.
            assert_eq!(r.wirings[0].fenced.is_some(), c.shell_prefix_env.is_some());
            let untrusted = (w.project_untrusted)(&proj.canonicalize().unwrap(), &home);
            let hooks_untrusted = (w.hooks_untrusted)(
                &file,
                &serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap(),
                Some(&home),
            );
            if untrusted.is_none() && hooks_untrusted.is_empty() {
                assert_eq!(
                    r.status, "enforced",
                    "{}: {:?}",
                    w.key, r.wirings[0].problems
                );
                let r = report(w.key, &proj, Some(&home), Some(""));
                assert_eq!(r.status, "not installed", "{}", w.key);
            } else {
                assert_eq!(r.status, "broken", "{}", w.key);
            }
        }
    }

    #[test]
    fn the_portable_hook_command_is_found_through_path() {
        let t = tempfile::tempdir().unwrap();
        let key = CLIENTS[0].key;
        let command = crate::init::portable_command(key, 2);
        assert!(crate::init::is_ours(&command, key), "{command}");
        let why = binary_problem(&command, t.path().to_str()).unwrap();
        assert!(why.contains("bashgate-hook is not on PATH"), "{why}");
        for name in [crate::hook::HOOK_BINARY, "bashgate"] {
            program(&t.path().join(name));
        }
        assert_eq!(binary_problem(&command, t.path().to_str()), None);
    }

    #[test]
    fn matchers_that_miss_the_shell_tool_are_reported() {
        for w in &CLIENTS {
            let c = w.described();
            let tool = c.shell_tool.as_str();
            assert!(matcher_matches(c, ".*", tool));
            assert!(matcher_matches(c, "", tool));
            assert!(matcher_matches(c, &format!("{tool}|read_file"), tool));
            assert!(!matcher_matches(c, "NotTheShell", tool));
            assert_eq!(matcher_matches(c, "*", tool), c.wiring.star_matches_all);
        }
    }
}
