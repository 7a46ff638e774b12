//! The programs generated commands run, and how the oracle provides them.
//!
//! Every name a generator can put in a command position is listed here, so
//! the oracle can give each one a logging shim. Membership in each pool is
//! checked against the analyzer's catalog by the tests below.

/// Programs the catalog knows to be local. Their shims log and exit, but
/// for the writers among them (see [`WRITERS`]), which run for real.
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

/// Programs that write files, whose shims run the real program, so the
/// oracle sees what a command wrote (`cp`, `mv`, `touch`, `mkdir`, `tee`,
/// `sort` and `uniq` are in [`LOCAL`], `sed`, `awk` and `split` in
/// [`TOOLS`]; these are the others). `rm` stays a logging shim: a
/// deletion changes nothing later commands run that a write would not.
pub const WRITERS: &[&str] = &[
    "ln", "install", "truncate", "shuf", "csplit", "gawk", "mawk", "dd", "xxd", "iconv", "gzip",
    "gunzip", "tar", "chmod",
];

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
        WRITERS,
        REAL_WRAPPERS,
        LOGGED_WRAPPERS,
    ]
    .concat()
}

/// What the shim of a program that runs the real one `exec`s (before the
/// arguments it was given): an absolute path, so the shim never finds
/// itself, and never another shim.
pub fn real_path(name: &str) -> Option<&'static str> {
    Some(match name {
        // Writers, run for real so their writes happen.
        "cp" => "/usr/bin/cp",
        "mv" => "/usr/bin/mv",
        "ln" => "/usr/bin/ln",
        "install" => "/usr/bin/install",
        "tee" => "/usr/bin/tee",
        "touch" => "/usr/bin/touch",
        "mkdir" => "/usr/bin/mkdir",
        "truncate" => "/usr/bin/truncate",
        "sort" => "/usr/bin/sort",
        "shuf" => "/usr/bin/shuf",
        "uniq" => "/usr/bin/uniq",
        "csplit" => "/usr/bin/csplit",
        "gawk" => "/usr/bin/gawk",
        "mawk" => "/usr/bin/mawk",
        "dd" => "/usr/bin/dd",
        "xxd" => "/usr/bin/xxd",
        "iconv" => "/usr/bin/iconv",
        "gzip" => "/usr/bin/gzip",
        // The real gunzip is a script that runs `gzip -d` through PATH,
        // which would log a `gzip` the command never named.
        "gunzip" => "/usr/bin/gzip -d",
        "tar" => "/usr/bin/tar",
        "chmod" => "/usr/bin/chmod",
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
        for name in LOCAL.iter().chain(TOOLS).chain(WRITERS) {
            // tar wants a mode.
            let cmd = match *name {
                "tar" => "tar -cf x.tar a.txt".to_string(),
                _ => format!("{name} a.txt"),
            };
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
                let path = path.split(' ').next().unwrap_or(path);
                assert!(std::path::Path::new(path).exists(), "{path}");
            }
        }
        let writers = ["cp", "mv", "touch", "mkdir", "tee", "sort", "uniq"];
        for name in SHELLS
            .iter()
            .chain(TOOLS)
            .chain(WRITERS)
            .chain(&writers)
            .chain(REAL_WRAPPERS)
        {
            assert!(real_path(name).is_some(), "{name} has no real path");
        }
    }
}
