//! What a finished tool call showed the agent, read for secrets. A command
//! need not name a secret file to read it: `grep -r KEY .` prints `.env`'s
//! lines, `cat *` and `find -exec cat` print files nobody named. Which
//! programs read which files cannot be listed; what the agent was shown can
//! be read. So the output of a call (as the client hands it to its
//! after-tool hook) taints the session with secrets when it holds a
//! credential in a known format, or the value of a secret file in the
//! project.

use std::path::{Path, PathBuf};

use crate::secret_paths::SecretPaths;
use crate::secrets::Scanner;

/// The longest output read; a client's own limit is usually far lower.
pub const MAX_SEEN: usize = 1 << 20;

/// How many directory entries the project walk looks at, and how deep.
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 8;

/// How much of one secret file is read for its values.
const MAX_SECRET_FILE: u64 = 64 * 1024;

/// A value shorter than this is too common to mark the file (`true`, a
/// port number).
const MIN_VALUE: usize = 8;

/// Why the output `seen` shows a secret, if it does: a credential in a
/// known format, or a value of a secret file under `project`.
pub fn secret_in(
    seen: &str,
    project: Option<&Path>,
    scanner: &Scanner,
    secret_paths: &SecretPaths,
) -> Option<String> {
    if seen.trim().is_empty() {
        return None;
    }
    if let Some(hit) = scanner.credential(seen) {
        return Some(format!(
            "its output holds what looks like a credential ({}, {})",
            hit.kind, hit.masked
        ));
    }
    let root = project?;
    for file in secret_files(root, secret_paths) {
        let shown = values(&file).into_iter().any(|v| seen.contains(&v));
        if shown {
            return Some(format!(
                "its output shows what {} holds (a secret file)",
                file.strip_prefix(root).unwrap_or(&file).display()
            ));
        }
    }
    None
}

/// The secret files under `root`, as far as a bounded walk finds them
/// (repositories' metadata and dependency trees left out: they are large
/// and hold the project's code, not its credentials).
fn secret_files(root: &Path, secret_paths: &SecretPaths) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return out;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            // Not followed: a link may lead out of the project.
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() {
                let heavy = matches!(name.as_ref(), ".git" | "node_modules" | "target");
                if !heavy && depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                if secret_paths.matches(&rel.to_string_lossy()).is_some() {
                    out.push(path);
                }
            }
        }
    }
    out
}

/// The values a secret file holds that would show it was read: the value
/// of each `KEY=VALUE` line (quotes off), and any other line of its own.
fn values(file: &Path) -> Vec<String> {
    use std::io::Read;
    let mut text = String::new();
    let read =
        std::fs::File::open(file).and_then(|f| f.take(MAX_SECRET_FILE).read_to_string(&mut text));
    if read.is_err() {
        return Vec::new();
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once('=') {
            Some((key, value))
                if !key.contains(char::is_whitespace) || key.starts_with("export ") =>
            {
                value.trim().trim_matches(['"', '\'']).to_string()
            }
            _ => l.to_string(),
        })
        .filter(|v| v.len() >= MIN_VALUE && !v.starts_with("-----"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join(".env"),
            "# local settings\nPORT=3000\nexport DB_PASSWORD=\"hunter2-correct-horse\"\nDEBUG=true\n",
        )
        .unwrap();
        std::fs::create_dir_all(t.path().join("src")).unwrap();
        std::fs::write(t.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        t
    }

    #[test]
    fn output_that_shows_a_secret_files_value_is_a_secret_read() {
        let t = project();
        let (s, p) = (Scanner::new(), SecretPaths::new(&[]));
        // What `grep -r PASSWORD .` prints.
        let grep = "./.env:export DB_PASSWORD=\"hunter2-correct-horse\"\n";
        let why = secret_in(grep, Some(t.path()), &s, &p).unwrap();
        assert!(why.contains(".env"), "{why}");
        // Short values do not count: a port, a flag.
        assert_eq!(
            secret_in("listening on 3000, DEBUG=true", Some(t.path()), &s, &p),
            None
        );
        assert_eq!(secret_in("fn main() {}", Some(t.path()), &s, &p), None);
        assert_eq!(secret_in("", Some(t.path()), &s, &p), None);
        // A secret file deeper in the tree counts too.
        std::fs::create_dir_all(t.path().join("deploy/keys")).unwrap();
        std::fs::write(
            t.path().join("deploy/keys/id_ed25519"),
            "b3BlbnNzaC1rZXktdjEAAAAA\n",
        )
        .unwrap();
        let why = secret_in("b3BlbnNzaC1rZXktdjEAAAAA", Some(t.path()), &s, &p).unwrap();
        assert!(why.contains("id_ed25519"), "{why}");
    }

    #[test]
    fn a_credential_in_any_output_is_a_secret_read() {
        let (s, p) = (Scanner::new(), SecretPaths::new(&[]));
        let why = secret_in("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", None, &s, &p).unwrap();
        assert!(why.contains("credential"), "{why}");
        // Hashes and build output are not credentials.
        let log = "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nFinished release [optimized] target(s)";
        assert_eq!(secret_in(log, None, &s, &p), None);
    }
}
