//! The paths the fence keeps read-only: one list, built from what the
//! analyzer's catalog knows (`analyzer/catalog.toml`: the persistence
//! places, and the control places that are an agent client's or
//! bashgate's, at the project root and the working directory), bashgate's
//! own files, the directories on PATH, and `gate/data/fence.toml`.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Table {
    home: Vec<String>,
    pub(crate) confinable_network: Vec<String>,
}

pub(crate) static TABLE: LazyLock<Table> =
    LazyLock::new(|| crate::data::parse(crate::data::FENCE, "fence"));

/// Where a run's protected paths are anchored.
pub struct Places<'a> {
    pub home: Option<&'a Path>,
    pub project_root: &'a Path,
    pub cwd: &'a Path,
    pub state_dir: &'a Path,
    /// `$PATH`.
    pub path_var: Option<&'a std::ffi::OsStr>,
}

/// Every path to keep read-only, absolute, most of them may not exist.
pub fn default_protected(at: &Places, extra: &[PathBuf]) -> Vec<PathBuf> {
    use bashgate_analyzer::catalog::persistence;
    let mut out: Vec<PathBuf> = Vec::new();
    let bases: Vec<&Path> = at
        .home
        .into_iter()
        .chain([at.project_root, at.cwd])
        .collect();
    for entry in persistence::PERSISTENCE_FILES
        .iter()
        .chain(persistence::PERSISTENCE_DIRS)
    {
        if let Some(rest) = entry.strip_prefix("~/") {
            out.extend(at.home.map(|h| h.join(rest)));
        } else if entry.starts_with('/') {
            out.push(PathBuf::from(entry));
        } else if entry.starts_with("etc/") || entry.starts_with("var/") {
            out.push(Path::new("/").join(entry));
        } else {
            out.extend(bases.iter().map(|b| b.join(entry)));
        }
    }
    // The files that decide what the agent's client or bashgate does next.
    for (name, kind) in persistence::CONTROL_PLACES {
        if matches!(*kind, "agent-client" | "bashgate") {
            out.push(at.project_root.join(name));
            out.push(at.cwd.join(name));
        }
    }
    if let Some(h) = at.home {
        out.extend(TABLE.home.iter().map(|rel| h.join(rel)));
    }
    out.push(at.state_dir.to_path_buf());
    out.extend(crate::config::candidate_files());
    if let Some(p) = at.path_var {
        out.extend(std::env::split_paths(p).filter(|d| d.is_absolute() && d.is_dir()));
    }
    out.extend(extra.iter().map(|p| at.cwd.join(p)));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reaches_every_kind_of_place() {
        let at = Places {
            home: Some(Path::new("/home/u")),
            project_root: Path::new("/home/u/proj"),
            cwd: Path::new("/home/u/proj/sub"),
            state_dir: Path::new("/home/u/.local/state/bashgate"),
            path_var: None,
        };
        let got = default_protected(&at, &[PathBuf::from("extra.txt")]);
        for want in [
            "/home/u/.bashrc",
            "/home/u/proj/.git/hooks",
            "/home/u/proj/.git/config",
            "/home/u/proj/sub/.git/hooks",
            "/home/u/.ssh",
            "/home/u/.claude",
            "/home/u/.claude.json",
            "/home/u/proj/.claude",
            "/home/u/proj/.bashgate.toml",
            "/home/u/proj/.mcp.json",
            "/home/u/proj/CLAUDE.md",
            "/home/u/proj/sub/.gemini",
            "/home/u/.local/bin",
            "/home/u/bin",
            "/etc/profile.d",
            "/var/spool/cron",
            "/home/u/.local/state/bashgate",
            "/home/u/proj/sub/extra.txt",
        ] {
            assert!(
                got.contains(&PathBuf::from(want)),
                "{want} missing from {got:#?}"
            );
        }
        assert!(got.iter().all(|p| p.is_absolute()));
    }
}
