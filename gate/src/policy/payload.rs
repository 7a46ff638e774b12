//! Secrets in what leaves the machine: a Bash command that reaches the
//! network, or the input of a write to a service, that holds something
//! looking like a credential asks the person first; so does a command that
//! reaches the network and reads a secret file itself (`cat .env | curl
//! -d @- …`), whatever the session's taint: the secret travels in that one
//! command.

use bashgate_analyzer::Verdict;

use super::{Call, Env, PolicyLayer, Step, Subject};
use crate::config::Config;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

pub struct Payload;

pub fn build(_cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(Payload))
}

impl PolicyLayer for Payload {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let (text, what) = match &call.subject {
            Subject::Bash(b) if b.analysis.verdict == Verdict::Network => {
                (b.command.to_string(), "it reaches the network and contains")
            }
            Subject::Service(s) if !env.config().workspace.admin && !s.is_read(call.tool.tool) => (
                serde_json::to_string(call.tool.input).unwrap_or_default(),
                "its input contains",
            ),
            _ => return Step::Pass,
        };
        if let Subject::Bash(b) = &call.subject {
            if let Some((written, pattern)) = env.secret_paths().read_by(b.analysis) {
                let rule = GateRule::SecretExfiltration;
                // The pattern is worth naming only where it is not the name.
                let matched = if written == pattern {
                    String::new()
                } else {
                    format!(" (it matches `{pattern}`)")
                };
                return Step::Decide(Decision::ask(
                    Layer::Secrets,
                    rule,
                    format!(
                        "bashgate asks the person about {}: it reaches the network and reads `{written}`, a secret file{matched}, in the same command ({}). Approve only if sending it is intended; otherwise leave the file out.",
                        call.what(),
                        rule.tag()
                    ),
                ));
            }
        }
        let Some(hit) = env.scanner().scan(&text) else {
            return Step::Pass;
        };
        let rule = GateRule::SecretInPayload;
        Step::Decide(Decision::ask(
            Layer::Secrets,
            rule,
            format!(
                "bashgate asks the person about {}: {what} what looks like a {} ({}) ({}). Approve only if sending it is intended.",
                call.what(),
                hit.kind,
                hit.masked,
                rule.tag()
            ),
        ))
    }
}
