//! `bashgate init CLIENT`: adds bashgate's hook entries to an agent
//! client's settings, keeping everything already there (other hooks, other
//! keys, their order). Running it twice changes nothing; running it with a
//! different binary path or `--remote` replaces bashgate's own entries
//! instead of adding a second set.
//!
//! Each client's wiring is data (the client table's `wiring`): the file,
//! the events with their matchers, and the shape of one entry.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::hook::HOOK_BINARY;

/// The hook timeout written into the settings, in seconds. bashgate's own
/// budget (`hook.budget_ms`, 50 s by default) stays under it.
pub const HOOK_TIMEOUT_S: u64 = 60;

/// The hook timeout written for `--remote` hooks, in seconds: above the
/// longest wait for a person (`remote.approval_wait_s`, 330 s by default).
pub const REMOTE_HOOK_TIMEOUT_S: u64 = 360;

#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Created,
    Updated,
    Unchanged,
}

/// A client as the table describes it (`gate/data/clients.toml`): where its
/// hooks go, and their shape.
pub use bashgate::clients::Client;
use bashgate::clients::Shape;

pub use crate::hook::is_ours;

/// Merges bashgate's hook entries for `w` into the settings file at `path`.
pub fn install(w: &Client, path: &Path, command: &str, timeout_s: u64) -> Result<Change, String> {
    let existed = path.exists();
    let mut root: Value = if existed {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if text.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not valid JSON ({e}); fix it or move it away, then run init again",
                    path.display()
                )
            })?
        }
    } else {
        json!({})
    };
    let obj = root
        .as_object_mut()
        .ok_or_else(|| format!("{} is not a JSON object", path.display()))?;
    let mut changed = false;
    if let Shape::Flat { .. } = w.wiring.shape {
        match obj.get("version") {
            None => {
                obj.insert("version".into(), json!(1));
                changed = true;
            }
            Some(v) if v == &json!(1) => {}
            Some(v) => {
                return Err(format!(
                    "{}: \"version\" is {v}; bashgate writes version 1 hooks",
                    path.display()
                ))
            }
        }
    }
    let hooks = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("{}: \"hooks\" is not an object", path.display()))?;
    for event in &w.wiring.events {
        let list = hooks
            .entry(event.name.as_str())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| {
                format!(
                    "{}: \"hooks.{}\" is not an array",
                    path.display(),
                    event.name
                )
            })?;
        changed |= merge(list, w, event.matcher.as_deref(), command, timeout_s);
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    write_atomically(path, &root)?;
    Ok(if existed {
        Change::Updated
    } else {
        Change::Created
    })
}

