//! The mount layer: each protected path that exists is bind-mounted onto
//! itself read-only, so every write into it, by any path or link that leads
//! there, fails with EROFS. Each directory above a protected path (but `/`)
//! is first bind-mounted onto itself read-write, which makes it a mount
//! point, and a mount point cannot be renamed (EBUSY): `mv .git .git-old`
//! followed by a fresh copy cannot route around the read-only hooks.
//!
//! A protected path that does not exist cannot be mounted over. It is
//! watched instead: if it exists after the run, it is renamed aside (the
//! quarantine). A protected path that is itself a symlink has its target
//! protected; the link lives in a writable directory, so it is watched too
//! and put back if the command replaced it.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use super::sys;

/// What the mount layer will do, worked out before any namespace exists.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    /// Directories made mount points (read-write), outermost first.
    pub pin: Vec<PathBuf>,
    /// Existing protected paths (resolved), made read-only, outermost first.
    pub read_only: Vec<PathBuf>,
    /// Protected paths that did not exist.
    pub missing: Vec<PathBuf>,
    /// Protected paths that were symlinks, with what they pointed to.
    pub links: Vec<(PathBuf, PathBuf)>,
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

impl Plan {
    pub fn new(protect: &[PathBuf]) -> Plan {
        let mut read_only = BTreeSet::new();
        let mut missing = Vec::new();
        let mut links = Vec::new();
        for p in protect {
            match std::fs::symlink_metadata(p) {
                Err(_) => {
                    if !missing.contains(p) {
                        missing.push(p.clone());
                    }
                    continue;
                }
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(to) = std::fs::read_link(p) {
                        links.push((p.clone(), to));
                    }
                }
                Ok(_) => {}
            }
            // The path with every link in it resolved is what a mount covers.
            if let Ok(real) = std::fs::canonicalize(p) {
                read_only.insert(real);
            }
        }
        let mut pin = BTreeSet::new();
        let watched = read_only.iter().cloned().chain(missing.iter().cloned());
        for p in watched.collect::<Vec<_>>() {
            // Ancestors as they really are (a missing path's parents may exist).
            let mut up = p.parent();
            while let Some(a) = up {
                if a.parent().is_none() {
                    break;
                }
                if let Ok(real) = std::fs::canonicalize(a) {
                    if real.parent().is_some() && real.is_dir() {
                        pin.insert(real);
                    }
                }
                up = a.parent();
            }
        }
        let mut pin: Vec<PathBuf> = pin.into_iter().collect();
        pin.sort_by_key(|p| depth(p));
        let mut read_only: Vec<PathBuf> = read_only.into_iter().collect();
        read_only.sort_by_key(|p| depth(p));
        Plan {
            pin,
            read_only,
            missing,
            links,
        }
    }

    /// Mounts; run inside the new mount namespace. Returns how many paths
    /// were made read-only.
    pub fn apply(&self) -> Result<usize, String> {
        let bind = libc::MS_BIND | libc::MS_REC;
        for dir in &self.pin {
            sys::mount(Some(dir), dir, None, bind)
                .map_err(|e| format!("cannot pin {} (bind mount): {e}", dir.display()))?;
        }
        for p in &self.read_only {
            sys::mount(Some(p), p, None, bind)
                .map_err(|e| format!("cannot bind-mount {}: {e}", p.display()))?;
        }
        // Every mount at or under a protected path is made read-only: the
        // top of each one just made, and any mount that was already inside.
        let mut done = 0;
        for m in mount_points()? {
            if self.read_only.iter().any(|p| m.starts_with(p)) {
                remount_read_only(&m)?;
                done += 1;
            }
        }
        // A protected path whose mount was not listed (it cannot happen on a
        // sane kernel) must not pass silently.
        for p in &self.read_only {
            if !is_read_only(p) {
                return Err(format!(
                    "{} is still writable after the remount",
                    p.display()
                ));
            }
        }
        Ok(done)
    }

    /// After the run: each protected path that appeared is moved aside, and
    /// each replaced link is put back. One line per path, for stderr.
    pub fn quarantine(&self, now: u64) -> Vec<String> {
        let mut lines = Vec::new();
        let aside = |p: &Path| -> PathBuf {
            let mut name = p.as_os_str().to_owned();
            name.push(format!(".bashgate-quarantine-{now}"));
            PathBuf::from(name)
        };
        for p in &self.missing {
            if std::fs::symlink_metadata(p).is_err() {
                continue;
            }
            let to = aside(p);
            lines.push(match std::fs::rename(p, &to) {
                Ok(()) => format!(
                    "bashgate run: {} is protected and was created during the run; moved to {}",
                    p.display(),
                    to.display()
                ),
                Err(e) => format!(
                    "bashgate run: {} is protected and was created during the run; \
                     it could not be moved aside ({e}): check it before trusting it",
                    p.display()
                ),
            });
        }
        for (link, target) in &self.links {
            if std::fs::read_link(link).ok().as_ref() == Some(target) {
                continue;
            }
            let to = aside(link);
            let moved = match std::fs::symlink_metadata(link) {
                Ok(_) => std::fs::rename(link, &to).map(|()| Some(to)),
                Err(_) => Ok(None),
            };
            let restored = moved
                .as_ref()
                .map_err(|e| e.to_string())
                .and_then(|_| std::os::unix::fs::symlink(target, link).map_err(|e| e.to_string()));
            lines.push(match (moved, restored) {
                (Ok(Some(to)), Ok(())) => format!(
                    "bashgate run: {} (a protected link) was replaced during the run; \
                     the replacement moved to {}, the link restored",
                    link.display(),
                    to.display()
                ),
                (Ok(None), Ok(())) | (Err(_), Ok(())) => format!(
                    "bashgate run: {} (a protected link) was removed during the run; restored",
                    link.display()
                ),
                (_, Err(e)) => format!(
                    "bashgate run: {} (a protected link) was replaced during the run \
                     and could not be restored ({e}): check it before trusting it",
                    link.display()
                ),
            });
        }
        lines
    }
}

