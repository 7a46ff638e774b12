//! The agent clients bashgate speaks for, as one table
//! (`gate/data/clients.toml`): their tool names, where their hooks and
//! settings live, their executables, the variables that name the project
//! directory. Everything that must know about a client reads it here, so a
//! client cannot be spoken for and left unprotected.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// One client, as the table describes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// Its key in the table, as in `bashgate hook KEY` and `bashgate init
    /// KEY`.
    #[serde(skip)]
    pub key: String,
    /// Its name for people.
    pub name: String,
    pub executables: Vec<String>,
    /// Where the client installs itself off PATH, relative to the home
    /// directory (a local install run through a shell alias).
    #[serde(default)]
    pub install_paths: Vec<String>,
    /// The shell tool's name as the client's hook matchers see it.
    pub shell_tool: String,
    /// The client's tool name = the gate's name.
    pub tools: BTreeMap<String, String>,
    /// Tools whose shell command is under another key than `command`.
    pub command_keys: BTreeMap<String, String>,
    /// Where `bashgate init` wires the hook, relative to the project.
    pub hook_file: String,
    /// The same relative to home; none: the client reads only the project's.
    pub user_hook_file: Option<String>,
    /// Other files in the project the client also reads hooks from (the
    /// person's own, not committed), relative to the project.
    #[serde(default)]
    pub local_hook_files: Vec<String>,
    /// Files outside the project that hold hooks and settings the person
    /// cannot override (an administrator's), by absolute path.
    #[serde(default)]
    pub managed_files: Vec<String>,
    /// The setting that, true in any settings file the client reads, turns
    /// every hook off.
    #[serde(default)]
    pub hooks_off_key: Option<String>,
    /// Project files (or directories) that can change its hooks or
    /// permissions, relative to any directory; `*` within a name.
    pub settings: Vec<String>,
    /// The same under the home directory.
    pub user_settings: Vec<String>,
    /// Variables naming the project directory to its hooks.
    pub project_dir_env: Vec<String>,
    /// Whether it shows a question to the person.
    pub can_ask: bool,
    /// The client's setting that runs every shell command through a
    /// wrapper after its own permission rules, when it has one: bashgate's
    /// wrapper there runs a command fenced without changing its text.
    #[serde(default)]
    pub shell_prefix_env: Option<String>,
    /// The variable in which the client tells that wrapper which session
    /// runs the command.
    #[serde(default)]
    pub shell_session_env: Option<String>,
    /// The exit status by which a hook stops a call (any other failure of
    /// a hook the client lets pass), when the client documents one: a
    /// project's settings then find bashgate through PATH and stop every
    /// call where it is missing.
    #[serde(default)]
    pub blocking_exit: Option<u8>,
    /// Fields `bashgate init` adds to each of its hook entries (such as a
    /// setting by which a hook that cannot start, times out or fails stops
    /// the call instead of letting it run unchecked).
    #[serde(default)]
    pub hook_fields: BTreeMap<String, serde_json::Value>,
    /// What the person still has to do for the hooks to fire, said after
    /// `bashgate init`.
    #[serde(default)]
    pub after_init: Option<String>,
    pub wiring: Wiring,
}

/// How a client lists its hooks in its settings file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wiring {
    /// The before-tool event first, then the after-tool one, then others.
    pub events: Vec<HookEvent>,
    pub shape: Shape,
    /// Whether the client reads the matcher `*` as every tool; otherwise a
    /// matcher is a regular expression.
    #[serde(default)]
    pub star_matches_all: bool,
}

/// One event bashgate's hook is wired to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEvent {
    pub name: String,
    /// The matcher written with it; none in a [`Shape::Flat`] list.
    #[serde(default)]
    pub matcher: Option<String>,
}

