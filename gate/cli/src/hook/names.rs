//! Other clients' tool names and inputs in the gate's terms (the client
//! table, `bashgate::clients`).

use serde_json::Value;

fn client(key: &str) -> &'static bashgate::clients::Client {
    bashgate::clients::get(key).expect("every hook client is in gate/data/clients.toml")
}

/// The gate's name for the tool of the client `key`; an unlisted tool
/// keeps its name.
pub fn tool(key: &str, name: &str) -> String {
    client(key).tool(name)
}

/// The tool input with its shell command under `command`, where the
/// client `key` keeps it under another key. The other keys stay as they
/// are.
pub fn input(key: &str, tool: &str, mut input: Value) -> Value {
    let key = client(key).command_keys.get(tool).map(String::as_str);
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
        for (key, c) in bashgate::clients::all() {
            // The shell tool as each client's matchers see it is its Bash.
            assert_eq!(tool(key, &c.shell_tool), "Bash", "{key}");
            // Unlisted tools keep their names (and are unknown services).
            assert_eq!(tool(key, "save_memory"), "save_memory", "{key}");
        }
    }

    #[test]
    fn commands_under_other_keys_are_copied() {
        let mut copied = 0;
        for (key, c) in bashgate::clients::all() {
            for (t, under) in &c.command_keys {
                let v = input(key, t, json!({ under.as_str(): "curl x{enter}" }));
                assert_eq!(v["command"], "curl x{enter}", "{key} {t}");
                copied += 1;
            }
            let v = input(key, &c.shell_tool, json!({"command": "ls"}));
            assert_eq!(v, json!({"command": "ls"}), "{key}");
        }
        assert!(copied > 0, "no client keeps a command under another key");
    }
}
