//! `bashgate run`: sets up the fence and runs the command in it.
//!
//! The process tree: this process enters the namespaces and makes the
//! mounts, then forks the fence's init (pid 1 of the new pid namespace),
//! which mounts a fresh /proc and forks the command's shell; that shell
//! drops capabilities, installs Landlock and seccomp and execs bash. When
//! the shell exits, init exits with its status and the kernel ends every
//! other process of the namespace. Signals to this process go on to the
//! shell; if this process dies, init is killed (PDEATHSIG).

use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

use super::{aside, caps, landlock, mounts, ns, seccomp, Layers, RunSpec, Writable};

/// The exit status when the fence cannot be set up (nothing ran).
pub const CANNOT_CONFINE: i32 = 126;

/// The exit status of a command that succeeded but left a control file the
/// fence could not move aside.
pub const LEFT_BEHIND: i32 = 125;

/// What the fence has to tell the person or agent running the command.
/// The library does not print: the surface words each notice (some are
/// raised in the fence's own child processes, before the command runs).
#[derive(Debug)]
pub enum Notice<'a> {
    /// The fence could not be set up; nothing ran.
    CannotConfine(&'a str),
    /// The command failed while fenced: the fence may be why.
    FailedFenced,
    /// A protected path the command created, moved aside to `to`.
    Quarantined { path: &'a Path, to: &'a Path },
    /// A protected path the command created that could not be moved aside.
    NotQuarantined { path: &'a Path, error: &'a str },
    /// Where files are not held to the working tree, and why.
    WritesNotConfined(&'a str),
    /// A control symlink the command removed, put back.
    Restored { path: &'a Path, target: &'a Path },
}

/// Runs the command fenced; returns its exit status (128 + signal for a
/// signal), or [`CANNOT_CONFINE`] after telling why. `report` receives
/// the layers in force before the command starts; `tell` receives each
/// notice, in whichever process of the fence raises it.
pub fn run(spec: &RunSpec, report: &mut dyn FnMut(&Layers), tell: &dyn Fn(Notice)) -> i32 {
    match start(spec, report, tell) {
        Ok(code) => code,
        Err(why) => {
            tell(Notice::CannotConfine(&why));
            CANNOT_CONFINE
        }
    }
}

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        unsafe { libc::kill(pid, sig) };
    }
}

fn forward_signals(to: libc::pid_t) {
    CHILD.store(to, Ordering::SeqCst);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        unsafe { libc::signal(sig, forward as *const () as libc::sighandler_t) };
    }
}

