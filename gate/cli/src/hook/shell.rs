//! The client's shell wrapper as the hook and `init` see it: the program
//! `bashgate-shell` (src/wrapper.rs), named, alone, in the client's setting
//! for it (Claude Code's `CLAUDE_CODE_SHELL_PREFIX`, the client table's
//! `shell_prefix_env`). The hook offers the fence to such a client only
//! when that setting names the wrapper beside it.

use std::path::{Path, PathBuf};

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

/// Whether a client's setting `value` names `program`, the same file.
pub fn names(value: &str, program: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    !value.is_empty() && canon(Path::new(value)).is_some_and(|v| Some(v) == canon(program))
}
