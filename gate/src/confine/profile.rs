//! The fence's profiles: which layers a run requires, which it sets up when
//! it can, and which it leaves out. Data, not code paths: `run.rs` reads
//! these fields and nothing else decides.

/// How much a profile wants one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The run stops (exit 126) when the layer cannot be set up.
    Required,
    /// Set up when the machine offers it; the run goes on without it.
    BestEffort,
    /// Not set up.
    Off,
}

/// One profile of `bashgate run --profile NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    /// User, mount, network and pid namespaces.
    pub namespaces: Need,
    /// The protected paths bind-mounted read-only (needs the namespaces).
    pub mounts: Need,
    /// Bounding set emptied (root keeps file access), no-new-privileges.
    pub capabilities: Need,
    /// The system-call filter.
    pub seccomp: Need,
    /// Landlock, and the lowest ABI accepted when it is required.
    pub landlock: Need,
    pub landlock_min_abi: u8,
}

/// Every profile, the default first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "default",
        namespaces: Need::Required,
        mounts: Need::Required,
        capabilities: Need::Required,
        seccomp: Need::Required,
        landlock: Need::BestEffort,
        landlock_min_abi: 0,
    },
    Profile {
        name: "strict",
        namespaces: Need::Required,
        mounts: Need::Required,
        capabilities: Need::Required,
        seccomp: Need::Required,
        landlock: Need::Required,
        landlock_min_abi: 6,
    },
    Profile {
        name: "network-only",
        namespaces: Need::BestEffort,
        mounts: Need::Off,
        capabilities: Need::BestEffort,
        seccomp: Need::Required,
        landlock: Need::BestEffort,
        landlock_min_abi: 0,
    },
];

impl Profile {
    /// The profile called `name`; the error lists the known ones.
    pub fn named(name: &str) -> Result<Profile, String> {
        PROFILES
            .iter()
            .find(|p| p.name == name)
            .copied()
            .ok_or_else(|| {
                let known: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
                format!("unknown profile {name:?} (known: {})", known.join(", "))
            })
    }

    pub fn default_profile() -> Profile {
        PROFILES[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        assert_eq!(
            Profile::named("default").unwrap(),
            Profile::default_profile()
        );
        assert_eq!(Profile::named("strict").unwrap().landlock_min_abi, 6);
        assert_eq!(Profile::named("network-only").unwrap().mounts, Need::Off);
        assert!(Profile::named("lax").unwrap_err().contains("network-only"));
    }
}
