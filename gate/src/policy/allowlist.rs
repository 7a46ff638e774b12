//! The allowlist: only permitted programs run, and pkill, chmod, rm
//! and init.sh pass their validators. A command that cannot be fully read
//! (parse error, computed program name, computed script, a limit hit) is
//! blocked. Every resolved invocation is checked, so wrappers and embedded
//! scripts cannot smuggle a program past the list. Data: data/allowlist.toml.

use std::sync::LazyLock;

use bashgate_analyzer::Invocation;
use regex::Regex;
use serde::Deserialize;

use super::{base_name, reason, BashCall, Call, Env, PolicyLayer, Step};
use crate::config::{AllowlistConfig, Config};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

/// The built-in tables, parsed once per process.
static DATA: LazyLock<Data> =
    LazyLock::new(|| crate::data::parse(crate::data::ALLOWLIST, "allowlist"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    commands: Vec<String>,
    pkill: Pkill,
    chmod: Chmod,
    rm: Rm,
    init: Init,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pkill {
    allowed: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Chmod {
    mode: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rm {
    dangerous: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Init {
    script: String,
}

pub struct Allowlist {
    commands: Vec<String>,
    pkill: Vec<String>,
    chmod_mode: Regex,
    rm_dangerous: Vec<String>,
    init_script: String,
}

/// A validator's answer: `Err` carries what is wrong.
pub type Validation = Result<(), String>;

/// The processes the agent may stop by default (`pkill node`): the
/// project's own development servers and tools, the built-in `[pkill]` list.
pub fn pkill_allowed() -> &'static [String] {
    &DATA.pkill.allowed
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    cfg.allowlist_enabled()
        .then(|| Box::new(Allowlist::new(&cfg.allowlist)) as Box<dyn PolicyLayer + Send + Sync>)
}

impl PolicyLayer for Allowlist {
    fn check(&self, call: &Call, _env: &dyn Env) -> Step {
        call.bash().and_then(|b| Allowlist::check(self, b)).into()
    }
}

impl Allowlist {
    pub fn new(cfg: &AllowlistConfig) -> Allowlist {
        let data = &*DATA;
        let mut commands = cfg
            .commands
            .clone()
            .unwrap_or_else(|| data.commands.clone());
        commands.extend(cfg.extra_commands.iter().cloned());
        Allowlist {
            commands,
            pkill: cfg
                .pkill_allowed
                .clone()
                .unwrap_or_else(|| data.pkill.allowed.clone()),
            chmod_mode: Regex::new(&data.chmod.mode).expect("data/allowlist.toml chmod.mode"),
            rm_dangerous: data.rm.dangerous.clone(),
            init_script: data.init.script.clone(),
        }
    }

    pub fn check(&self, call: &BashCall) -> Option<Decision> {
        if let Some(f) = super::incomplete::unnamed(call.analysis, true) {
            let rule = GateRule::Unparseable;
            return Some(Decision::deny(
                Layer::Allowlist,
                rule,
                reason(
                    "this command",
                    &format!(
                        "the allowlist cannot check a command it cannot fully read: {} [{}]",
                        f.message,
                        f.rule.id()
                    ),
                    rule,
                    "write the command with literal program names and arguments",
                ),
            ));
        }
        for inv in &call.analysis.invocations {
            if let Some(d) = self.check_invocation(call, inv) {
                return Some(d);
            }
        }
        None
    }

    fn check_invocation(&self, call: &BashCall, inv: &Invocation) -> Option<Decision> {
        let what = format!("`{}`", call.snippet(inv));
        let Some(program) = inv.program.as_deref() else {
            let rule = GateRule::Unparseable;
            return Some(Decision::deny(
                Layer::Allowlist,
                rule,
                reason(
                    &what,
                    "the program name is computed at run time",
                    rule,
                    "write the program name literally",
                ),
            ));
        };
        let name = base_name(program);
        if program.contains('/') {
            // A path-qualified program is whatever file sits there; only the
            // project's init script may be run that way.
            if name == self.init_script {
                return self.validated(&what, name, validate_init(program, &inv.args));
            }
            let rule = GateRule::NotAllowlisted;
            return Some(Decision::deny(
                Layer::Allowlist,
                rule,
                reason(
                    &what,
                    &format!(
                        "`{program}` is run by path; only ./{} may be",
                        self.init_script
                    ),
                    rule,
                    "use a permitted command by its plain name",
                ),
            ));
        }
        if !self.commands.iter().any(|c| c == name) {
            let rule = GateRule::NotAllowlisted;
            return Some(Decision::deny(
                Layer::Allowlist,
                rule,
                reason(
                    &what,
                    &format!("`{name}` is not in the allowlist"),
                    rule,
                    &format!(
                        "use one of the permitted commands ({})",
                        self.commands.join(", ")
                    ),
                ),
            ));
        }
        let result = match name {
            "pkill" => validate_pkill(&inv.args, &self.pkill),
            "chmod" => validate_chmod(&inv.args, &self.chmod_mode),
            "rm" => validate_rm(&inv.args, &self.rm_dangerous),
            n if n == self.init_script => validate_init(program, &inv.args),
            _ => Ok(()),
        };
        self.validated(&what, name, result)
    }

    fn validated(&self, what: &str, name: &str, result: Validation) -> Option<Decision> {
        let why = result.err()?;
        let rule = GateRule::Validator;
        let instead = match name {
            "pkill" => format!("pkill may only target {}", self.pkill.join(", ")),
            "chmod" => "chmod may only add execute bits: chmod +x FILE".to_string(),
            "rm" => "remove project files by their paths".to_string(),
            _ => format!(
                "run the project's script as ./{} with no arguments",
                self.init_script
            ),
        };
        Some(Decision::deny(
            Layer::Allowlist,
            rule,
            reason(what, &format!("{name}: {why}"), rule, &instead),
        ))
    }
}

fn static_args(args: &[Option<String>]) -> Result<Vec<&str>, String> {
    args.iter()
        .map(|a| {
            a.as_deref()
                .ok_or_else(|| "an argument is known only at run time".to_string())
        })
        .collect()
}

/// pkill may only target the allowed process names; options are skipped.
pub fn validate_pkill(args: &[Option<String>], allowed: &[String]) -> Validation {
    for a in static_args(args)? {
        if a.starts_with('-') {
            continue;
        }
        if !allowed.iter().any(|p| p == a) {
            return Err(format!(
                "pkill can only target {}, not `{a}`",
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

/// chmod: no options; the first word is the mode and must add execute bits
/// only (`+x`, `u+x`, `ug+x`...); at least one file follows.
pub fn validate_chmod(args: &[Option<String>], mode_re: &Regex) -> Validation {
    let mut mode = None;
    let mut files = 0;
    for a in static_args(args)? {
        if a.starts_with('-') {
            return Err(format!("chmod options are not allowed (`{a}`)"));
        }
        if mode.is_none() {
            mode = Some(a);
        } else {
            files += 1;
        }
    }
    let Some(mode) = mode else {
        return Err("chmod needs a mode".into());
    };
    if !mode_re.is_match(mode) {
        return Err(format!("only +x modes are allowed, not `{mode}`"));
    }
    if files == 0 {
        return Err("chmod needs at least one file".into());
    }
    Ok(())
}

/// rm may not remove a system directory, the home shortcut, or everything
/// directly inside one (`/etc/*`). Paths are normalized first (`/etc/`,
/// `/usr/./`, `/tmp/../etc`).
pub fn validate_rm(args: &[Option<String>], dangerous: &[String]) -> Validation {
    for a in static_args(args)? {
        if a.starts_with('-') && a != "-" {
            continue;
        }
        let n = normpath(a);
        if dangerous.contains(&n) {
            return Err(format!("cannot remove `{n}`"));
        }
        if let Some(dir) = n.strip_suffix("/*") {
            let dir = if dir.is_empty() { "/" } else { dir };
            if dangerous.iter().any(|d| d == dir) {
                return Err(format!("cannot remove `{a}`"));
            }
        }
    }
    Ok(())
}

/// The project init script: `./init.sh` or `path/to/init.sh`, no arguments.
pub fn validate_init(program: &str, args: &[Option<String>]) -> Validation {
    if !args.is_empty() {
        return Err("init.sh takes no arguments here".into());
    }
    if program == "./init.sh" || program.ends_with("/init.sh") {
        Ok(())
    } else {
        Err(format!("only ./init.sh may be run, not `{program}`"))
    }
}

/// Python's `os.path.normpath`: collapse `//`, `.` and `a/..`, keep a
/// leading `/`, never go above the root.
pub fn normpath(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            c => parts.push(c),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;
    use std::path::Path;

    fn a(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    fn allowlist() -> Allowlist {
        Allowlist::new(&AllowlistConfig::default())
    }

    fn check(cmd: &str) -> Option<String> {
        let an = analyze(cmd);
        let call = BashCall {
            command: cmd,
            analysis: &an,
            cwd: Path::new("/"),
        };
        allowlist()
            .check(&call)
            .map(|d| d.rule.unwrap().id().to_string())
    }

    // The specified examples: what each validator must accept and refuse.
    #[test]
    fn pkill_only_the_listed_processes() {
        let allowed = allowlist().pkill;
        assert!(validate_pkill(&a(&["node"]), &allowed).is_ok());
        assert!(validate_pkill(&a(&["python"]), &allowed).is_err());
        assert!(validate_pkill(&a(&["-9", "node"]), &allowed).is_ok());
        for p in ["npm", "npx", "vite", "next"] {
            assert!(validate_pkill(&a(&[p]), &allowed).is_ok());
        }
        for p in ["bash", "sh", "zsh", "python3", "chrome", "firefox", "sshd"] {
            assert!(validate_pkill(&a(&[p]), &allowed).is_err(), "{p}");
        }
    }

    #[test]
    fn rm_validator() {
        let d = allowlist().rm_dangerous;
        assert!(validate_rm(&a(&["file.txt"]), &d).is_ok());
        assert!(validate_rm(&a(&["/etc"]), &d).is_err());
        assert!(validate_rm(&a(&["/*"]), &d).is_err());
        for p in [
            "/",
            "/etc",
            "/usr",
            "/var",
            "/bin",
            "/sbin",
            "/lib",
            "/opt",
            "/boot",
            "/root",
            "/home",
            "/Users",
            "/System",
            "/Library",
            "/Applications",
            "/private",
            "~",
            "/etc/",
            "//etc",
            "/tmp/../etc",
            "/usr/*",
            "/home/*",
            "~/",
        ] {
            assert!(validate_rm(&a(&["-rf", p]), &d).is_err(), "{p}");
        }
        assert!(validate_rm(&a(&["-rf", "build/", "/tmp/x"]), &d).is_ok());
        assert!(validate_rm(&[None], &d).is_err());
    }

    #[test]
    fn chmod_validator() {
        let re = allowlist().chmod_mode;
        assert!(validate_chmod(&a(&["+x", "script.sh"]), &re).is_ok());
        assert!(validate_chmod(&a(&["777", "script.sh"]), &re).is_err());
        for m in ["+x", "u+x", "g+x", "o+x", "a+x", "ug+x", "ugo+x"] {
            assert!(validate_chmod(&a(&[m, "f"]), &re).is_ok(), "{m}");
        }
        for m in ["755", "644", "+w", "+r", "-x", "u+w", "+X"] {
            assert!(validate_chmod(&a(&[m, "f"]), &re).is_err(), "{m}");
        }
        assert!(validate_chmod(&a(&["-R", "+x", "d"]), &re).is_err());
        assert!(validate_chmod(&a(&["+x"]), &re).is_err());
    }

    #[test]
    fn init_script_validator() {
        assert!(validate_init("./init.sh", &[]).is_ok());
        assert!(validate_init("path/to/project/init.sh", &[]).is_ok());
        assert!(validate_init("./setup.sh", &[]).is_err());
        assert!(validate_init("./init.sh", &a(&["x"])).is_err());
        assert_eq!(check("./init.sh"), None);
        assert_eq!(check("path/to/project/init.sh"), None);
        assert!(check("./setup.sh").is_some());
        assert!(check("./malicious.sh").is_some());
        assert!(check("bash init.sh").is_some());
        assert!(check("sh init.sh").is_some());
    }

    #[test]
    fn blocked_and_allowed_examples() {
        for c in [
            "sudo ls",
            "wget http://x",
            "ssh host",
            "su",
            "docker ps",
            "mount x",
            "iptables -L",
        ] {
            assert_eq!(check(c).as_deref(), Some("BG404"), "{c}");
        }
        for c in [
            "ls -la",
            "cat README.md | grep x | wc -l",
            "cd src && ls",
            "git status",
            "npm install && npm test",
            "chmod +x init.sh && ./init.sh",
            "pkill -9 node",
            "rm -rf build",
            "python3 -m pytest",
        ] {
            assert_eq!(check(c), None, "{c}");
        }
        assert_eq!(check("pkill python").as_deref(), Some("BG405"));
        assert_eq!(check("rm -rf /").as_deref(), Some("BG405"));
        assert_eq!(check("chmod 777 x").as_deref(), Some("BG405"));
    }

    #[test]
    fn hidden_programs_are_found() {
        assert_eq!(check("env rm -rf /").as_deref(), Some("BG405"));
        assert_eq!(check("echo $(sudo id)").as_deref(), Some("BG404"));
        assert_eq!(check("find . -exec wget x \\;").as_deref(), Some("BG404"));
        assert_eq!(check("./ls").as_deref(), Some("BG404"));
    }

    #[test]
    fn unparseable_is_blocked() {
        assert_eq!(check("echo 'unterminated").as_deref(), Some("BG406"));
        assert_eq!(check("$cmd x").as_deref(), Some("BG406"));
        assert_eq!(check("   ").as_deref(), Some("BG406"));
    }

    #[test]
    fn normpath_like_python() {
        assert_eq!(normpath("/etc/"), "/etc");
        assert_eq!(normpath("//etc//x/.."), "/etc");
        assert_eq!(normpath("/.."), "/");
        assert_eq!(normpath("a/../.."), "..");
        assert_eq!(normpath("~/"), "~");
        assert_eq!(normpath("/*"), "/*");
    }
}
