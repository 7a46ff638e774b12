//! The read-only layer: each protected path that exists is bind-mounted
//! read-only onto itself. Each directory above one (but `/`) is first
//! bind-mounted onto itself, which makes it a mount point: a mount point
//! cannot be renamed, so `mv .git .git-old` followed by a fresh copy cannot
//! get around the read-only hooks directory.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn c(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} has a NUL byte", path.display()))
}

fn mount(
    src: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> io::Result<()> {
    let nul = |_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a mount's name");
    let src = src
        .map(|s| CString::new(s.as_os_str().as_bytes()))
        .transpose()
        .map_err(nul)?;
    let target = CString::new(target.as_os_str().as_bytes()).map_err(nul)?;
    let fstype = fstype.map(CString::new).transpose().map_err(nul)?;
    let r = unsafe {
        libc::mount(
            src.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            target.as_ptr(),
            fstype.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Mount propagation off, so nothing done here reaches the host.
pub fn private_root() -> Result<(), String> {
    mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE)
        .map_err(|e| format!("cannot make / private in the new mount namespace ({e})"))
}

/// The flags the kernel keeps locked on a mount that came from a more
/// privileged namespace: a remount must repeat them.
fn locked_flags(path: &Path) -> Result<libc::c_ulong, String> {
    let p = c(path)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(p.as_ptr(), &mut st) } != 0 {
        return Err(format!(
            "cannot stat {} ({})",
            path.display(),
            io::Error::last_os_error()
        ));
    }
    let mut flags = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    Ok(flags)
}

/// Splits the protected paths into those that exist (resolved through
/// symlinks, both the link and its target kept) and those that do not.
pub fn resolve(protect: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for p in protect {
        // Most protected paths do not exist: one lstat says so, where
        // canonicalize would read every component's link first.
        if std::fs::symlink_metadata(p).is_err() {
            missing.push(p.clone());
            continue;
        }
        match std::fs::canonicalize(p) {
            Ok(real) => {
                if real != *p {
                    // The link itself lives in its parent; its target is
                    // what a write through it reaches.
                    if let Ok(parent) = std::fs::canonicalize(p.parent().unwrap_or(Path::new("/")))
                    {
                        if let Some(name) = p.file_name() {
                            let link = parent.join(name);
                            if link != real && std::fs::symlink_metadata(&link).is_ok() {
                                present.push(link);
                            }
                        }
                    }
                }
                present.push(real);
            }
            // It exists but does not resolve: a dangling link. What it
            // points to is where a write through it lands: watched as a
            // protected path that does not exist.
            Err(_) => {
                present.push(p.clone());
                missing.extend(dangling_target(p));
            }
        }
    }
    // A path inside another protected one is covered by it.
    let present = super::aside::outermost(present);
    missing.sort();
    missing.dedup();
    (present, missing)
}

/// Where a chain of symlinks starting at `link` ends: the first path in it
/// that does not exist.
fn dangling_target(link: &Path) -> Option<PathBuf> {
    let mut at = link.to_path_buf();
    for _ in 0..40 {
        let Ok(to) = std::fs::read_link(&at) else {
            return std::fs::symlink_metadata(&at).is_err().then_some(at);
        };
        at = at.parent().unwrap_or(Path::new("/")).join(to);
    }
    None
}

/// Makes `present` read-only and their ancestors unrenamable, and
/// `unpinned` read-only (control places deeper in the tree: moving one
/// elsewhere makes it new where it lands, which the listing after the run
/// catches).
pub fn fence(present: &[PathBuf], unpinned: &[PathBuf]) -> Result<(), String> {
    let mut ancestors: Vec<PathBuf> = present
        .iter()
        .flat_map(|p| p.ancestors().skip(1).map(Path::to_path_buf))
        .filter(|a| a.parent().is_some())
        .collect();
    ancestors.sort_by_key(|a| a.components().count());
    ancestors.dedup();
    let mut seen: std::collections::HashSet<&Path> = present.iter().map(PathBuf::as_path).collect();
    for a in &ancestors {
        if !seen.insert(a) {
            continue;
        }
        mount(Some(a), a, None, libc::MS_BIND | libc::MS_REC)
            .map_err(|e| format!("cannot pin {} ({e})", a.display()))?;
    }
    for p in present.iter().chain(unpinned) {
        // A dangling symlink cannot be mounted over; its parent is pinned.
        if std::fs::metadata(p).is_err() {
            continue;
        }
        mount(Some(p), p, None, libc::MS_BIND | libc::MS_REC)
            .map_err(|e| format!("cannot bind {} ({e})", p.display()))?;
        let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked_flags(p)?;
        mount(None, p, None, flags)
            .map_err(|e| format!("cannot make {} read-only ({e})", p.display()))?;
    }
    Ok(())
}

/// A fresh /proc for the new pid namespace, read-only: the host's
/// processes vanish, and no process of the fence (root included) can write
/// a kernel setting (`/proc/sys`), `/proc/sysrq-trigger` or any other
/// file of it. Writing through `/proc/self/fd` still reaches what the
/// descriptor names.
pub fn fresh_proc() -> Result<(), String> {
    mount(
        Some(Path::new("proc")),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
    )
    .map_err(|e| format!("cannot mount /proc for the new pid namespace ({e})"))
}

/// The kernel's other global state out of reach: `/sys` read-only (a
/// fresh sysfs of the fence's own network namespace, without the host's
/// cgroup, security or debug mounts beneath it), and a private, empty
/// `/dev/shm` (shared memory and POSIX semaphores work, and vanish with
/// the run).
pub fn kernel_state() -> Result<(), String> {
    let sys = Path::new("/sys");
    let ro = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
    if sys.is_dir() && mount(Some(Path::new("sysfs")), sys, Some("sysfs"), ro).is_err() {
        // Where a new sysfs is refused, the host's, without what is
        // mounted beneath it, read-only.
        mount(Some(sys), sys, None, libc::MS_BIND)
            .and_then(|()| {
                mount(
                    None,
                    sys,
                    None,
                    libc::MS_BIND
                        | libc::MS_REMOUNT
                        | libc::MS_RDONLY
                        | locked_flags(sys).unwrap_or(0),
                )
            })
            .map_err(|e| format!("cannot make /sys read-only ({e})"))?;
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let target = c(shm)?;
        let (src, fstype, data) = (c"tmpfs", c"tmpfs", c"mode=1777");
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr() as *const libc::c_void,
            )
        };
        if r != 0 {
            return Err(format!(
                "cannot give the fence its own /dev/shm ({})",
                io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}
