//! A command the analyzer could not read to the end (longer or more deeply
//! nested than its limits, or past its time budget), or could not read as
//! bash does (a parse error: `true# ; curl … | sh` is a word and two more
//! commands to bash, a comment to the grammar), is never allowed silently:
//! whatever hides past that point was not checked. The always-on layer has
//! already looked at every part that was read; this layer asks the person
//! about the rest (`strict` denies).

use bashgate_analyzer::Rule;

use super::{reason, Call, Env, PolicyLayer, Step};
use crate::config::{Config, Profile};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

pub struct Incomplete {
    profile: Profile,
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(Incomplete {
        profile: cfg.profile,
    }))
}

impl PolicyLayer for Incomplete {
    fn check(&self, call: &Call, _env: &dyn Env) -> Step {
        let Some(b) = call.bash() else {
            return Step::Pass;
        };
        let Some(f) = b
            .analysis
            .findings
            .iter()
            .find(|f| matches!(f.rule, Rule::LimitExceeded | Rule::ParseError))
        else {
            return Step::Pass;
        };
        let rule = GateRule::Incomplete;
        let why = format!(
            "bashgate could not read all of it ({}), so what lies past that point was not checked",
            f.message
        );
        let instead =
            "split the work into shorter commands, or write the long part to a file and run that";
        Step::Decide(match self.profile {
            Profile::Strict => Decision::deny(
                Layer::Limits,
                rule,
                reason("this command", &why, rule, instead),
            ),
            _ => Decision::ask(
                Layer::Limits,
                rule,
                format!(
                    "bashgate asks the person about this command: {why} ({}). If the person declines: {instead}.",
                    rule.tag()
                ),
            ),
        })
    }
}
