//! The three verdicts and how they combine.

use serde::{Deserialize, Serialize};

/// What the analyzer can say about a command.
///
/// The order matters: `Safe < Unknown < Network`, and the verdict of a whole
/// command is the worst verdict of anything in it ("worst segment wins").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Provably local: nothing in the command can reach the network or run
    /// code the analyzer cannot see.
    Safe,
    /// Not provable either way.
    Unknown,
    /// Something in the command can reach the network.
    Network,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Unknown => "unknown",
            Verdict::Network => "network",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        match s {
            "safe" => Some(Verdict::Safe),
            "unknown" => Some(Verdict::Unknown),
            "network" => Some(Verdict::Network),
            _ => None,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_wins() {
        assert_eq!(Verdict::Safe.max(Verdict::Unknown), Verdict::Unknown);
        assert_eq!(Verdict::Network.max(Verdict::Unknown), Verdict::Network);
        assert_eq!(Verdict::parse("network"), Some(Verdict::Network));
        assert_eq!(Verdict::parse("bogus"), None);
    }
}
