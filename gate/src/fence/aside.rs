//! Control places a fenced command creates are moved aside when it ends.
//!
//! The read-only mounts cover the control places that exist. One that does
//! not exist yet cannot be mounted over (its directory must stay writable),
//! so the working tree is listed before the run and again after it: every
//! control place (a `.git`, a client's settings, bashgate's configuration)
//! that is new, or that now stands where another file stood, is renamed to
//! a name no one could have guessed, with a rename that refuses to replace
//! anything. The same goes for the protected paths outside the tree that
//! did not exist (where Landlock is missing, the command could create
//! them).

use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// More directories than this in the working tree and the run stops
/// before it starts: the listing would cost more than the command.
pub const MAX_DIRS: usize = 200_000;

/// One control place as found: where, and which file it was.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    pub path: PathBuf,
    dev: u64,
    ino: u64,
    /// Where it points, for a symlink: its target is kept read-only, and
    /// the link is put back if the command removes it (a mount cannot
    /// cover a link's own name).
    pub link: Option<PathBuf>,
}

/// Every control place beneath `tree`, symlinks not followed. A `.git`
/// directory is not entered: its insides are git's, and the project's own
/// is read-only. After the run (`after`), a directory that cannot be read
/// is an error: the command may have hidden something there (a path too
/// long to open, say). Before it, such a directory is the person's and is
/// passed over.
pub fn list(tree: &Path, names: &HashSet<&OsStr>, after: bool) -> Result<HashSet<Found>, String> {
    let mut found = HashSet::new();
    let mut stack = vec![tree.to_path_buf()];
    let mut dirs = 0usize;
    while let Some(dir) = stack.pop() {
        dirs += 1;
        if dirs > MAX_DIRS {
            return Err(format!(
                "the working tree {} has more than {MAX_DIRS} directories, too many to watch for new control files",
                tree.display()
            ));
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // Gone with whatever it held.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) if after => {
                return Err(format!("cannot read {} to check it ({e})", dir.display()))
            }
            Err(_) => continue,
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if after => {
                    return Err(format!("cannot read {} to check it ({e})", dir.display()))
                }
                Err(_) => continue,
            };
            let name = entry.file_name();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if names.contains(name.as_os_str()) {
                if let Ok(m) = std::fs::symlink_metadata(entry.path()) {
                    found.insert(Found {
                        path: entry.path(),
                        dev: m.dev(),
                        ino: m.ino(),
                        link: m
                            .file_type()
                            .is_symlink()
                            .then(|| std::fs::read_link(entry.path()).ok())
                            .flatten(),
                    });
                }
            }
            if is_dir && name != ".git" {
                stack.push(entry.path());
            }
        }
    }
    Ok(found)
}

/// The control places found before the run to keep read-only besides the
/// protected list, except inside installed code (a package's own `.github`
/// in `node_modules` is the project's build output, and builds delete and
/// rewrite it). A symlink is kept read-only where it points, and a `.git`
/// file (a worktree's or a submodule's) at the git directory it names and
/// that directory's common one.
pub fn to_mount(before: &HashSet<Found>, installed: &HashSet<&OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in before {
        if f.path.iter().any(|c| installed.contains(c)) {
            continue;
        }
        let real = if f.link.is_some() {
            std::fs::canonicalize(&f.path).ok()
        } else {
            Some(f.path.clone())
        };
        let Some(real) = real else { continue };
        if f.path.file_name() == Some(OsStr::new(".git")) && real.is_file() {
            out.extend(git_dirs(&real));
        }
        out.push(real);
    }
    out
}

/// The git directory a `.git` file names (`gitdir: PATH`) and the common
/// directory that one names (`commondir`), those that exist.
pub fn git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let base = dot_git.parent().unwrap_or(Path::new("/"));
    let Some(dir) = std::fs::read_to_string(dot_git)
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
        .and_then(|l| l.strip_prefix("gitdir:").map(|p| base.join(p.trim())))
        .and_then(|p| std::fs::canonicalize(p).ok())
    else {
        return out;
    };
    if let Some(common) = std::fs::read_to_string(dir.join("commondir"))
        .ok()
        .and_then(|t| std::fs::canonicalize(dir.join(t.trim())).ok())
    {
        out.push(common);
    }
    out.push(dir);
    out
}

