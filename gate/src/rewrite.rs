//! The command line that runs a command under `bashgate run`'s fence in
//! the client's own shell, keeping what that shell keeps between calls.
//!
//! The original command travels as one single-quoted word, so the shell
//! hands `bashgate run` exactly its bytes (a `'` becomes `'\''`; nothing
//! else is special inside single quotes). The command's final working
//! directory comes back through a temporary file, and the wrapper `cd`s
//! there, so `cd sub && make` leaves the shell in `sub` as it would
//! unfenced. The wrapper's exit status is the command's.

use std::path::{Path, PathBuf};

/// Variables the wrapper sets in the client's shell.
const CWD_VAR: &str = "__bashgate_cwd";
const STATUS_VAR: &str = "__bashgate_status";

/// One shell word whose value is exactly `s`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// How a fenced command is to run, as the hook decided it from the
/// person's side: the profile, the working tree it may write in (none:
/// only its private temporary directory), the state directory and the
/// person's configuration file. All of it travels on the line, so nothing
/// in the command's own environment (a `BASHGATE_STATE_DIR` the agent
/// exported in its shell) re-decides any of it.
pub struct Fencing<'a> {
    pub profile: &'a str,
    pub tree: Option<&'a Path>,
    pub state_dir: &'a Path,
    /// The person's configuration file; none: the built-in defaults.
    pub config: Option<&'a Path>,
}

fn path_word(p: &Path) -> String {
    quote(&p.display().to_string())
}

impl Fencing<'_> {
    fn options(&self) -> String {
        let tree = match self.tree {
            Some(t) => format!("--tree {}", path_word(t)),
            None => "--no-tree".into(),
        };
        let config = match self.config {
            Some(c) => format!("--config {}", path_word(c)),
            None => "--no-config".into(),
        };
        format!(
            "--profile {} {tree} --state-dir {} {config}",
            quote(self.profile),
            path_word(self.state_dir)
        )
    }

    /// `bashgate run`'s arguments for `command`, as a program's argument
    /// list (no shell between), with nothing carried back.
    pub fn run_args(&self, command: &str) -> Vec<std::ffi::OsString> {
        let mut a: Vec<std::ffi::OsString> =
            vec!["run".into(), "--profile".into(), self.profile.into()];
        match self.tree {
            Some(t) => a.extend(["--tree".into(), t.into()]),
            None => a.push("--no-tree".into()),
        }
        a.extend(["--state-dir".into(), self.state_dir.into()]);
        match self.config {
            Some(c) => a.extend(["--config".into(), c.into()]),
            None => a.push("--no-config".into()),
        }
        a.extend(["-c".into(), command.into()]);
        a
    }
}

/// The parts of a [`Fencing`], owned, to be kept (the hook's decision left
/// for the client's shell wrapper, `runs.rs`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FencingSpec {
    pub profile: String,
    pub tree: Option<PathBuf>,
    pub state_dir: PathBuf,
    pub config: Option<PathBuf>,
}

impl FencingSpec {
    /// This spec for the fence `kind`: its own profile (the person's), or
    /// the fence for writes.
    pub fn of_kind(&self, kind: crate::call::FenceKind) -> FencingSpec {
        let profile = match kind {
            crate::call::FenceKind::Full => self.profile.clone(),
            crate::call::FenceKind::Writes => bashgate_fence::WRITES.to_string(),
        };
        FencingSpec {
            profile,
            ..self.clone()
        }
    }

    pub fn fencing(&self) -> Fencing<'_> {
        Fencing {
            profile: &self.profile,
            tree: self.tree.as_deref(),
            state_dir: &self.state_dir,
            config: self.config.as_deref(),
        }
    }
}

/// The start of a line `fenced` writes.
fn fenced_start() -> String {
    format!("{CWD_VAR}=$(mktemp \"${{TMPDIR:-/tmp}}/bashgate-cwd.XXXXXX\") && ")
}

/// `command`, run by `bashgate` (this binary's path) fenced as `how` says.
pub fn fenced(bashgate: &Path, how: &Fencing, command: &str) -> String {
    let bin = path_word(bashgate);
    let (c, s) = (CWD_VAR, STATUS_VAR);
    format!(
        "{}{bin} run {} --cwd-file \"${c}\" -c {}; \
         {s}=$?; if [ -s \"${c}\" ]; then cd -- \"$(cat -- \"${c}\")\" || true; fi; rm -f -- \"${c}\"; \
         (exit ${s})",
        fenced_start(),
        how.options(),
        quote(command),
    )
}

/// The original command back out of a line `fenced` wrote, or `None` for
/// anything else. The line must be exactly what it writes for some command: a line that merely contains such text
/// (`echo x run --profile p -- 'curl evil'`) is not a fenced run, and must
/// not be recorded as that command having run.
pub fn original(line: &str) -> Option<String> {
    original_by(line, None)
}

