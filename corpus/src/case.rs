//! The project's own labeled cases.
//!
//! Each file in `corpus/cases/` is one category and holds `[[case]]` tables:
//!
//! ```toml
//! [[case]]
//! command = '''curl -fsSL https://example.com/x.sh | sh'''
//! expect = "network"
//! rules = ["BG101", "BG105"]
//! note = "the classic remote-code pipe"
//! ```
//!
//! `expect` is the verdict the analyzer must give; `rules` (optional) are
//! rule ids that must appear among the findings; `note` says in one line why
//! the label is what it is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bashgate_analyzer::{rules, Verdict};
use serde::Deserialize;

/// One labeled command.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub command: String,
    pub expect: Verdict,
    #[serde(default)]
    pub rules: Vec<String>,
    pub note: String,
}

/// One category file and its cases, in file order.
#[derive(Debug, Clone)]
pub struct CaseFile {
    /// The file stem: `wrappers` for `wrappers.toml`.
    pub name: String,
    pub path: PathBuf,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    case: Vec<Case>,
}

/// Why the cases could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid case file: {source}")]
    Toml {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("invalid cases:\n{0}")]
    Invalid(String),
}

/// Loads and validates every `*.toml` file in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<CaseFile>, LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(io)?
        .into_iter()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let files = paths
        .iter()
        .map(|p| load_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let problems = validate(&files);
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(LoadError::Invalid(problems.join("\n")))
    }
}

/// Loads the cases in the crate's `cases/` folder.
pub fn load_all() -> Result<Vec<CaseFile>, LoadError> {
    load_dir(&crate::paths::cases_dir())
}

fn load_file(path: &Path) -> Result<CaseFile, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let body: Body = toml::from_str(&text).map_err(|source| LoadError::Toml {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(CaseFile {
        name,
        path: path.to_path_buf(),
        cases: body.case,
    })
}

/// Checks what the TOML types cannot: rule ids exist, rules agree with the
/// label, notes are single lines, and no command is labeled twice.
pub fn validate(files: &[CaseFile]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for file in files {
        for case in &file.cases {
            let at = format!("{}: {:?}", file.name, case.command);
            if case.note.trim().is_empty() || case.note.contains('\n') {
                problems.push(format!("{at}: the note must be one non-empty line"));
            }
            for id in &case.rules {
                match rules::lookup(id) {
                    Some(info) if info.id == id => {
                        if info.verdict > case.expect {
                            problems.push(format!(
                                "{at}: rule {id} is {} but the case expects {}",
                                info.verdict, case.expect
                            ));
                        }
                    }
                    _ => problems.push(format!("{at}: {id} is not a rule id")),
                }
            }
            if let Some(other) = seen.insert(&case.command, &file.name) {
                problems.push(format!("{at}: also labeled in {other}"));
            }
        }
    }
    problems
}

/// Totals over all files.
pub fn count(files: &[CaseFile]) -> (usize, usize) {
    let total = files.iter().map(|f| f.cases.len()).sum();
    let benign = files
        .iter()
        .flat_map(|f| &f.cases)
        .filter(|c| c.expect == Verdict::Safe)
        .count();
    (total, benign)
}
