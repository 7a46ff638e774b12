//! One tool call, as every surface (a hook, the daemon, the CLI) hands it
//! to the engine.

use std::path::Path;

use serde_json::Value;

pub struct ToolCall<'a> {
    pub session: &'a str,
    pub cwd: &'a Path,
    pub tool: &'a str,
    pub input: &'a Value,
    /// Whether the surface can run this call fenced.
    pub fence: &'a Fence,
}

/// Whether the surface that asks can run a Bash command under `bashgate
/// run`'s fence where the command will run (the client's machine or
/// container, which may not be the gate's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fence {
    /// It can: an allow-confined decision is delivered as a rewritten
    /// command.
    Offered,
    /// It cannot, and why (for the reason the person reads).
    Unavailable(String),
}

impl Fence {
    /// How a remote hook tells the daemon (`"fence"` in a check): this
    /// word, or why not.
    pub fn wire(&self) -> &str {
        match self {
            Fence::Offered => "offered",
            Fence::Unavailable(why) => why,
        }
    }

    pub fn from_wire(v: Option<&str>) -> Fence {
        match v {
            Some("offered") => Fence::Offered,
            Some(why) => Fence::Unavailable(why.to_string()),
            None => Fence::Unavailable("the client did not say it can run commands fenced".into()),
        }
    }

    /// For surfaces that never deliver confinement (the CLI's `check`).
    pub fn not_offered() -> Fence {
        Fence::Unavailable("this surface does not run commands".into())
    }
}

impl ToolCall<'_> {
    /// The Bash command, when the input has one.
    pub fn command(&self) -> Option<&str> {
        self.input.get("command").and_then(Value::as_str)
    }
}
