//! What this machine offers the fence, found without changing the calling
//! process: a forked child tries the namespaces, the rest is asked of the
//! kernel directly. Cached per process.

use std::sync::OnceLock;

use super::{FenceError, Layer, Profile};

#[derive(Debug, Clone)]
pub struct Probe {
    /// New user, mount, network and pid namespaces, or why not.
    pub namespaces: Result<(), FenceError>,
    /// seccomp filters, or why not.
    pub seccomp: Result<(), FenceError>,
    /// The Landlock ABI (0: none).
    pub landlock_abi: i32,
}

pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| Probe {
        namespaces: namespaces().map_err(unavailable(Layer::Namespaces)),
        seccomp: seccomp().map_err(unavailable(Layer::Seccomp)),
        landlock_abi: landlock_abi(),
    })
}

/// The error for a layer the kernel refuses or lacks, and why.
fn unavailable(layer: Layer) -> impl Fn(String) -> FenceError {
    move |why| FenceError::Unavailable { layer, why }
}

/// [`probe`], with the namespace trial (a fork, most of the cost) kept in
/// `dir` until the machine reboots, for the hook, which runs per call. A
/// stale answer is harmless: a fence that cannot be set up after all stops
/// the run before the command starts (exit 126), and one wrongly thought
/// missing only means the old matrix asks.
pub fn probe_cached(dir: &std::path::Path) -> Probe {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let key = format!("{}:{}", boot.trim(), env!("CARGO_PKG_VERSION"));
    let file = dir.join("fence-probe.txt");
    let namespaces = match std::fs::read_to_string(&file) {
        Ok(text) if !boot.is_empty() && text.lines().next() == Some(key.as_str()) => {
            match text.lines().nth(1) {
                Some("ok") => Ok(()),
                Some(why) => Err(why.to_string()),
                None => namespaces(),
            }
        }
        _ => {
            let r = namespaces();
            let line = match &r {
                Ok(()) => "ok".to_string(),
                Err(e) => e.replace('\n', " "),
            };
            // Owner-only, as the state directory it sits in.
            let _ = std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(dir);
            let tmp = dir.join(format!(".fence-probe.{}", std::process::id()));
            if std::fs::write(&tmp, format!("{key}\n{line}\n")).is_ok() {
                let _ = std::fs::rename(&tmp, &file);
            }
            r
        }
    };
    Probe {
        namespaces: namespaces.map_err(unavailable(Layer::Namespaces)),
        seccomp: seccomp().map_err(unavailable(Layer::Seccomp)),
        landlock_abi: landlock_abi(),
    }
}

impl Probe {
    /// Whether `bashgate run --profile NAME` can set up every layer the
    /// profile requires; the error says what is missing.
    pub fn can_run(&self, profile: &str) -> Result<(), FenceError> {
        let p = Profile::named(profile)?;
        if p.namespaces {
            self.namespaces.clone()?;
        }
        if p.network {
            self.seccomp.clone()?;
        }
        if self.landlock_abi < p.landlock_abi {
            return Err(FenceError::LandlockTooOld {
                profile: p.name,
                needs: p.landlock_abi,
                has: self.landlock_abi,
            });
        }
        Ok(())
    }

    /// One line per layer, for `bashgate doctor`.
    pub fn lines(&self) -> Vec<String> {
        let state = |r: &Result<(), FenceError>| match r {
            Ok(()) => "available".to_string(),
            Err(e) => format!("NOT available: {e}"),
        };
        vec![
            format!(
                "namespaces (user, mount, network, pid, UTS, IPC, cgroup; read-only protected paths, /proc and /sys): {}",
                state(&self.namespaces)
            ),
            format!(
                "capabilities (bounding set emptied, no-new-privileges; needs the user namespace): {}",
                state(&self.namespaces)
            ),
            format!(
                "seccomp filter (no sockets but unix, no connect): {}",
                state(&self.seccomp)
            ),
            format!(
                "Landlock (writes only in the working tree, its private temporary directory and the listed places; no TCP; abstract unix sockets and signals scoped): {}",
                match self.landlock_abi {
                    0 => "NOT available: fenced commands can write anywhere their user can except the protected paths, the home directory included (optional except for --profile strict)".to_string(),
                    1 => "ABI 1 only: too old for the file rules (it refuses every rename across directories), so fenced commands can write anywhere their user can except the protected paths".to_string(),
                    2 | 3 => format!("available, ABI {}: writes held to the working tree{}; TCP not restricted by Landlock (the network namespace and seccomp still hold it)", self.landlock_abi, if self.landlock_abi == 2 { ", but truncating a file elsewhere is not seen" } else { "" }),
                    4 | 5 => format!("available, ABI {}: writes held to the working tree; abstract sockets and signals not scoped", self.landlock_abi),
                    n => format!("available, ABI {n}"),
                }
            ),
        ]
    }
}

#[cfg(target_os = "linux")]
fn namespaces() -> Result<(), String> {
    let flags = super::ns::FLAGS;
    // SAFETY: the child only calls unshare and _exit, both async-signal-safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "cannot fork to test ({})",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        let ok = unsafe { libc::unshare(flags) } == 0;
        let code = if ok {
            0
        } else {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(1)
        };
        unsafe { libc::_exit(code.min(255)) }
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let code = libc::WEXITSTATUS(status);
    if libc::WIFEXITED(status) && code == 0 {
        return Ok(());
    }
    let why = std::io::Error::from_raw_os_error(code);
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let hint = if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        " (sysctl kernel.unprivileged_userns_clone=0 disables them)".to_string()
    } else if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        " (sysctl user.max_user_namespaces=0 disables them)".to_string()
    } else if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1")
    {
        " (AppArmor restricts unprivileged user namespaces: kernel.apparmor_restrict_unprivileged_userns=1)".to_string()
    } else if std::path::Path::new("/.dockerenv").exists() {
        " (inside Docker, whose default seccomp profile refuses them: use --profile network-only, or ask the host's daemon)".to_string()
    } else {
        String::new()
    };
    Err(format!("cannot create user namespaces: {why}{hint}"))
}

#[cfg(target_os = "linux")]
fn seccomp() -> Result<(), String> {
    // 0 (none) or 2 (filter) means the kernel has seccomp; a process that
    // already runs under a filter can add one.
    let r = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if r < 0 {
        return Err(format!(
            "the kernel has no seccomp ({})",
            std::io::Error::last_os_error()
        ));
    }
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return Err("bashgate's seccomp filter is built for x86_64 and aarch64 only".into());
    }
    Ok(())
}

#[cfg(target_os = "linux")]
pub(super) fn landlock_abi() -> i32 {
    const CREATE_RULESET: libc::c_long = 444;
    const VERSION: libc::c_uint = 1;
    let v = unsafe {
        libc::syscall(
            CREATE_RULESET,
            std::ptr::null::<libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

#[cfg(not(target_os = "linux"))]
fn namespaces() -> Result<(), String> {
    Err("the fence is built on Linux namespaces; this is not Linux".into())
}

#[cfg(not(target_os = "linux"))]
fn seccomp() -> Result<(), String> {
    Err("the fence is built on Linux seccomp; this is not Linux".into())
}

#[cfg(not(target_os = "linux"))]
pub(super) fn landlock_abi() -> i32 {
    0
}