/// Takes bashgate's hook entries (and its shell wrapper setting) out of the
/// settings file at `path`, keeping everything else; lists and objects
/// left empty by that go too. `Unchanged` when there was nothing of ours.
pub fn uninstall(w: &Client, path: &Path) -> Result<Change, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Change::Unchanged),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut root: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not valid JSON ({e}); fix it, then run uninstall again",
            path.display()
        )
    })?;
    let mut changed = false;
    if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
        for event in &w.wiring.events {
            let event = event.name.as_str();
            let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
                continue;
            };
            let before = list.clone();
            list.retain_mut(|item| match &w.wiring.shape {
                Shape::Grouped { .. } => {
                    if let Some(hs) = item.get_mut("hooks").and_then(Value::as_array_mut) {
                        hs.retain(|h| {
                            !h.get("command")
                                .and_then(Value::as_str)
                                .is_some_and(|c| is_ours(c, &w.key))
                        });
                        !hs.is_empty()
                    } else {
                        true
                    }
                }
                Shape::Flat { command_key, .. } => !item
                    .get(command_key)
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, &w.key)),
            });
            if *list != before {
                changed = true;
                if list.is_empty() {
                    hooks.remove(event);
                }
            }
        }
        if changed && hooks.is_empty() {
            if let Some(o) = root.as_object_mut() {
                o.remove("hooks");
            }
        }
    }
    if let Some(var) = w.shell_prefix_env.as_deref() {
        if let Some(env) = root.get_mut("env").and_then(Value::as_object_mut) {
            if env
                .get(var)
                .and_then(Value::as_str)
                .is_some_and(is_a_wrapper)
            {
                env.remove(var);
                changed = true;
                if env.is_empty() {
                    if let Some(o) = root.as_object_mut() {
                        o.remove("env");
                    }
                }
            }
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    write_atomically(path, &root)?;
    Ok(Change::Updated)
}

/// What became of the client's shell-wrapper setting.
#[derive(Debug, PartialEq, Eq)]
pub enum Wrapper {
    /// Set to bashgate's wrapper (or already was), named as written.
    Set(Change, String),
    /// The settings name another program there, kept: it is the person's.
    KeptOther(String),
}

/// Names bashgate's shell wrapper `program` (`bashgate-shell`) in the
/// client's setting for it (`env.VAR` in the settings file at `path`),
/// where the client has one (the client table's `shell_prefix_env`): a
/// command that may run only fenced then runs fenced with its text
/// unchanged, so the client's own rules judge what the agent wrote.
/// `None` for a client with no such setting.
pub fn install_wrapper(w: &Client, path: &Path, program: &Path) -> Option<Result<Wrapper, String>> {
    let var = w.shell_prefix_env.as_deref()?;
    Some((|| {
        // Named by PATH where PATH finds this one (settings a team can
        // commit), else by its path on this machine.
        let by_name = crate::hook::shell::on_path(crate::hook::shell::SHELL_BINARY)
            .is_some_and(|found| crate::hook::shell::same_file(&found, program));
        let want = if by_name {
            crate::hook::shell::SHELL_BINARY.to_string()
        } else {
            program.display().to_string()
        };
        // A client may read what follows a " -" as the program's options.
        if !(by_name || program.is_absolute()) || want.contains(" -") {
            return Err(format!(
                "{want} cannot be named in {var}: it must be an absolute path without \" -\" in it"
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut root: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not valid JSON ({e})", path.display()))?;
        let env = root
            .as_object_mut()
            .ok_or_else(|| format!("{} is not a JSON object", path.display()))?
            .entry("env")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| format!("{}: \"env\" is not an object", path.display()))?;
        match env.get(var).and_then(Value::as_str) {
            Some(v) if v == want => return Ok(Wrapper::Set(Change::Unchanged, want)),
            // Another install's (an older path) is replaced; anyone
            // else's is kept.
            Some(v) if !is_a_wrapper(v) => return Ok(Wrapper::KeptOther(v.into())),
            _ => {}
        }
        env.insert(var.into(), json!(want));
        write_atomically(path, &root)?;
        Ok(Wrapper::Set(Change::Updated, want))
    })())
}

/// Whether a client's setting `value` names a bashgate shell wrapper,
/// wherever installed (an older install's path is still bashgate's).
pub fn is_a_wrapper(value: &str) -> bool {
    Path::new(value).file_name() == Some(std::ffi::OsStr::new(crate::hook::shell::SHELL_BINARY))
}

/// The program `bashgate init` writes into a client's settings: the hook
/// program beside this executable when there is one, else this one.
pub fn hook_program() -> PathBuf {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from("bashgate"));
    hook_program_beside(&exe)
}

/// The hook program beside `exe` when it is there and runnable, else `exe`.
fn hook_program_beside(exe: &Path) -> PathBuf {
    let hook = exe.with_file_name(HOOK_BINARY);
    let runnable = hook
        .metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if exe.is_absolute() && runnable {
        hook
    } else {
        exe.to_path_buf()
    }
}

/// The entry bashgate wants in one event's list.
fn entry(w: &Client, matcher: Option<&str>, command: &str, timeout_s: u64) -> Value {
    match &w.wiring.shape {
        &Shape::Grouped { timeout_ms } => {
            let mut hook = json!({
                "type": "command",
                "command": command,
                "timeout": if timeout_ms { timeout_s * 1000 } else { timeout_s },
            });
            for (k, v) in &w.hook_fields {
                hook[k] = v.clone();
            }
            json!({
                "matcher": matcher.unwrap_or("*"),
                "hooks": [hook]
            })
        }
        Shape::Flat {
            command_key,
            timeout_key,
            typed,
            ..
        } => {
            let mut e = Map::new();
            if *typed {
                e.insert("type".into(), json!("command"));
            }
            e.insert(command_key.clone(), json!(command));
            if let Some(k) = timeout_key {
                e.insert(k.clone(), json!(timeout_s));
            }
            for (k, v) in &w.hook_fields {
                e.insert(k.clone(), v.clone());
            }
            Value::Object(e)
        }
    }
}

/// Puts bashgate's entry into `list`: the first entry of ours is replaced
/// in place when it differs, later ones of ours are removed, and the entry
/// is appended when there is none. Whether anything changed.
fn merge(list: &mut Vec<Value>, w: &Client, matcher: Option<&str>, command: &str, t: u64) -> bool {
    let want = entry(w, matcher, command, t);
    let ours = |v: &Value| -> bool {
        match &w.wiring.shape {
            Shape::Grouped { .. } => v.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| is_ours(c, &w.key))
                })
            }),
            Shape::Flat { command_key, .. } => v
                .get(command_key.as_str())
                .and_then(Value::as_str)
                .is_some_and(|c| is_ours(c, &w.key)),
        }
    };
    let mine: Vec<usize> = (0..list.len()).filter(|&i| ours(&list[i])).collect();
    let Some(&first) = mine.first() else {
        list.push(want);
        return true;
    };
    let mut changed = false;
    for &i in mine[1..].iter().rev() {
        list.remove(i);
        changed = true;
    }
    // A group that also holds the user's own hooks keeps them: only our
    // hook inside it is replaced.
    let slot = &mut list[first];
    match (
        &w.wiring.shape,
        slot.get_mut("hooks").and_then(Value::as_array_mut),
    ) {
        (Shape::Grouped { .. }, Some(hs)) if hs.len() > 1 => {
            let new_hook = want["hooks"][0].clone();
            for h in hs.iter_mut() {
                let mine = h
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, &w.key));
                if mine && *h != new_hook {
                    *h = new_hook.clone();
                    changed = true;
                }
            }
        }
        _ => {
            if *slot != want {
                *slot = want;
                changed = true;
            }
        }
    }
    changed
}

