//! What this machine offers, found without changing the calling process:
//! a child process is forked and tries each step of the fence in turn (it
//! exits, and its namespaces die with it). Cached per process; it takes a
//! millisecond or two.

use std::sync::OnceLock;
use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;

use super::profile::{Need, Profile};

/// One line per layer: `Ok` or why not.
#[derive(Debug, Clone)]
pub struct Probe {
    pub namespaces: Result<(), String>,
    pub mounts: Result<(), String>,
    pub pid_proc: Result<(), String>,
    pub capabilities: Result<(), String>,
    pub seccomp: Result<(), String>,
    /// The Landlock ABI the kernel offers (0: none).
    pub landlock_abi: u8,
    /// How long the probe took.
    pub took: Duration,
}

/// The probe, run once per process.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(probe_now)
}

impl Probe {
    /// Whether `bashgate run --profile NAME` can set up every layer the
    /// profile requires here; the error says what is missing.
    pub fn can_run(&self, profile: &str) -> Result<(), String> {
        let p = Profile::named(profile)?;
        let mut missing = Vec::new();
        let mut need = |n: Need, r: &Result<(), String>| {
            if n == Need::Required {
                if let Err(e) = r {
                    missing.push(e.clone());
                }
            }
        };
        need(p.namespaces, &self.namespaces);
        if p.namespaces == Need::Required {
            need(Need::Required, &self.pid_proc);
        }
        need(p.mounts, &self.mounts);
        need(p.capabilities, &self.capabilities);
        need(p.seccomp, &self.seccomp);
        if p.landlock == Need::Required && self.landlock_abi < p.landlock_min_abi {
            missing.push(format!(
                "Landlock ABI {} is needed, this kernel offers {} \
                 (a newer kernel, or `lsm=...,landlock` on its command line)",
                p.landlock_min_abi,
                landlock_words(self.landlock_abi)
            ));
        }
        if missing.is_empty() {
            Ok(())
        } else {
            missing.dedup();
            Err(missing.join("; "))
        }
    }

    /// One line per layer, then whether the default profile can run.
    pub fn summary(&self) -> String {
        let line = |name: &str, r: &Result<(), String>| match r {
            Ok(()) => format!("{name}: available"),
            Err(e) => format!("{name}: NOT available: {e}"),
        };
        let landlock = match self.landlock_abi {
            0 => "landlock: not available (optional unless --profile strict)".to_string(),
            1..=3 => format!(
                "landlock: ABI {} (no network rights before ABI 4; not used)",
                self.landlock_abi
            ),
            4 | 5 => format!("landlock: ABI {} (no TCP bind or connect)", self.landlock_abi),
            n => format!(
                "landlock: ABI {n} (no TCP bind or connect; abstract unix sockets and signals scoped)"
            ),
        };
        let verdict = match self.can_run("default") {
            Ok(()) => "bashgate run can confine commands here (profile default)".to_string(),
            Err(e) => {
                format!("bashgate run cannot confine commands here with the default profile: {e}")
            }
        };
        [
            line("namespaces (user, mount, network, pid)", &self.namespaces),
            line("pid namespace with its own /proc", &self.pid_proc),
            line("read-only mounts of protected paths", &self.mounts),
            line(
                "capabilities dropped (bounding set, no-new-privileges)",
                &self.capabilities,
            ),
            line("seccomp filter", &self.seccomp),
            landlock,
            verdict,
        ]
        .join("\n")
    }
}

fn landlock_words(abi: u8) -> String {
    if abi == 0 {
        "none".into()
    } else {
        format!("ABI {abi}")
    }
}

#[cfg(not(target_os = "linux"))]
fn probe_now() -> Probe {
    let no = || {
        Err(format!(
            "the fence needs Linux (this is {})",
            std::env::consts::OS
        ))
    };
    Probe {
        namespaces: no(),
        mounts: no(),
        pid_proc: no(),
        capabilities: no(),
        seccomp: no(),
        landlock_abi: 0,
        took: Duration::ZERO,
    }
}

