//! The namespace layer: a new user namespace (in which the real uid and gid
//! map to themselves, so file ownership reads the same), and under it new
//! mount, network and pid namespaces. The network namespace starts with only
//! a loopback interface that is down: no address is reachable, not even
//! 127.0.0.1, and the host's abstract unix sockets live in the host's network
//! namespace, out of reach. The pid namespace's first process (the fence's
//! init, `run.rs`) mounts a /proc of its own and takes every process the
//! command leaves behind down with it.

use std::path::Path;

use super::sys;

pub const ALL: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID;

/// `unshare(flags)` in the calling (single-threaded) process, then the id
/// maps and a private mount tree. `flags` must include CLONE_NEWUSER.
pub fn enter(flags: libc::c_int, uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
    // SAFETY: unshare takes an integer; the process is single-threaded
    // (the kernel refuses CLONE_NEWUSER otherwise).
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(explain_unshare(sys::errno()));
    }
    map_ids(uid, gid)?;
    if flags & libc::CLONE_NEWNS != 0 {
        // Nothing mounted from here on reaches the host's mount namespace.
        sys::mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE)
            .map_err(|e| format!("cannot make the mount tree private: {e}"))?;
    }
    Ok(())
}

/// The real ids map to themselves; `setgroups` is denied first, as the
/// kernel requires of an unprivileged gid map.
pub fn map_ids(uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
    match sys::write_once("/proc/self/setgroups", "deny") {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot write /proc/self/setgroups: {e}")),
    }
    sys::write_once("/proc/self/uid_map", &format!("{uid} {uid} 1"))
        .map_err(|e| format!("cannot write the user namespace's uid map: {e}"))?;
    sys::write_once("/proc/self/gid_map", &format!("{gid} {gid} 1"))
        .map_err(|e| format!("cannot write the user namespace's gid map: {e}"))
}

/// A fresh /proc for the pid namespace the caller is the init of: the
/// host's processes are not in it.
pub fn mount_proc() -> Result<(), String> {
    sys::mount(
        Some(Path::new("proc")),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )
    .map_err(|e| format!("cannot mount a /proc for the pid namespace: {e}"))
}

/// Why `unshare` failed, in words a person can act on.
pub fn explain_unshare(e: std::io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    if code == libc::EINVAL {
        return format!(
            "cannot create namespaces ({e}): this kernel lacks user namespaces (CONFIG_USER_NS)"
        );
    }
    if code == libc::ENOSPC || sys::sysctl("/proc/sys/user/max_user_namespaces") == Some(0) {
        return "user namespaces are disabled or used up (sysctl user.max_user_namespaces)".into();
    }
    if sys::sysctl("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return "user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=0)".into();
    }
    if sys::sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
        return "AppArmor forbids unprivileged user namespaces \
                (sysctl kernel.apparmor_restrict_unprivileged_userns=1; \
                an AppArmor profile allowing `userns` for bashgate lifts it)"
            .into();
    }
    // SAFETY: PR_GET_SECCOMP takes no pointer.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } == 2 {
        return format!(
            "cannot create namespaces ({e}): a seccomp filter is already in force \
             (a container's, such as Docker's default profile, forbids user namespaces); \
             use --profile network-only, or run bashgate on the host"
        );
    }
    format!("cannot create namespaces: {e}")
}
