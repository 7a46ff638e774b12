//! Where a write lands, judged by place: a write is proven only when its
//! target lies in the work (the working tree's ordinary files) or in a
//! scratch place. Everything else (the home directory, any other absolute
//! path, a `..` that may leave the tree, a name only known at run time, and
//! the control places inside the tree) is not proven. The places that make
//! code run later are open-ended, so they are never listed as the ones to
//! avoid; the list is of where work may happen (`[places]` in catalog.toml).

use serde::Deserialize;

/// The catalog's `[places]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Places {
    /// Directories where anything below may be written: nothing reads
    /// configuration or code from them on its own (`/tmp`).
    #[serde(default)]
    pub scratch: Vec<String>,
    /// Paths that are no file on disk (`/dev/null`, `/dev/stdout`); a
    /// trailing `*` stands for one more component (`/dev/fd/*`).
    #[serde(default)]
    pub sinks: Vec<String>,
    /// Hidden names (a leading dot) that are ordinary files, read by no
    /// tool to decide what to run (`.gitignore`). Every other hidden name
    /// is a control place.
    #[serde(default)]
    pub ordinary_hidden: Vec<String>,
    /// Names that make a path a control place wherever they appear in it,
    /// as a directory or as the file written.
    #[serde(default)]
    pub control: Vec<ControlName>,
}

/// One name that marks a control place, and why.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlName {
    pub name: String,
    pub kind: ControlKind,
}

/// What a control place decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControlKind {
    /// git's own files: hooks, config, the pointers to other repositories.
    VersionControl,
    /// An agent client's settings, hooks, MCP servers or instructions.
    AgentClient,
    /// bashgate's own configuration.
    Bashgate,
    /// An editor's tasks and settings, which it runs on opening the folder.
    Editor,
    /// Which toolchain or interpreter runs, and with what configuration.
    Toolchain,
    /// Installed packages and compiled code, which run in place of the
    /// project's visible source.
    InstalledCode,
    /// Any other hidden name: tools keep their configuration there.
    Hidden,
}

impl ControlKind {
    pub fn describe(self) -> &'static str {
        match self {
            ControlKind::VersionControl => "git's own files",
            ControlKind::AgentClient => "an agent client's settings or instructions",
            ControlKind::Bashgate => "bashgate's configuration",
            ControlKind::Editor => "an editor's tasks and settings",
            ControlKind::Toolchain => "toolchain configuration",
            ControlKind::InstalledCode => "installed or compiled code",
            ControlKind::Hidden => "a hidden name, where tools keep their configuration",
        }
    }
}

/// How much of a path is known before it runs. A `*` in the path stands
/// for the unknown parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// All of it (a `*` is a character).
    Fully,
    /// Globs: each `*` stands for part of one component, and `**` for any
    /// path below, hidden names included (find's `{}`). `dotglob` says
    /// whether a leading wildcard may match a hidden name.
    Glob { dotglob: bool },
    /// A part only known at run time, which may hold `/` and `..`.
    RunTime,
}

impl Known {
    /// How much of a word's value is known, `dotglob` deciding what its
    /// globs can match.
    pub fn of(value: &crate::word::Value, dotglob: bool) -> Known {
        match value {
            crate::word::Value::Static(_) => Known::Fully,
            crate::word::Value::Glob(_) => Known::Glob { dotglob },
            crate::word::Value::Dynamic => Known::RunTime,
        }
    }
}

/// Where a written path lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The working tree's ordinary files.
    Work,
    /// A scratch place or a sink.
    Scratch,
    /// A control place, inside the tree or a scratch place: the name that
    /// makes it one, and what it decides.
    Control { name: String, kind: ControlKind },
    /// Somewhere the write is not proven.
    Outside(Outside),
}

/// Why a place is outside the work and the scratch places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    Home,
    Absolute,
    Parent,
    RunTime,
    /// Any path below (find's `{}`): `.git` and hidden names included.
    AnyBelow,
}

impl Place {
    pub fn proven(&self) -> bool {
        matches!(self, Place::Work | Place::Scratch)
    }
}

impl Places {
    /// Where writing `path` lands, the working directory being the work's.
    pub fn place(&self, path: &str, known: Known) -> Place {
        if self.is_sink(path) {
            return Place::Scratch;
        }
        if known == Known::RunTime && path.contains('*') {
            return Place::Outside(Outside::RunTime);
        }
        if path.starts_with('~') {
            return Place::Outside(Outside::Home);
        }
        let (rest, place) = match path.strip_prefix('/') {
            Some(abs) => match self.scratch_rest(abs) {
                Some(rest) => (rest, Place::Scratch),
                None => return Place::Outside(Outside::Absolute),
            },
            None => (path, Place::Work),
        };
        let components: Vec<&str> = rest
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if components.contains(&"..") {
            return Place::Outside(Outside::Parent);
        }
        if matches!(known, Known::Glob { .. }) && components.iter().any(|c| c.contains("**")) {
            return Place::Outside(Outside::AnyBelow);
        }
        for c in components {
            if let Some(control) = self.control(c, known) {
                return control;
            }
        }
        place
    }

