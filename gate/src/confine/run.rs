//! One fenced run, as three processes:
//!
//! - the outer process (`bashgate run`) enters the namespaces, makes the
//!   mounts, forks the init, forwards SIGINT/SIGTERM/SIGHUP to it, waits,
//!   then quarantines protected paths created during the run;
//! - the init (pid 1 of the new pid namespace) mounts a fresh /proc, forks
//!   the command, forwards signals to it and reaps every orphan until the
//!   command exits, then exits with its status: the kernel then kills every
//!   process left in the namespace;
//! - the command process drops capabilities, sets no-new-privileges, enters
//!   Landlock and seccomp, and execs bash.
//!
//! Set-up errors of the init and the command process come back to the
//! outer process on a close-on-exec pipe, so a failed layer is told apart
//! from a command that failed.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::mounts::Plan;
use super::profile::Need;
use super::{caps, landlock, namespaces, seccomp, sys, FenceSpec, Layers, Outcome, RunError};

const FORWARDED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn cannot(msg: impl Into<String>) -> RunError {
    RunError::CannotConfine(msg.into())
}

fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:").map(|v| v.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(1)
}

/// One shell word whose value is `s`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn find_bash() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("bash"))
                .find(|b| b.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("/bin/bash"))
}

/// The script bash runs: the command, after an EXIT trap that writes the
/// final working directory when asked to.
fn script(spec: &FenceSpec) -> String {
    match &spec.cwd_file {
        None => spec.command.clone(),
        Some(f) => {
            let write = format!("pwd -P >| {} 2>/dev/null", quote(&f.to_string_lossy()));
            format!("trap -- {} EXIT; {}", quote(&write), spec.command)
        }
    }
}

