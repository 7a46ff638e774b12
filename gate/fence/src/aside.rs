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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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
/// that directory's common one; a nested repository's hooks directory and
/// included configuration with it (some may not exist yet).
/// `cache` is where git's answers are kept (see
/// [`super::git::repository_places`]).
pub fn to_mount(
    before: &HashSet<Found>,
    installed: &HashSet<&OsStr>,
    cache: Option<&Path>,
) -> Vec<PathBuf> {
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
        if f.path.file_name() == Some(OsStr::new(".git")) {
            if real.is_file() {
                out.extend(super::git::git_dirs(&real));
            }
            // A nested repository's hooks directory and included
            // configuration, like the project's own.
            if let Some(worktree) = f.path.parent() {
                out.extend(super::git::repository_places(worktree, None, cache));
            }
        }
        // A bare repository's HEAD: the whole repository is git's.
        if f.path.file_name() == Some(OsStr::new("HEAD")) {
            if let Some(dir) = real.parent().filter(|d| is_git_dir(d)) {
                out.push(dir.to_path_buf());
                continue;
            }
        }
        out.push(real);
    }
    out
}

/// A directory git takes for a repository by its layout (a bare one, or
/// one renamed from `.git`): `HEAD`, and `objects` and `refs` or a
/// `commondir` that names them.
pub fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && ((dir.join("objects").is_dir() && dir.join("refs").is_dir())
            || dir.join("commondir").is_file())
}

/// A symlink the fence keeps as it was: a control place that is a link,
/// or a link on the way from one to what it names (`.agent -> cfg/agent`
/// with `cfg -> real`). A mount cannot cover a link's own name, so after
/// the run each is checked and, if removed or replaced, put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptLink {
    pub path: PathBuf,
    pub target: PathBuf,
    /// Where its directory really was: a link is put back only there, never
    /// through a directory the command swapped for a link elsewhere.
    parent: PathBuf,
}

/// Every symlink met while resolving `path`, in order, with its target.
pub fn links_on_the_way(path: &Path) -> Vec<KeptLink> {
    use std::path::Component;
    let mut out = Vec::new();
    let mut todo: std::collections::VecDeque<std::ffi::OsString> = path
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut at = PathBuf::new();
    let mut hops = 0;
    while let Some(c) = todo.pop_front() {
        match Path::new(&c).components().next() {
            Some(Component::RootDir) => at = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                at.pop();
            }
            Some(Component::Normal(n)) => {
                let next = at.join(n);
                match std::fs::read_link(&next) {
                    Ok(target) => {
                        hops += 1;
                        if hops > 40 {
                            break;
                        }
                        if let Ok(parent) = std::fs::canonicalize(&at) {
                            out.push(KeptLink {
                                path: next.clone(),
                                target: target.clone(),
                                parent,
                            });
                        }
                        for part in target.components().rev() {
                            todo.push_front(part.as_os_str().to_owned());
                        }
                    }
                    Err(_) => at = next,
                }
            }
            _ => {}
        }
    }
    out
}

/// The links to keep for the control places found before the run: those
/// that are links, and each link on the way to what they (and a `.git`
/// file's git directory) name, inside the tree.
pub fn links_to_keep(before: &HashSet<Found>, tree: &Path) -> Vec<KeptLink> {
    let mut out = Vec::new();
    for f in before {
        out.extend(links_on_the_way(&f.path));
        if f.path.file_name() == Some(OsStr::new(".git")) && f.link.is_none() && f.path.is_file() {
            if let Some(dir) = super::git::gitdir_named(&f.path) {
                out.extend(links_on_the_way(&dir));
            }
        }
    }
    out.retain(|l| l.path.starts_with(tree));
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup();
    out
}

/// What became of a kept link after the run.
pub enum Kept {
    Intact,
    /// Put back (what stood in its place, if anything, moved aside first).
    Restored {
        aside: Option<PathBuf>,
    },
}

/// Puts `link` back if the command removed or replaced it.
pub fn keep(link: &KeptLink) -> Result<Kept, String> {
    if std::fs::read_link(&link.path).is_ok_and(|t| t == link.target) {
        return Ok(Kept::Intact);
    }
    let parent = link.path.parent().unwrap_or(Path::new("/"));
    if std::fs::canonicalize(parent).ok().as_deref() != Some(link.parent.as_path()) {
        return Err(format!(
            "its directory is gone or moved, so the link (to {}) was not put back",
            link.target.display()
        ));
    }
    let aside = if std::fs::symlink_metadata(&link.path).is_ok() {
        Some(move_aside(&link.path)?)
    } else {
        None
    };
    std::os::unix::fs::symlink(&link.target, &link.path).map_err(|e| e.to_string())?;
    Ok(Kept::Restored { aside })
}

