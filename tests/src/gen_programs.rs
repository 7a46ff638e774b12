//! The programs generated commands run, and how the oracle provides them.
//!
//! Every name a generator can put in a command position is listed here, so
//! the oracle can give each one a logging shim. Membership in each pool is
//! checked against the analyzer's catalog by the tests below.

/// Programs the catalog knows to be local. Their shims log and exit.
pub const LOCAL: &[&str] = &[
    "ls", "cat", "grep", "echo", "printf", "true", "false", "wc", "head", "tail", "sort", "uniq",
    "cut", "tr", "date", "basename", "dirname", "touch", "mkdir", "cp", "mv", "rm", "test", "diff",
    "stat", "id", "uname", "seq", "sleep", "tee",
];

/// Programs that reach the network by purpose.
pub const NETWORK: &[&str] = &["curl", "wget", "nc", "ssh", "scp", "socat", "rsync"];

/// Network programs that generated commands shadow with shell functions.
/// No other construct runs them, so a function defined for one of them
/// can never change what another part of the command runs.
pub const SHADOWED: &[&str] = &["telnet", "ftp"];

/// Programs that are not provably local for other reasons: interpreters,
/// build tools, names the catalog does not know.
pub const OTHER: &[&str] = &["python3", "perl", "node", "make", "frobnicate"];

/// Shells. Their shims run the real shell, so embedded scripts really run.
pub const SHELLS: &[&str] = &["bash", "sh", "dash"];

/// Local tools with options or scripts that run programs; their shims run
/// the real tool so the oracle sees what it starts.
pub const TOOLS: &[&str] = &["sed", "awk", "split"];

/// Wrappers installed on this machine: their shims run the real wrapper,
/// which starts the wrapped program through `PATH` (another shim).
pub const REAL_WRAPPERS: &[&str] = &[
    "env", "timeout", "nice", "nohup", "stdbuf", "setsid", "xargs", "find", "flock", "ionice",
    "chrt", "taskset", "strace", "script",
];

/// Wrappers the analyzer unwraps but this machine lacks (or that never
/// return, like `watch`): their shims only log.
pub const LOGGED_WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "runuser", "watch", "busybox", "parallel", "unbuffer", "time",
];

/// Every program name a generated command can start, for the shims.
pub fn all_names() -> Vec<&'static str> {
    [
        LOCAL,
        NETWORK,
        SHADOWED,
        OTHER,
        SHELLS,
        TOOLS,
        REAL_WRAPPERS,
        LOGGED_WRAPPERS,
    ]
    .concat()
}

/// Where the real program behind a shim lives, for the ones that run it.
pub fn real_path(name: &str) -> Option<&'static str> {
    Some(match name {
        "bash" => "/bin/bash",
        "sh" => "/bin/sh",
        "dash" => "/bin/dash",
        "sed" => "/bin/sed",
        "awk" => "/usr/bin/awk",
        "split" => "/usr/bin/split",
        "env" => "/usr/bin/env",
        "timeout" => "/usr/bin/timeout",
        "nice" => "/usr/bin/nice",
        "nohup" => "/usr/bin/nohup",
        "stdbuf" => "/usr/bin/stdbuf",
        "setsid" => "/usr/bin/setsid",
        "xargs" => "/usr/bin/xargs",
        "find" => "/usr/bin/find",
        "flock" => "/usr/bin/flock",
        "ionice" => "/usr/bin/ionice",
        "chrt" => "/usr/bin/chrt",
        "taskset" => "/usr/bin/taskset",
        "strace" => "/usr/bin/strace",
        "script" => "/usr/bin/script",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::{analyze, Verdict};

    #[test]
    fn pools_match_the_catalog() {
        for name in LOCAL.iter().chain(TOOLS) {
            let cmd = format!("{name} a.txt");
            assert_eq!(analyze(&cmd).verdict, Verdict::Safe, "{cmd}");
        }
        for name in NETWORK.iter().chain(SHADOWED) {
            assert_eq!(
                analyze(&format!("{name} x")).verdict,
                Verdict::Network,
                "{name}"
            );
        }
        for name in OTHER {
            assert_ne!(
                analyze(&format!("{name} x")).verdict,
                Verdict::Safe,
                "{name}"
            );
        }
    }

    #[test]
    fn real_programs_exist() {
        for name in all_names() {
            if let Some(path) = real_path(name) {
                assert!(std::path::Path::new(path).exists(), "{path}");
            }
        }
        for name in SHELLS.iter().chain(TOOLS).chain(REAL_WRAPPERS) {
            assert!(real_path(name).is_some(), "{name} has no real path");
        }
    }
}
