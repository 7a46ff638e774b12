//! git's index, read as data (never by running git, which would run what
//! the repository's configuration names: an fsmonitor, a clean filter):
//! which paths it tracks, and whether a tracked file's working copy holds
//! changes that are not in the index, so that deleting it loses work git
//! cannot restore.
//!
//! Versions 2 and 3 are read (entries with whole paths); version 4
//! (compressed paths), a SHA-256 repository, or an index that does not
//! parse is [`Index::Unreadable`], which callers count as "may".

use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha1::{Digest, Sha1};

/// The index of the repository whose working tree is `top`.
pub enum Index {
    /// No index file: git tracks nothing yet.
    Empty,
    Read(Entries),
    /// Why it could not be read.
    Unreadable(String),
}

pub struct Entries {
    top: PathBuf,
    /// When the index was written: a file changed in the same second may
    /// have the stat data the index holds and still differ ("racy git").
    written: (u32, u32),
    entries: Vec<Entry>,
}

struct Entry {
    path: Vec<u8>,
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    /// The size, truncated to 32 bits as git stores it.
    size: u32,
    oid: [u8; 20],
}

/// The most file content hashed to tell whether tracked files changed; past
/// it, they count as changed.
const HASH_BUDGET: u64 = 64 << 20;

/// The most tracked files looked at for one path (a `stat` each, about
/// 3 µs); a path holding more counts as holding changes: deleting that
/// much is the person's call anyway.
const FILE_BUDGET: usize = 20_000;

impl Index {
    /// The index of the repository whose working tree is `top`: its `.git`
    /// directory, or the one a `.git` file names (a worktree, a submodule).
    pub fn of(top: &Path) -> Index {
        let dot_git = top.join(".git");
        let dirs = if dot_git.is_dir() {
            vec![dot_git]
        } else if dot_git.exists() {
            // The worktree's own directory last: it holds the index.
            bashgate_fence::git::git_dirs(&dot_git)
        } else {
            // Not a repository: git tracks nothing here.
            return Index::Empty;
        };
        let Some(dot_git) = dirs.last().cloned() else {
            return Index::Unreadable("its `.git` file names no git directory".into());
        };
        // A SHA-256 repository's index holds longer names.
        if dirs.iter().any(|d| {
            std::fs::read_to_string(d.join("config"))
                .unwrap_or_default()
                .to_ascii_lowercase()
                .contains("objectformat")
        }) {
            return Index::Unreadable("the repository names its object format".into());
        }
        let path = dot_git.join("index");
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Index::Empty,
            Err(e) => return Index::Unreadable(format!("its index cannot be read ({e})")),
        };
        let written = std::fs::metadata(&path)
            .ok()
            .map(|m| stat_time(&m))
            .unwrap_or((u32::MAX, u32::MAX));
        match parse(&bytes) {
            Some(entries) => Index::Read(Entries {
                top: top.to_path_buf(),
                written,
                entries,
            }),
            None => {
                Index::Unreadable("its index is not one bashgate reads (version 2 or 3)".into())
            }
        }
    }

    /// Whether git may track `rel` (a path relative to the top).
    pub fn may_track(&self, rel: &Path) -> bool {
        match self {
            Index::Empty => false,
            Index::Unreadable(_) => true,
            Index::Read(e) => {
                let name = rel.as_os_str().as_encoded_bytes();
                e.entries.iter().any(|x| x.path == name)
            }
        }
    }

    /// A tracked file at or under `rel` (a path relative to the top, `*`
    /// `?` `[` globs allowed in each name) whose working copy may hold
    /// changes the index does not, or why that cannot be told.
    pub fn changed_under(&self, rel: &Path) -> Option<Changed> {
        let e = match self {
            Index::Empty => return None,
            Index::Unreadable(why) => return Some(Changed::Unknown(why.clone())),
            Index::Read(e) => e,
        };
        let pattern: Vec<&[u8]> = rel
            .as_os_str()
            .as_encoded_bytes()
            .split(|b| *b == b'/')
            .filter(|n| !n.is_empty() && *n != b".")
            .collect();
        let mut budget = HASH_BUDGET;
        let mut files = 0;
        for x in e.entries.iter().filter(|x| under(&x.path, &pattern)) {
            files += 1;
            if files > FILE_BUDGET {
                return Some(Changed::Unknown(format!(
                    "it holds more than {FILE_BUDGET} tracked files"
                )));
            }
            if e.changed(x, &mut budget) {
                return Some(Changed::File(String::from_utf8_lossy(&x.path).into_owned()));
            }
        }
        None
    }
}

/// What deleting a path would lose of the working tree.
#[derive(Debug, PartialEq, Eq)]
pub enum Changed {
    /// This tracked file's changes are not in the index.
    File(String),
    /// It may hold such a file: why that cannot be told.
    Unknown(String),
}

/// Whether `path`'s first names match `pattern`'s, name by name.
fn under(path: &[u8], pattern: &[&[u8]]) -> bool {
    let mut names = path.split(|b| *b == b'/');
    pattern.iter().all(|p| {
        names.next().is_some_and(|n| {
            p == &n
                || (p.iter().any(|c| matches!(c, b'*' | b'?' | b'['))
                    && bashgate_analyzer::glob::glob_match(
                        &String::from_utf8_lossy(p),
                        &String::from_utf8_lossy(n),
                    ))
        })
    })
}

