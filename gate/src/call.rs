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
    /// The client's id for this tool call (`tool_use_id` in its hook events),
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

/// Which fence a command runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FenceKind {
    /// The person's fence profile (`[confine] profile`): no network,
    /// protected files read-only.
    Full,
    /// Writes bounded to the working tree, the temporary directories and
    /// the caches; the network kept (profile `writes`), for a session that
    /// has read nothing untrusted.
    Writes,
}

/// A surface's [`Fence`] of each kind, found out when a decision first
/// needs it. A hook finds out by reading files and asking the kernel,
/// which a provably local command never needs.
pub struct FenceOffer<'a> {
    full: OnceLock<Fence>,
    writes: OnceLock<Fence>,
    probe: Option<&'a (dyn Fn(FenceKind) -> Fence + Sync)>,
}

impl<'a> FenceOffer<'a> {
    /// An offer the surface already knows (the same for both kinds).
    pub fn known(fence: Fence) -> Self {
        FenceOffer::known_each(fence.clone(), fence)
    }

    /// An offer the surface already knows, kind by kind.
    pub fn known_each(full: Fence, writes: Fence) -> Self {
        FenceOffer {
            full: OnceLock::from(full),
            writes: OnceLock::from(writes),
            probe: None,
        }
    }

    /// An offer `probe` finds out, at most once per kind, when first asked.
    pub fn probed(probe: &'a (dyn Fn(FenceKind) -> Fence + Sync)) -> Self {
        FenceOffer {
            full: OnceLock::new(),
            writes: OnceLock::new(),
            probe: Some(probe),
        }
    }

    /// An offer nobody asks (confinement off): not offered if asked.
    pub const fn unasked() -> Self {
        FenceOffer {
            full: OnceLock::new(),
            writes: OnceLock::new(),
            probe: None,
        }
    }

    /// The full fence's offer.
    pub fn get(&self) -> &Fence {
        self.of(FenceKind::Full)
    }

    pub fn of(&self, kind: FenceKind) -> &Fence {
        let cell = match kind {
            FenceKind::Full => &self.full,
            FenceKind::Writes => &self.writes,
        };
        cell.get_or_init(|| {
            self.probe
                .map_or_else(Fence::not_offered, |probe| probe(kind))
        })
    }

    /// Whether the full fence is offered.
    pub fn offered(&self) -> bool {
        self.offers(FenceKind::Full)
    }

    pub fn offers(&self, kind: FenceKind) -> bool {
        *self.of(kind) == Fence::Offered
    }
}

impl std::fmt::Debug for FenceOffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.full.get() {
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
