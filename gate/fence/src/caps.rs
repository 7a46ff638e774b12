//! Capabilities: the bounding set is emptied, so no process of the fence
//! can ever hold CAP_SYS_ADMIN again (it cannot unmount or remount the
//! read-only paths), and no-new-privileges is set (no setuid program can
//! raise anyone). The inheritable and ambient sets are cleared. A real
//! root keeps root's file access and nothing else.

const KEEP_FOR_ROOT: &[libc::c_int] = &[
    0, // CAP_CHOWN
    1, // CAP_DAC_OVERRIDE
    2, // CAP_DAC_READ_SEARCH
    3, // CAP_FOWNER
    4, // CAP_FSETID
];

pub fn drop_all(real_uid: libc::uid_t) -> Result<(), String> {
    let last: libc::c_int = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    for cap in 0..=last {
        if real_uid == 0 && KEEP_FOR_ROOT.contains(&cap) {
            continue;
        }
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            return Err(format!(
                "cannot drop capability {cap} ({})",
                std::io::Error::last_os_error()
            ));
        }
    }
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    no_new_privs()
}

pub fn no_new_privs() -> Result<(), String> {
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!(
            "cannot set no-new-privileges ({})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
