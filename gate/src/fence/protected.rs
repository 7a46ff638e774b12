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
    control_kinds: Vec<String>,
    devices: Vec<String>,
    writable_home: Vec<String>,
    caches_home: Vec<String>,
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

/// The names of the control places the fence keeps: the catalog's
/// control places of the kinds `control_kinds` in gate/data/fence.toml
/// names (`.git`, every client's settings and instructions, bashgate's
/// configuration, editor and toolchain settings).
pub fn control_names() -> Vec<String> {
    bashgate_analyzer::catalog::persistence::CONTROL_PLACES
        .iter()
        .filter(|(_, kind)| TABLE.control_kinds.iter().any(|k| k == kind))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The names of the directories that hold installed code
/// (`node_modules`, `site-packages`...): the catalog's control places of
/// kind `installed-code`.
pub fn installed_names() -> Vec<String> {
    bashgate_analyzer::catalog::persistence::CONTROL_PLACES
        .iter()
        .filter(|(_, kind)| *kind == "installed-code")
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The directories from the project root down to the working directory,
/// each of which a tool run in the working directory consults for its
/// control files (just the working directory when it is not beneath the
/// root).
fn chain(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    if !cwd.starts_with(root) {
        return vec![cwd.to_path_buf()];
    }
    cwd.ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_path_buf)
        .collect()
}

/// The scratch directories (the catalog's `[places] scratch`, and the
/// temporary directory the environment names unless it is or holds the
/// project or the home directory), symlinks resolved.
pub fn scratch_dirs(project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = listed_scratch();
    let tmp = canon(&std::env::temp_dir());
    let (project, home) = (canon(project), home.map(canon));
    let holds =
        |p: &Path| project.starts_with(p) || home.as_deref().is_some_and(|h| h.starts_with(p));
    if !holds(&tmp) && !out.contains(&tmp) {
        out.push(tmp);
    }
    out
}

/// The scratch places the analyzer's catalog lists (`[places] scratch`,
/// where a write is provably harmless), symlinks resolved.
fn listed_scratch() -> Vec<PathBuf> {
    bashgate_analyzer::Catalog::builtin()
        .places
        .scratch
        .iter()
        .map(|s| std::fs::canonicalize(s).unwrap_or_else(|_| PathBuf::from(s)))
        .collect()
}

/// Where a fenced command may write: the working tree (none when there is
/// no tree it may have), the devices in gate/data/fence.toml, the places
/// it lists under the home directory, and the person's `[confine]
/// writable`; under a profile without a private temporary directory (the
/// fence for writes), also the scratch directories and the caches.
pub fn writable(
    tree: Option<&Path>,
    at: &Places,
    extra: &[PathBuf],
    profile: &bashgate_fence::Profile,
) -> bashgate_fence::Writable {
    let mut trees: Vec<PathBuf> = tree.map(Path::to_path_buf).into_iter().collect();
    if let Some(h) = at.home {
        trees.extend(TABLE.writable_home.iter().map(|rel| h.join(rel)));
    }
    if !profile.private {
        // Only the listed scratch directories: `bashgate run` starts in
        // the agent's shell, whose `TMPDIR` the agent sets (one outside
        // them gets the private temporary directory instead). One that
        // holds the home directory (a home under /tmp) is not scratch to
        // the fence: Landlock cannot carve the home out of it.
        let home = at
            .home
            .map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
        trees.extend(
            listed_scratch()
                .into_iter()
                .filter(|d| !home.as_deref().is_some_and(|h| h.starts_with(d))),
        );
        if let Some(h) = at.home {
            trees.extend(TABLE.caches_home.iter().map(|rel| h.join(rel)));
        }
    }
    trees.extend(extra.iter().map(|p| at.cwd.join(p)));
    bashgate_fence::Writable {
        trees,
        files: TABLE.devices.iter().map(PathBuf::from).collect(),
    }
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
    // The files that decide what git, the agent's client, bashgate, an
    // editor or a toolchain does next, wherever a tool run here looks.
    let names = control_names();
    for dir in chain(at.project_root, at.cwd) {
        out.extend(names.iter().map(|n| dir.join(n)));
        // What the repository's configuration names elsewhere: its hooks
        // and included configuration are git's as much as `.git` is.
        out.extend(bashgate_fence::git::repository_places(
            &dir,
            at.home,
            Some(at.state_dir),
        ));
    }
    if let Some(h) = at.home {
        out.extend(TABLE.home.iter().map(|rel| h.join(rel)));
        // Every client's own settings (the client table); for a pattern,
        // the directory that holds what it matches.
        out.extend(
            crate::clients::user_settings().map(|rel| match rel.split_once('*') {
                Some((before, _)) => h.join(before.rsplit_once('/').map_or(before, |(d, _)| d)),
                None => h.join(rel),
            }),
        );
    }
    out.extend(crate::config::own_files(at.state_dir));
    if let Some(p) = at.path_var {
        // Those that do not exist yet too: one created would put its
        // programs ahead of the real ones.
        out.extend(std::env::split_paths(p).filter(|d| d.is_absolute()));
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
            cwd: Path::new("/home/u/proj/a/sub"),
            state_dir: Path::new("/home/u/.local/state/bashgate"),
            path_var: None,
        };
        let got = default_protected(&at, &[PathBuf::from("extra.txt")]);
        for want in [
            "/home/u/.bashrc",
            "/home/u/proj/.git/hooks",
            "/home/u/proj/.git/config",
            "/home/u/proj/a/sub/.git/hooks",
            "/home/u/proj/.git",
            "/home/u/proj/a/.git",
            "/home/u/proj/a/.cargo",
            "/home/u/proj/a/.vscode",
            "/home/u/.ssh",
            "/home/u/proj/.bashgate.toml",
            "/home/u/proj/.mcp.json",
            "/home/u/.local/bin",
            "/home/u/bin",
            "/etc/profile.d",
            "/var/spool/cron",
            "/home/u/.local/state/bashgate",
            "/home/u/proj/a/sub/extra.txt",
        ] {
            assert!(
                got.contains(&PathBuf::from(want)),
                "{want} missing from {got:#?}"
            );
        }
        assert!(got.iter().all(|p| p.is_absolute()));
        // Every control place of the kinds the fence keeps (clients'
        // settings and instructions among them), in each directory from
        // the project's root down.
        for name in control_names() {
            for dir in ["/home/u/proj", "/home/u/proj/a", "/home/u/proj/a/sub"] {
                assert!(got.contains(&Path::new(dir).join(&name)), "{dir}/{name}");
            }
        }
        // Every client's settings, at home and in each directory from the
        // project's root down (the client table).
        for c in crate::clients::all().values() {
            for f in c.user_settings.iter().filter(|f| !f.contains('*')) {
                assert!(got.contains(&Path::new("/home/u").join(f)), "~/{f}");
            }
            let top = c.hook_file.split('/').next().unwrap();
            for dir in ["/home/u/proj", "/home/u/proj/a", "/home/u/proj/a/sub"] {
                assert!(got.contains(&Path::new(dir).join(top)), "{dir}/{top}");
            }
        }
        // Above the project root is not the project's.
        assert!(!got.contains(&PathBuf::from("/home/u/.vscode")));
        // Installed code is the project's work, like its source.
        assert!(!got.contains(&PathBuf::from("/home/u/proj/node_modules")));
    }

    #[test]
    fn writes_go_to_the_tree_and_the_listed_places_only() {
        let at = Places {
            home: Some(Path::new("/home/u")),
            project_root: Path::new("/home/u/proj"),
            cwd: Path::new("/home/u/proj/a"),
            state_dir: Path::new("/home/u/.local/state/bashgate"),
            path_var: None,
        };
        let extra = [PathBuf::from("/var/cache/x")];
        let full = bashgate_fence::Profile::named("default").unwrap();
        let w = writable(Some(at.project_root), &at, &extra, &full);
        assert_eq!(w.trees[0], PathBuf::from("/home/u/proj"));
        assert!(w.trees.contains(&PathBuf::from("/var/cache/x")));
        assert!(w.trees.iter().all(|t| t != Path::new("/home/u")));
        assert!(w.files.contains(&PathBuf::from("/dev/null")));
        // The full fence gives no shared temporary directory and no cache.
        assert!(!w
            .trees
            .iter()
            .any(|t| t.starts_with("/tmp") || t.ends_with(".cache")));
        // The fence for writes adds the scratch directories and the
        // caches, never the home directory or a directory holding it.
        let writes = bashgate_fence::Profile::named(bashgate_fence::WRITES).unwrap();
        let w = writable(Some(at.project_root), &at, &extra, &writes);
        assert!(
            w.trees.contains(&PathBuf::from("/var/tmp")),
            "{:?}",
            w.trees
        );
        assert!(w.trees.contains(&PathBuf::from("/home/u/.cache")));
        assert!(w.trees.contains(&PathBuf::from("/home/u/.cargo")));
        assert!(w
            .trees
            .iter()
            .all(|t| !Path::new("/home/u/docs").starts_with(t)));
        let at_tmp = Places {
            home: Some(Path::new("/tmp")),
            ..at
        };
        let w = writable(Some(at.project_root), &at_tmp, &extra, &writes);
        assert!(
            !w.trees.iter().any(|t| t == Path::new("/tmp")),
            "{:?}",
            w.trees
        );
    }
}
