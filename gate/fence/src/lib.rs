//! `bashgate run`'s fence: a command and every process it starts run with
//! no network and with the protected paths read-only, enforced by the
//! kernel, so what the analyzer cannot prove local can still run without a
//! person.
//!
//! This crate is the mechanism: it is told what to protect and where the
//! command may write ([`RunSpec`]). What that is (the places an agent must
//! not change, the scratch directories, which commands may run fenced at
//! all) is the gate's policy, in the engine library (`bashgate::fence`).
//!
//! The layers, each set up in [`run`] and reported in [`Layers`]:
//! - namespaces (`ns.rs`): a new user, mount, network, pid, UTS, IPC and
//!   cgroup namespace. The network namespace has no interface up; the pid
//!   namespace ends every process the command left behind when it ends.
//! - mounts (`mounts.rs`): each protected path bind-mounted read-only onto
//!   itself, and each of its ancestors made a mount point so it cannot be
//!   renamed away (the gate lists them); `/proc` and `/sys` fresh and
//!   read-only, `/dev/shm` private.
//! - control places the command creates anywhere in the working tree, and
//!   protected paths that did not exist, are moved aside when it ends
//!   (`aside.rs`).
//! - capabilities (`caps.rs`): the bounding set emptied (root keeps only
//!   file access), no-new-privileges.
//! - seccomp (`seccomp.rs`): no socket but a unix one, no `connect`, no
//!   io_uring, no mount or namespace calls, no ptrace.
//! - Landlock (`landlock.rs`), where the kernel has it: writes only beneath
//!   the working tree, the run's private temporary directory and the
//!   places the person lists; no TCP; no abstract unix sockets or signals
//!   outside the fence.
//!
//! Which layers a run requires is its [`Profile`]; a required layer that
//! cannot be set up stops the run before the command starts (exit 126).

#[cfg(target_os = "linux")]
mod aside;
#[cfg(target_os = "linux")]
mod caps;
pub mod git;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod ns;
mod probe;
#[cfg(target_os = "linux")]
mod run;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod steps;

pub use probe::{probe, probe_cached, Probe};
#[cfg(target_os = "linux")]
pub use run::{run, Notice, CANNOT_CONFINE, LEFT_BEHIND};

use std::path::PathBuf;

/// What a profile requires of the fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    /// User, mount, network and pid namespaces, and the read-only mounts.
    pub namespaces: bool,
    /// Landlock at least this ABI (0: used where present, not required).
    pub landlock_abi: i32,
    /// Whether the network is fenced: the seccomp filter (the network
    /// fence that needs nothing but the kernel), a network namespace where
    /// the profile makes none of its own, and Landlock's TCP rules and
    /// scoping of abstract sockets and signals. Off only where writes
    /// alone are bounded.
    pub network: bool,
    /// Whether the command gets a private temporary directory, removed
    /// when it ends, and the control places it creates in the tree are
    /// moved aside; otherwise the real temporary directories are writable
    /// (those that do not hold the home directory) and stay as the command
    /// left them.
    pub private: bool,
}

pub const PROFILES: &[Profile] = &[
    Profile {
        name: "default",
        namespaces: true,
        landlock_abi: 0,
        network: true,
        private: true,
    },
    Profile {
        name: "strict",
        namespaces: true,
        landlock_abi: 6,
        network: true,
        private: true,
    },
    // For machines without user namespaces (inside Docker's default
    // seccomp profile): no network, but protected files are not fenced.
    Profile {
        name: "network-only",
        namespaces: false,
        landlock_abi: 0,
        network: true,
        private: true,
    },
    // For a session that has read nothing untrusted: what cannot be
    // proven local may still use the network, but may write only in the
    // working tree, the temporary directories and the caches (Landlock
    // file rules, so they are required).
    Profile {
        name: WRITES,
        namespaces: false,
        landlock_abi: 2, // the file rules (landlock.rs)
        network: false,
        private: false,
    },
];

/// The profile that bounds writes only.
pub const WRITES: &str = "writes";

impl Profile {
    pub fn named(name: &str) -> Result<Profile, FenceError> {
        PROFILES
            .iter()
            .find(|p| p.name == name)
            .copied()
            .ok_or_else(|| FenceError::NoProfile {
                name: name.to_string(),
            })
    }
}

/// A layer of the fence, as [`FenceError`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Namespaces,
    Seccomp,
    Landlock,
}

/// Why the fence cannot run a profile here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenceError {
    #[error("no fence profile named {name:?} (there are: {})", profile_names())]
    NoProfile { name: String },
    /// The kernel refuses or lacks a layer the profile requires.
    #[error("{why}")]
    Unavailable { layer: Layer, why: String },
    /// The profile requires a newer Landlock than the kernel has.
    #[error(
        "profile {profile:?} needs Landlock ABI {needs} and this kernel has {}",
        if *has == 0 { "none".to_string() } else { format!("ABI {has}") }
    )]
    LandlockTooOld {
        profile: &'static str,
        needs: i32,
        has: i32,
    },
}

