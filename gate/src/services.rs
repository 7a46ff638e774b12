//! Tools other than Bash: the client's local tools, and services (MCP
//! servers `mcp__NAME__tool`, WebFetch, WebSearch, anything unknown) with
//! their declared trust and the gating matrix that keeps the agent from
//! holding untrusted input, sensitive data and an untrusted output at once.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::{Config, ServiceConfig, Writes};
use crate::taint::Taint;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    local: Vec<String>,
    path_keys: Vec<String>,
    services: BTreeMap<String, ServiceConfig>,
}

pub struct Tools {
    data: Data,
}

/// How the gate sees a tool.
#[derive(Debug, Clone)]
pub enum ToolKind {
    Bash,
    /// Acts on the workspace only.
    Local,
    /// A service: its name, the tool's own name within it, its trust, and
    /// whether it was declared (built in or configured).
    Service {
        name: String,
        tool: String,
        trust: ServiceConfig,
        known: bool,
    },
}

impl Tools {
    pub fn new() -> Tools {
        Tools {
            data: crate::data::parse(crate::data::TOOLS, "tools"),
        }
    }

    pub fn path_keys(&self) -> &[String] {
        &self.data.path_keys
    }

    pub fn classify(&self, tool: &str, config: &Config) -> ToolKind {
        if tool == "Bash" {
            return ToolKind::Bash;
        }
        let (name, short) = match tool.strip_prefix("mcp__") {
            Some(rest) => match rest.split_once("__") {
                Some((server, t)) => (server.to_string(), t.to_string()),
                None => (rest.to_string(), String::new()),
            },
            None => {
                if self.data.local.iter().any(|l| l == tool) {
                    return ToolKind::Local;
                }
                (tool.to_string(), tool.to_string())
            }
        };
        let configured = config
            .services
            .get(&name)
            .or_else(|| config.services.get(tool));
        let (trust, known) = match configured.or_else(|| self.data.services.get(&name)) {
            Some(t) => (t.clone(), true),
            None => (ServiceConfig::unknown(), false),
        };
        ToolKind::Service {
            name,
            tool: short,
            trust,
            known,
        }
    }
}

impl Default for Tools {
    fn default() -> Self {
        Tools::new()
    }
}

/// The gating matrix's answer for a write to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Forbidden,
    /// `dangerous_writes = true`.
    HumanWrites,
    /// Corruption and secret taint and a public sink: the lethal trifecta.
    HumanTrifecta,
    /// Corruption taint and a public sink.
    Cop,
    Allowed,
}

/// The gating matrix for a write to a service, first matching row wins:
/// forbidden writes are blocked, risky writes need a person, corruption and
/// secret taint with a public sink need a person, corruption taint with a
/// public sink goes to the reviewer, anything else is allowed.
pub fn gate(trust: &ServiceConfig, taint: Taint) -> Gate {
    match trust.dangerous_writes {
        Writes::Forbidden => return Gate::Forbidden,
        Writes::Risky => return Gate::HumanWrites,
        Writes::Safe => {}
    }
    if taint.corruption && taint.secret && trust.public_sink {
        Gate::HumanTrifecta
    } else if taint.corruption && trust.public_sink {
        Gate::Cop
    } else {
        Gate::Allowed
    }
}

/// The taint a service sets when the agent reads from it.
pub fn taint_of(trust: &ServiceConfig) -> Taint {
    Taint {
        corruption: trust.public_source,
        secret: trust.secret_data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(sink: bool, writes: Writes) -> ServiceConfig {
        ServiceConfig {
            public_source: false,
            secret_data: false,
            public_sink: sink,
            dangerous_writes: writes,
            read_tools: vec![],
        }
    }

    const T: [Taint; 4] = [
        Taint {
            corruption: false,
            secret: false,
        },
        Taint {
            corruption: true,
            secret: false,
        },
        Taint {
            corruption: false,
            secret: true,
        },
        Taint {
            corruption: true,
            secret: true,
        },
    ];

    // The gating matrix, every row.
    #[test]
    fn gating_matrix() {
        for t in T {
            assert_eq!(gate(&svc(true, Writes::Forbidden), t), Gate::Forbidden);
            assert_eq!(gate(&svc(false, Writes::Risky), t), Gate::HumanWrites);
        }
        assert_eq!(gate(&svc(true, Writes::Safe), T[3]), Gate::HumanTrifecta);
        assert_eq!(gate(&svc(true, Writes::Safe), T[1]), Gate::Cop);
        assert_eq!(gate(&svc(true, Writes::Safe), T[2]), Gate::Allowed);
        assert_eq!(gate(&svc(true, Writes::Safe), T[0]), Gate::Allowed);
        for t in T {
            assert_eq!(gate(&svc(false, Writes::Safe), t), Gate::Allowed);
        }
    }

    #[test]
    fn unknown_services_are_all_true() {
        let tools = Tools::new();
        let c = Config::default();
        match tools.classify("mcp__mystery__do", &c) {
            ToolKind::Service {
                name,
                tool,
                trust,
                known,
            } => {
                assert_eq!(
                    (name.as_str(), tool.as_str(), known),
                    ("mystery", "do", false)
                );
                assert!(trust.public_source && trust.secret_data && trust.public_sink);
                assert_eq!(trust.dangerous_writes, Writes::Risky);
                for t in T {
                    assert_eq!(gate(&trust, t), Gate::HumanWrites);
                }
            }
            k => panic!("{k:?}"),
        }
        assert!(matches!(
            tools.classify("SomeNewTool", &c),
            ToolKind::Service { known: false, .. }
        ));
    }

    #[test]
    fn builtins() {
        let tools = Tools::new();
        let c = Config::default();
        assert!(matches!(tools.classify("Bash", &c), ToolKind::Bash));
        assert!(matches!(tools.classify("Read", &c), ToolKind::Local));
        match tools.classify("WebFetch", &c) {
            ToolKind::Service { trust, known, .. } => {
                assert!(known && trust.public_source && !trust.secret_data);
            }
            k => panic!("{k:?}"),
        }
    }
}
