//! Landlock, where the kernel has it, as a layer under the others: from ABI
//! 4 no TCP bind or connect at all (the network access rights are handled
//! and no rule grants any port); from ABI 6 the command cannot reach an
//! abstract unix socket or signal a process outside its Landlock domain.
//!
//! Files are not restricted here. Landlock only grants: a ruleset lists the
//! trees a process may write, so keeping `.git/hooks` read-only inside a
//! writable project would mean granting every other path of the project
//! one by one, including the ones created later. The mount layer takes a
//! path out of a writable tree; Landlock cannot.

use landlock::{AccessNet, Ruleset, RulesetAttr, RulesetStatus, Scope, ABI};

/// The Landlock ABI this kernel offers (0: none), without changing the
/// calling process.
pub fn abi() -> u8 {
    const VERSION: libc::c_ulong = 1; // LANDLOCK_CREATE_RULESET_VERSION
                                      // SAFETY: with a null attribute and the VERSION flag the call only
                                      // returns a number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    v.clamp(0, 255) as u8
}

/// Restricts the calling thread (and what it execs) with what `abi`
/// offers; returns the ABI whose restrictions are in force (0: none).
pub fn restrict(abi: u8) -> Result<u8, String> {
    if abi < 4 {
        return Ok(0);
    }
    use landlock::Access;
    let (target, in_force) = if abi >= 6 { (ABI::V6, 6) } else { (ABI::V4, 4) };
    let mut rs = Ruleset::default()
        .handle_access(AccessNet::from_all(target))
        .map_err(|e| format!("Landlock: {e}"))?;
    if in_force >= 6 {
        rs = rs
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| format!("Landlock: {e}"))?;
    }
    let status = rs
        .create()
        .and_then(|r| r.restrict_self())
        .map_err(|e| format!("Landlock refused the ruleset: {e}"))?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => in_force,
        RulesetStatus::PartiallyEnforced => 4.min(in_force),
        RulesetStatus::NotEnforced => 0,
    })
}
