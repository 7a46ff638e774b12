//! The shape every policy layer has, and what a layer sees of a call.
//!
//! A layer looks at one call and passes, decides (deny ends the walk, asks
//! are gathered), doubts (the path policy could not settle where a command
//! reaches: its verdict counts as at least `unknown`), or gives an ask that
//! stands only if the command would not run fenced ([`Step::Bounded`]).
//! What a layer needs from the gate around it (the configuration, the Cop,
//! the secrets scanner) comes through [`Env`], so layers never reach into
//! the engine.

use std::path::Path;

use bashgate_analyzer::{Analysis, Invocation};

use crate::call::ToolCall;
use crate::config::{Config, ServiceConfig};
use crate::cop::{CopResult, Question};
use crate::decision::{excerpt, Decision};
use crate::secret_paths::SecretPaths;
use crate::secrets::Scanner;
use crate::taint::{StateError, Taint};

/// One policy layer (named apart from [`crate::decision::Layer`], which says
/// in a decision which part of the gate decided).
pub trait PolicyLayer {
    fn check(&self, call: &Call, env: &dyn Env) -> Step;
}

/// A layer's answer.
#[derive(Debug)]
pub enum Step {
    /// Nothing to say.
    Pass,
    /// A deny (ends the walk) or an ask (kept until the end).
    Decide(Decision),
    /// Cannot tell: the command's verdict counts as at least `unknown`.
    Doubt,
    /// An ask that a fence bounding the command's writes settles: the
    /// verdict counts as at least `unknown`, and the ask stands only if
    /// the command would not run fenced. `why` says, for the fenced run's
    /// reason, what the fence settles.
    Bounded { ask: Decision, why: String },
}

impl From<Option<Decision>> for Step {
    fn from(d: Option<Decision>) -> Step {
        d.map_or(Step::Pass, Step::Decide)
    }
}

/// What the layers need from the gate around them.
pub trait Env {
    fn config(&self) -> &Config;
    /// The configuration file in force, protected from the agent.
    fn config_file(&self) -> Option<&Path>;
    /// The tool-input keys that name files (`file_path`, `path`...).
    fn path_keys(&self) -> &[String];
    fn scanner(&self) -> &Scanner;
    fn secret_paths(&self) -> &SecretPaths;
    /// Asks the Cop, through the session's cache.
    fn review(&self, q: &Question) -> CopResult;
    /// Called before an operation that may block (a plugin).
    fn before_slow(&self);
    /// The project's working tree, as the surface anchored it (the hook:
    /// the client's project directory, else the session's first root).
    fn project(&self) -> Option<&Path> {
        None
    }
}

/// A call as the layers see it: the tool call, what kind of tool it is,
/// and the session's taint.
pub struct Call<'a> {
    pub tool: &'a ToolCall<'a>,
    pub subject: Subject<'a>,
    pub taint: &'a Result<Taint, StateError>,
}

/// What kind of call it is, with what each kind carries.
pub enum Subject<'a> {
    Bash(BashCall<'a>),
    /// One of the client's workspace tools (Read, Edit, Glob...).
    Local,
    Service(ServiceCall<'a>),
}

/// A Bash call: the command and its analysis.
pub struct BashCall<'a> {
    pub command: &'a str,
    pub analysis: &'a Analysis,
    pub cwd: &'a Path,
}

/// A call to a service (an MCP server, WebFetch...).
pub struct ServiceCall<'a> {
    pub name: &'a str,
    /// The tool's own name within the service.
    pub tool: &'a str,
    pub trust: &'a ServiceConfig,
    /// Declared (built in or configured), not assumed.
    pub known: bool,
}

impl ServiceCall<'_> {
    /// One of the service's declared read tools (`call` is the full tool name).
    pub fn is_read(&self, call: &str) -> bool {
        self.trust
            .read_tools
            .iter()
            .any(|t| t == self.tool || t == call)
    }

    /// How reasons name the service.
    pub fn label(&self) -> String {
        if self.known {
            format!("service `{}`", self.name)
        } else {
            format!(
                "unknown service `{}` (treated as public source, secret data, public sink, dangerous writes)",
                self.name
            )
        }
    }
}

impl Call<'_> {
    /// How reasons name the call: the command, or `this Read call`.
    pub fn what(&self) -> String {
        match &self.subject {
            Subject::Bash(b) => format!("`{}`", excerpt(b.command, 120)),
            _ => format!("this {} call", self.tool.tool),
        }
    }

    pub fn bash(&self) -> Option<&BashCall<'_>> {
        match &self.subject {
            Subject::Bash(b) => Some(b),
            _ => None,
        }
    }
}

impl BashCall<'_> {
    /// Invocations with a program name known statically.
    pub fn named(&self) -> impl Iterator<Item = (&str, &Invocation)> {
        self.analysis
            .invocations
            .iter()
            .filter_map(|i| i.program.as_deref().map(|p| (p, i)))
    }

    /// The command text a span covers, shortened for a reason line.
    pub fn snippet(&self, inv: &Invocation) -> String {
        let s = self
            .command
            .get(inv.span.start..inv.span.end)
            .unwrap_or(self.command);
        excerpt(s, 120)
    }
}