    /// What `path` names below a scratch directory (`/tmp/x/y` is `x/y`),
    /// or `None` when it is under none.
    fn scratch_rest<'p>(&self, abs: &'p str) -> Option<&'p str> {
        let abs = abs.trim_start_matches('/');
        self.scratch.iter().find_map(|d| {
            let d = d.trim_matches('/');
            let rest = abs.strip_prefix(d)?;
            (rest.is_empty() || rest.starts_with('/')).then_some(rest)
        })
    }

    fn is_sink(&self, path: &str) -> bool {
        let mut p = path.to_string();
        while p.contains("//") {
            p = p.replace("//", "/");
        }
        self.sinks.iter().any(|s| match s.strip_suffix('*') {
            Some(dir) => p
                .strip_prefix(dir)
                .is_some_and(|rest| !rest.is_empty() && !rest.contains(['/', '.'])),
            None => p == *s,
        })
    }

    /// The listed control place an argument names anywhere in it, for
    /// programs whose writes are not modelled (most of their arguments are
    /// only read, so a hidden name alone does not count): a component
    /// between `/` or `=` (`x/.git/y`, `--dir=.claude`), or one that
    /// follows an option's letters (`-t.git`).
    pub fn control_in(&self, arg: &str) -> Option<String> {
        let option = arg.starts_with('-');
        arg.split(['/', '='])
            .find_map(|part| {
                self.control.iter().find(|c| {
                    part.strip_suffix(c.name.as_str()).is_some_and(|before| {
                        before.is_empty() || (option && before.starts_with('-'))
                    })
                })
            })
            .map(|c| c.name.clone())
    }

    /// Whether one component of a path makes it a control place.
    fn control(&self, component: &str, known: Known) -> Option<Place> {
        if component == "." || component == ".." {
            return None;
        }
        let glob = matches!(known, Known::Glob { .. }) && component.contains('*');
        let hit = |kind: ControlKind, name: &str| {
            Some(Place::Control {
                name: name.to_string(),
                kind,
            })
        };
        // Without dotglob, a pattern matches a hidden name only when it
        // starts with a dot itself; find's `**` matches every name.
        let reaches_hidden = component.starts_with('.')
            || component.contains("**")
            || (matches!(known, Known::Glob { dotglob: true }) && component.starts_with('*'));
        for c in &self.control {
            let matched = if glob {
                (reaches_hidden || !c.name.starts_with('.'))
                    && crate::glob::glob_match(component, &c.name)
            } else {
                component == c.name
            };
            if matched {
                return hit(c.kind, &c.name);
            }
        }
        let hidden = if glob {
            reaches_hidden
        } else {
            component.starts_with('.') && !self.ordinary_hidden.iter().any(|o| o == component)
        };
        if hidden {
            return hit(ControlKind::Hidden, component);
        }
        None
    }
}

