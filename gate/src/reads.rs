//! What a finished tool call read, as taint sources: secret files named by
//! a Bash command's arguments or input redirects, network commands (when
//! configured), secret files opened by workspace tools, and the declared
//! trust of services.

use bashgate_analyzer::{analyze, Verdict};
use serde_json::Value;

use crate::call::ToolCall;
use crate::config::Config;
use crate::decision::excerpt;
use crate::secret_paths::SecretPaths;
use crate::services::{self, ToolKind, Tools};
use crate::taint::{self, Source};

/// The taint sources a finished call adds.
pub fn sources(
    call: &ToolCall,
    kind: &ToolKind,
    config: &Config,
    tools: &Tools,
    secret_paths: &SecretPaths,
) -> Vec<Source> {
    let now = taint::now_ms();
    let mut out = Vec::new();
    let mut add = |flag: &str, detail: String| {
        out.push(Source {
            flag: flag.into(),
            tool: call.tool.to_string(),
            detail,
            at_ms: now,
        })
    };
    match kind {
        ToolKind::Bash => {
            let Some(command) = call.command() else {
                return out;
            };
            let analysis = analyze(command);
            if let Some((a, p)) = secret_paths.read_by(&analysis) {
                add(
                    "secret",
                    format!("`{}` reads {a} ({p})", excerpt(command, 80)),
                );
            }
            if config.taint.network_commands_corrupt && analysis.verdict == Verdict::Network {
                add(
                    "corruption",
                    format!("`{}` reached the network", excerpt(command, 80)),
                );
            }
        }
        ToolKind::Local => {
            let opened = tools
                .path_keys()
                .iter()
                .filter_map(|k| call.input.get(k).and_then(Value::as_str))
                .find_map(|p| secret_paths.matches(p).map(|pat| (p, pat)));
            if let Some((p, pat)) = opened {
                add("secret", format!("read {p} ({pat})"));
            }
        }
        ToolKind::Service {
            name, trust, known, ..
        } => {
            let t = services::taint_of(trust);
            let label = if *known { "" } else { " (unknown service)" };
            if t.corruption {
                add("corruption", format!("{name} is a public source{label}"));
            }
            if t.secret {
                add("secret", format!("{name} holds secret data{label}"));
            }
        }
    }
    out
}