/// The symlinks among the control places before the run that are not
/// there as they were after it (removed, renamed, replaced), with where
/// each pointed: the run puts them back.
pub fn links_gone(before: &HashSet<Found>, after: &HashSet<Found>) -> Vec<(PathBuf, PathBuf)> {
    let mut out: Vec<(PathBuf, PathBuf)> = before
        .iter()
        .filter(|f| !after.contains(f))
        .filter_map(|f| Some((f.path.clone(), f.link.clone()?)))
        .collect();
    out.sort();
    out
}

/// Puts a control symlink back where it was.
pub fn restore_link(path: &Path, target: &Path) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::os::unix::fs::symlink(target, path).map_err(|e| e.to_string())
}

/// Keeps the outermost of `paths`: moving a directory aside moves what is
/// inside it.
pub fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let all = paths.clone();
    paths.retain(|p| !all.iter().any(|o| o != p && p.starts_with(o)));
    paths
}

/// What the run found after the command: control places that were not
/// there before, outermost first, none inside another.
pub fn new_since(before: &HashSet<Found>, after: &HashSet<Found>) -> Vec<PathBuf> {
    outermost(
        after
            .iter()
            .filter(|f| !before.contains(f))
            .map(|f| f.path.clone())
            .collect(),
    )
}

/// An unguessable suffix.
fn random_suffix() -> String {
    let mut bytes = [0u8; 12];
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        // getrandom cannot fail on Linux 3.17+ for 12 bytes; a clock and
        // the pid are a last resort, still refused to replace anything.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes[..8].copy_from_slice(&(t as u64 ^ u64::from(std::process::id())).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Renames `path` aside to `PATH.bashgate-quarantine-RANDOM`, never
/// replacing what is there; returns where it went.
pub fn move_aside(path: &Path) -> Result<PathBuf, String> {
    let mut last = String::new();
    for _ in 0..4 {
        let mut to = path.as_os_str().to_owned();
        to.push(format!(".bashgate-quarantine-{}", random_suffix()));
        let to = PathBuf::from(to);
        let (Ok(from_c), Ok(to_c)) = (
            CString::new(path.as_os_str().as_bytes()),
            CString::new(to.as_os_str().as_bytes()),
        ) else {
            return Err("the path has a NUL byte".into());
        };
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                from_c.as_ptr(),
                libc::AT_FDCWD,
                to_c.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(to);
        }
        let e = std::io::Error::last_os_error();
        last = e.to_string();
        if e.raw_os_error() != Some(libc::EEXIST) {
            break;
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_places_are_found_and_moved_where_nothing_can_wait() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        std::fs::create_dir_all(t.join("a/.git/objects")).unwrap();
        std::fs::create_dir_all(t.join("b")).unwrap();
        let names: HashSet<&OsStr> = [OsStr::new(".git"), OsStr::new(".cargo")].into();
        let before = list(t, &names, false).unwrap();
        assert_eq!(before.len(), 1);
        // New: one created, one renamed into a control name, one inside
        // another new one.
        std::fs::create_dir_all(t.join("b/.git")).unwrap();
        std::fs::create_dir_all(t.join("c/.cargo/x/.cargo")).unwrap();
        std::fs::rename(t.join("a/.git"), t.join("a/old")).unwrap();
        std::fs::create_dir_all(t.join("d")).unwrap();
        std::fs::rename(t.join("a/old"), t.join("d/.git")).unwrap();
        let new = new_since(&before, &list(t, &names, true).unwrap());
        assert_eq!(
            new,
            vec![t.join("b/.git"), t.join("c/.cargo"), t.join("d/.git")]
        );
        let to = move_aside(&t.join("b/.git")).unwrap();
        assert!(!t.join("b/.git").exists() && to.is_dir());
        assert!(to.to_string_lossy().contains("b/.git.bashgate-quarantine-"));
        // Another move of the same name goes elsewhere.
        std::fs::create_dir_all(t.join("b/.git")).unwrap();
        let again = move_aside(&t.join("b/.git")).unwrap();
        assert_ne!(again, to);
    }
}
