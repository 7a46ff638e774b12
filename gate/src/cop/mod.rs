//! The Cop: an LLM reviewer asked over HTTP whether a call is an
//! exfiltration or network-abuse attempt. Anthropic's Messages API or an
//! OpenAI-compatible chat completions endpoint, chosen in `[cop]`; the key
//! comes from an environment variable. Nothing here runs (no runtime, no
//! client) until a decision actually needs the Cop.

pub mod cache;
pub mod http;
pub mod parse;

use std::time::Duration;

use crate::config::{CopConfig, OnError, Provider};
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;

/// Why the reviewer gave no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CopError {
    /// It could not be asked, or its answer could not be received.
    #[error("{0}")]
    Exchange(String),
    /// It answered, but not with exactly one readable verdict.
    #[error("{0}")]
    Unreadable(String),
}

/// What the Cop said, or why it could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopResult {
    Clear(String),
    Flagged(String),
    /// No key configured: nobody to ask but the person.
    Unavailable(String),
    /// It was asked and did not answer usably.
    Failed(String),
}

impl CopResult {
    /// The one mapping from a review to a decision, for every layer that
    /// asks the Cop. `Ok` carries a clearance's reason; otherwise the
    /// decision: `flagged` words the objection, a missing Cop asks the
    /// person (with `unavailable` saying what was in doubt), and a failing
    /// Cop is `on_error`.
    pub fn decide(
        self,
        layer: Layer,
        on_error: OnError,
        unavailable: impl FnOnce(&str) -> String,
        flagged: impl FnOnce(String) -> Decision,
    ) -> Result<String, Decision> {
        match self {
            CopResult::Clear(r) => Ok(r),
            CopResult::Flagged(r) => Err(flagged(r)),
            CopResult::Unavailable(why) => {
                let rule = GateRule::CopUnavailable;
                Err(Decision::ask(
                    layer,
                    rule,
                    format!(
                        "bashgate asks the person about {}, and the reviewer is not available ({why}) ({}).",
                        unavailable(&why),
                        rule.tag()
                    ),
                ))
            }
            CopResult::Failed(why) => Err(Decision::on_error(
                on_error,
                layer,
                &format!("the reviewer failed: {why}"),
            )),
        }
    }
}

const BASH_PROMPT: &str = include_str!("../../data/cop_bash_prompt.txt");
const PATH_PROMPT: &str = include_str!("../../data/cop_path_prompt.txt");
const SERVICE_PROMPT: &str = include_str!("../../data/cop_service_prompt.txt");

/// What the Cop is asked about.
pub enum Question<'a> {
    Bash {
        command: &'a str,
    },
    Paths {
        command: &'a str,
        allowed_dirs: &'a [String],
        cwd: &'a str,
        unsettled: &'a [String],
    },
    Service {
        tool: &'a str,
        input: &'a str,
    },
}

impl Question<'_> {
    /// A stable name for the cache key.
    pub fn kind(&self) -> &'static str {
        match self {
            Question::Bash { .. } => "bash",
            Question::Paths { .. } => "paths",
            Question::Service { .. } => "service",
        }
    }

    pub fn subject(&self) -> String {
        match self {
            Question::Bash { command } => command.to_string(),
            Question::Paths {
                command,
                allowed_dirs,
                cwd,
                ..
            } => {
                format!("{cwd}\0{}\0{command}", allowed_dirs.join("\0"))
            }
            Question::Service { tool, input } => format!("{tool}\0{input}"),
        }
    }
}

/// Where the agent's commands run, as the reviewer is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunsIn {
    /// A hook on the person's own machine: their files and credentials are
    /// within reach.
    #[default]
    Workstation,
    /// A container whose host runs `bashgate serve`.
    Container,
}

impl RunsIn {
    /// Fills the prompts' `{where}`.
    fn describe(self) -> &'static str {
        match self {
            RunsIn::Workstation => {
                "directly on the user's own machine (a laptop or workstation), where the user's files, credentials and network access are within reach"
            }
            RunsIn::Container => {
                "inside a container on a host that gates it; the container holds the project and whatever credentials were given to it"
            }
        }
    }
}

