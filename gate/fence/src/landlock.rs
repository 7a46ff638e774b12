//! Landlock, where the kernel has it:
//! - writes by allowlist (ABI 2): a fenced command may create, change,
//!   remove, rename or link files only beneath the places it is given
//!   (the working tree, its private temporary directory, the caches the
//!   person lists) and write only the devices it is given. Everything
//!   else, the home directory and `/proc` included, is read-only to it,
//!   and a unix socket cannot be bound or unlinked outside those places.
//!   ABI 1 is not used for files: it refuses every rename across
//!   directories, even inside the tree. Without ABI 3, truncating a file
//!   is not a write Landlock can see.
//! - no TCP bind or connect (ABI 4);
//! - no abstract unix socket or signal reaching outside the fence (ABI 6).

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, BitFlags, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use super::Writable;

/// The oldest ABI whose file rules the fence uses.
pub const FILES_ABI: i32 = 2;

/// What [`restrict`] enforced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Enforced {
    /// The ABI in force (0: none).
    pub abi: i32,
    /// Whether writes are held to the allowlist.
    pub files: bool,
}

fn abi_of(n: i32) -> ABI {
    match n {
        ..=0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// The write rights the fence handles at `abi`. Device ioctls are left
/// alone: the terminal a command was given keeps working.
fn write_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_write(abi) & !AccessFs::IoctlDev
}

/// Applies what `abi` offers; `writable` is used from ABI [`FILES_ABI`],
/// and the network rules and scoping only when `network` is fenced.
pub fn restrict(abi: i32, writable: &Writable, network: bool) -> Result<Enforced, String> {
    let files = abi >= FILES_ABI;
    let net = network && abi >= 4;
    if !files && !net {
        return Ok(Enforced::default());
    }
    let target = abi_of(abi.min(7));
    let mut rs = Ruleset::default();
    if files {
        rs = rs
            .handle_access(write_rights(target))
            .map_err(|e| e.to_string())?;
    }
    if net {
        rs = rs
            .handle_access(AccessNet::from_all(target))
            .map_err(|e| e.to_string())?;
    }
    if network && abi >= 6 {
        rs = rs
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| e.to_string())?;
    }
    let mut created = rs.create().map_err(|e| e.to_string())?;
    if files {
        // A place that does not exist gets no rule (and so stays closed).
        created = created
            .add_rules(path_beneath_rules(&writable.trees, write_rights(target)))
            .and_then(|c| c.add_rules(path_beneath_rules(&writable.files, write_rights(target))))
            .map_err(|e| format!("Landlock refused a rule ({e})"))?;
    }
    let status = created
        .restrict_self()
        .map_err(|e| format!("Landlock refused the ruleset ({e})"))?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Ok(Enforced::default()),
        _ => Ok(Enforced {
            abi: abi.min(7),
            files,
        }),
    }
}
