//! Whole-process latency of the hook, next to the floor of starting a
//! process at all, measured in one interleaved loop so both see the same
//! machine.
//!
//! ```sh
//! cargo build --release -p bashgate -p bashgate-tests
//! target/release/bashgate-latency [--runs N] [--bin PATH]...
//! ```
//!
//! Several `--bin`s (a build before and after a change) run in the same
//! interleaved loop, each row labelled with its binary. A binary named
//! `bashgate-hook` is run as `bashgate-hook claude`; with no `--bin`, the
//! `bashgate` and `bashgate-hook` beside this program are measured.
//!
//! For each case (a safe, an unknown and a network command, in an untainted
//! and a tainted session, plus `check`), it feeds the Claude Code
//! PreToolUse event on stdin to `bashgate hook claude` and waits for the
//! process to exit, as the client does. It prints the median and the
//! median minus `/bin/true`'s (the floor), in milliseconds. The state
//! directory and configuration are a scratch directory's own.

// A measurement tool: a step that fails ends the run with its panic.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use bashgate_tests::HOOK_BIN;

/// Whether `bin` is the program that runs the hooks alone
/// (gate/cli/src/bin/bashgate-hook.rs).
fn hook_only(bin: &Path) -> bool {
    bin.file_name().is_some_and(|n| n == HOOK_BIN)
}

/// The command line of Claude Code's hook with `bin`: `bashgate-hook
/// claude` or `bashgate hook claude`.
fn hook_argv(bin: &Path) -> Vec<String> {
    let mut argv = vec![bin.display().to_string()];
    if !hook_only(bin) {
        argv.push("hook".into());
    }
    argv.push("claude".into());
    argv
}

struct Case {
    name: String,
    argv: Vec<String>,
    stdin: Option<String>,
    env: Vec<(&'static str, PathBuf)>,
}

fn event(command: &str, session: &str, cwd: &Path) -> String {
    serde_json::json!({
        "session_id": session,
        "transcript_path": cwd.join("transcript.jsonl"),
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    })
    .to_string()
}

fn time_once(case: &Case) -> f64 {
    let mut cmd = Command::new(&case.argv[0]);
    cmd.args(&case.argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    cmd.stdin(if case.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the program starts");
    if let Some(input) = &case.stdin {
        let mut pipe = child.stdin.take().expect("piped stdin");
        // A hook that answers before reading everything closes the pipe.
        let _ = pipe.write_all(input.as_bytes());
    }
    let status = child.wait().expect("the program ends");
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    assert!(status.success(), "{} failed: {status}", case.name);
    elapsed
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let mut runs = 200usize;
    let mut bins: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--bin" => bins.push(PathBuf::from(args.next().expect("--bin PATH"))),
            other => panic!("unknown argument {other:?} (--runs N, --bin PATH...)"),
        }
    }
    if bins.is_empty() {
        let dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        bins.extend([dir.join("bashgate"), dir.join(HOOK_BIN)]);
    }
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let dir = scratch.path().to_path_buf();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let config = dir.join("bashgate.toml");
    // No Cop key: a tainted network command is asked, never sent anywhere.
    std::fs::write(&config, "cop.api_key_env = \"BASHGATE_LATENCY_NO_KEY\"\n").unwrap();
    let env = vec![
        ("BASHGATE_CONFIG", config.clone()),
        ("BASHGATE_STATE_DIR", dir.join("state")),
    ];
    // A WebFetch result taints the session with corruption, as in use.
    let fetched = serde_json::json!({
        "session_id": "tainted",
        "transcript_path": dir.join("transcript.jsonl"),
        "cwd": &dir,
        "hook_event_name": "PostToolUse",
        "tool_name": "WebFetch",
        "tool_input": {"url": "https://example.com/docs", "prompt": "read"},
        "tool_response": {"result": "some documentation"},
    });
    let post_argv = hook_argv(&bins[0]);
    let mut post = Command::new(&post_argv[0])
        .args(&post_argv[1..])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("bashgate starts");
    post.stdin
        .take()
        .unwrap()
        .write_all(fetched.to_string().as_bytes())
        .unwrap();
    assert!(
        post.wait().unwrap().success(),
        "the PostToolUse event failed"
    );
    let mut cases = vec![Case {
        name: "/bin/true (the floor)".into(),
        argv: vec!["/bin/true".into()],
        stdin: None,
        env: vec![],
    }];
    for bin in &bins {
        let b = bin.display().to_string();
        // Rows are labelled with the binary only when there are several.
        let label = |name: &str| match bins.len() {
            1 => name.to_string(),
            _ => format!(
                "{name} [{}]",
                bin.file_name().unwrap_or_default().to_string_lossy()
            ),
        };
        let argv = hook_argv(bin);
        let hook = |name: &str, command: &str, session: &str| Case {
            name: label(name),
            argv: argv.clone(),
            stdin: Some(event(command, session, &dir)),
            env: env.clone(),
        };
        cases.push(Case {
            name: label("--version"),
            argv: vec![b.clone(), "--version".into()],
            stdin: None,
            env: vec![],
        });
        if !hook_only(bin) {
            cases.push(Case {
                name: label("check, safe: ls -la | grep rs"),
                argv: vec![
                    b.clone(),
                    "check".into(),
                    "--".into(),
                    "ls -la | grep rs".into(),
                ],
                stdin: None,
                env: env.clone(),
            });
        }
        cases.extend([
            hook("hook, untainted, safe: ls -la", "ls -la", "clean"),
            hook("hook, untainted, unknown: make test", "make test", "clean"),
            hook(
                "hook, untainted, network: curl -s https://example.com",
                "curl -s https://example.com",
                "clean",
            ),
            hook("hook, tainted, safe: ls -la", "ls -la", "tainted"),
            hook("hook, tainted, unknown: make test", "make test", "tainted"),
            hook(
                "hook, tainted, network: curl -s https://example.com",
                "curl -s https://example.com",
                "tainted",
            ),
        ]);
        // The tainted rows must really be tainted: the network command is
        // asked (or, once asked and not approved, refused).
        let probe = cases.last().expect("just added");
        let mut child = Command::new(&probe.argv[0])
            .args(&probe.argv[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bashgate starts");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(probe.stdin.as_deref().unwrap().as_bytes())
            .unwrap();
        let out = child.wait_with_output().expect("bashgate answers");
        let answer = String::from_utf8_lossy(&out.stdout);
        assert!(
            answer.contains("\"ask\"") || answer.contains("\"deny\""),
            "the tainted session is not tainted for {b}: {answer}"
        );
    }
    // Warm-up, then interleaved runs so a change in the machine's load
    // reaches every case alike.
    for case in &cases {
        for _ in 0..10 {
            time_once(case);
        }
    }
    let mut samples = vec![Vec::with_capacity(runs); cases.len()];
    for _ in 0..runs {
        for (i, case) in cases.iter().enumerate() {
            samples[i].push(time_once(case));
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    let floor = medians[0];
    let names: Vec<String> = bins.iter().map(|b| b.display().to_string()).collect();
    println!(
        "{runs} runs each, interleaved; medians in ms; {}",
        names.join(", ")
    );
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(4);
    println!("{:<width$} {:>8} {:>10}", "case", "median", "over floor");
    for (case, m) in cases.iter().zip(&medians) {
        println!("{:<width$} {:>8.2} {:>+10.2}", case.name, m, m - floor);
    }
}
