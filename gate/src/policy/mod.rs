//! The policy layers that run before the taint cascade, in order: always-on
//! denials, the denylist, the allowlist, the git guard, the path policy,
//! then plugins. First deny wins; nothing a later layer says can undo it.

pub mod allowlist;
pub mod always;
pub mod argv;
pub mod denylist;
pub mod gitguard;
pub mod paths;
pub mod plugins;
pub mod redirects;
pub mod selfguard;

use std::path::Path;

use bashgate_analyzer::{Analysis, Invocation};

/// A Bash call as the layers see it.
pub struct BashCall<'a> {
    pub command: &'a str,
    pub analysis: &'a Analysis,
    pub cwd: &'a Path,
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
        crate::decision::excerpt(s, 120)
    }
}

/// Writes a reason: what was stopped, why, which rule, what to do instead.
pub fn reason(what: &str, why: &str, rule: &str, instead: &str) -> String {
    let name = crate::rules::lookup(rule)
        .map(|r| r.name)
        .or_else(|| bashgate_analyzer::rules::lookup(rule).map(|r| r.name))
        .unwrap_or("");
    let mut s = format!("bashgate stopped {what}: {why} ({rule} {name}).");
    if !instead.is_empty() {
        s.push_str(" Instead: ");
        s.push_str(instead);
        if !instead.ends_with('.') {
            s.push('.');
        }
    }
    s
}

/// The last path component: `/usr/bin/sudo` is `sudo`.
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}
