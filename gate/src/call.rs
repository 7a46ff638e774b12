//! One tool call, as every surface (a hook, the daemon, the CLI) hands it
//! to the engine.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

pub struct ToolCall<'a> {
    pub session: &'a str,
    pub cwd: &'a Path,
    pub tool: &'a str,
    pub input: &'a Value,
    /// The client's id for this tool call (Claude Code's `tool_use_id`),
    /// when it gives one.
    pub call_id: Option<&'a str>,
    /// Whether the surface can run this call fenced.
    pub fence: &'a FenceOffer<'a>,
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

/// A surface's [`Fence`], found out when a decision first needs it. A hook
/// finds out by reading files and asking the kernel, which a provably local
/// command in a clean session never needs.
pub struct FenceOffer<'a> {
    known: OnceLock<Fence>,
    probe: Option<&'a (dyn Fn() -> Fence + Sync)>,
}

impl<'a> FenceOffer<'a> {
    /// An offer the surface already knows.
    pub fn known(fence: Fence) -> Self {
        FenceOffer {
            known: OnceLock::from(fence),
            probe: None,
        }
    }

    /// An offer `probe` finds out, at most once, when first asked.
    pub fn probed(probe: &'a (dyn Fn() -> Fence + Sync)) -> Self {
        FenceOffer {
            known: OnceLock::new(),
            probe: Some(probe),
        }
    }

    /// An offer nobody asks (confinement off): not offered if asked.
    pub const fn unasked() -> Self {
        FenceOffer {
            known: OnceLock::new(),
            probe: None,
        }
    }

    pub fn get(&self) -> &Fence {
        self.known
            .get_or_init(|| self.probe.map_or_else(Fence::not_offered, |probe| probe()))
    }

    pub fn offered(&self) -> bool {
        *self.get() == Fence::Offered
    }
}

impl std::fmt::Debug for FenceOffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.known.get() {
            Some(fence) => fence.fmt(f),
            None => f.write_str("FenceOffer(not asked yet)"),
        }
    }
}

impl ToolCall<'_> {
    /// The Bash command, when the input has one.
    pub fn command(&self) -> Option<&str> {
        self.input.get("command").and_then(Value::as_str)
    }
}