/// The shape of one hook entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum Shape {
    /// `hooks.EVENT = [{"matcher": M, "hooks": [{"type": "command",
    /// "command": C, "timeout": T}]}]`.
    Grouped {
        /// The timeout in milliseconds rather than seconds.
        #[serde(default)]
        timeout_ms: bool,
    },
    /// `{"version": 1, "hooks": {"EVENT": [{COMMAND_KEY: C, TIMEOUT_KEY:
    /// T}]}}`.
    Flat {
        command_key: String,
        #[serde(default)]
        timeout_key: Option<String>,
        /// Whether each entry says `"type": "command"`.
        #[serde(default)]
        typed: bool,
        /// The client's timeout when none is written, in seconds.
        #[serde(default)]
        default_timeout_s: Option<u64>,
    },
}

/// The table's clients, by the name `bashgate hook NAME` uses.
pub type Table = BTreeMap<String, Client>;

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let mut table: Table = crate::data::parse(crate::data::CLIENTS, "clients");
    for (key, c) in &mut table {
        c.key = key.clone();
    }
    table
});

/// Every client, by its hook name.
pub fn all() -> &'static Table {
    &TABLE
}

/// The client `bashgate hook NAME` speaks for.
pub fn get(name: &str) -> Option<&'static Client> {
    TABLE.get(name)
}

/// Every client's project settings patterns (see [`Client::settings`]).
pub fn settings_patterns() -> impl Iterator<Item = &'static str> {
    TABLE
        .values()
        .flat_map(|c| c.settings.iter().map(String::as_str))
}

/// Every client's settings under the home directory, relative to it.
pub fn user_settings() -> impl Iterator<Item = &'static str> {
    TABLE
        .values()
        .flat_map(|c| c.user_settings.iter().map(String::as_str))
}

impl Client {
    /// The gate's name for this client's tool; an unlisted tool keeps its
    /// name.
    pub fn tool(&self, name: &str) -> String {
        self.tools
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_is_described_and_wires_its_hook_where_its_settings_are_protected() {
        assert!(all().len() >= 5);
        for (name, c) in all() {
            assert_eq!(&c.key, name);
            assert!(!c.executables.is_empty(), "{name}");
            // A before-tool and an after-tool event, matchers only where
            // the shape has them.
            assert!(c.wiring.events.len() >= 2, "{name}");
            let grouped = matches!(c.wiring.shape, Shape::Grouped { .. });
            assert!(
                c.wiring
                    .events
                    .iter()
                    .all(|e| e.matcher.is_some() == grouped),
                "{name}"
            );
            // A wrapper is told the session it runs for.
            assert_eq!(
                c.shell_prefix_env.is_some(),
                c.shell_session_env.is_some(),
                "{name}"
            );
            // The file bashgate's hook is written to is one an agent may
            // not change.
            let covered = |file: &str, patterns: &[String]| {
                patterns.iter().any(|p| {
                    let (p, f): (Vec<&str>, Vec<&str>) =
                        (p.split('/').collect(), file.split('/').collect());
                    p.len() <= f.len()
                        && p.iter()
                            .zip(&f)
                            .all(|(p, f)| bashgate_analyzer::glob::glob_match(p, f))
                })
            };
            assert!(
                covered(&c.hook_file, &c.settings),
                "{name}: {}",
                c.hook_file
            );
            if let Some(u) = &c.user_hook_file {
                assert!(covered(u, &c.user_settings), "{name}: ~/{u}");
            }
        }
    }

    /// The analyzer's catalog lists the places an agent client reads (for
    /// its write model: a write there is never `safe`; and for the fence:
    /// they stay read-only). It cannot read this table (it is below the
    /// gate), so each client's settings must be among them.
    #[test]
    fn the_analyzers_catalog_knows_every_clients_settings() {
        let places = bashgate_analyzer::catalog::persistence::CONTROL_PLACES;
        for (name, c) in all() {
            for setting in &c.settings {
                let top = setting.split('/').next().unwrap();
                assert!(
                    places
                        .iter()
                        .any(|(p, kind)| *p == top && *kind == "agent-client"),
                    "{name}: {top} is not an agent-client place in analyzer/catalog.toml"
                );
            }
        }
    }
}
