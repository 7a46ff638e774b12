//! Always-on denials, whatever the taint: reverse shells (`/dev/tcp`,
//! `/dev/udp` redirects) and remote code (network or decoded output fed to
//! a shell or interpreter). They come from the analyzer's own findings, so
//! they are found inside `bash -c`, `eval`, `$()` and wrappers too.

use bashgate_analyzer::Rule;

use super::{reason, BashCall, Call, Env, PolicyLayer, Step};
use crate::config::{AlwaysConfig, Config};
use crate::decision::{excerpt, Decision, Layer};
use crate::rules::GateRule;

pub struct Always(AlwaysConfig);

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(Always(cfg.always.clone())))
}

impl PolicyLayer for Always {
    fn check(&self, call: &Call, _env: &dyn Env) -> Step {
        call.bash().and_then(|b| check(&self.0, b)).into()
    }
}

pub fn check(cfg: &AlwaysConfig, call: &BashCall) -> Option<Decision> {
    for f in &call.analysis.findings {
        let (enabled, rule, instead) = match f.rule {
            Rule::DevTcpRedirect => (
                cfg.reverse_shells,
                GateRule::ReverseShell,
                "use a network tool the person can review; a /dev/tcp socket is never allowed",
            ),
            Rule::RemoteCodePipe | Rule::DecodedCodePipe => (
                cfg.remote_code,
                GateRule::RemoteCode,
                "save the script to a file, read it, and run the specific commands you need",
            ),
            _ => continue,
        };
        if !enabled {
            continue;
        }
        let what = call
            .command
            .get(f.span.start..f.span.end)
            .filter(|s| !s.is_empty())
            .unwrap_or(call.command);
        let why = format!("{} [{} {}]", f.message, f.rule.id(), f.rule.info().name);
        return Some(Decision::deny(
            Layer::Always,
            rule,
            reason(&format!("`{}`", excerpt(what, 120)), &why, rule, instead),
        ));
    }
    None
}
