//! The projects the person trusts, and the exact project configuration
//! files they have read and accepted.
//!
//! A repository's `.bashgate.toml` comes with the repository: whoever wrote
//! it (or an agent that can write into the tree) is not the person. Until
//! the person runs `bashgate trust` (or `bashgate init`) in the project, its
//! files may only tighten the gate; once trusted, the file with exactly the
//! content they trusted counts as theirs. A changed file is untrusted again.
//!
//! The record lives in the state directory (`trust.json`), which the gate's
//! self-protection and the fence keep out of the agent's reach, and only
//! the person's own configuration can move.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file in the state directory.
pub const FILE: &str = "trust.json";

/// One trusted project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// When the person trusted it (milliseconds since the epoch).
    pub at_ms: u64,
    /// The configuration files trusted with it: file name (in the project
    /// root) = SHA-256 of its content when trusted.
    pub files: BTreeMap<String, String>,
}

/// Every trusted project, by its root directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trusted {
    pub projects: BTreeMap<PathBuf, Project>,
}

/// A project's key: its path with symbolic links resolved, so the same
/// directory reached two ways is one project.
fn key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// The content hash a trust record keeps.
pub fn digest(bytes: &[u8]) -> String {
    crate::taint::hex(&Sha256::digest(bytes))
}

impl Trusted {
    /// The record in `state_dir`; an absent file trusts nothing, and so does
    /// one that cannot be read or parsed (the person is told by `doctor`).
    pub fn load(state_dir: &Path) -> Trusted {
        Self::read(state_dir).unwrap_or_default()
    }

    /// The record, or why it cannot be read (absent is empty).
    pub fn read(state_dir: &Path) -> Result<Trusted, String> {
        let path = state_dir.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a trust record ({e})", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Trusted::default()),
            Err(e) => Err(format!("{}: cannot read ({e})", path.display())),
        }
    }

    /// Whether the person trusts the project at `root`.
    pub fn project(&self, root: &Path) -> bool {
        self.projects.contains_key(&key(root))
    }

    /// Whether the person trusted the file `root/name` with exactly
    /// `content`.
    pub fn file(&self, root: &Path, name: &str, content: &[u8]) -> bool {
        self.projects
            .get(&key(root))
            .and_then(|p| p.files.get(name))
            .is_some_and(|h| *h == digest(content))
    }

    /// Whether the person trusted a file of this name in the project at
    /// `root`, whatever its content was.
    pub fn has_file(&self, root: &Path, name: &str) -> bool {
        self.projects
            .get(&key(root))
            .is_some_and(|p| p.files.contains_key(name))
    }

    /// Forgets the project at `root`; whether it was trusted.
    pub fn revoke(&mut self, root: &Path) -> bool {
        self.projects.remove(&key(root)).is_some()
    }

    /// Trusts the project at `root` with its configuration files as they are
    /// now (those of `names` that exist).
    pub fn trust(&mut self, root: &Path, names: &[&str]) -> std::io::Result<()> {
        let mut files = BTreeMap::new();
        for name in names {
            match std::fs::read(root.join(name)) {
                Ok(bytes) => {
                    files.insert(name.to_string(), digest(&bytes));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        self.projects.insert(
            key(root),
            Project {
                at_ms: crate::taint::now_ms(),
                files,
            },
        );
        Ok(())
    }

    /// Writes the record atomically (a temporary file renamed over it).
    pub fn save(&self, state_dir: &Path) -> std::io::Result<()> {
        crate::private::create_dir(state_dir)?;
        let path = state_dir.join(FILE);
        let tmp = state_dir.join(format!(".{FILE}.{}", std::process::id()));
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self).unwrap_or_default())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_untrusted_again() {
        let d = tempfile::tempdir().unwrap();
        let (state, root) = (d.path().join("state"), d.path().join("proj"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(".bashgate.toml"), "profile = \"minimal\"\n").unwrap();
        let mut t = Trusted::load(&state);
        assert!(!t.project(&root));
        t.trust(&root, &[".bashgate.toml", ".bashgate.local.toml"])
            .unwrap();
        t.save(&state).unwrap();
        let t = Trusted::load(&state);
        assert!(t.project(&root));
        assert!(t.file(&root, ".bashgate.toml", b"profile = \"minimal\"\n"));
        assert!(!t.file(&root, ".bashgate.toml", b"profile = \"minimal\" \n"));
        // Absent when trusted: a file that appears later is not trusted.
        assert!(!t.file(&root, ".bashgate.local.toml", b""));
        assert!(!t.file(&d.path().join("other"), ".bashgate.toml", b""));
    }

    #[test]
    fn an_unreadable_record_trusts_nothing() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE), "{not json").unwrap();
        assert!(Trusted::read(d.path()).is_err());
        assert_eq!(Trusted::load(d.path()), Trusted::default());
    }
}
