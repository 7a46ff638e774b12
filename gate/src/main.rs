//! The `bashgate` command line.

mod admin_cli;
mod audit;
mod cascade;
mod cli;
mod commands;
mod config;
mod cop;
mod decision;
mod engine;
mod hook;
mod init;
mod jsonl;
mod policy;
mod remote;
mod render;
mod rules;
mod secret_paths;
mod secrets;
mod serve;
mod services;
mod taint;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
