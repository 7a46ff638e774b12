//! The capability layer. Inside its user namespace the fence starts with
//! every capability; before the command runs they go: the bounding set is
//! emptied, so no process of the fence can hold CAP_SYS_ADMIN again (no
//! unmount, no remount read-write, no new mount), the inheritable and
//! ambient sets are cleared, and no-new-privileges is set, so no setuid or
//! file-capability program raises anyone. When the real user is root, the
//! file-access capabilities stay in the bounding set: root keeps root's
//! access to files (within the read-only mounts), nothing else.

use super::sys;

/// Kept for a real root: chown, DAC override, DAC read/search, fowner, fsetid.
const ROOT_FILE_ACCESS: &[u32] = &[0, 1, 2, 3, 4];

pub fn drop_all(real_uid: libc::uid_t) -> Result<(), String> {
    let last = sys::sysctl("/proc/sys/kernel/cap_last_cap").unwrap_or(40) as u32;
    for cap in 0..=last {
        if real_uid == 0 && ROOT_FILE_ACCESS.contains(&cap) {
            continue;
        }
        sys::prctl(
            libc::PR_CAPBSET_DROP,
            cap as libc::c_ulong,
            &format!("cannot drop capability {cap} from the bounding set"),
        )?;
    }
    clear_inheritable()?;
    sys::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        "cannot clear the ambient capabilities",
    )?;
    no_new_privs()
}

pub fn no_new_privs() -> Result<(), String> {
    sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, "cannot set no-new-privileges")
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// A root's inheritable capabilities would come back on exec whatever the
/// bounding set says; they are cleared.
fn clear_inheritable() -> Result<(), String> {
    const V3: u32 = 0x2008_0522;
    let mut hdr = CapHeader {
        version: V3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget/capset read and write the header and two data structs,
    // the layout of _LINUX_CAPABILITY_VERSION_3.
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) != 0 {
            return Err(format!("capget: {}", sys::errno()));
        }
        for d in &mut data {
            d.inheritable = 0;
        }
        if libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) != 0 {
            return Err(format!(
                "cannot clear the inheritable capabilities: {}",
                sys::errno()
            ));
        }
    }
    Ok(())
}
