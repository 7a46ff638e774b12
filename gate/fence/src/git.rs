//! Where a repository keeps what git runs or reads as configuration: the
//! git directory a `.git` file names, its hooks and its configuration's
//! includes. The fence moves aside repositories a command makes and keeps
//! these read-only; the gate's policy asks the same questions.

use std::path::{Path, PathBuf};

/// The path a `.git` file names (`gitdir: PATH`), as written, made
/// absolute.
pub fn gitdir_named(dot_git: &Path) -> Option<PathBuf> {
    let base = dot_git.parent().unwrap_or(Path::new("/"));
    std::fs::read_to_string(dot_git)
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
        .and_then(|l| l.strip_prefix("gitdir:").map(|p| base.join(p.trim())))
}

/// The git directory a `.git` file names and the common directory that
/// one names (`commondir`), those that exist.
pub fn git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(dir) = gitdir_named(dot_git).and_then(|p| std::fs::canonicalize(p).ok()) else {
        return out;
    };
    if let Some(common) = std::fs::read_to_string(dir.join("commondir"))
        .ok()
        .and_then(|t| std::fs::canonicalize(dir.join(t.trim())).ok())
    {
        out.push(common);
    }
    out.push(dir);
    out
}

/// Everything outside a repository's git directory that git runs or reads
/// as configuration for the work tree at `worktree` (none when it has no
/// `.git`): what its configuration files name ([`git_config_places`], which
/// also sees includes whose condition does not hold yet), and what git
/// itself says ([`git_says`]).
pub fn repository_places(worktree: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let dot_git = worktree.join(".git");
    let dirs = if dot_git.is_file() {
        git_dirs(&dot_git)
    } else if dot_git.is_dir() {
        vec![dot_git]
    } else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in &dirs {
        out.extend(git_config_places(g, worktree, home));
    }
    out.extend(git_says(worktree));
    out
}

/// What git itself reads for the repository at `worktree`: its hooks
/// directory (`rev-parse --git-path hooks`, which honours `core.hooksPath`
/// wherever it is set) and every configuration file in force (`config
/// --list --show-origin --includes`). Git reads configuration without
/// running anything from it; the environment is cleared so nothing the
/// caller set (`GIT_DIR`, `GIT_CONFIG_*`) steers the answer.
pub fn git_says(worktree: &Path) -> Vec<PathBuf> {
    let git = |args: &[&str]| -> Option<Vec<u8>> {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(worktree).args(args).env_clear();
        for var in ["PATH", "HOME", "XDG_CONFIG_HOME"] {
            if let Some(v) = std::env::var_os(var) {
                c.env(var, v);
            }
        }
        let out = c
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status.success().then_some(out.stdout)
    };
    let mut out = Vec::new();
    if let Some(hooks) = git(&["rev-parse", "--path-format=absolute", "--git-path", "hooks"]) {
        let text = String::from_utf8_lossy(&hooks);
        out.extend(text.lines().next().map(|l| worktree.join(l)));
    }
    if let Some(list) = git(&["config", "--list", "--show-origin", "--includes", "-z"]) {
        // Records are ORIGIN NUL KEY NEWLINE VALUE NUL.
        for (i, field) in list.split(|b| *b == 0).enumerate() {
            if i % 2 == 0 {
                if let Some(file) = field.strip_prefix(b"file:") {
                    use std::os::unix::ffi::OsStrExt;
                    out.push(worktree.join(std::ffi::OsStr::from_bytes(file)));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What a repository's own configuration names outside its git directory
/// that git runs or reads as configuration: `core.hooksPath` and the
/// files `include.path` and `includeIf.*.path` pull in (followed a few
/// levels). `worktree` is where relative hook paths start.
pub fn git_config_places(git_dir: &Path, worktree: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut files = vec![(git_dir.join("config"), 0)];
    while let Some((file, depth)) = files.pop() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(head) = line.strip_prefix('[') {
                section = head
                    .split(|c: char| c == ']' || c.is_whitespace() || c == '"')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value
                .split(['#', ';'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            let expand = |v: &str, rel: &Path| -> Option<PathBuf> {
                let p = if let Some(rest) = v.strip_prefix("~/") {
                    home?.join(rest)
                } else if v.is_empty() {
                    return None;
                } else {
                    rel.join(v)
                };
                Some(std::fs::canonicalize(&p).unwrap_or(p))
            };
            match (section.as_str(), key.as_str()) {
                ("core", "hookspath") => out.extend(expand(value, worktree)),
                ("include" | "includeif", "path") => {
                    if let Some(p) = expand(value, &base) {
                        if depth < 4 {
                            files.push((p.clone(), depth + 1));
                        }
                        out.push(p);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repositorys_config_names_its_hooks_and_includes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (wt, g) = (root.as_path(), root.join(".git"));
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(
            g.join("config"),
            "[core]\n\thooksPath = tools/hooks ; why\n[include]\n\tpath = ../shared.gitconfig\n[includeIf \"gitdir:x\"]\n  path = \"~/more\"\n",
        )
        .unwrap();
        std::fs::write(
            wt.join("shared.gitconfig"),
            "[include]\npath = nested.inc\n",
        )
        .unwrap();
        let got = git_config_places(&g, wt, Some(Path::new("/home/u")));
        for want in [
            wt.join("tools/hooks"),
            wt.join("shared.gitconfig"),
            PathBuf::from("/home/u/more"),
            wt.join("nested.inc"),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
    }
}
