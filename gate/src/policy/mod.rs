//! The policy layers, in the order they run. Each looks at a call (a Bash
//! command, a workspace tool or a service call) and passes, decides,
//! doubts, or asks only if the command would not run fenced ([`Step`]);
//! the first deny wins and nothing a later layer says can undo it, asks
//! are gathered. What is left goes to the taint cascade.
//!
//! To add a layer: write a module with a type that implements
//! [`PolicyLayer`] and a `build` function, and put `build` in [`LAYERS`] where
//! it belongs in the order.

pub mod allowlist;
pub mod always;
pub mod denylist;
pub mod destructive;
pub mod gitguard;
pub mod gitindex;
pub mod incomplete;
pub mod layer;
pub mod leftover;
pub mod paths;
pub mod payload;
pub mod plugins;
pub mod selfguard;
pub mod service;
pub mod toolwrites;

pub use layer::{BashCall, Call, Env, PolicyLayer, ServiceCall, Step, Subject};

use crate::config::Config;
use crate::decision::Layer;
use crate::rules::GateRule;

/// Builds a layer for a configuration; `None` when the configuration turns
/// it off, so a layer that is off costs nothing (its tables are never read).
pub type Build = fn(&Config) -> Option<Box<dyn PolicyLayer + Send + Sync>>;

/// The order is the policy: what can never be allowed first, then the
/// built-in guards (a command not read to the end, a fence's leftovers,
/// destruction, bashgate's own files, a tainted session's writes), then
/// the user's lists, then services and secrets leaving the machine, then
/// plugins. Each layer is named by the [`Layer`] its decisions report (the
/// service layer also reports `clean-room`), so `bashgate config` lists
/// and `bashgate audit --layer` takes the same names.
pub const LAYERS: &[(Layer, Build)] = &[
    (Layer::Always, always::build),
    (Layer::Limits, incomplete::build),
    (Layer::Fence, leftover::build),
    (Layer::Destructive, destructive::build),
    (Layer::SelfProtection, selfguard::build),
    (Layer::ToolWrites, toolwrites::build),
    (Layer::Denylist, denylist::build),
    (Layer::Allowlist, allowlist::build),
    (Layer::GitGuard, gitguard::build),
    (Layer::Paths, paths::build),
    (Layer::Service, service::build),
    (Layer::Secrets, payload::build),
    (Layer::Plugin, plugins::build),
];

/// The layers a configuration turns on, in order.
pub fn build(cfg: &Config) -> Vec<Box<dyn PolicyLayer + Send + Sync>> {
    LAYERS.iter().filter_map(|(_, b)| b(cfg)).collect()
}

/// Writes a reason: what was stopped, why, which rule, what to do instead.
pub fn reason(what: &str, why: &str, rule: GateRule, instead: &str) -> String {
    let mut s = format!("bashgate stopped {what}: {why} ({}).", rule.tag());
    if !instead.is_empty() {
        s.push_str(" Instead: ");
        s.push_str(instead);
        if !instead.ends_with('.') {
            s.push('.');
        }
    }
    s
}

/// The last path component: `/usr/bin/sudo` is `sudo`.
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

#[cfg(test)]
mod tests {
    use super::LAYERS;
    use crate::decision::Layer;

    #[test]
    fn the_policy_layers_are_the_decisions_layers_in_the_same_order() {
        let at = |l: Layer| Layer::ALL.iter().position(|x| *x == l);
        let places: Vec<Option<usize>> = LAYERS.iter().map(|(l, _)| at(*l)).collect();
        assert!(places.iter().all(Option::is_some), "{places:?}");
        assert!(
            places.windows(2).all(|w| w[0] < w[1]),
            "Layer::ALL lists the policy layers in another order: {places:?}"
        );
    }
}
