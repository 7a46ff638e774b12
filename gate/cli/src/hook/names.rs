//! Other clients' tool names and inputs in the gate's terms
//! (`gate/data/clients.toml`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Client {
    tools: BTreeMap<String, String>,
    command_keys: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    codex: Client,
    gemini: Client,
    copilot: Client,
    cursor: Client,
}

static TABLE: LazyLock<Table> =
    LazyLock::new(|| bashgate::data::parse(bashgate::data::CLIENTS, "clients"));

#[derive(Debug, Clone, Copy)]
pub enum ClientName {
    Codex,
    Gemini,
    Copilot,
    Cursor,
}

fn client(c: ClientName) -> &'static Client {
    match c {
        ClientName::Codex => &TABLE.codex,
        ClientName::Gemini => &TABLE.gemini,
        ClientName::Copilot => &TABLE.copilot,
        ClientName::Cursor => &TABLE.cursor,
    }
}

/// The gate's name for the client's tool; an unlisted tool keeps its name.
pub fn tool(c: ClientName, name: &str) -> String {
    client(c)
        .tools
        .get(name)
        .cloned()
        .unwrap_or_else(|| name.to_string())
}

/// The tool input with its shell command under `command`, where the
/// client keeps it under another key. The other keys stay as they are.
pub fn input(c: ClientName, tool: &str, mut input: Value) -> Value {
    let key = client(c).command_keys.get(tool).map(String::as_str);
    if let (Some(key), Value::Object(o)) = (key, &mut input) {
        if let Some(v) = o.get(key).cloned() {
            o.insert("command".into(), v);
        }
    }
    input
}

/// A string field of an event, empty strings read as missing.
pub fn text(o: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    o.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_client_renames_its_shell_tool_to_bash() {
        assert_eq!(tool(ClientName::Gemini, "run_shell_command"), "Bash");
        assert_eq!(tool(ClientName::Copilot, "bash"), "Bash");
        assert_eq!(tool(ClientName::Cursor, "Shell"), "Bash");
        assert_eq!(tool(ClientName::Codex, "Bash"), "Bash");
        // Unlisted tools keep their names (and are unknown services).
        assert_eq!(tool(ClientName::Gemini, "save_memory"), "save_memory");
    }

    #[test]
    fn commands_under_other_keys_are_copied() {
        let v = input(
            ClientName::Copilot,
            "write_bash",
            json!({"input": "curl x{enter}"}),
        );
        assert_eq!(v["command"], "curl x{enter}");
        let v = input(ClientName::Copilot, "bash", json!({"command": "ls"}));
        assert_eq!(v, json!({"command": "ls"}));
    }
}