pub fn run(spec: &FenceSpec) -> Result<Outcome, RunError> {
    let p = spec.profile;
    if threads() > 1 {
        return Err(cannot(
            "bashgate run must set up the fence before any thread starts (internal error)",
        ));
    }
    // SAFETY: plain id getters.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut layers = Layers::default();

    // Everything the children need is made before the first fork.
    let plan = (p.mounts != Need::Off).then(|| Plan::new(&spec.protect));
    let programs = match p.seccomp {
        Need::Off => Vec::new(),
        need => match seccomp::programs() {
            Ok(progs) => progs,
            Err(e) if need == Need::Required => return Err(cannot(e)),
            Err(_) => Vec::new(),
        },
    };
    let abi = if p.landlock == Need::Off {
        0
    } else {
        landlock::abi()
    };
    if p.landlock == Need::Required && abi < p.landlock_min_abi {
        return Err(cannot(format!(
            "the profile needs Landlock ABI {}, this kernel offers {}",
            p.landlock_min_abi,
            if abi == 0 {
                "none".to_string()
            } else {
                format!("ABI {abi}")
            }
        )));
    }
    let bash = find_bash();
    let bash_c = CString::new(bash.as_os_str().as_bytes()).map_err(|_| cannot("bad bash path"))?;
    let script_c =
        CString::new(script(spec)).map_err(|_| cannot("the command contains a NUL byte"))?;
    let argv_c = [
        CString::new("bash").expect("literal"),
        CString::new("-c").expect("literal"),
        script_c,
    ];

    // Namespaces.
    if p.namespaces != Need::Off {
        match namespaces::enter(namespaces::ALL, uid, gid) {
            Ok(()) => {
                layers.user_ns = true;
                layers.mount_ns = true;
                layers.net_ns = true;
                layers.pid_ns = true;
            }
            Err(e) if p.namespaces == Need::Required => return Err(cannot(e)),
            Err(_) => {
                // Best effort: a network namespace alone still cuts the network.
                let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNET;
                if namespaces::enter(flags, uid, gid).is_ok() {
                    layers.user_ns = true;
                    layers.net_ns = true;
                }
            }
        }
    }
    // Mounts.
    if let Some(plan) = &plan {
        layers.watched = plan.missing.len() + plan.links.len();
        if layers.mount_ns {
            match plan.apply().and_then(|n| {
                // The working directory still points into the mount the
                // pins now cover, where nothing is read-only: enter it anew.
                let cwd = std::env::current_dir().map_err(|e| format!("getcwd: {e}"))?;
                std::env::set_current_dir(&cwd)
                    .map_err(|e| format!("cannot re-enter {}: {e}", cwd.display()))?;
                Ok(n)
            }) {
                Ok(n) => layers.read_only_mounts = n,
                Err(e) if p.mounts == Need::Required => return Err(cannot(e)),
                Err(_) => {}
            }
        } else if p.mounts == Need::Required {
            return Err(cannot("the read-only mounts need a mount namespace"));
        }
    }

    // Signals: blocked here and in the init, taken with sigwaitinfo.
    let mut forwarded = FORWARDED.to_vec();
    forwarded.push(libc::SIGCHLD);
    let waited = sys::sigset(&forwarded);
    // SAFETY: sigset_t values built by sys::sigset; pipe2 fills two fds.
    let mut old_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut fds = [0; 2];
    unsafe {
        libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut old_mask);
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(cannot(format!("cannot make a pipe: {}", sys::errno())));
        }
    }
    let (rd, wr) = (fds[0], fds[1]);
    let child = Child {
        spec_profile: p,
        uid,
        pid_ns: layers.pid_ns,
        abi,
        programs: &programs,
        bash: &bash_c,
        argv: &argv_c,
        old_mask,
        waited,
        report: wr,
    };
    // SAFETY: this process is single-threaded (checked above), so the child
    // may run ordinary code.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err(cannot(format!("cannot fork: {}", sys::errno())));
    }
    if init == 0 {
        // SAFETY: closing our copy of the read end.
        unsafe { libc::close(rd) };
        child.init();
    }
    // SAFETY: our copy of the write end; the children hold theirs.
    unsafe { libc::close(wr) };
    let report = read_all(rd);
    let status = wait_forwarding(init, &waited);
    // SAFETY: restores the mask saved above.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut()) };

    let mut failure = None;
    for line in report.lines() {
        if let Some(e) = line.strip_prefix('E') {
            failure = Some(cannot(e));
        } else if let Some(e) = line.strip_prefix('X') {
            failure = Some(RunError::CannotExec(format!(
                "cannot run {}: {e}",
                bash.display()
            )));
        } else if let Some(l) = line.strip_prefix('L') {
            let mut f = l.split(' ');
            layers.landlock_abi = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            layers.capabilities = f.next() == Some("1");
            layers.seccomp = f.next() == Some("1");
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let quarantined = plan
        .as_ref()
        .map(|pl| pl.quarantine(now))
        .unwrap_or_default();
    if let Some(f) = failure {
        for q in &quarantined {
            eprintln!("{q}");
        }
        return Err(f);
    }
    Ok(Outcome {
        status,
        layers,
        quarantined,
    })
}

fn read_all(fd: libc::c_int) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // SAFETY: reads into a local buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            out.extend_from_slice(&buf[..n as usize]);
        } else if n == 0 || sys::errno().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    // SAFETY: our fd.
    unsafe { libc::close(fd) };
    String::from_utf8_lossy(&out).into_owned()
}

/// Waits for `pid`, passing on forwarded signals a process sent (a
/// terminal's signals reach every process of the group by themselves).
/// Returns the shell status of `pid`. Reaps other children too when `init`.
fn wait_loop(
    pid: libc::pid_t,
    waited: &libc::sigset_t,
    forward_to: libc::pid_t,
    init: bool,
) -> i32 {
    loop {
        // SAFETY: siginfo is written by sigwaitinfo before it is read.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let sig = unsafe { libc::sigwaitinfo(waited, &mut info) };
        if sig == libc::SIGCHLD || sig < 0 {
            loop {
                let mut st = 0;
                let target = if init { -1 } else { pid };
                // SAFETY: waitpid writes the status.
                let r = unsafe { libc::waitpid(target, &mut st, libc::WNOHANG) };
                if r == pid {
                    return sys::shell_status(st);
                }
                if r <= 0 {
                    break;
                }
            }
        } else if FORWARDED.contains(&sig) && info.si_code != libc::SI_KERNEL {
            // SAFETY: kill with a pid we forked.
            unsafe { libc::kill(forward_to, sig) };
        }
    }
}

fn wait_forwarding(init: libc::pid_t, waited: &libc::sigset_t) -> i32 {
    wait_loop(init, waited, init, false)
}

