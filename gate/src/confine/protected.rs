//! The protected set: the paths `bashgate run` keeps read-only. One list
//! built from what the project already knows, so the fence and the analyzer
//! agree: the analyzer's persistence paths (`persistence_files` and
//! `persistence_dirs` in `analyzer/catalog.toml`, the BG213 rule), bashgate's
//! own state and configuration, the agent client's settings, `~/.ssh`, and
//! every directory on `PATH`.

use std::path::{Component, Path, PathBuf};

use bashgate_analyzer::Catalog;

use crate::config;

/// Files of the agent client (Claude Code) that decide what runs next,
/// relative to the project root and the working directory.
const CLIENT_PROJECT_FILES: &[&str] = &[".claude/settings.json", ".claude/settings.local.json"];

/// The same, relative to the home directory, besides the ones above.
const HOME_ONLY: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".ssh",
    ".config/systemd/user",
];

/// Where one catalog entry lives.
enum Anchor<'a> {
    /// `~/bin`: under the home directory only.
    Home(&'a str),
    /// `/opt/homebrew/bin`, or `etc/profile.d` (`/etc/profile.d`).
    Absolute(PathBuf),
    /// `.git/hooks`, `.bashrc`: under the home directory, the project root
    /// and the working directory.
    Tail(&'a str),
}

fn anchor(entry: &str) -> Anchor<'_> {
    if let Some(rest) = entry.strip_prefix("~/") {
        Anchor::Home(rest)
    } else if entry.starts_with('/') {
        Anchor::Absolute(PathBuf::from(entry))
    } else if ["etc/", "var/", "usr/"]
        .iter()
        .any(|p| entry.starts_with(p))
    {
        Anchor::Absolute(Path::new("/").join(entry))
    } else {
        Anchor::Tail(entry)
    }
}

/// The protected paths for a run, absolute and lexically normalized, each
/// once, in a stable order. Paths that do not exist are kept: the fence
/// quarantines them if the command creates them. `extra` is added as given
/// (relative entries against `cwd`).
pub fn default_protected(
    home: Option<&Path>,
    project_root: &Path,
    cwd: &Path,
    state_dir: &Path,
    extra: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        let p = normalize(&cwd.join(p));
        if !out.contains(&p) {
            out.push(p);
        }
    };
    let catalog = Catalog::builtin();
    let bases: Vec<&Path> = home.into_iter().chain([project_root, cwd]).collect();
    for entry in catalog
        .persistence_files
        .iter()
        .chain(&catalog.persistence_dirs)
    {
        match anchor(entry) {
            Anchor::Home(rest) => {
                if let Some(h) = home {
                    add(h.join(rest));
                }
            }
            Anchor::Absolute(p) => add(p),
            Anchor::Tail(t) => {
                for b in &bases {
                    add(b.join(t));
                }
            }
        }
    }
    // bashgate's own state and configuration.
    add(state_dir.to_path_buf());
    for f in config::candidate_files() {
        add(f);
    }
    for dir in [project_root, cwd] {
        add(dir.join(config::PROJECT_FILE));
        add(dir.join(config::LOCAL_FILE));
        for f in CLIENT_PROJECT_FILES {
            add(dir.join(f));
        }
    }
    if let Some(h) = home {
        for f in HOME_ONLY {
            add(h.join(f));
        }
    }
    // Every directory a later command is looked up in.
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.is_absolute() && dir.is_dir() {
                add(dir);
            }
        }
    }
    for p in extra {
        add(p.clone());
    }
    out
}

/// `a/./b/../c` → `a/c`, without touching the file system (symlinks are
/// the fence's business: it protects a link's target too).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_each_kind_of_entry() {
        let home = Path::new("/h");
        let got = default_protected(
            Some(home),
            Path::new("/p"),
            Path::new("/p/sub"),
            Path::new("/s/bashgate"),
            &[PathBuf::from("rel/x"), PathBuf::from("/abs/y")],
        );
        for want in [
            "/h/.bashrc",
            "/p/.bashrc",
            "/p/sub/.git/hooks",
            "/p/.git/hooks",
            "/h/bin",
            "/opt/homebrew/bin",
            "/etc/profile.d",
            "/var/spool/cron",
            "/s/bashgate",
            "/p/.bashgate.toml",
            "/p/sub/.bashgate.local.toml",
            "/p/.claude/settings.json",
            "/h/.claude/settings.local.json",
            "/h/.ssh",
            "/h/.config/systemd/user",
            "/p/sub/rel/x",
            "/abs/y",
        ] {
            assert!(
                got.contains(&PathBuf::from(want)),
                "{want} missing from {got:?}"
            );
        }
        assert!(
            !got.contains(&PathBuf::from("/p/bin")),
            "~/bin is home-only"
        );
        let unique: std::collections::HashSet<_> = got.iter().collect();
        assert_eq!(unique.len(), got.len());
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