/// Steps the child tries, in order; each reports an errno (0: done,
/// -1: not reached).
#[cfg(target_os = "linux")]
const STEPS: usize = 6;
#[cfg(target_os = "linux")]
const UNSHARE: usize = 0;
#[cfg(target_os = "linux")]
const MAPS: usize = 1;
#[cfg(target_os = "linux")]
const MOUNTS: usize = 2;
#[cfg(target_os = "linux")]
const PROC: usize = 3;
#[cfg(target_os = "linux")]
const CAPS: usize = 4;
#[cfg(target_os = "linux")]
const SECCOMP: usize = 5;

#[cfg(target_os = "linux")]
fn probe_now() -> Probe {
    use std::ffi::CString;
    let start = Instant::now();
    // Everything the child needs is made before the fork: the caller may
    // have threads, so the child makes only system calls.
    let uid = unsafe { libc::getuid() };
    let gid = unsafe { libc::getgid() };
    let uid_map = format!("{uid} {uid} 1");
    let gid_map = format!("{gid} {gid} 1");
    let c = |s: &str| CString::new(s).expect("no NUL");
    let (setgroups_p, uid_p, gid_p) = (
        c("/proc/self/setgroups"),
        c("/proc/self/uid_map"),
        c("/proc/self/gid_map"),
    );
    let (root, proc_p, proc_t) = (c("/"), c("/proc"), c("proc"));
    let bind_dir = std::fs::canonicalize(std::env::temp_dir())
        .ok()
        .filter(|d| d.is_dir())
        .and_then(|d| CString::new(d.into_os_string().into_encoded_bytes()).ok())
        .unwrap_or_else(|| c("/"));
    let allow = [libc::sock_filter {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    }];
    let prog = libc::sock_fprog {
        len: 1,
        filter: allow.as_ptr() as *mut libc::sock_filter,
    };
    let mut fds = [0; 2];
    let mut codes = [-1i32; STEPS];
    // SAFETY: pipe2 writes two fds; the child below calls only
    // async-signal-safe functions on memory prepared before the fork.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return failed(
                &format!("cannot make a pipe: {}", super::sys::errno()),
                start,
            );
        }
        let pid = libc::fork();
        if pid < 0 {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return failed(&format!("cannot fork: {}", super::sys::errno()), start);
        }
        if pid == 0 {
            libc::close(fds[0]);
            let mut out = [-1i32; STEPS];
            probe_child(
                &mut out,
                [&setgroups_p, &uid_p, &gid_p],
                [uid_map.as_bytes(), gid_map.as_bytes()],
                [&root, &bind_dir, &proc_p, &proc_t],
                &prog,
            );
            libc::write(fds[1], out.as_ptr().cast(), std::mem::size_of_val(&out));
            libc::_exit(0);
        }
        libc::close(fds[1]);
        let want = std::mem::size_of_val(&codes);
        let n = libc::read(fds[0], codes.as_mut_ptr().cast(), want);
        libc::close(fds[0]);
        let mut st = 0;
        while libc::waitpid(pid, &mut st, 0) < 0
            && super::sys::errno().raw_os_error() == Some(libc::EINTR)
        {}
        if n != want as isize {
            return failed("the probe process died", start);
        }
    }
    interpret(&codes, start)
}