/// What the two children need, all made before the first fork.
struct Child<'a> {
    spec_profile: super::Profile,
    uid: libc::uid_t,
    pid_ns: bool,
    abi: u8,
    programs: &'a [seccompiler::BpfProgram],
    bash: &'a CString,
    argv: &'a [CString; 3],
    old_mask: libc::sigset_t,
    waited: libc::sigset_t,
    report: libc::c_int,
}

extern "C" fn ignore_signal(_: libc::c_int) {}

impl Child<'_> {
    fn say(&self, line: &str) {
        let line = format!("{line}\n");
        // SAFETY: writes a local buffer to our pipe.
        unsafe { libc::write(self.report, line.as_ptr().cast(), line.len()) };
    }

    fn fail(&self, what: &str) -> ! {
        self.say(&format!("E{what}"));
        // SAFETY: ends this child without running the parent's atexit work.
        unsafe { libc::_exit(126) }
    }

    /// The init: /proc, the command, then reaping until the command ends.
    fn init(&self) -> ! {
        // SAFETY: prctl/sigaction with valid arguments.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            // An init ignores signals it has no handler for, even from the
            // outer process; the handler is never run (they stay blocked).
            for s in FORWARDED {
                libc::signal(s, ignore_signal as *const () as libc::sighandler_t);
            }
        }
        if self.pid_ns {
            if let Err(e) = namespaces::mount_proc() {
                if self.spec_profile.namespaces == Need::Required {
                    self.fail(&e);
                }
            }
        }
        // SAFETY: single-threaded child.
        let cmd = unsafe { libc::fork() };
        if cmd < 0 {
            self.fail(&format!("cannot fork: {}", sys::errno()));
        }
        if cmd == 0 {
            self.command();
        }
        // SAFETY: our copy of the report pipe.
        unsafe { libc::close(self.report) };
        let status = wait_loop(cmd, &self.waited, cmd, true);
        // SAFETY: ends the init; the kernel ends the rest of the namespace.
        unsafe { libc::_exit(status) }
    }

    /// The command process: the last layers, then bash.
    fn command(&self) -> ! {
        let p = self.spec_profile;
        // SAFETY: signal dispositions and mask back to what the caller had
        // (exec resets handlers, keeps the mask and ignored signals).
        unsafe {
            for s in FORWARDED {
                libc::signal(s, libc::SIG_DFL);
            }
            libc::sigprocmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        }
        let mut caps_ok = false;
        match caps::drop_all(self.uid) {
            Ok(()) => caps_ok = true,
            Err(e) if p.capabilities == Need::Required => self.fail(&e),
            Err(_) => {}
        }
        if !caps_ok && (p.seccomp != Need::Off || p.landlock != Need::Off) {
            if let Err(e) = caps::no_new_privs() {
                self.fail(&e);
            }
        }
        let mut abi_in_force = 0;
        if p.landlock != Need::Off {
            match landlock::restrict(self.abi) {
                Ok(a) => abi_in_force = a,
                Err(e) if p.landlock == Need::Required => self.fail(&e),
                Err(_) => {}
            }
            if p.landlock == Need::Required && abi_in_force < p.landlock_min_abi {
                self.fail(&format!(
                    "Landlock ABI {} is in force, the profile needs {}",
                    abi_in_force, p.landlock_min_abi
                ));
            }
        }
        let mut seccomp_ok = false;
        if p.seccomp != Need::Off {
            match seccomp::install(self.programs) {
                Ok(()) => seccomp_ok = !self.programs.is_empty(),
                Err(e) if p.seccomp == Need::Required => self.fail(&e),
                Err(_) => {}
            }
            if p.seccomp == Need::Required && !seccomp_ok {
                self.fail("no seccomp filter was built");
            }
        }
        self.say(&format!(
            "L{abi_in_force} {} {}",
            u8::from(caps_ok),
            u8::from(seccomp_ok)
        ));
        let argv = [
            self.argv[0].as_ptr(),
            self.argv[1].as_ptr(),
            self.argv[2].as_ptr(),
            std::ptr::null(),
        ];
        // SAFETY: NUL-terminated argv of valid C strings; environ inherited.
        unsafe { libc::execv(self.bash.as_ptr(), argv.as_ptr()) };
        let e = sys::errno();
        self.say(&format!("X{e}"));
        // SAFETY: ends the child after a failed exec.
        unsafe { libc::_exit(127) }
    }
}
