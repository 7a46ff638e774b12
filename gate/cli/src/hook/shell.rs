//! The client's shell wrapper as the hook and `init` see it: the program
//! `bashgate-shell` (src/wrapper.rs), named, alone, in the client's setting
//! for it (the client table's `shell_prefix_env`). The hook offers the
//! fence to such a client only when that setting names the wrapper beside
//! it.

use std::path::{Path, PathBuf};

use bashgate_analyzer::Span;

/// What a script the client hands its shell wrapper is.
#[derive(Debug, PartialEq, Eq)]
pub enum Script {
    /// The agent's command, found in it (then only that word runs fenced)
    /// or not told apart from the client's own set-up around it (then all
    /// of it does).
    Agents(Option<Found>),
    /// One of the client's own programs (its hooks, its tool servers), run
    /// as it is.
    ClientsOwn,
}

/// The agent's command inside a script, and where its word is.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    pub text: String,
    pub word: Span,
}

/// The wrapper program, installed beside `bashgate` and `bashgate-hook`.
pub const SHELL_BINARY: &str = "bashgate-shell";

/// The wrapper program beside `program` (bashgate or its hook program).
pub fn beside(program: &Path) -> PathBuf {
    program.with_file_name(SHELL_BINARY)
}

/// Whether `client`'s setting in this process's environment names the
/// wrapper installed beside this program; otherwise why not, for the
/// reason of a decision that could not be fenced.
pub fn installed(client: &str) -> Result<(), String> {
    let c = bashgate::clients::get(client).ok_or("the client is not in bashgate's table")?;
    let var = c
        .shell_prefix_env
        .as_deref()
        .ok_or_else(|| format!("{} has no setting that wraps its shell commands", c.name))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("bashgate cannot find its own binary ({e})"))?;
    let ours = beside(&exe);
    let value = std::env::var(var).map_err(|_| {
        format!(
            "{} does not run its commands through bashgate's shell wrapper ({var} is not set; `bashgate init {client}` sets it)",
            c.name
        )
    })?;
    if names(&value, &ours) {
        Ok(())
    } else {
        Err(format!(
            "{} runs its commands through {value:?} ({var}), not bashgate's shell wrapper {}",
            c.name,
            ours.display()
        ))
    }
}

/// Whether a client's setting `value` names `program`, the same file: by
/// its path, or by a bare name PATH finds (as the client's shell would).
pub fn names(value: &str, program: &Path) -> bool {
    if value.is_empty() {
        return false;
    }
    if value.contains('/') {
        return same_file(Path::new(value), program);
    }
    on_path(value).is_some_and(|found| same_file(&found, program))
}

/// `name` found in the directories of this process's PATH, as a shell
/// finds a program.
pub fn on_path(name: &str) -> Option<PathBuf> {
    find_in(std::env::var_os("PATH").as_deref(), name)
}

/// `name` found in the directories of the PATH value `path`: the first
/// runnable file.
pub fn find_in(path: Option<&std::ffi::OsStr>, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether two paths name the same file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    canon(a).is_some_and(|x| Some(x) == canon(b))
}