fn start(
    spec: &RunSpec,
    report: &mut dyn FnMut(&Layers),
    tell: &dyn Fn(Notice),
) -> Result<i32, String> {
    // No probe here: each layer is set up or the run stops.
    let landlock_abi = super::probe::landlock_abi();
    if spec.profile.landlock_abi > landlock_abi {
        return Err(format!(
            "profile {:?} needs Landlock ABI {} and this kernel has {}",
            spec.profile.name, spec.profile.landlock_abi, landlock_abi
        ));
    }
    let bash = find_bash()?;
    let argv = shell_argv(&bash, spec);
    let real_uid = unsafe { libc::getuid() };
    let writes_confined = landlock_abi >= landlock::FILES_ABI;
    let mut layers = Layers {
        namespaces: spec.profile.namespaces,
        capabilities: true,
        seccomp: spec.profile.network,
        network: spec.profile.network,
        landlock_abi: if landlock_abi >= 4 || !spec.profile.network {
            landlock_abi.min(7)
        } else {
            0
        },
        writes_confined,
        ..Layers::default()
    };
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory ({e})"))?;
    let scratch = if spec.private_tmp {
        Some(Scratch::make()?)
    } else {
        None
    };
    let mut writable = spec.writable.clone();
    writable.trees.extend(scratch.iter().map(|s| s.0.clone()));
    if let Some(file) = &spec.cwd_file {
        // Made now: the fenced shell may write it, not create it.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(|e| format!("cannot open {} ({e})", file.display()))?;
        writable.files.push(file.clone());
    }
    super::steps::mark("scratch");
    let mut watch = Watch::start(spec)?;
    super::steps::mark("listing before");
    // Where what cannot be settled is noted for the gate: a run that could
    // not leave that note does not start.
    let left_behind = match &spec.left_behind {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("cannot open {} ({e})", p.display()))?,
        ),
        None => None,
    };
    // Until the listing after the run is done, a note says a run is under
    // way here: if this process is killed first, the gate finds the note
    // and asks (see `super::left_behind`).
    let running = match spec.left_behind.as_deref().and_then(Path::parent) {
        Some(state_dir) => Some(
            Running::start(state_dir, spec.tree.as_deref().unwrap_or(&cwd))
                .ok_or_else(|| format!("cannot note the run in {}", state_dir.display()))?,
        ),
        None => None,
    };
    if spec.profile.namespaces {
        let (present, absent) = mounts::resolve(&spec.protect);
        super::steps::mark("protected paths looked up");
        let installed: std::collections::HashSet<&std::ffi::OsStr> = spec
            .installed_names
            .iter()
            .map(std::ffi::OsStr::new)
            .collect();
        let (mut nested, nested_missing): (Vec<PathBuf>, Vec<PathBuf>) = aside::to_mount(
            &watch.before,
            &installed,
            spec.left_behind.as_deref().and_then(Path::parent),
        )
        .into_iter()
        .partition(|p| std::fs::symlink_metadata(p).is_ok());
        nested.retain(|p| !present.iter().any(|o| p.starts_with(o)));
        nested.sort();
        nested.dedup();
        watch.missing.extend(nested_missing);
        super::steps::mark("control places looked up");
        layers.read_only = present.len() + nested.len();
        layers.watched = absent.len();
        // Recorded before anything is made read-only (the audit log lives
        // in a protected directory).
        report(&layers);
        ns::enter()?;
        super::steps::mark("namespaces");
        mounts::private_root()?;
        mounts::fence(&present, &nested)?;
        super::steps::mark("mounts");
        mounts::kernel_state()?;
        super::steps::mark("sys and shm");
        // The working directory was looked up before the mounts: entered
        // again, relative paths go through them.
        std::env::set_current_dir(&cwd)
            .map_err(|e| format!("cannot re-enter {} ({e})", cwd.display()))?;
        watch.missing.extend(absent);
    } else {
        report(&layers);
        if spec.profile.network {
            // Best effort: the profile asks for seccomp only.
            let _ = ns::enter_network_only();
        }
    }
    if !writes_confined {
        tell(Notice::WritesNotConfined(&format!(
            "this kernel has Landlock ABI {landlock_abi} and file rules need ABI {}: the command can write anywhere its user can, except the protected paths",
            landlock::FILES_ABI
        )));
    }

    // SAFETY: this process is single-threaded (bashgate run starts no
    // thread); the child sets up and execs or exits.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err(format!("cannot fork ({})", std::io::Error::last_os_error()));
    }
    if init == 0 {
        let private_tmp = scratch.as_ref().map(|s| s.0.as_path());
        let code = fence_init(spec, &argv, real_uid, &writable, private_tmp, tell);
        unsafe { libc::_exit(code) }
    }
    forward_signals(init);
    let mut code = wait_exit(init);
    super::steps::mark("fence exited");
    drop(scratch);
    let left = watch.settle(tell);
    let mut noted = true;
    if let Some(mut f) = left_behind.as_ref() {
        use std::io::Write;
        for p in &left {
            noted &= f.write_all(p.as_os_str().as_bytes()).is_ok() && f.write_all(b"\0").is_ok();
        }
    }
    if noted {
        drop(running);
    } else {
        // The note of the run under way stays: the gate still asks.
        std::mem::forget(running);
    }
    super::steps::mark("listing after");
    let failed = !left.is_empty();
    if failed && code == 0 {
        code = LEFT_BEHIND;
    }
    if code != 0 && code != CANNOT_CONFINE {
        tell(Notice::FailedFenced);
    }
    Ok(code)
}

/// What the run checks in the working tree once the command has ended
/// (`aside.rs`): the control places listed before it, the links kept, and
/// the protected paths that did not exist.
struct Watch<'a> {
    tree: Option<&'a Path>,
    names: HashSet<&'a OsStr>,
    before: HashSet<aside::Found>,
    /// Directories git took for repositories before the run.
    repos: HashSet<PathBuf>,
    kept: Vec<aside::KeptLink>,
    missing: Vec<PathBuf>,
}

