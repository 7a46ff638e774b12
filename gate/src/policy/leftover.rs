//! A fenced command that created a control file the fence could not move
//! aside (`bashgate run` notes it in the state directory) has left
//! something that decides what later commands do. Until the file is gone,
//! every call goes to the person (`strict` denies): the gate cannot know
//! what the file will make the next command do.

use std::path::PathBuf;

use super::{Call, Env, PolicyLayer, Step};
use crate::config::{Config, Profile};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

pub struct LeftBehind {
    state_dir: PathBuf,
    profile: Profile,
}

pub fn build(cfg: &Config) -> Option<Box<dyn PolicyLayer + Send + Sync>> {
    Some(Box::new(LeftBehind {
        state_dir: cfg.state_dir(),
        profile: cfg.profile,
    }))
}

impl PolicyLayer for LeftBehind {
    fn check(&self, _call: &Call, _env: &dyn Env) -> Step {
        let left = bashgate_fence::left_behind(&self.state_dir);
        let Some(first) = left.first() else {
            return Step::Pass;
        };
        let rule = GateRule::FenceLeftBehind;
        let more = match left.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        let why = format!(
            "an earlier fenced command left {}{more} unchecked (a control file it created could not be moved aside, or the run was killed before it could check the tree); what it left can change what the next command does",
            first.display()
        );
        let instead = format!(
            "the person looks at it and removes what the command made (or, once satisfied, deletes {} and any {}* there)",
            bashgate_fence::left_behind_file(&self.state_dir).display(),
            self.state_dir.join(bashgate_fence::RUNNING_PREFIX).display()
        );
        Step::Decide(match self.profile {
            Profile::Strict => Decision::deny(
                Layer::Fence,
                rule,
                super::reason("this call", &why, rule, &instead),
            ),
            _ => Decision::ask(
                Layer::Fence,
                rule,
                format!(
                    "bashgate asks the person about this call: {why} ({}). Until then: {instead}.",
                    rule.tag()
                ),
            ),
        })
    }
}
