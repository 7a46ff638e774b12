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
///
/// With `cache`, a directory only the person can write (the state
/// directory), git's answer is kept there while nothing it could depend on
/// has changed ([`git_says_cached`]).
pub fn repository_places(
    worktree: &Path,
    home: Option<&Path>,
    cache: Option<&Path>,
) -> Vec<PathBuf> {
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
    out.extend(match cache {
        Some(dir) => git_says_cached(worktree, dir, RACY),
        None => git_says(worktree),
    });
    out
}

/// A file changed this recently may change again within the same tick of
/// the file system's clock, leaving its stamp as it was: an answer that
/// depends on one is not kept (git's own index has the same rule).
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

/// [`git_says`], kept in `dir` (one file per work tree) with the stamp of
/// every file the answer could depend on: the `git` program, each
/// configuration file git reads or would read were it created (the
/// system's, the person's, the repository's, its work tree's, and every
/// file the answer names), and the repository's `.git`, `HEAD` and
/// `commondir` (a conditional include may depend on the branch or the
/// directory). A stamp is the file's device, inode, size, and change and
/// modification times, so an edit, a replacement or a file appearing
/// where none was all show. Asking git costs two processes, about 3 ms;
/// checking the stamps, a few dozen `stat` calls.
pub fn git_says_cached(worktree: &Path, dir: &Path, racy: std::time::Duration) -> Vec<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    worktree.hash(&mut h);
    let file = dir.join(format!("fence-git-{:016x}.txt", h.finish()));
    let asked_at = std::time::SystemTime::now();
    if let Ok(text) = std::fs::read_to_string(&file) {
        if let Some(places) = cached_answer(&text, worktree) {
            return places;
        }
    }
    let (places, complete) = asked(worktree);
    let (fingerprint, settled) = fingerprint(worktree, &places, asked_at, racy);
    if settled && complete {
        let mut text = fingerprint;
        text.push_str("--\n");
        for p in &places {
            text.push_str(&p.to_string_lossy());
            text.push('\n');
        }
        let tmp = dir.join(format!(".fence-git.{}", std::process::id()));
        // Only paths that are text survive the round trip; others are not
        // kept (git is asked again next time).
        if places
            .iter()
            .all(|p| p.to_str().is_some_and(|s| !s.contains('\n')))
            && std::fs::write(&tmp, text).is_ok()
        {
            let _ = std::fs::rename(&tmp, &file);
        }
    }
    places
}

/// The answer kept in `text` if every stamp in it still holds.
fn cached_answer(text: &str, worktree: &Path) -> Option<Vec<PathBuf>> {
    let (head, answer) = text.split_once("--\n")?;
    let places: Vec<PathBuf> = answer.lines().map(PathBuf::from).collect();
    let (now, _) = fingerprint(worktree, &places, std::time::SystemTime::now(), RACY);
    (now == head).then_some(places)
}

/// The stamps the answer depends on, one per line, and whether all of
/// them are older than `racy` at `asked_at`.
fn fingerprint(
    worktree: &Path,
    places: &[PathBuf],
    asked_at: std::time::SystemTime,
    racy: std::time::Duration,
) -> (String, bool) {
    use std::os::unix::fs::MetadataExt;
    let env = |v: &str| std::env::var_os(v).map(PathBuf::from);
    let home = env("HOME");
    let config_home = env("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let git = env("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("git"))
            .find(|g| g.is_file())
    });
    let mut files: Vec<PathBuf> = vec![PathBuf::from("/etc/gitconfig")];
    if let Some(g) = &git {
        files.push(g.clone());
        // Git built with another prefix reads PREFIX/etc/gitconfig.
        if let Some(prefix) = std::fs::canonicalize(g)
            .ok()
            .and_then(|g| g.parent()?.parent().map(Path::to_path_buf))
        {
            files.push(prefix.join("etc/gitconfig"));
        }
    }
    files.extend(home.iter().map(|h| h.join(".gitconfig")));
    files.extend(config_home.iter().map(|c| c.join("git/config")));
    let dot_git = worktree.join(".git");
    files.push(dot_git.clone());
    let git_dirs = if dot_git.is_file() {
        git_dirs(&dot_git)
    } else {
        vec![dot_git]
    };
    for g in git_dirs {
        for name in ["config", "config.worktree", "HEAD", "commondir"] {
            files.push(g.join(name));
        }
    }
    files.extend(places.iter().cloned());
    let mut out = format!(
        "{}\n{:?} {:?} {:?}\n",
        worktree.display(),
        git,
        home,
        config_home
    );
    let mut settled = true;
    for f in files {
        let stamp = match std::fs::metadata(&f) {
            // A directory's times change with every file made in it (git
            // makes lock files in `.git` all the time); what the answer
            // depends on inside it is stamped file by file.
            Ok(m) if m.is_dir() => format!("dir {} {}", m.dev(), m.ino()),
            Ok(m) => {
                let (secs, nanos) = [(m.mtime(), m.mtime_nsec()), (m.ctime(), m.ctime_nsec())]
                    .into_iter()
                    .max()
                    .unwrap_or((0, 0));
                let at = std::time::UNIX_EPOCH
                    + std::time::Duration::new(
                        secs.max(0) as u64,
                        nanos.clamp(0, 999_999_999) as u32,
                    );
                // Within the racy window (or in the future): not kept.
                if asked_at.duration_since(at).map_or(true, |d| d < racy) {
                    settled = false;
                }
                format!(
                    "{} {} {} {}.{} {}.{}",
                    m.dev(),
                    m.ino(),
                    m.size(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec()
                )
            }
            Err(_) => "-".to_string(),
        };
        out.push_str(&format!("{} {stamp}\n", f.display()));
    }
    (out, settled)
}