impl Entries {
    /// Whether the working copy of `x` may differ from what the index
    /// holds: git's own test (stat data, then the content's hash).
    fn changed(&self, x: &Entry, budget: &mut u64) -> bool {
        // A submodule's work is its own repository's.
        if x.mode & 0o170000 == 0o160000 {
            return true;
        }
        let path = self
            .top
            .join(std::ffi::OsStr::new(&*String::from_utf8_lossy(&x.path)));
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            // Gone already: nothing more to lose.
            return false;
        };
        if meta.len() as u32 != x.size {
            return true;
        }
        use std::os::unix::fs::MetadataExt;
        let mtime = stat_time(&meta);
        if mtime == x.mtime && meta.ino() as u32 == x.ino && mtime < self.written {
            return false;
        }
        if meta.len() > *budget {
            return true;
        }
        *budget -= meta.len();
        let content = if meta.file_type().is_symlink() {
            match std::fs::read_link(&path) {
                Ok(t) => t.into_os_string().into_encoded_bytes(),
                Err(_) => return true,
            }
        } else {
            let mut buf = Vec::with_capacity(meta.len() as usize);
            match std::fs::File::open(&path).and_then(|mut f| f.read_to_end(&mut buf)) {
                Ok(_) => buf,
                Err(_) => return true,
            }
        };
        let mut h = Sha1::new();
        h.update(format!("blob {}\0", content.len()).as_bytes());
        h.update(&content);
        h.finalize().as_slice() != x.oid
    }
}

fn stat_time(m: &std::fs::Metadata) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    (m.mtime() as u32, m.mtime_nsec() as u32)
}

/// The entries of an index of version 2 or 3.
fn parse(b: &[u8]) -> Option<Vec<Entry>> {
    let u32_at = |at: usize| -> Option<u32> {
        b.get(at..at + 4)
            .map(|v| u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    };
    if !b.starts_with(b"DIRC") {
        return None;
    }
    let version = u32_at(4)?;
    if !matches!(version, 2 | 3) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    let mut at = 12;
    for _ in 0..count {
        let start = at;
        let flags = u16::from_be_bytes([*b.get(at + 60)?, *b.get(at + 61)?]);
        let mut fixed = 62;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            fixed += 2;
        }
        let name_at = start + fixed;
        let len = b.get(name_at..)?.iter().position(|c| *c == 0)?;
        let mut oid = [0u8; 20];
        oid.copy_from_slice(b.get(start + 40..start + 60)?);
        entries.push(Entry {
            path: b[name_at..name_at + len].to_vec(),
            mtime: (u32_at(start + 8)?, u32_at(start + 12)?),
            ino: u32_at(start + 20)?,
            mode: u32_at(start + 24)?,
            size: u32_at(start + 36)?,
            oid,
        });
        // Each entry is padded with 1 to 8 NULs to a multiple of 8.
        at = start + (fixed + len + 8) / 8 * 8;
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    }

    #[test]
    fn a_changed_tracked_file_is_told_from_an_unchanged_one() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path();
        git(top, &["init", "-q", "."]);
        std::fs::create_dir_all(top.join("src/deep")).unwrap();
        std::fs::create_dir_all(top.join("docs")).unwrap();
        std::fs::write(top.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(top.join("src/deep/a.rs"), "// a\n").unwrap();
        std::fs::write(top.join("docs/x.md"), "x\n").unwrap();
        std::os::unix::fs::symlink("main.rs", top.join("src/link")).unwrap();
        git(top, &["add", "."]);
        git(top, &["commit", "-qm", "one"]);
        // Written in the same second as the index: git's racy case, which
        // the hash settles.
        let idx = Index::of(top);
        assert!(idx.may_track(Path::new("src/main.rs")));
        assert!(!idx.may_track(Path::new("src/other.rs")));
        for clean in ["src", "docs", ".", "src/*", "*"] {
            assert_eq!(idx.changed_under(Path::new(clean)), None, "{clean}");
        }
        // The same size, other content: only the hash tells.
        std::fs::write(top.join("src/deep/a.rs"), "// b\n").unwrap();
        let idx = Index::of(top);
        for dirty in ["src", "src/deep", "src/deep/a.rs", ".", "src/*", "s*"] {
            assert_eq!(
                idx.changed_under(Path::new(dirty)),
                Some(Changed::File("src/deep/a.rs".into())),
                "{dirty}"
            );
        }
        assert_eq!(idx.changed_under(Path::new("docs")), None);
        assert_eq!(idx.changed_under(Path::new("src/main.rs")), None);
        // Staged, the index holds the change: nothing is lost.
        git(top, &["add", "src/deep/a.rs"]);
        assert_eq!(Index::of(top).changed_under(Path::new("src")), None);
        // No index yet: nothing tracked; a version git writes that is not
        // read here: may.
        let fresh = tempfile::tempdir().unwrap();
        git(fresh.path(), &["init", "-q", "."]);
        assert!(matches!(Index::of(fresh.path()), Index::Empty));
        git(top, &["update-index", "--index-version", "4"]);
        let v4 = Index::of(top);
        assert!(v4.may_track(Path::new("anything")));
        assert!(matches!(
            v4.changed_under(Path::new("docs")),
            Some(Changed::Unknown(_))
        ));
    }
}
