//! The `bashgate` command line: every surface on top of the decision
//! engine (the `bashgate` library): the CLI commands, each agent client's
//! hook protocol, the host daemon and the client that asks it.

mod admin_cli;
mod check;
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

fn main() -> ExitCode {
    cli::run()
}