/// What git itself reads for the repository at `worktree`: its hooks
/// directory (`rev-parse --git-path hooks`, which honours `core.hooksPath`
/// wherever it is set) and every configuration file in force (`config
/// --list --show-origin --includes`). Git reads configuration without
/// running anything from it; the environment is cleared so nothing the
/// caller set (`GIT_DIR`, `GIT_CONFIG_*`) steers the answer.
pub fn git_says(worktree: &Path) -> Vec<PathBuf> {
    asked(worktree).0
}

/// [`git_says`], and whether git answered both questions (an answer
/// missing one is not kept: git may have refused only for now).
fn asked(worktree: &Path) -> (Vec<PathBuf>, bool) {
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
    let hooks = git(&["rev-parse", "--path-format=absolute", "--git-path", "hooks"]);
    if let Some(hooks) = &hooks {
        let text = String::from_utf8_lossy(hooks);
        out.extend(text.lines().next().map(|l| worktree.join(l)));
    }
    let config = git(&["config", "--list", "--show-origin", "--includes", "-z"]);
    if let Some(list) = &config {
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
    (out, hooks.is_some() && config.is_some())
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

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A scratch directory holding `name` (made) and an empty cache
    /// directory beside it; both resolved, as the gate passes them.
    fn work_tree_and_cache(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (wt, cache) = (root.join(name), root.join("state"));
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&cache).unwrap();
        (tmp, wt, cache)
    }

    #[test]
    fn gits_answer_is_kept_until_a_file_it_depends_on_changes() {
        let (_tmp, wt, cache) = work_tree_and_cache("repo");
        git(&wt, &["init", "-q"]);
        let kept = || {
            std::fs::read_dir(&cache)
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("fence-git-"))
                .count()
        };
        let zero = std::time::Duration::ZERO;
        let first = git_says_cached(&wt, &cache, zero);
        assert!(first.contains(&wt.join(".git/hooks")), "{first:?}");
        assert_eq!(kept(), 1);
        // Kept: the same answer, read from the cache.
        assert_eq!(git_says_cached(&wt, &cache, zero), first);
        // A hooks path set afterwards is seen at once.
        git(&wt, &["config", "core.hooksPath", "elsewhere/hooks"]);
        let after = git_says_cached(&wt, &cache, zero);
        assert!(after.contains(&wt.join("elsewhere/hooks")), "{after:?}");
        assert_eq!(git_says(&wt), after);
    }

    #[test]
    fn an_answer_git_refused_is_not_kept() {
        let (_tmp, wt, cache) = work_tree_and_cache("not-a-repo");
        // A `.git` naming no repository: git refuses to answer.
        std::fs::write(wt.join(".git"), "gitdir: nowhere\n").unwrap();
        let _ = git_says_cached(&wt, &cache, std::time::Duration::ZERO);
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0);
    }

    #[test]
    fn an_answer_resting_on_a_file_changed_just_now_is_not_kept() {
        let (_tmp, wt, cache) = work_tree_and_cache("repo");
        git(&wt, &["init", "-q"]);
        let hour = std::time::Duration::from_secs(3600);
        let answer = git_says_cached(&wt, &cache, hour);
        assert_eq!(answer, git_says(&wt));
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0);
    }

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