fn remount_read_only(p: &Path) -> Result<(), String> {
    // A remount must keep the flags the kernel locked when the mount came
    // from a more privileged namespace, or it fails with EPERM.
    let locked = mount_flags(p);
    sys::mount(
        None,
        p,
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | locked,
    )
    .map_err(|e| format!("cannot make {} read-only: {e}", p.display()))
}

fn statvfs(p: &Path) -> Option<libc::statvfs> {
    let c = sys::cstr(p).ok()?;
    // SAFETY: `st` is written by statvfs before it is read.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut st) == 0).then_some(st)
    }
}

fn mount_flags(p: &Path) -> libc::c_ulong {
    let Some(st) = statvfs(p) else { return 0 };
    let f = st.f_flag;
    let mut out = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_flag != 0 {
            out |= ms_flag;
        }
    }
    out
}

fn is_read_only(p: &Path) -> bool {
    statvfs(p).is_some_and(|st| st.f_flag & libc::ST_RDONLY != 0)
}

/// Every mount point of this mount namespace (`/proc/self/mountinfo`,
/// field 5, with its octal escapes undone).
fn mount_points() -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        if let Some(field) = line.split(|&b| b == b' ').nth(4) {
            let p = PathBuf::from(OsString::from_vec(unescape(field)));
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && i + 3 < field.len()
            && field[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (field[i + 1] - b'0') * 64 + (field[i + 2] - b'0') * 8 + (field[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_mountinfo_fields() {
        assert_eq!(unescape(br"/a\040b"), b"/a b".to_vec());
        assert_eq!(unescape(br"/a\\"), br"/a\\".to_vec());
    }

    #[test]
    fn plan_pins_ancestors_and_records_missing() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("p/.git/hooks")).unwrap();
        std::os::unix::fs::symlink(root.join("p/.git/hooks"), root.join("link")).unwrap();
        let plan = Plan::new(&[
            root.join("p/.git/hooks"),
            root.join("p/.bashgate.toml"),
            root.join("link"),
        ]);
        assert_eq!(plan.read_only, vec![root.join("p/.git/hooks")]);
        assert_eq!(plan.missing, vec![root.join("p/.bashgate.toml")]);
        assert_eq!(plan.links.len(), 1);
        assert!(plan.pin.contains(&root.join("p/.git")));
        assert!(plan.pin.contains(&root.join("p")));
        assert!(!plan.pin.contains(&PathBuf::from("/")));
        let depths: Vec<usize> = plan.pin.iter().map(|p| depth(p)).collect();
        assert!(depths.windows(2).all(|w| w[0] <= w[1]));
    }
}