/// As [`original`], and the line must run `runner` (the `bashgate` this
/// hook writes into its lines) when it is given; otherwise a program named
/// `bashgate`.
pub fn original_by(line: &str, runner: Option<&Path>) -> Option<String> {
    let rest = line.strip_prefix(fenced_start().as_str())?;
    let (bin, rest) = word(rest)?;
    let mut rest = rest.strip_prefix(" run ")?;
    let (mut profile, mut tree, mut state_dir, mut config) = (None, None, None, None);
    let command = loop {
        let (flag, after) = word(rest)?;
        rest = after.strip_prefix(' ')?;
        match flag.as_str() {
            "--no-tree" | "--no-config" => continue,
            "--cwd-file" => {
                rest = rest.strip_prefix(&format!("\"${CWD_VAR}\" "))?;
                continue;
            }
            "-c" => break word(rest)?.0,
            _ => {}
        }
        let (value, after) = word(rest)?;
        rest = after.strip_prefix(' ').unwrap_or(after);
        let slot = match flag.as_str() {
            "--profile" => &mut profile,
            "--tree" => &mut tree,
            "--state-dir" => &mut state_dir,
            "--config" => &mut config,
            _ => return None,
        };
        *slot = Some(value);
    };
    let (tree, config) = (tree.map(PathBuf::from), config.map(PathBuf::from));
    let state_dir = PathBuf::from(state_dir?);
    let how = Fencing {
        profile: profile.as_deref()?,
        tree: tree.as_deref(),
        state_dir: &state_dir,
        config: config.as_deref(),
    };
    let bin = Path::new(&bin);
    let ours = match runner {
        Some(r) => bin == r,
        None => bin.file_name().is_some_and(|n| n == "bashgate"),
    };
    if !ours {
        return None;
    }
    (fenced(bin, &how, &command) == line).then_some(command)
}

/// The value of the word `quote` wrote (or a bare flag) at the start of
/// `s`, and what follows it.
fn word(s: &str) -> Option<(String, &str)> {
    if !s.starts_with('\'') {
        let end = s.find(' ').unwrap_or(s.len());
        let w = &s[..end];
        return (!w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
            .then(|| (w.to_string(), &s[end..]));
    }
    let mut out = String::new();
    let mut rest = s;
    loop {
        let inner = rest.strip_prefix('\'')?;
        let end = inner.find('\'')?;
        out.push_str(&inner[..end]);
        rest = &inner[end + 1..];
        // `'\''`: a quoted part ends, an escaped `'`, the next part starts.
        match rest.strip_prefix(r"\'") {
            Some(more) if more.starts_with('\'') => {
                out.push('\'');
                rest = more;
            }
            _ => return Some((out, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_awkward_commands() {
        for c in [
            "make test",
            "echo 'it''s' \"$HOME\" `id` $(pwd)",
            "printf '%s\\n' '\\''",
            "a\nb\n'",
            "",
            "'",
            "; rm -rf / #",
        ] {
            let how = Fencing {
                profile: "default",
                tree: Some(Path::new("/home/u/my project")),
                state_dir: Path::new("/home/u/.local/state/bash'gate"),
                config: if c.is_empty() {
                    None
                } else {
                    Some(Path::new("/etc/x y.toml"))
                },
            };
            let line = fenced(Path::new("/usr/my bin/bashgate"), &how, c);
            assert_eq!(original(&line).as_deref(), Some(c), "{line}");
        }
    }

    #[test]
    fn run_args_are_the_options_the_line_gives() {
        for (tree, config) in [
            (Some(Path::new("/p q")), Some(Path::new("/c.toml"))),
            (None, None),
        ] {
            let how = Fencing {
                profile: "strict",
                tree,
                state_dir: Path::new("/s'd"),
                config,
            };
            // The line's words after `bashgate`, as bash would split them.
            let line = format!(
                "{} run {} -c {}",
                quote("/b"),
                how.options(),
                quote("a 'b'")
            );
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("set -- {line}; shift; printf '%s\\0' \"$@\""))
                .output()
                .unwrap();
            let words: Vec<std::ffi::OsString> = out
                .stdout
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| std::ffi::OsString::from(String::from_utf8(w.to_vec()).unwrap()))
                .collect();
            assert_eq!(words, how.run_args("a 'b'"));
        }
    }

    #[test]
    fn other_lines_are_not_taken_for_a_fenced_one() {
        assert_eq!(original("make test"), None);
        assert_eq!(original("bashgate run -c 'a'b'; x"), None);
        let how = Fencing {
            profile: "default",
            tree: None,
            state_dir: Path::new("/s"),
            config: None,
        };
        let real = fenced(Path::new("/bin/bashgate"), &how, "curl evil");
        assert_eq!(original(&real).as_deref(), Some("curl evil"));
        let bin = Path::new("/bin/bashgate");
        assert_eq!(original_by(&real, Some(bin)).as_deref(), Some("curl evil"));
        // Another program's line, however well formed, is not a fenced run.
        let echo = fenced(Path::new("echo"), &how, "curl evil");
        assert_eq!(original(&echo), None);
        assert_eq!(original_by(&echo, Some(bin)), None);
        let other = fenced(Path::new("/tmp/bashgate"), &how, "curl evil");
        assert_eq!(original_by(&other, Some(bin)), None);
        // Text shaped like a fenced line, run as something else.
        for forged in [
            format!("echo {real}"),
            format!("{real} # x"),
            format!("true; {real}"),
            real.replacen(" run ", " run --no-tree ", 1),
            "echo bashgate run --profile default --tree /x -c 'curl evil'".to_string(),
            "true -c 'curl evil'; __bashgate_status=$?; true".to_string(),
            "cat ~/.ssh/id_rsa # run --profile x -c 'ls'".to_string(),
        ] {
            assert_eq!(original(&forged), None, "{forged}");
        }
        let full = fenced(Path::new("/bin/bashgate"), &how, "curl evil");
        assert_eq!(original(&full).as_deref(), Some("curl evil"));
        assert_eq!(original(&format!("echo {full}")), None);
        assert_eq!(original(&format!("{full}; curl evil")), None);
    }
}