/// A configured reviewer.
pub struct Cop {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    key: Option<Credential>,
    /// Why there is no reviewer, when there is none.
    missing: String,
    pub timeout: Duration,
    pub max_tokens: u32,
    bash_prompt: String,
    path_prompt: String,
}

#[derive(Clone)]
pub enum Credential {
    /// `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI).
    ApiKey(String),
    /// Anthropic's `ANTHROPIC_AUTH_TOKEN`: `Authorization: Bearer`.
    Bearer(String),
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Cop {
    /// The reviewer a configuration names; with no `[cop]` table there is
    /// none, whatever keys the environment holds.
    pub fn from_config(c: Option<&CopConfig>, runs_in: RunsIn) -> Cop {
        let Some(c) = c else {
            let mut cop = Cop::named(&CopConfig::default(), runs_in);
            cop.key = None;
            cop.missing =
                "no reviewer is configured; a [cop] table in the configuration turns it on".into();
            return cop;
        };
        Cop::named(c, runs_in)
    }

    fn named(c: &CopConfig, runs_in: RunsIn) -> Cop {
        let (url_env, default_url, default_model, default_key) = match c.provider {
            Provider::Anthropic => (
                "ANTHROPIC_BASE_URL",
                "https://api.anthropic.com",
                "claude-haiku-4-5",
                "ANTHROPIC_API_KEY",
            ),
            Provider::Openai => (
                "OPENAI_BASE_URL",
                "https://api.openai.com/v1",
                "gpt-4o-mini",
                "OPENAI_API_KEY",
            ),
        };
        let base_url = c
            .base_url
            .clone()
            .or_else(|| env(url_env))
            .unwrap_or_else(|| default_url.to_string())
            .trim_end_matches('/')
            .to_string();
        let key_env = c
            .api_key_env
            .clone()
            .unwrap_or_else(|| default_key.to_string());
        let mut key = env(&key_env).map(Credential::ApiKey);
        if key.is_none() && c.api_key_env.is_none() && c.provider == Provider::Anthropic {
            key = env("ANTHROPIC_AUTH_TOKEN").map(Credential::Bearer);
        }
        Cop {
            provider: c.provider,
            base_url,
            model: c.model.clone().unwrap_or_else(|| default_model.to_string()),
            missing: format!("no key in ${key_env}"),
            key,
            timeout: Duration::from_millis(c.timeout_ms),
            max_tokens: c.max_tokens,
            bash_prompt: c
                .bash_prompt
                .clone()
                .unwrap_or_else(|| BASH_PROMPT.to_string())
                .replace("{where}", runs_in.describe()),
            path_prompt: c
                .path_prompt
                .clone()
                .unwrap_or_else(|| PATH_PROMPT.to_string()),
        }
    }

    pub fn available(&self) -> bool {
        self.key.is_some()
    }

    fn prompts(&self, q: &Question) -> (String, String) {
        match q {
            Question::Bash { command } => (
                self.bash_prompt.clone(),
                format!("Bash command:\n{command}"),
            ),
            Question::Paths {
                command,
                allowed_dirs,
                cwd,
                unsettled,
            } => (
                self.path_prompt
                    .replace("{allowed_dirs}", &allowed_dirs.join("\n"))
                    .replace("{cwd}", cwd),
                format!(
                    "Bash command:\n{command}\n\nStatic analysis could not settle:\n- {}",
                    unsettled.join("\n- ")
                ),
            ),
            Question::Service { tool, input } => (
                SERVICE_PROMPT.to_string(),
                format!("Tool: {tool}\nInput:\n{input}"),
            ),
        }
    }

    /// Asks the Cop. Blocks for at most the configured timeout.
    pub fn review(&self, q: &Question) -> CopResult {
        let Some(key) = self.key.clone() else {
            return CopResult::Unavailable(self.missing.clone());
        };
        let (system, user) = self.prompts(q);
        match http::ask(self, &key, &system, &user) {
            Ok(text) => match parse::verdict(&text) {
                Ok((true, r)) => CopResult::Flagged(r),
                Ok((false, r)) => CopResult::Clear(r),
                Err(e) => CopResult::Failed(e.to_string()),
            },
            Err(e) => CopResult::Failed(e.to_string()),
        }
    }
}