/// The child's side: each step in turn, errno into `out`.
///
/// # Safety
/// Async-signal-safe calls only; the pointers are valid C strings.
#[cfg(target_os = "linux")]
unsafe fn probe_child(
    out: &mut [i32; STEPS],
    files: [&std::ffi::CString; 3],
    maps: [&[u8]; 2],
    paths: [&std::ffi::CString; 4],
    prog: &libc::sock_fprog,
) {
    let err = || unsafe { *libc::__errno_location() };
    let write = |f: &std::ffi::CString, b: &[u8]| -> i32 {
        let fd = unsafe { libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return err();
        }
        let r = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        let e = if r < 0 { err() } else { 0 };
        unsafe { libc::close(fd) };
        e
    };
    if libc::unshare(super::namespaces::ALL) != 0 {
        out[UNSHARE] = err();
    } else {
        out[UNSHARE] = 0;
        let sg = write(files[0], b"deny");
        out[MAPS] = if sg != 0 && sg != libc::ENOENT {
            sg
        } else {
            write(files[1], maps[0])
        };
        if out[MAPS] == 0 {
            out[MAPS] = write(files[2], maps[1]);
        }
        if out[MAPS] == 0 {
            let [root, dir, proc_p, proc_t] = paths;
            let null = std::ptr::null();
            out[MOUNTS] = if libc::mount(
                null,
                root.as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                null.cast(),
            ) != 0
                || libc::mount(
                    dir.as_ptr(),
                    dir.as_ptr(),
                    null,
                    libc::MS_BIND | libc::MS_REC,
                    null.cast(),
                ) != 0
            {
                err()
            } else {
                let mut st: libc::statvfs = std::mem::zeroed();
                libc::statvfs(dir.as_ptr(), &mut st);
                let mut keep = 0;
                for (s, m) in [
                    (libc::ST_NOSUID, libc::MS_NOSUID),
                    (libc::ST_NODEV, libc::MS_NODEV),
                    (libc::ST_NOEXEC, libc::MS_NOEXEC),
                    (libc::ST_NOATIME, libc::MS_NOATIME),
                    (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
                    (libc::ST_RELATIME, libc::MS_RELATIME),
                ] {
                    if st.f_flag & s != 0 {
                        keep |= m;
                    }
                }
                let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep;
                if libc::mount(null, dir.as_ptr(), null, flags, null.cast()) != 0 {
                    err()
                } else {
                    0
                }
            };
            // The first child of the new pid namespace is its init.
            let pid = libc::fork();
            out[PROC] = if pid < 0 {
                err()
            } else if pid == 0 {
                let r = libc::mount(
                    proc_t.as_ptr(),
                    proc_p.as_ptr(),
                    proc_t.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    null.cast(),
                );
                libc::_exit(if r == 0 { 0 } else { err().clamp(1, 255) });
            } else {
                let mut st = 0;
                libc::waitpid(pid, &mut st, 0);
                if libc::WIFEXITED(st) {
                    libc::WEXITSTATUS(st)
                } else {
                    libc::EIO
                }
            };
        }
    }
    // Capabilities: the bounding set can be cut inside the user namespace,
    // or outside it with CAP_SETPCAP.
    out[CAPS] = if libc::prctl(libc::PR_CAPBSET_DROP, 21, 0, 0, 0) != 0 {
        err()
    } else {
        0
    };
    out[SECCOMP] = if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        || libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            prog as *const _,
            0,
            0,
        ) != 0
    {
        err()
    } else {
        0
    };
}

#[cfg(target_os = "linux")]
fn failed(why: &str, start: Instant) -> Probe {
    let no = || Err(why.to_string());
    Probe {
        namespaces: no(),
        mounts: no(),
        pid_proc: no(),
        capabilities: no(),
        seccomp: no(),
        landlock_abi: super::landlock::abi(),
        took: start.elapsed(),
    }
}

#[cfg(target_os = "linux")]
fn interpret(codes: &[i32; STEPS], start: Instant) -> Probe {
    use std::io::Error;
    let os = |c: i32| Error::from_raw_os_error(c);
    let namespaces = match (codes[UNSHARE], codes[MAPS]) {
        (0, 0) => Ok(()),
        (0, e) => Err(format!("cannot map ids in a new user namespace: {}", os(e))),
        (e, _) => Err(super::namespaces::explain_unshare(os(e))),
    };
    let after_ns = |code: i32, what: &str| -> Result<(), String> {
        match (&namespaces, code) {
            (Err(_), _) | (_, -1) => Err("needs the namespaces".into()),
            (Ok(()), 0) => Ok(()),
            (Ok(()), e) => Err(format!("{what}: {}", os(e))),
        }
    };
    let mounts = after_ns(codes[MOUNTS], "bind mounts in the new mount namespace fail");
    let pid_proc = after_ns(
        codes[PROC],
        "cannot mount a /proc in a new pid namespace (a container that masks parts of /proc forbids it)",
    );
    let capabilities = match codes[CAPS] {
        0 => Ok(()),
        e => Err(format!(
            "cannot drop capabilities from the bounding set: {}",
            os(e)
        )),
    };
    let seccomp = match codes[SECCOMP] {
        0 => Ok(()),
        e if e == libc::EINVAL => {
            Err("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)".into())
        }
        e => Err(format!("cannot install a seccomp filter: {}", os(e))),
    };
    Probe {
        namespaces,
        mounts,
        pid_proc,
        capabilities,
        seccomp,
        landlock_abi: super::landlock::abi(),
        took: start.elapsed(),
    }
}
