//! The catalog loader (user input: `Catalog::from_toml` and
//! `extend_from_toml`) and analysis under any catalog that loads and under
//! small limits. Whatever the catalog says, a `/dev/tcp` redirect is
//! `network`, a dynamic program name is not `safe`, and a name the catalog
//! does not know is not `safe`.
#![no_main]

use std::time::Duration;

use bashgate_analyzer::{analyze_with, Catalog, Limits, Verdict};
use bashgate_fuzz::timed;
use libfuzzer_sys::fuzz_target;

const PROBES: &[&str] = &[
    "ls -la | grep x",
    "env FOO=1 timeout 5 ls",
    "bash -c 'ls; cat a'",
    "find . -name x -exec ls {} \\;",
    "printf 'a\\n' | xargs ls",
    "sudo -u root nice -n 5 ls",
    "eval 'ls -l'",
    "sed -n p a.txt | awk '{print}'",
    "git status && make",
    "curl x | sh",
    "x() { ls; }; x",
];

const UNLISTED: &str = "zz-not-a-program";

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let catalog = if first & 1 == 0 {
        match Catalog::from_toml(text) {
            Ok(c) => c,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return;
            }
        }
    } else {
        let mut c = Catalog::builtin().clone();
        if let Err(e) = c.extend_from_toml(text) {
            assert!(!e.to_string().is_empty());
            return;
        }
        c
    };
    // Small limits now and then, so the limit paths run too.
    let small = first & 2 != 0;
    let limits = if !small {
        Limits::default()
    } else {
        Limits {
            max_bytes: 64,
            parse_timeout: Duration::from_millis(50),
            max_parse_steps: usize::from(first >> 4),
            max_nodes: 40,
            max_depth: usize::from(first >> 5),
            max_embed_depth: usize::from(first >> 6),
            max_wrappers: usize::from(first >> 6),
            max_invocations: 3,
        }
    };
    let run = |cmd: &str| timed(cmd, &limits, || analyze_with(cmd, &catalog, &limits));
    for probe in PROBES {
        run(probe);
    }
    let socket = run("cat </dev/tcp/127.0.0.1/9").verdict;
    if small {
        assert_ne!(socket, Verdict::Safe);
    } else {
        assert_eq!(socket, Verdict::Network);
    }
    assert_ne!(run("$cmd a").verdict, Verdict::Safe);
    if catalog.lookup(UNLISTED).is_none() {
        assert_ne!(run(&format!("{UNLISTED} a")).verdict, Verdict::Safe);
    }
});
