//! Reading one `.jsonl` file into records, per the fields each set has.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::decode::{html_unescape, percent_decode};
use super::{expectation, Expect, Kind, Record};

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {source}")]
    Json {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Reviewed(String),
}

#[derive(Deserialize)]
struct Gtfo {
    binary: String,
    function: String,
    code: String,
}

#[derive(Deserialize)]
struct Alias {
    binary: String,
    alias_of: String,
}

#[derive(Deserialize)]
struct Revshell {
    section: String,
    command: String,
}

#[derive(Deserialize)]
struct Payload {
    payload: String,
    #[serde(default)]
    url_encoded: bool,
    #[serde(default)]
    html_escaped: bool,
}

#[derive(Deserialize)]
struct Tldr {
    page: String,
    command: String,
}

#[derive(Deserialize)]
struct Nl2bash {
    command: String,
    #[serde(default)]
    duplicate_of_earlier: bool,
}

#[derive(Deserialize)]
struct TsBash {
    file: String,
    input: String,
    expected_has_error: bool,
}

/// Reads `path` as a set of `kind`. NL2Bash duplicates are skipped;
/// encoded injection payloads yield the raw text and its decoded form.
pub fn load(path: &Path, kind: Kind) -> Result<Vec<Record>, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let json = |source| LoadError::Json {
            path: path.to_path_buf(),
            line: n,
            source,
        };
        let rec = |group: String, command: String| Record {
            line: n,
            expect: expectation(kind, &group),
            group,
            name: String::new(),
            command,
            alias_of: None,
        };
        match kind {
            Kind::Gtfobins | Kind::GtfobinsLegacy => {
                let r: Gtfo = serde_json::from_str(line).map_err(json)?;
                let mut record = rec(r.function, r.code);
                record.name = r.binary;
                out.push(record);
            }
            Kind::Aliases => {
                let r: Alias = serde_json::from_str(line).map_err(json)?;
                let mut record = rec(String::new(), r.binary.clone());
                record.name = r.binary;
                record.alias_of = Some(r.alias_of);
                out.push(record);
            }
            Kind::Revshells => {
                let r: Revshell = serde_json::from_str(line).map_err(json)?;
                out.push(rec(r.section, r.command));
            }
            Kind::Payloads => {
                let r: Payload = serde_json::from_str(line).map_err(json)?;
                if r.url_encoded || r.html_escaped {
                    let mut decoded = r.payload.clone();
                    if r.html_escaped {
                        decoded = html_unescape(&decoded);
                    }
                    if r.url_encoded {
                        decoded = percent_decode(&decoded);
                    }
                    out.push(rec("decoded".into(), decoded));
                }
                out.push(rec("raw".into(), r.payload));
            }
            Kind::Tldr => {
                let r: Tldr = serde_json::from_str(line).map_err(json)?;
                let mut record = rec(r.page.clone(), r.command);
                record.name = r.page;
                out.push(record);
            }
            Kind::Nl2bash => {
                let r: Nl2bash = serde_json::from_str(line).map_err(json)?;
                if !r.duplicate_of_earlier {
                    out.push(rec(String::new(), r.command));
                }
            }
            Kind::TsBash => {
                let r: TsBash = serde_json::from_str(line).map_err(json)?;
                let mut record = rec(r.file, r.input);
                record.expect = Expect {
                    never_safe: r.expected_has_error,
                    parse_clean: !r.expected_has_error,
                    ..Expect::default()
                };
                out.push(record);
            }
        }
    }
    Ok(out)
}
