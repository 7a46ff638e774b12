//! Other clients' tool names and inputs in the gate's terms (the client
//! table, `bashgate::clients`).

use serde_json::Value;

#[derive(Debug, Clone, Copy)]
pub enum ClientName {
    Codex,
    Gemini,
    Copilot,
    Cursor,
}

impl ClientName {
    /// The client's name in the table (and in `bashgate hook NAME`).
    pub fn key(self) -> &'static str {
        match self {
            ClientName::Codex => "codex",
            ClientName::Gemini => "gemini",
            ClientName::Copilot => "copilot",
            ClientName::Cursor => "cursor",
        }
    }
}

fn client(c: ClientName) -> &'static bashgate::clients::Client {
    bashgate::clients::get(c.key()).expect("every hook client is in gate/data/clients.toml")
}

/// The gate's name for the client's tool; an unlisted tool keeps its name.
pub fn tool(c: ClientName, name: &str) -> String {
    client(c).tool(name)
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
        // The shell tool as each client's matchers see it is its Bash.
        for c in [
            ClientName::Codex,
            ClientName::Gemini,
            ClientName::Copilot,
            ClientName::Cursor,
        ] {
            assert_eq!(tool(c, &client(c).shell_tool), "Bash", "{c:?}");
        }
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