impl<'a> Watch<'a> {
    /// Lists the tree before the command starts.
    fn start(spec: &'a RunSpec) -> Result<Watch<'a>, String> {
        let tree = spec.tree.as_deref();
        let names: HashSet<&OsStr> = spec.control_names.iter().map(OsStr::new).collect();
        let before = match tree {
            Some(t) => aside::list(t, &names, false)?,
            None => HashSet::new(),
        };
        let kept = tree
            .map(|t| aside::links_to_keep(&before, t))
            .unwrap_or_default();
        Ok(Watch {
            tree,
            names,
            repos: aside::repos(&before),
            before,
            kept,
            missing: Vec::new(),
        })
    }

    /// After the command: moves aside every control place that is new
    /// (and every protected path that now exists), puts back every kept
    /// link the command removed or replaced, and returns what could not be
    /// settled (the tree itself when it could not be listed).
    fn settle(self, tell: &dyn Fn(Notice)) -> Vec<PathBuf> {
        let mut new = self.missing;
        new.retain(|p| std::fs::symlink_metadata(p).is_ok());
        let mut unchecked = None;
        if let Some(tree) = self.tree {
            match aside::list(tree, &self.names, true) {
                Ok(after) => {
                    new.extend(aside::new_since(&self.before, &after));
                    // A directory the command made into a repository
                    // around a `HEAD` that was there is new as a whole.
                    new.extend(aside::repos_made(&after, &self.repos));
                }
                Err(e) => unchecked = Some((tree, e)),
            }
        }
        let mut left = Vec::new();
        for p in aside::outermost(new) {
            match aside::move_aside(&p) {
                Ok(to) => tell(Notice::Quarantined { path: &p, to: &to }),
                Err(e) => {
                    tell(Notice::NotQuarantined {
                        path: &p,
                        error: &e,
                    });
                    left.push(p);
                }
            }
        }
        // So what a control link pointed at is in force again.
        for link in &self.kept {
            match aside::keep(link) {
                Ok(aside::Kept::Intact) => {}
                Ok(aside::Kept::Restored { aside }) => {
                    if let Some(to) = &aside {
                        tell(Notice::Quarantined {
                            path: &link.path,
                            to,
                        });
                    }
                    tell(Notice::Restored {
                        path: &link.path,
                        target: &link.target,
                    });
                }
                Err(e) => {
                    tell(Notice::NotQuarantined {
                        path: &link.path,
                        error: &format!("the command removed or replaced this link: {e}"),
                    });
                    left.push(link.path.clone());
                }
            }
        }
        if let Some((tree, e)) = unchecked {
            // Nothing new can be ruled out: the tree itself is what is left.
            tell(Notice::NotQuarantined {
                path: tree,
                error: &e,
            });
            left.push(tree.to_path_buf());
        }
        left
    }
}

/// The note in the state directory that a run is under way
/// (`fence-running.PID`, holding the process's start time and the tree),
/// removed when the run has checked the tree. Made and removed through a
/// descriptor opened before the mounts, which make the state directory
/// read-only for this process too.
struct Running {
    dir: std::fs::File,
    name: CString,
}

impl Running {
    fn start(state_dir: &Path, tree: &Path) -> Option<Running> {
        use std::os::unix::io::AsRawFd;
        let dir = std::fs::File::open(state_dir).ok()?;
        let pid = std::process::id();
        let name = CString::new(format!("{}{pid}", super::RUNNING_PREFIX)).ok()?;
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0o600,
            )
        };
        if fd < 0 {
            return None;
        }
        let mut f = unsafe { <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fd) };
        let mut text = format!("{}\n", super::start_time(pid).unwrap_or_default()).into_bytes();
        text.extend_from_slice(tree.as_os_str().as_bytes());
        text.push(b'\n');
        std::io::Write::write_all(&mut f, &text).ok()?;
        Some(Running { dir, name })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        use std::os::unix::io::AsRawFd;
        unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), 0) };
    }
}

/// The run's private temporary directory (`$TMPDIR` inside the fence),
/// removed with everything in it when the run ends.
struct Scratch(PathBuf);

