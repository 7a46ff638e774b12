//! Small wrappers over the system calls the fence makes, each returning
//! an error that names the call and the path.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub fn cstr(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", p.display()))
}

pub fn errno() -> io::Error {
    io::Error::last_os_error()
}

/// `mount(2)` with no data.
pub fn mount(
    src: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> io::Result<()> {
    let src = src.map(cstr).transpose().map_err(io::Error::other)?;
    let target = cstr(target).map_err(io::Error::other)?;
    let fstype = fstype.map(|f| CString::new(f).expect("no NUL in a literal"));
    // SAFETY: every pointer is a NUL-terminated string that outlives the call
    // or null, which mount(2) accepts for these arguments.
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
        Err(errno())
    }
}

/// Writes a whole small file in one `write(2)` (the id maps want that).
pub fn write_once(path: &str, text: &str) -> io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(text.as_bytes())
}

/// `prctl(2)` with integer arguments; the error names `what`.
pub fn prctl(op: libc::c_int, a: libc::c_ulong, what: &str) -> Result<(), String> {
    // SAFETY: integer-only prctl operations.
    if unsafe {
        libc::prctl(
            op,
            a,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    } == 0
    {
        Ok(())
    } else {
        Err(format!("{what}: {}", errno()))
    }
}

/// The signal set holding `sigs`.
pub fn sigset(sigs: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset initializes the set before it is read.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in sigs {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Exit status of a waited-for child as a shell reports it: the code, or
/// 128 + the signal that ended it.
pub fn shell_status(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// Reads one integer sysctl (`/proc/sys/...`); `None` when absent.
pub fn sysctl(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
