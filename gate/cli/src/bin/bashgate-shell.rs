//! `bashgate-shell SCRIPT`: the shell wrapper a client runs every shell
//! command through after its own permission rules (the client table's
//! `shell_prefix_env`, which `bashgate init` sets to this program). It runs the script as the client asked, or with the agent's
//! command fenced where bashgate's hook decided so (gate/cli/src/wrapper.rs).
//!
//! A program of its own because the client runs it by path alone, with no
//! options: it also starts the client's own programs (its tool servers) through it.

// Its modules are `bashgate`'s and are tested there, with the modules of
// `bashgate` their tests use; a test build of this program has none.
#[cfg(not(test))]
#[allow(dead_code)]
#[path = "../hook/mod.rs"]
mod hook;
#[cfg(not(test))]
#[allow(dead_code)]
#[path = "../remote.rs"]
mod remote;
#[cfg(not(test))]
#[path = "../wrapper.rs"]
mod wrapper;

#[cfg(not(test))]
fn main() -> std::process::ExitCode {
    wrapper::main()
}