fn write_atomically(path: &Path, root: &Value) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(root).unwrap_or_default();
    text.push('\n');
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    std::fs::write(tmp.path(), text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    // The file keeps its mode; a new one gets the mode of a file a team
    // commits (the temporary file is created owner-only).
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
    Ok(())
}

/// The command to put in the settings. Where the client stops a call on a
/// hook's exit status and PATH finds this install's hook program, the
/// portable command ([`portable_command`]): settings a team can commit.
/// Otherwise `bashgate-hook CLIENT` (or `bashgate hook CLIENT`) by this
/// machine's absolute path.
pub fn default_command(client: &str) -> String {
    let program = hook_program();
    match portable(client, &program) {
        Some(c) => c,
        None => command_for(&program, client),
    }
}

/// Whether a hook command names this machine's path (it is not the
/// portable command).
pub fn names_a_path(command: &str) -> bool {
    portable_program(command).is_none()
}

/// The program a portable command ([`portable_command`]) finds through
/// PATH, or `None` for any other command.
pub fn portable_program(command: &str) -> Option<&str> {
    command
        .strip_prefix(PORTABLE_START)?
        .split_whitespace()
        .next()
}

/// How a portable command starts: a PATH lookup of its program.
const PORTABLE_START: &str = "command -v ";

/// The portable command, when `client` has a blocking exit status and the
/// hook program PATH finds is `program`.
fn portable(client: &str, program: &Path) -> Option<String> {
    let exit = bashgate::clients::get(client)?.blocking_exit?;
    let name = program.file_name()?.to_str()?;
    if name != HOOK_BINARY {
        return None;
    }
    let found = crate::hook::shell::on_path(name)?;
    crate::hook::shell::same_file(&found, program).then(|| portable_command(client, exit))
}

