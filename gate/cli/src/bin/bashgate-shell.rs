//! `bashgate-shell SCRIPT`: the shell wrapper a client runs every shell
//! command through after its own permission rules (Claude Code's
//! `CLAUDE_CODE_SHELL_PREFIX`, which `bashgate init claude` sets to this
//! program). It runs the script as the client asked, or with the agent's
//! command fenced where bashgate's hook decided so (gate/cli/src/wrapper.rs).
//!
//! A program of its own because the client runs it by path alone, with no
//! options: it also starts the client's MCP servers through it.

#[allow(dead_code)]
#[path = "../hook/mod.rs"]
mod hook;
#[allow(dead_code)]
#[path = "../remote.rs"]
mod remote;
#[path = "../wrapper.rs"]
mod wrapper;

fn main() -> std::process::ExitCode {
    wrapper::main()
}