/// Where a symbolic link made at `link` points, for judging by place: a
/// relative target is read from the link's directory (`ln -s ../x a/l`
/// points at `x`), with the `..` it cannot resolve kept.
pub fn link_target(link: &str, target: &str) -> String {
    if target.starts_with('/') || target.starts_with('~') {
        return target.to_string();
    }
    let dir = if link.ends_with('/') {
        link.trim_end_matches('/')
    } else {
        link.rsplit_once('/').map_or("", |(d, _)| d)
    };
    if dir.starts_with('/') || dir.starts_with('~') || dir.contains('*') {
        return format!("{dir}/{target}");
    }
    let mut parts: Vec<&str> = dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let mut climbs = 0;
    for p in target.split('/').filter(|p| !p.is_empty() && *p != ".") {
        // A `..` cancels a name, never another `..` (`../a/l` pointing at
        // `../../x` points two levels up).
        if p == ".." {
            if parts.last().is_some_and(|last| *last != "..") {
                parts.pop();
            } else {
                climbs += 1;
            }
        } else {
            parts.push(p);
        }
    }
    let mut out: Vec<&str> = vec![".."; climbs];
    out.extend(parts);
    if out.is_empty() {
        ".".into()
    } else {
        out.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    fn place(path: &str) -> Place {
        Catalog::builtin().places.place(path, Known::Fully)
    }

    #[test]
    fn the_work_and_the_scratch_places_are_proven() {
        for p in [
            "src/out.txt",
            "out.txt",
            "./build/",
            ".",
            "a/b/c.rs",
            ".gitignore",
            "sub/.gitignore",
            ".env",
        ] {
            assert_eq!(place(p), Place::Work, "{p}");
        }
        for p in [
            "/tmp/log",
            "/tmp",
            "//tmp//x",
            "/var/tmp/a/b",
            "/dev/shm/x",
            "/dev/null",
            "/dev/stderr",
            "/dev/fd/3",
        ] {
            assert_eq!(place(p), Place::Scratch, "{p}");
        }
    }

    #[test]
    fn everything_else_is_not() {
        for (p, why) in [
            ("~/.bashrc", Outside::Home),
            ("~", Outside::Home),
            ("~/projects/x.txt", Outside::Home),
            ("/etc/ssl/openssl.cnf", Outside::Absolute),
            ("/usr/lib/python3/dist-packages/x.pth", Outside::Absolute),
            ("/tmpx/y", Outside::Absolute),
            ("/home/u/proj/out.txt", Outside::Absolute),
            ("/dev/sda", Outside::Absolute),
            ("/dev/fd/../sda", Outside::Absolute),
            ("../x", Outside::Parent),
            ("a/../../x", Outside::Parent),
            ("/tmp/../etc/cron.d/x", Outside::Parent),
        ] {
            assert_eq!(place(p), Place::Outside(why), "{p}");
        }
    }

    #[test]
    fn control_places_at_any_depth() {
        for (p, kind) in [
            (".git/commondir", ControlKind::VersionControl),
            ("sub/.git", ControlKind::VersionControl),
            (
                "vendor/lib/.git/config.worktree",
                ControlKind::VersionControl,
            ),
            ("repo/HEAD", ControlKind::VersionControl),
            (".claude/settings.json", ControlKind::AgentClient),
            ("CLAUDE.md", ControlKind::AgentClient),
            ("docs/AGENTS.md", ControlKind::AgentClient),
            (".mcp.json", ControlKind::AgentClient),
            (".bashgate.toml", ControlKind::Bashgate),
            (".vscode/tasks.json", ControlKind::Editor),
            ("rust-toolchain.toml", ControlKind::Toolchain),
            (".cargo/config.toml", ControlKind::Toolchain),
            (
                "venv/lib/python3.11/site-packages/x.pth",
                ControlKind::InstalledCode,
            ),
            ("node_modules/.bin/jest", ControlKind::InstalledCode),
            (
                "pkg/__pycache__/m.cpython-311.pyc",
                ControlKind::InstalledCode,
            ),
            (".yarnrc.yml", ControlKind::Toolchain),
            (".prettierrc", ControlKind::Hidden),
            ("a/.envrc", ControlKind::Toolchain),
            ("a/.foorc", ControlKind::Hidden),
            (
                "/tmp/repo/.git/hooks/pre-commit",
                ControlKind::VersionControl,
            ),
        ] {
            match place(p) {
                Place::Control { kind: k, .. } => assert_eq!(k, kind, "{p}"),
                other => panic!("{p}: {other:?}"),
            }
        }
    }

    #[test]
    fn links_point_from_their_directory() {
        assert_eq!(link_target("a/b/l", "../x"), "a/x");
        assert_eq!(link_target("a/l", "../../x"), "../x");
        assert_eq!(link_target("l", "x"), "x");
        assert_eq!(link_target("dir/", "../y"), "y");
        assert_eq!(link_target("a/l", "/etc/x"), "/etc/x");
        assert_eq!(link_target("/tmp/l", "x"), "/tmp/x");
        assert_eq!(link_target("../a/l", "../../x"), "../../x");
    }

    #[test]
    fn arguments_naming_control_places() {
        let places = &Catalog::builtin().places;
        assert_eq!(places.control_in("x/.git/y").as_deref(), Some(".git"));
        assert_eq!(
            places.control_in("--dir=.claude").as_deref(),
            Some(".claude")
        );
        assert_eq!(places.control_in("-t.git").as_deref(), Some(".git"));
        assert_eq!(places.control_in("src/.envrc").as_deref(), Some(".envrc"));
        assert_eq!(places.control_in("src/.vimrc"), None);
        assert_eq!(places.control_in("x.git"), None);
        assert_eq!(places.control_in("-t.txt"), None);
        assert_eq!(places.control_in("notes.txt"), None);
        assert_eq!(places.control_in(".gitignore"), None);
    }

    #[test]
    fn names_not_known_in_full() {
        let places = &Catalog::builtin().places;
        let glob = Known::Glob { dotglob: false };
        assert_eq!(places.place("src/*.txt", glob), Place::Work);
        assert!(!places.place("*.md", glob).proven(), "CLAUDE.md");
        assert!(!places.place(".*", glob).proven());
        assert!(!places
            .place("src/*", Known::Glob { dotglob: true })
            .proven());
        // `*` matches CLAUDE.md or HEAD, never a hidden name.
        assert!(!places.place("src/*", glob).proven());
        assert_eq!(places.place("src/*.rs", glob), Place::Work);
        assert!(!places.place("src/.*.rs", glob).proven());
        assert_eq!(
            places.place("out/*", Known::RunTime),
            Place::Outside(Outside::RunTime)
        );
        assert_eq!(places.place("/dev/fd/*", Known::RunTime), Place::Scratch);
        assert_eq!(places.place("a*b", Known::Fully), Place::Work);
    }
}