/// A hook command that finds bashgate's hook program through PATH, and
/// where it is missing stops the call (`exit`, which the client reads as a
/// block) and says why. A missing program would otherwise exit 127, which
/// the clients let pass: the call would run ungated.
pub fn portable_command(client: &str, exit: u8) -> String {
    let file = bashgate::clients::get(client).map_or("", |c| c.hook_file.as_str());
    format!(
        "{PORTABLE_START}{HOOK_BINARY} >/dev/null 2>&1 || {{ echo 'bashgate is not installed here ({HOOK_BINARY} is not on PATH), and this project runs every agent tool call through it: install bashgate, or remove its hooks from {file}' >&2; exit {exit}; }}; exec {HOOK_BINARY} {client}"
    )
}

/// The hook command for `client` run by `program` (`bashgate-hook` or
/// `bashgate`).
fn command_for(program: &Path, client: &str) -> String {
    if program.file_name().is_some_and(|n| n == HOOK_BINARY) {
        format!("{} {client}", shell_quoted(program))
    } else {
        format!("{} hook {client}", shell_quoted(program))
    }
}

/// A path as one shell word: as it is when that is safe, else in single
/// quotes.
fn shell_quoted(p: &Path) -> String {
    let s = p.display().to_string();
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate::clients;

    fn read(p: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// A client whose hooks are grouped under matchers and that has a
    /// shell-wrapper setting; and one of each other kind.
    fn grouped() -> &'static Client {
        clients::all()
            .values()
            .find(|c| {
                matches!(c.wiring.shape, Shape::Grouped { .. }) && c.shell_prefix_env.is_some()
            })
            .expect("a grouped client with a shell wrapper")
    }

    fn where_(f: impl Fn(&Client) -> bool) -> impl Iterator<Item = &'static Client> {
        clients::all().values().filter(move |c| f(c))
    }

    fn flat() -> &'static Client {
        where_(|c| matches!(c.wiring.shape, Shape::Flat { .. }))
            .next()
            .expect("a client with a flat list")
    }

    #[test]
    fn the_portable_command_stops_the_call_where_bashgate_is_missing() {
        let t = tempfile::tempdir().unwrap();
        for c in where_(|c| c.blocking_exit.is_some()) {
            let exit = c.blocking_exit.unwrap();
            let run = |path: &str| {
                std::process::Command::new("/bin/sh")
                    .arg("-c")
                    .arg(portable_command(&c.key, exit))
                    .env("PATH", path)
                    .output()
                    .unwrap()
            };
            // Missing: the exit the client reads as a block, and why.
            let out = run(t.path().to_str().unwrap());
            assert_eq!(out.status.code(), Some(i32::from(exit)));
            let why = String::from_utf8_lossy(&out.stderr);
            assert!(why.contains("bashgate is not installed here"), "{why}");
            assert!(why.contains(&c.hook_file), "{why}");
            // Installed: the hook program runs, with the client's name.
            let hook = t.path().join(HOOK_BINARY);
            std::fs::write(&hook, "#!/bin/sh\necho ran \"$@\"\n").unwrap();
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
            let out = run(&format!("{}:/usr/bin:/bin", t.path().display()));
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("ran {}\n", c.key)
            );
            std::fs::remove_file(&hook).unwrap();
        }
    }

    #[test]
    fn uninstall_takes_out_only_bashgates_entries() {
        let t = tempfile::tempdir().unwrap();
        let c = grouped();
        let pre = &c.wiring.events[0].name;
        let p = t.path().join(&c.hook_file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let own = json!({ pre.as_str(): [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-own-check"}]}] });
        std::fs::write(
            &p,
            json!({"model": "x", "env": {"FOO": "1"}, "hooks": own}).to_string(),
        )
        .unwrap();
        let cmd = format!("/opt/bin/bashgate-hook {}", c.key);
        install(c, &p, &cmd, 60).unwrap();
        install_wrapper(c, &p, Path::new("/opt/bin/bashgate-shell"))
            .unwrap()
            .unwrap();
        assert_eq!(uninstall(c, &p).unwrap(), Change::Updated);
        let v = read(&p);
        assert_eq!(v["model"], "x");
        assert_eq!(v["env"], json!({"FOO": "1"}));
        assert_eq!(v["hooks"], own);
        assert_eq!(uninstall(c, &p).unwrap(), Change::Unchanged);
        // A file with nothing but bashgate's: the empty lists go too.
        for c in clients::all().values() {
            let q = t.path().join("only").join(&c.key).join(&c.hook_file);
            install(c, &q, &portable_command(&c.key, 2), 60).unwrap();
            install_wrapper(c, &q, Path::new("/opt/bin/bashgate-shell"));
            assert_eq!(uninstall(c, &q).unwrap(), Change::Updated, "{}", c.key);
            let left = read(&q);
            assert!(
                left == json!({}) || left == json!({"version": 1}),
                "{}: {left}",
                c.key
            );
        }
    }

    #[test]
    fn creates_merges_and_is_idempotent() {
        let t = tempfile::tempdir().unwrap();
        let c = grouped();
        let (pre, post) = (&c.wiring.events[0], &c.wiring.events[1]);
        let p = t.path().join(&c.hook_file);
        let cmd = format!("bashgate hook {}", c.key);
        assert_eq!(install(c, &p, &cmd, 60).unwrap(), Change::Created);
        assert_eq!(install(c, &p, &cmd, 60).unwrap(), Change::Unchanged);
        let v = read(&p);
        assert_eq!(
            v["hooks"][&pre.name][0]["hooks"][0]["command"],
            cmd.as_str()
        );
        assert_eq!(
            v["hooks"][&post.name][0]["matcher"].as_str(),
            post.matcher.as_deref()
        );

        let q = t.path().join("other.json");
        std::fs::write(
            &q,
            json!({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {pre.name.as_str(): [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]}}).to_string(),
        )
        .unwrap();
        let other = format!("/x/bashgate hook {}", c.key);
        assert_eq!(install(c, &q, &other, 60).unwrap(), Change::Updated);
        let v = read(&q);
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
        assert_eq!(v["hooks"][&pre.name].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"][&pre.name][0]["hooks"][0]["command"], "guard.sh");
    }

    #[test]
    fn a_new_binary_path_replaces_the_old_entry_and_keeps_key_order() {
        let t = tempfile::tempdir().unwrap();
        let c = grouped();
        let pre = &c.wiring.events[0].name;
        let p = t.path().join("settings.json");
        let old = format!("/old/bashgate hook {}", c.key);
        std::fs::write(
            &p,
            format!(
                r#"{{"zeta": 1, "hooks": {{"{pre}": [{{"matcher": "*", "hooks": [{{"type": "command", "command": "{old}", "timeout": 60}}]}}]}}, "alpha": 2}}"#
            ),
        )
        .unwrap();
        let new = format!("/new/bashgate hook {} --remote unix:/run/b.sock", c.key);
        assert_eq!(install(c, &p, &new, 360).unwrap(), Change::Updated);
        let v = read(&p);
        let list = v["hooks"][pre].as_array().unwrap();
        assert_eq!(list.len(), 1, "{list:?}");
        assert_eq!(list[0]["hooks"][0]["command"], new.as_str());
        assert_eq!(list[0]["hooks"][0]["timeout"], 360);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "hooks", "alpha"]);
        assert_eq!(install(c, &p, &new, 360).unwrap(), Change::Unchanged);
    }

    /// Each client's entries are written as its table says: flat lists
    /// with a version and their own keys, timeouts in the client's unit,
    /// and the fields the client needs to stop a call its hook fails on.
    #[test]
    fn each_client_gets_the_shape_its_table_says() {
        let t = tempfile::tempdir().unwrap();
        for c in clients::all().values() {
            let p = t.path().join(&c.key).join(&c.hook_file);
            let cmd = format!("/b/bashgate hook {}", c.key);
            assert_eq!(install(c, &p, &cmd, 60).unwrap(), Change::Created);
            let v = read(&p);
            for event in &c.wiring.events {
                let item = &v["hooks"][&event.name][0];
                let hook = match &c.wiring.shape {
                    Shape::Grouped { timeout_ms } => {
                        assert_eq!(item["matcher"].as_str(), event.matcher.as_deref());
                        let hook = &item["hooks"][0];
                        assert_eq!(hook["type"], "command");
                        assert_eq!(hook["command"], cmd.as_str());
                        let want = if *timeout_ms { 60_000 } else { 60 };
                        assert_eq!(hook["timeout"], want, "{}", c.key);
                        hook
                    }
                    Shape::Flat {
                        command_key,
                        timeout_key,
                        typed,
                        ..
                    } => {
                        assert_eq!(v["version"], 1);
                        assert_eq!(item[command_key], cmd.as_str());
                        if let Some(k) = timeout_key {
                            assert_eq!(item[k], 60);
                        }
                        assert_eq!(item.get("type").is_some(), *typed, "{}", c.key);
                        item
                    }
                };
                for (k, want) in &c.hook_fields {
                    assert_eq!(&hook[k], want, "{}", c.key);
                }
            }
        }
        // A flat list keeps the person's own entries beside bashgate's.
        let c = flat();
        let Shape::Flat { command_key, .. } = &c.wiring.shape else {
            unreachable!()
        };
        let first = &c.wiring.events[0].name;
        let q = t.path().join("flat.json");
        std::fs::write(
            &q,
            json!({"version": 1, "hooks": {first.as_str(): [{command_key.as_str(): "./audit.sh"}]}})
                .to_string(),
        )
        .unwrap();
        install(c, &q, &format!("bashgate hook {}", c.key), 60).unwrap();
        let v = read(&q);
        let list = v["hooks"][first].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0][command_key], "./audit.sh");
    }

    #[test]
    fn a_settings_file_keeps_its_mode() {
        let t = tempfile::tempdir().unwrap();
        let c = grouped();
        let cmd = format!("bashgate hook {}", c.key);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let new = t.path().join("new/settings.json");
        install(c, &new, &cmd, 60).unwrap();
        assert_eq!(mode(&new), 0o644, "a new file is one a team can commit");
        let old = t.path().join("settings.json");
        std::fs::write(&old, "{}").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        install(c, &old, &cmd, 60).unwrap();
        assert_eq!(mode(&old), 0o640);
        uninstall(c, &old).unwrap();
        assert_eq!(mode(&old), 0o640);
    }

    #[test]
    fn refuses_to_clobber_invalid_json_or_another_version() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("settings.json");
        std::fs::write(&p, "{oops").unwrap();
        let c = grouped();
        assert!(install(c, &p, &format!("bashgate hook {}", c.key), 60)
            .unwrap_err()
            .contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{oops");
        std::fs::write(&p, r#"{"version": 2}"#).unwrap();
        let f = flat();
        assert!(install(f, &p, &format!("bashgate hook {}", f.key), 60)
            .unwrap_err()
            .contains("version"));
    }

    #[test]
    fn recognises_its_own_commands_only() {
        let mut keys = clients::all().keys();
        let (a, b) = (keys.next().unwrap(), keys.next().unwrap());
        assert!(is_ours(&format!("/usr/bin/bashgate hook {a}"), a));
        assert!(is_ours(
            &format!("'/a b/bashgate' hook {b} --remote http://127.0.0.1:1"),
            b
        ));
        assert!(!is_ours(&format!("/usr/bin/bashgate hook {a}"), b));
        assert!(!is_ours(&format!("./guard.sh hook {a}"), a));
        assert!(is_ours(&format!("/usr/bin/bashgate-hook {a}"), a));
        assert!(is_ours(
            &format!("'/a b/bashgate-hook' {b} --remote unix:/run/b.sock"),
            b
        ));
        assert!(!is_ours(&format!("/usr/bin/bashgate-hook {a}"), b));
        assert!(!is_ours(&format!("/usr/bin/not-bashgate-hook {a}"), a));
    }

    #[test]
    fn the_shell_wrapper_is_named_where_the_client_has_a_setting_for_it() {
        let t = tempfile::tempdir().unwrap();
        let c = grouped();
        let var = c.shell_prefix_env.as_deref().unwrap();
        let p = t.path().join(&c.hook_file);
        install(c, &p, &format!("/x/bashgate-hook {}", c.key), 60).unwrap();
        let prog = Path::new("/x/bashgate-shell");
        let set = install_wrapper(c, &p, prog).unwrap().unwrap();
        assert_eq!(
            set,
            Wrapper::Set(Change::Updated, "/x/bashgate-shell".into())
        );
        let v = read(&p);
        assert_eq!(v["env"][var], "/x/bashgate-shell");
        assert_eq!(v["hooks"], read(&p)["hooks"]);
        assert_eq!(
            install_wrapper(c, &p, prog).unwrap().unwrap(),
            Wrapper::Set(Change::Unchanged, "/x/bashgate-shell".into())
        );
        // An older install's is replaced; anyone else's is kept.
        let moved = Path::new("/y/z/bashgate-shell");
        install_wrapper(c, &p, moved).unwrap().unwrap();
        assert_eq!(read(&p)["env"][var], "/y/z/bashgate-shell");
        let mut v = read(&p);
        v["env"][var] = json!("/usr/bin/logger.sh");
        std::fs::write(&p, v.to_string()).unwrap();
        assert_eq!(
            install_wrapper(c, &p, prog).unwrap().unwrap(),
            Wrapper::KeptOther("/usr/bin/logger.sh".into())
        );
        // A path the client would split is not written.
        let split = Path::new("/opt/my -tools/bashgate-shell");
        assert!(install_wrapper(c, &p, split).unwrap().is_err());
        // A client with no such setting.
        let other = where_(|c| c.shell_prefix_env.is_none())
            .next()
            .expect("a client without a shell wrapper");
        let g = t.path().join(&other.hook_file);
        install(other, &g, &format!("bashgate hook {}", other.key), 60).unwrap();
        assert!(install_wrapper(other, &g, prog).is_none());
    }

    #[test]
    fn the_hook_command_is_the_hook_binary_when_it_is_installed_beside() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("a b");
        std::fs::create_dir(&dir).unwrap();
        let exe = dir.join("bashgate");
        std::fs::write(&exe, "").unwrap();
        let quoted = |name: &str| format!("'{}'", dir.join(name).display());
        let key = clients::all().keys().next().unwrap();
        assert_eq!(
            command_for(&hook_program_beside(&exe), key),
            format!("{} hook {key}", quoted("bashgate"))
        );
        let hook = dir.join(HOOK_BINARY);
        std::fs::write(&hook, "").unwrap();
        // Present but not executable: not a program to run.
        assert_eq!(
            command_for(&hook_program_beside(&exe), key),
            format!("{} hook {key}", quoted("bashgate"))
        );
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let command = command_for(&hook_program_beside(&exe), key);
        assert_eq!(command, format!("{} {key}", quoted(HOOK_BINARY)));
        assert!(is_ours(&command, key));
    }
}
