//! Files only their owner reads. The state directory holds what the agent
//! read and what the person approved, the audit log every command; other
//! local users have no business reading either, so what bashgate creates
//! there is owner-only (directories 0700, files 0600), and a file it finds
//! readable by others is narrowed before it is used.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` and its missing parents owner-only. An existing directory
/// is left as it is (it may be the person's own, shared on purpose).
pub fn create_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes sure `path` exists owner-only before a database opens it (SQLite
/// creates a missing file readable by all, and gives its journal files the
/// database's mode). A file others can read is narrowed when ours.
pub fn prepare_file(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => narrow(path),
        Err(e) => Err(e),
    }
}

/// Takes group and other permissions off a file the current user owns.
fn narrow(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mode = m.permissions().mode();
    if m.is_file() && m.uid() == me && mode & 0o077 != 0 {
        fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn what_it_creates_only_the_owner_reads() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("state/sub/audit.db");
        prepare_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&t.path().join("state")), 0o700);
        assert_eq!(mode(&t.path().join("state/sub")), 0o700);
        // A file left readable by all (an older bashgate) is narrowed.
        fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
        prepare_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        // The directory a person made themselves stays as they made it.
        let shared = t.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();
        create_dir(&shared).unwrap();
        assert_eq!(mode(&shared), 0o755);
    }
}
