//! One tool call, as every surface (a hook, the daemon, the CLI) hands it
//! to the engine.

use std::path::Path;

use serde_json::Value;

pub struct ToolCall<'a> {
    pub session: &'a str,
    pub cwd: &'a Path,
    pub tool: &'a str,
    pub input: &'a Value,
}

impl ToolCall<'_> {
    /// The Bash command, when the input has one.
    pub fn command(&self) -> Option<&str> {
        self.input.get("command").and_then(Value::as_str)
    }
}