fn profile_names() -> String {
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    names.join(", ")
}

/// Where a fenced command may write (with Landlock; see `landlock.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writable {
    /// Directories: everything beneath is writable.
    pub trees: Vec<PathBuf>,
    /// Single files and devices: writable in place, not replaceable.
    pub files: Vec<PathBuf>,
}

/// What `bashgate run` is asked to do.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub command: String,
    pub profile: Profile,
    /// Paths kept read-only (the gate's list of protected places and the
    /// configuration).
    pub protect: Vec<PathBuf>,
    /// Where the command may write: the working tree, the person's
    /// caches and the devices (the run adds its private temporary
    /// directory and `cwd_file`).
    pub writable: Writable,
    /// The working tree: new control places anywhere beneath it are moved
    /// aside after the run (none: the command may write nowhere but its
    /// private temporary directory).
    pub tree: Option<PathBuf>,
    /// The names of the control places (the gate's list).
    pub control_names: Vec<String>,
    /// The names of installed-code directories (`node_modules`...): control
    /// places inside them that exist are not made read-only.
    pub installed_names: Vec<String>,
    /// Whether the command gets a private temporary directory (`TMPDIR`),
    /// removed when it ends: under a private profile, and wherever the
    /// temporary directory the environment names is not writable.
    pub private_tmp: bool,
    /// Where to write the command's final working directory.
    pub cwd_file: Option<PathBuf>,
    /// Where to note a control file the command created that could not be
    /// moved aside, for the gate's next decision ([`left_behind`]).
    pub left_behind: Option<PathBuf>,
}

/// The file in the state directory where a run notes what it could not
/// move aside.
pub fn left_behind_file(state_dir: &std::path::Path) -> PathBuf {
    state_dir.join("fence-left-behind.txt")
}

/// The control files a fenced command created that could not be moved
/// aside and are still there, and the trees of runs that were killed
/// before they could check them (the gate asks the person until these are
/// gone).
pub fn left_behind(state_dir: &std::path::Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // NUL-separated: a path can hold a newline, never a NUL.
    let mut out: Vec<PathBuf> = std::fs::read(left_behind_file(state_dir))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|l| !l.is_empty())
        .map(|l| PathBuf::from(std::ffi::OsStr::from_bytes(l)))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    // Runs that did not finish: their note names the tree.
    if let Ok(dir) = std::fs::read_dir(state_dir) {
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(RUNNING_PREFIX))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            // A note that cannot be read is itself what is left.
            let Ok(text) = std::fs::read(e.path()) else {
                out.push(e.path());
                continue;
            };
            // The start time, a newline, then the tree to the end.
            let (started, tree) = match text.iter().position(|b| *b == b'\n') {
                Some(i) => (&text[..i], &text[i + 1..]),
                None => (&text[..], &[][..]),
            };
            let started = String::from_utf8_lossy(started);
            if start_time(pid).is_some_and(|t| t == started) {
                continue; // still running
            }
            out.push(PathBuf::from(std::ffi::OsStr::from_bytes(tree)));
        }
    }
    out
}

/// The name of a run's note that it is under way (`fence-running.PID`).
pub const RUNNING_PREFIX: &str = "fence-running.";

/// A process's start time (in clock ticks since boot), which with its pid
/// names it uniquely; `None` when it is not running.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from its end.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19).map(str::to_string)
}

/// The layers that were in force for a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layers {
    pub namespaces: bool,
    /// Protected paths mounted read-only.
    pub read_only: usize,
    /// Protected paths that did not exist, watched for the quarantine.
    pub watched: usize,
    pub capabilities: bool,
    pub seccomp: bool,
    /// The network fenced (otherwise the command may use it).
    pub network: bool,
    /// The Landlock ABI enforced (0: none).
    pub landlock_abi: i32,
    /// Writes held to the working tree and the listed places (Landlock).
    pub writes_confined: bool,
}

impl Layers {
    pub fn describe(&self) -> String {
        let mut on = Vec::new();
        if self.namespaces {
            on.push(format!(
                "namespaces (user, mount, network, pid); {} protected paths read-only, {} watched",
                self.read_only, self.watched
            ));
        }
        if self.capabilities {
            on.push("capabilities dropped".into());
        }
        if self.seccomp {
            on.push("seccomp".into());
        }
        if !self.network {
            on.push("network allowed".into());
        }
        if self.writes_confined {
            on.push("writes only in the working tree and the listed places".into());
        } else {
            on.push("writes NOT held to the working tree (no Landlock file rules)".into());
        }
        if self.landlock_abi > 0 {
            on.push(format!("Landlock ABI {}", self.landlock_abi));
        }
        on.join("; ")
    }
}
