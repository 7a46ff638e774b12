//! Landlock, where the kernel has it: no TCP bind or connect (ABI 4), and
//! no abstract unix socket or signal reaching outside the fence (ABI 6).
//! Files are not restricted here: Landlock grants access to trees, it
//! cannot take one path out of a writable tree; the mount layer does that.

use landlock::{Access, AccessNet, Ruleset, RulesetAttr, RulesetStatus, Scope, ABI};

/// Applies what `abi` offers; returns the ABI enforced (0: none).
pub fn restrict(abi: i32) -> Result<i32, String> {
    if abi < 4 {
        return Ok(0);
    }
    let target = if abi >= 6 { ABI::V6 } else { ABI::V4 };
    let mut rs = Ruleset::default()
        .handle_access(AccessNet::from_all(target))
        .map_err(|e| e.to_string())?;
    if abi >= 6 {
        rs = rs
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| e.to_string())?;
    }
    let status = rs
        .create()
        .and_then(|r| r.restrict_self())
        .map_err(|e| format!("Landlock refused the ruleset ({e})"))?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Ok(0),
        _ => Ok(if abi >= 6 { 6 } else { 4 }),
    }
}
