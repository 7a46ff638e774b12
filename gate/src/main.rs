//! The `bashgate` command line.

mod cli;
mod jsonl;
mod render;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
