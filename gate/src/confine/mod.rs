//! `bashgate run`'s fence: a command, and every process it starts, runs
//! with no network and with the protected paths read-only, enforced by the
//! kernel, and cannot lift either. See docs/confinement.md.
//!
//! Layers (each recorded in [`Layers`] when a run sets it up):
//! - namespaces (`namespaces.rs`): user, mount, network, pid;
//! - mounts (`mounts.rs`): protected paths read-only, their ancestors made
//!   unrenamable, paths created during the run quarantined after it;
//! - capabilities (`caps.rs`): bounding set emptied, no-new-privileges;
//! - seccomp (`seccomp.rs`): unix sockets only, no connect, no io_uring,
//!   no mount or namespace calls, no ptrace;
//! - Landlock (`landlock.rs`), where the kernel has it.
//!
//! What a run requires is its [`Profile`] (`profile.rs`); which layers the
//! machine offers is [`probe()`] (`probe.rs`); what is protected is
//! [`protected::default_protected`].

#[cfg(target_os = "linux")]
mod caps;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod namespaces;
mod probe;
mod profile;
pub mod protected;
#[cfg(target_os = "linux")]
mod run;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod sys;

use std::path::PathBuf;

pub use probe::{probe, Probe};
pub use profile::{Need, Profile, PROFILES};
pub use protected::default_protected;

/// Everything one fenced run needs.
#[derive(Debug, Clone)]
pub struct FenceSpec {
    /// Paths kept read-only (or quarantined if created), absolute.
    pub protect: Vec<PathBuf>,
    pub profile: Profile,
    /// The bash command string.
    pub command: String,
    /// Where the command's final working directory is written.
    pub cwd_file: Option<PathBuf>,
}

/// The layers a run set up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layers {
    pub user_ns: bool,
    pub mount_ns: bool,
    pub net_ns: bool,
    pub pid_ns: bool,
    /// Mounts made read-only.
    pub read_only_mounts: usize,
    /// Protected paths that did not exist (watched for the quarantine).
    pub watched: usize,
    pub capabilities: bool,
    pub seccomp: bool,
    /// The Landlock ABI in force in the command (0: none).
    pub landlock_abi: u8,
}

impl std::fmt::Display for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "user_ns={} mount_ns={} net_ns={} pid_ns={} read_only_mounts={} watched={} \
             capabilities={} seccomp={} landlock_abi={}",
            self.user_ns,
            self.mount_ns,
            self.net_ns,
            self.pid_ns,
            self.read_only_mounts,
            self.watched,
            self.capabilities,
            self.seccomp,
            self.landlock_abi
        )
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The command's exit status (128 + signal when a signal ended it).
    pub status: i32,
    pub layers: Layers,
    /// One line per protected path created or replaced during the run.
    pub quarantined: Vec<String>,
}

/// Why a run did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A layer the profile requires could not be set up; nothing ran.
    CannotConfine(String),
    /// The fence stood but the shell could not be started.
    CannotExec(String),
}

/// Runs the command under the fence; the calling process must still be
/// single-threaded (no async runtime, no threads started).
#[cfg(target_os = "linux")]
pub fn run(spec: &FenceSpec) -> Result<Outcome, RunError> {
    run::run(spec)
}

#[cfg(not(target_os = "linux"))]
pub fn run(_spec: &FenceSpec) -> Result<Outcome, RunError> {
    Err(RunError::CannotConfine(format!(
        "the fence needs Linux namespaces, seccomp and Landlock; this is {}",
        std::env::consts::OS
    )))
}
