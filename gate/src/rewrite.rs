//! The command line that runs a command under `bashgate run`'s fence in
//! the client's own shell, keeping what that shell keeps between calls.
//!
//! The original command travels as one single-quoted word, so the shell
//! hands `bashgate run` exactly its bytes (a `'` becomes `'\''`; nothing
//! else is special inside single quotes). The command's final working
//! directory comes back through a temporary file, and the wrapper `cd`s
//! there, so `cd sub && make` leaves the shell in `sub` as it would
//! unfenced. The wrapper's exit status is the command's.

use std::path::Path;

/// Variables the wrapper sets in the client's shell.
const CWD_VAR: &str = "__bashgate_cwd";
const STATUS_VAR: &str = "__bashgate_status";

/// One shell word whose value is exactly `s`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// How a fenced command is to run: the profile, and the working tree it
/// may write in (the hook's, from the person's side; not the command's to
/// choose; none: only its private temporary directory).
pub struct Fencing<'a> {
    pub profile: &'a str,
    pub tree: Option<&'a Path>,
}

impl Fencing<'_> {
    fn options(&self) -> String {
        match self.tree {
            Some(t) => format!(
                "--profile {} --tree {}",
                quote(self.profile),
                quote(&t.display().to_string())
            ),
            None => format!("--profile {} --no-tree", quote(self.profile)),
        }
    }
}

/// `command`, run by `bashgate` (this binary's path) fenced as `how` says.
pub fn fenced(bashgate: &Path, how: &Fencing, command: &str) -> String {
    let bin = quote(&bashgate.display().to_string());
    let (c, s) = (CWD_VAR, STATUS_VAR);
    format!(
        "{c}=$(mktemp \"${{TMPDIR:-/tmp}}/bashgate-cwd.XXXXXX\") && {bin} run {} --cwd-file \"${c}\" -- {}; \
         {s}=$?; if [ -s \"${c}\" ]; then cd -- \"$(cat -- \"${c}\")\" || true; fi; rm -f -- \"${c}\"; \
         (exit ${s})",
        how.options(),
        quote(command),
    )
}

/// `command` run under `profile` with nothing carried back: for clients
/// whose shell tool starts a new shell per call (nothing to carry), and
/// whose own checks refuse `$( )` in a command (Gemini CLI).
pub fn fenced_plain(bashgate: &Path, how: &Fencing, command: &str) -> String {
    format!(
        "{} run {} -- {}",
        quote(&bashgate.display().to_string()),
        how.options(),
        quote(command)
    )
}

/// The original command back out of a line `fenced` or `fenced_plain`
/// wrote, or `None` for anything else.
pub fn original(line: &str) -> Option<String> {
    let start = line.find(" -- '")? + 4;
    let rest = &line[start..];
    match rest.find(&format!("; {STATUS_VAR}=$?;")) {
        Some(end) => unquote(&rest[..end]),
        // The plain form ends with the command's word.
        None if line.contains(" run --profile ") && !line.contains(STATUS_VAR) => unquote(rest),
        None => None,
    }
}

/// The value of one word that `quote` wrote.
fn unquote(word: &str) -> Option<String> {
    let inner = word.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::new();
    for (i, part) in inner.split(r"'\''").enumerate() {
        if part.contains('\'') {
            return None;
        }
        if i > 0 {
            out.push('\'');
        }
        out.push_str(part);
    }
    Some(out)
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
            };
            let line = fenced(Path::new("/usr/bin/bash gate"), &how, c);
            assert_eq!(original(&line).as_deref(), Some(c), "{line}");
            let line = fenced_plain(Path::new("/usr/bin/bash gate"), &how, c);
            assert_eq!(original(&line).as_deref(), Some(c), "{line}");
            // The wrapper adds no `$( )` (Gemini CLI refuses it).
            assert_eq!(line.contains("$("), c.contains("$("), "{line}");
        }
    }

    #[test]
    fn other_lines_are_not_taken_for_a_fenced_one() {
        assert_eq!(original("make test"), None);
        assert_eq!(original("bashgate run -- 'a'b'; x"), None);
    }
}