impl Scratch {
    fn make() -> Result<Scratch, String> {
        let base = std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_dir())
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let mut template = base.join("bashgate-run-XXXXXX").into_os_string().into_vec();
        template.push(0);
        let p = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
        if p.is_null() {
            return Err(format!(
                "cannot make a private temporary directory in {} ({})",
                base.display(),
                std::io::Error::last_os_error()
            ));
        }
        template.pop();
        Ok(Scratch(PathBuf::from(std::ffi::OsString::from_vec(
            template,
        ))))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// pid 1 of the new pid namespace (or, without namespaces, a plain
/// parent): starts the shell and reaps everything until it exits.
fn fence_init(
    spec: &RunSpec,
    argv: &[CString],
    real_uid: libc::uid_t,
    writable: &Writable,
    scratch: Option<&Path>,
    tell: &dyn Fn(Notice),
) -> i32 {
    super::steps::mark("init forked");
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if spec.profile.namespaces {
        if let Err(why) = mounts::fresh_proc() {
            tell(Notice::CannotConfine(&why));
            return CANNOT_CONFINE;
        }
        super::steps::mark("proc");
    }
    let shell = unsafe { libc::fork() };
    if shell < 0 {
        return CANNOT_CONFINE;
    }
    if shell == 0 {
        let why = exec_fenced(spec, argv, real_uid, writable, scratch);
        tell(Notice::CannotConfine(&why));
        unsafe { libc::_exit(CANNOT_CONFINE) }
    }
    forward_signals(shell);
    // As init, reap every orphan until the shell itself exits.
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == shell {
            super::steps::mark("shell exited");
            return decode(status);
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return CANNOT_CONFINE;
        }
    }
}

/// The last steps before the shell: the process-wide layers, then exec.
fn exec_fenced(
    spec: &RunSpec,
    argv: &[CString],
    real_uid: libc::uid_t,
    writable: &Writable,
    scratch: Option<&Path>,
) -> String {
    super::steps::mark("shell forked");
    close_inherited();
    if let Some(scratch) = scratch {
        std::env::set_var("TMPDIR", scratch);
    }
    super::steps::mark("descriptors");
    if let Err(e) = caps::drop_all(real_uid) {
        if spec.profile.namespaces {
            return e;
        }
        // Without a user namespace an unprivileged process has no
        // capabilities to drop; no-new-privileges is what seccomp needs.
        if let Err(e) = caps::no_new_privs() {
            return e;
        }
    }
    super::steps::mark("capabilities");
    match landlock::restrict(super::probe::landlock_abi(), writable, spec.profile.network) {
        Ok(got) if got.abi < spec.profile.landlock_abi => {
            return format!(
                "Landlock ABI {} could not be enforced",
                spec.profile.landlock_abi
            )
        }
        Ok(got) if !got.files && super::probe::landlock_abi() >= landlock::FILES_ABI => {
            return "Landlock did not enforce the file rules".into()
        }
        Ok(_) => {}
        // The run said writes are held to the tree: that must hold.
        Err(e)
            if spec.profile.landlock_abi > 0
                || super::probe::landlock_abi() >= landlock::FILES_ABI =>
        {
            return e
        }
        Err(_) => {}
    }
    super::steps::mark("landlock");
    if spec.profile.network {
        if let Err(e) = seccomp::install() {
            return e;
        }
    }
    super::steps::mark("seccomp");
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    unsafe { libc::execv(ptrs[0], ptrs.as_ptr()) };
    format!(
        "cannot run {:?} ({})",
        argv[0],
        std::io::Error::last_os_error()
    )
}

/// Closes every descriptor beyond stdio: what the caller's process had
/// open (a socket, a file in a protected place) is not the command's.
fn close_inherited() {
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r != 0 {
        // Before Linux 5.9: one by one.
        let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(1024, 65536);
        for fd in 3..max as libc::c_int {
            unsafe { libc::close(fd) };
        }
    }
}

fn wait_exit(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return decode(status);
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return CANNOT_CONFINE;
        }
    }
}

fn decode(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        CANNOT_CONFINE
    }
}

fn find_bash() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .or_else(|| Some(PathBuf::from("/bin/bash")).filter(|p| p.is_file()))
        .ok_or_else(|| "bash is not on PATH".to_string())
}

/// `bash -c COMMAND`, or with `--cwd-file` a shell that runs it through
/// `eval` and writes its final directory on exit.
fn shell_argv(bash: &Path, spec: &RunSpec) -> Vec<CString> {
    let cs = |s: &[u8]| CString::new(s).unwrap_or_else(|_| c"false".to_owned());
    let mut argv = vec![cs(bash.as_os_str().as_bytes())];
    match &spec.cwd_file {
        None => {
            argv.push(cs(b"-c"));
            argv.push(cs(spec.command.as_bytes()));
        }
        Some(file) => {
            argv.push(cs(b"-c"));
            argv.push(cs(br#"__bashgate_command=$1; __bashgate_cwd=$2; set --; trap 'pwd -P >| "$__bashgate_cwd" 2>/dev/null' EXIT; eval "$__bashgate_command""#));
            argv.push(cs(b"bash"));
            argv.push(cs(spec.command.as_bytes()));
            argv.push(cs(file.as_os_str().as_bytes()));
        }
    }
    argv
}
