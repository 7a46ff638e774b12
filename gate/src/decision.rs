//! What the gate answers: allow, deny or ask, which layer and rule decided,
//! and a reason written for both the agent and the person.

use serde::Serialize;

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
}

impl Layer {
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
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub permission: Permission,
    pub layer: Layer,
    /// A rule id (`BG105`, `BG401`...) when one rule decided.
    pub rule: Option<String>,
    pub reason: String,
}

impl Decision {
    pub fn new(permission: Permission, layer: Layer, rule: Option<&str>, reason: String) -> Self {
        Decision {
            permission,
            layer,
            rule: rule.map(str::to_string),
            reason,
        }
    }

    pub fn allow(layer: Layer, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Allow, layer, None, reason.into())
    }

    pub fn deny(layer: Layer, rule: &str, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Deny, layer, Some(rule), reason.into())
    }

    pub fn ask(layer: Layer, rule: &str, reason: impl Into<String>) -> Self {
        Decision::new(Permission::Ask, layer, Some(rule), reason.into())
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
