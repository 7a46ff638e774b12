//! New user, mount, network, pid, UTS, IPC and cgroup namespaces for the
//! calling process (which must be single-threaded), with the real uid and
//! gid mapped to themselves so files keep their owners. The last three keep
//! the host's hostname, System V IPC and message queues, and cgroup tree
//! out of reach.

use std::io;

/// Every namespace the fence makes.
pub const FLAGS: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWCGROUP;

pub fn enter() -> Result<(), String> {
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unsafe { libc::unshare(FLAGS) } != 0 {
        return Err(format!(
            "cannot create user, mount, network, pid, UTS, IPC and cgroup namespaces ({})",
            io::Error::last_os_error()
        ));
    }
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("cannot write {file} ({e})"))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// Just a network namespace, for profiles without the mount layer, where
/// the user namespace it needs is available.
pub fn enter_network_only() -> Result<(), String> {
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    let _ = std::fs::write("/proc/self/setgroups", "deny");
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).map_err(|e| e.to_string())?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1")).map_err(|e| e.to_string())?;
    Ok(())
}
