//! Service gating: calls to MCP servers, WebFetch and the like, by the
//! service's declared trust and the session's taint. An admin workspace
//! (the clean room) may not touch a public source at all; a write
//! elsewhere goes through the gating matrix in `services.rs`.

use super::{reason, Call, Env, PolicyLayer, ServiceCall, Step, Subject};
use crate::config::Config;
use crate::cop::Question;
use crate::decision::{Decision, Layer, Permission};
use crate::rules::GateRule;
use crate::services::{self, Gate};
use crate::taint::Taint;

pub struct Service;

pub fn build(_cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(Service))
}

impl PolicyLayer for Service {
    fn check(&self, call: &Call, env: &dyn Env) -> Step {
        let Subject::Service(s) = &call.subject else {
            return Step::Pass;
        };
        let what = call.what();
        let label = s.label();
        if env.config().workspace.admin {
            if !s.trust.public_source {
                return Step::Pass;
            }
            let rule = GateRule::CleanRoom;
            return Step::Decide(Decision::deny(
                Layer::CleanRoom,
                rule,
                reason(
                    &what,
                    &format!("{label} can deliver untrusted content, and this is an admin workspace (the clean room)"),
                    rule,
                    "do this from a non-admin workspace",
                ),
            ));
        }
        if s.is_read(call.tool.tool) {
            return Step::Pass;
        }
        // A taint that cannot be read is an error, and the matrix assumes
        // the worst; the stronger of the two answers stands.
        let (taint, failed) = match call.taint {
            Ok(t) => (*t, None),
            Err(e) => (
                Taint {
                    corruption: true,
                    secret: true,
                },
                Some(Decision::on_error(
                    env.config().on_error,
                    Layer::State,
                    &format!("cannot read the session's taint: {e}"),
                )),
            ),
        };
        let matrix = matrix(call, s, taint, &what, &label, env);
        let d = match (failed, matrix) {
            (Some(f), Some(m)) => Some(if f.permission > m.permission { f } else { m }),
            (f, m) => f.or(m),
        };
        match d {
            Some(d) if d.permission != Permission::Allow => Step::Decide(d),
            _ => Step::Pass,
        }
    }
}

fn matrix(
    call: &Call,
    s: &ServiceCall,
    t: Taint,
    what: &str,
    label: &str,
    env: &dyn Env,
) -> Option<Decision> {
    match services::gate(s.trust, t) {
        Gate::Forbidden => {
            let rule = GateRule::ServiceForbidden;
            Some(Decision::deny(
                Layer::Service,
                rule,
                reason(
                    what,
                    &format!("writes to {label} are forbidden"),
                    rule,
                    "do not use this tool; ask the person if the change is needed",
                ),
            ))
        }
        Gate::HumanWrites => {
            let rule = GateRule::ServiceApproval;
            Some(Decision::ask(
                Layer::Service,
                rule,
                format!(
                    "bashgate asks the person about {what}: writes to {label} are irreversible or high-impact ({}).",
                    rule.tag()
                ),
            ))
        }
        Gate::HumanTrifecta => {
            let rule = GateRule::NeedsHuman;
            Some(Decision::ask(
                Layer::Service,
                rule,
                format!(
                    "bashgate asks the person about {what}: the session is {} and {label} is a public sink, so it could leak secrets to untrusted parties ({}).",
                    t.describe(),
                    rule.tag()
                ),
            ))
        }
        Gate::Cop => {
            let input = serde_json::to_string(call.tool.input).unwrap_or_default();
            let q = Question::Service {
                tool: call.tool.tool,
                input: &input,
            };
            env.review(&q)
                .decide(
                    Layer::Service,
                    env.config().on_error,
                    |_| {
                        format!(
                            "{what}: the session is {} and {label} is a public sink",
                            t.describe()
                        )
                    },
                    |r| {
                        let rule = GateRule::CopFlagged;
                        Decision::deny(
                            Layer::Service,
                            rule,
                            reason(
                                what,
                                &format!(
                                    "the session is {} and the reviewer flagged it: {r}",
                                    t.describe()
                                ),
                                rule,
                                "leave private data out of calls to public services, or ask the person",
                            ),
                        )
                    },
                )
                .err()
        }
        Gate::Allowed => None,
    }
}
