//! The `bashgate` command line: every surface on top of the decision
//! engine (the `bashgate` library): the CLI commands, each agent client's
//! hook protocol, the host daemon and the client that asks it.

mod admin_cli;
mod cli;
mod commands;
mod doctor;
mod fence_cli;
mod hook;
mod init;
mod jsonl;
mod remote;
mod render;
mod serve;

use std::process::ExitCode;

// Batch analysis (`analyze --jsonl`) makes and drops many small
// allocations on every core; mimalloc serves them faster than glibc's
// allocator. The hook (bin/bashgate-hook.rs) keeps the system's, which
// costs nothing to start.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run()
}
