//! `bashgate-hook CLIENT`: the agent hooks, and nothing else.
//!
//! It answers exactly as `bashgate hook CLIENT` does: the hook surface
//! (`gate/cli/src/hook/`) and the daemon's client (`gate/cli/src/remote.rs`) are
//! the same source files, compiled into this program as well. What it
//! leaves out is every other command: the command-line parser, the daemon,
//! its PostgreSQL store and HTTP server, the audit reader, the fence's
//! runner. A client starts the hook once per tool call, and a process
//! starts faster the less it has to map and relocate: this one answers
//! about 0.3 ms sooner (docs/performance.md). `bashgate init` writes it
//! into the clients' settings when it sits beside `bashgate`.
//!
//! Usage: `bashgate-hook [--config PATH] CLIENT [--remote URL]`, where
//! CLIENT is a client of the table (`hook::CLIENTS`) or json.

// Its modules are `bashgate`'s and are tested there, with the modules of
// `bashgate` their tests use; a test build of this program has none.
#[cfg(not(test))]
#[path = "../hook/mod.rs"]
mod hook;
// The admin commands' half of the daemon client is used by `bashgate` only.
#[cfg(not(test))]
#[allow(dead_code)]
#[path = "../remote.rs"]
mod remote;

#[cfg(not(test))]
fn main() -> std::process::ExitCode {
    use std::process::ExitCode;

    let args = match hook::program::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(Ok(text)) => {
            println!("{text}");
            return ExitCode::SUCCESS;
        }
        // A mistake in the hook's own command line is the installer's to
        // fix: exit 2 with the message, as `bashgate hook` does through
        // its parser (the clients with a blocking exit read 2 as a block).
        Err(Err(why)) => {
            eprintln!("bashgate-hook: {why}");
            return ExitCode::from(2);
        }
    };
    let (config, remote) = (args.config.as_deref(), args.remote.as_deref());
    match (args.client.as_str(), hook::client(&args.client)) {
        (_, Some(c)) => (c.run)(config, remote),
        ("json", None) => hook::run::<hook::json::JsonHook>(config, remote),
        (other, None) => {
            eprintln!(
                "bashgate-hook: no hook for a client named {other:?}\n{}",
                hook::program::usage()
            );
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