/// Keeps the outermost of `paths`: moving a directory aside moves what is
/// inside it.
pub fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    // Paths sort by component, so what is inside a path comes right after
    // it: one pass keeps each path not inside the last one kept.
    paths.sort();
    let mut kept: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for p in paths {
        if !kept.last().is_some_and(|o| p.starts_with(o)) {
            kept.push(p);
        }
    }
    kept
}

/// Directories that became git repositories during the run: a `HEAD` that
/// was there before, in a directory git did not take for a repository
/// then (`repos_before`) and does now.
pub fn repos_made(after: &HashSet<Found>, repos_before: &HashSet<PathBuf>) -> Vec<PathBuf> {
    after
        .iter()
        .filter(|f| f.path.file_name() == Some(OsStr::new("HEAD")) && f.link.is_none())
        .filter_map(|f| f.path.parent())
        .filter(|d| !repos_before.contains(*d) && is_git_dir(d))
        .map(Path::to_path_buf)
        .collect()
}

/// The directories among the control places' parents that git takes for
/// repositories (their `HEAD`s were found).
pub fn repos(found: &HashSet<Found>) -> HashSet<PathBuf> {
    found
        .iter()
        .filter(|f| f.path.file_name() == Some(OsStr::new("HEAD")))
        .filter_map(|f| f.path.parent())
        .filter(|d| is_git_dir(d))
        .map(Path::to_path_buf)
        .collect()
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
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err("the path has no parent directory".into());
    };
    // The directory is opened one name at a time, so a path longer than
    // the kernel takes in one piece (a command can make one) is moved all
    // the same.
    let dir = open_dir(parent).map_err(|e| e.to_string())?;
    let mut last = String::new();
    for _ in 0..4 {
        let mut to_name = name.to_owned();
        to_name.push(format!(".bashgate-quarantine-{}", random_suffix()));
        let (Ok(from_c), Ok(to_c)) = (
            CString::new(name.as_bytes()),
            CString::new(to_name.as_bytes()),
        ) else {
            return Err("the path has a NUL byte".into());
        };
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                dir.as_raw_fd(),
                from_c.as_ptr(),
                dir.as_raw_fd(),
                to_c.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(parent.join(to_name));
        }
        let e = std::io::Error::last_os_error();
        last = e.to_string();
        if e.raw_os_error() != Some(libc::EEXIST) {
            break;
        }
    }
    Err(last)
}

/// `dir`, opened by walking its names from the root (or the working
/// directory for a relative one), each resolved as the kernel would.
fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    use std::path::Component;
    let open = |at: libc::c_int, name: &OsStr| -> std::io::Result<OwnedFd> {
        let c = CString::new(name.as_bytes()).map_err(std::io::Error::other)?;
        let fd = unsafe {
            libc::openat(
                at,
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let start = if dir.is_absolute() { "/" } else { "." };
    let mut fd = open(libc::AT_FDCWD, OsStr::new(start))?;
    for c in dir.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => fd = open(fd.as_raw_fd(), OsStr::new(".."))?,
            Component::Normal(n) => fd = open(fd.as_raw_fd(), n)?,
        }
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_deeper_than_a_path_can_name_is_moved_all_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        // 25 directories of 200 bytes: past PATH_MAX (4096).
        let made = std::process::Command::new("bash")
            .arg("-c")
            .arg("set -e; n=$(printf 'd%.0s' $(seq 200)); for i in $(seq 25); do mkdir \"$n\"; cd \"$n\"; done; mkdir .git")
            .current_dir(tmp.path())
            .status()
            .unwrap();
        assert!(made.success());
        let mut deep = tmp.path().to_path_buf();
        let n = "d".repeat(200);
        for _ in 0..25 {
            deep.push(&n);
        }
        let git = deep.join(".git");
        assert!(git.as_os_str().len() > 4096);
        let to = move_aside(&git).unwrap();
        let name = to.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".git.bashgate-quarantine-"), "{name}");
        assert_eq!(to.parent(), git.parent());
        let listed = std::process::Command::new("bash")
            .arg("-c")
            .arg("cd \"$(printf 'd%.0s' $(seq 200))\" && for i in $(seq 24); do cd \"$(printf 'd%.0s' $(seq 200))\"; done && ls -a")
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout);
        assert!(!listed.lines().any(|l| l == ".git"), "{listed}");
        assert!(listed.contains(&name), "{listed}");
    }

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
