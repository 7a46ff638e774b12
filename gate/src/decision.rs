//! What the gate answers: allow, deny or ask, which layer and rule decided,
//! and a reason written for both the agent and the person.

use serde::Serialize;

use crate::call::FenceKind;
use crate::config::OnError;
use crate::rules::GateRule;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

impl Permission {
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Ask => "ask",
            Permission::Deny => "deny",
        }
    }
}

/// The part of the gate that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    Input,
    Config,
    Always,
    Denylist,
    Allowlist,
    GitGuard,
    Paths,
    Plugin,
    Cascade,
    Service,
    Secrets,
    CleanRoom,
    State,
    /// The person's earlier answer about the same command.
    Remembered,
    /// The person answered this call (a daemon approval).
    Person,
    /// The protection profile's destructive-command layer.
    Destructive,
    /// A command the analyzer could not read to the end.
    Limits,
    /// What an earlier fenced command left that the fence could not move
    /// aside.
    Fence,
    /// bashgate's own state, configuration and hook settings.
    SelfProtection,
    /// A tainted session's file-writing tools held to the fence's places.
    ToolWrites,
}

impl Layer {
    /// Every part of the gate that can decide: the input and the
    /// configuration, the policy layers in the order they run (the order
    /// of `policy::LAYERS`, which names its layers by these), then what
    /// comes after them.
    pub const ALL: [Layer; 20] = [
        Layer::Input,
        Layer::Config,
        Layer::State,
        Layer::Always,
        Layer::Limits,
        Layer::Fence,
        Layer::Destructive,
        Layer::SelfProtection,
        Layer::ToolWrites,
        Layer::Denylist,
        Layer::Allowlist,
        Layer::GitGuard,
        Layer::Paths,
        Layer::Service,
        Layer::CleanRoom,
        Layer::Secrets,
        Layer::Plugin,
        Layer::Remembered,
        Layer::Cascade,
        Layer::Person,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Input => "input",
            Layer::Config => "config",
            Layer::Always => "always",
            Layer::Denylist => "denylist",
            Layer::Allowlist => "allowlist",
            Layer::GitGuard => "git-guard",
            Layer::Paths => "paths",
            Layer::Plugin => "plugin",
            Layer::Cascade => "cascade",
            Layer::Service => "service",
            Layer::Secrets => "secrets",
            Layer::CleanRoom => "clean-room",
            Layer::State => "state",
            Layer::Remembered => "remembered",
            Layer::Person => "person",
            Layer::Destructive => "destructive",
            Layer::Limits => "limits",
            Layer::Fence => "fence",
            Layer::SelfProtection => "self-protection",
            Layer::ToolWrites => "tool-writes",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub permission: Permission,
    pub layer: Layer,
    /// The rule, when one rule decided.
    pub rule: Option<GateRule>,
    pub reason: String,
    /// An allow that holds only for the command run under `bashgate run`'s
    /// fence of this kind: the full one (no network, protected files
    /// read-only) or the one for writes (writes bounded, the network
    /// kept). A surface that cannot deliver it must not run the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<FenceKind>,
}

impl Decision {
    pub fn new(
        permission: Permission,
        layer: Layer,
        rule: Option<GateRule>,
        reason: String,
    ) -> Self {
        Decision {
            permission,
            layer,
            rule,
            reason,
            fence: None,
        }
    }

    /// An allow for the command run fenced.
    pub fn allow_confined(layer: Layer, reason: impl Into<String>) -> Self {
        let mut d = Decision::allow(layer, reason);
        d.fence = Some(FenceKind::Full);
        d
    }

    /// An allow for the command run with its writes bounded (the fence
    /// for writes, which keeps the network).
    pub fn allow_writes_fenced(layer: Layer, reason: impl Into<String>) -> Self {
        let mut d = Decision::allow(layer, reason);
        d.fence = Some(FenceKind::Writes);
        d
    }

    /// Whether the decision holds only for the command run fenced.
    pub fn confined(&self) -> bool {
        self.fence.is_some()
    }

    pub fn allow(layer: Layer, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Allow, layer, None, reason.into())
    }

    pub fn deny(layer: Layer, rule: GateRule, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Deny, layer, Some(rule), reason.into())
    }

    pub fn ask(layer: Layer, rule: GateRule, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Ask, layer, Some(rule), reason.into())
    }

    /// Whether the person stands behind this decision (they approved this
    /// call, or the same command earlier in the session): an allow that a
    /// hook may pass to the client as an explicit approval.
    pub fn by_person(&self) -> bool {
        matches!(self.layer, Layer::Remembered | Layer::Person)
    }

    /// The decision for something that failed, per `on_error`: every failure
    /// is a decision, never a silent pass.
    pub fn on_error(on_error: OnError, layer: Layer, what: &str) -> Decision {
        let (permission, tail) = match on_error {
            OnError::Allow => (Permission::Allow, "on_error = \"allow\" lets it through"),
            OnError::Ask => (
                Permission::Ask,
                "on_error = \"ask\": approve it only if you expect this command",
            ),
            OnError::Deny => (
                Permission::Deny,
                "on_error = \"deny\" blocks it; retry, or ask the person to check bashgate",
            ),
        };
        let rule = GateRule::GateError;
        Decision::new(
            permission,
            layer,
            Some(rule),
            format!(
                "bashgate could not finish its check: {what}; {tail} ({}).",
                rule.tag()
            ),
        )
    }

    /// What the person is told when the configuration cannot be read: the
    /// call is asked about, never let through unchecked.
    pub fn bad_config(error: &str) -> Decision {
        Decision::new(
            Permission::Ask,
            Layer::Config,
            Some(GateRule::GateError),
            format!(
                "bashgate's configuration is invalid, so it cannot check this call: {error}. \
                 Fix the configuration; until then every call asks the person."
            ),
        )
    }
}

/// Shortens a command for a reason line: first line, at most `max` chars.
pub fn excerpt(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}
