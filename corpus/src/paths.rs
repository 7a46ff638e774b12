//! Where things live: the workspace, the own cases, the external corpora
//! and the report.

use std::path::{Path, PathBuf};

/// The environment variable naming the folder of external corpora.
pub const CORPORA_ENV: &str = "BASHGATE_EXTERNAL_CORPORA";

/// The workspace root (the folder holding the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the corpus crate lives inside the workspace")
        .to_path_buf()
}

/// `corpus/cases/`: the project's own labeled cases.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// `docs/accuracy.md`: the generated report.
pub fn report_path() -> PathBuf {
    workspace_root().join("docs").join("accuracy.md")
}

/// The external corpora folder: `$BASHGATE_EXTERNAL_CORPORA` when set and
/// not empty, else `../shared/corpora` from the workspace root.
pub fn corpora_dir() -> PathBuf {
    match std::env::var_os(CORPORA_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => workspace_root().join("..").join("shared").join("corpora"),
    }
}
