//! The script oracle: generated sed scripts and awk programs run in real
//! implementations (GNU sed 4.9, busybox sed; gawk, mawk, the one true awk
//! as `nawk`, busybox awk), under the differential oracle's harness; every
//! `safe` verdict must account for every program the script started and
//! write nothing outside the work. The analyzer's readers of sed and awk
//! are its own reading of another program's language, so they are proven
//! against the programs, not against our idea of them.
//!
//! `BASHGATE_SCRIPT_ORACLE_COUNT` (default 3000) sets how many commands,
//! `BASHGATE_SCRIPT_ORACLE_SEED` the seed, `BASHGATE_ORACLE_JOBS` the
//! parallel drivers. Needs `unshare --net`, busybox and original-awk
//! (`.ci/oracle-programs.sh` installs them); without them it fails.
#![cfg(feature = "namespaces")]
// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::time::Instant;

use bashgate_analyzer::{analyze, Verdict};
use bashgate_tests::choices::Rng;
use bashgate_tests::gen_scripts::script_command;
use bashgate_tests::oracle::{Options, Sandbox};
use bashgate_tests::oracle_check::check;

/// The implementations run for real besides the usual shims' programs.
const REAL: &[(&str, &str)] = &[
    ("busybox", "/usr/bin/busybox"),
    ("nawk", "/usr/bin/original-awk"),
];

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a valid value")),
        Err(_) => default,
    }
}

fn sandbox() -> Sandbox {
    for (_, path) in REAL {
        assert!(
            std::path::Path::new(path).exists(),
            "{path} is missing: .ci/oracle-programs.sh installs it"
        );
    }
    Sandbox::with_real(false, REAL).expect("scratch directory")
}

/// The attacks work when nothing stops them: each implementation really
/// runs the program a script names, and the harness sees it.
#[test]
fn the_harness_sees_what_scripts_start() {
    let commands = [
        "sed 'e touch e1' a.txt",
        "sed ':a e touch e2' a.txt",
        "sed 'a foo\\\\\ne touch e3' a.txt",
        "gawk '{ n++ / 2; system(\"touch e4\") / 1 }' a.txt",
        "mawk 'BEGIN { system(\"touch e5\") }'",
        "nawk 'BEGIN { system(\"touch e6\") }'",
        "busybox awk 'BEGIN { system(\"touch e7\") }'",
        "busybox sed 's/a/b/w ../e8' a.txt",
    ];
    let commands: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
    let runs = sandbox()
        .run(&commands, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    for (i, r) in runs.iter().enumerate().take(7) {
        let want = format!("e{}", i + 1);
        assert!(
            r.execs
                .iter()
                .any(|e| e.program == "touch" && e.args == [want.clone()]),
            "{}: no `touch {want}` seen; ran {:?}, stderr {}",
            r.command,
            r.execs,
            r.stderr
        );
        assert_ne!(analyze(&r.command).verdict, Verdict::Safe, "{}", r.command);
    }
    assert!(
        runs[7].written.iter().any(|w| w == "e8"),
        "busybox sed's w wrote {:?}",
        runs[7].written
    );
}

#[test]
fn script_oracle() {
    let count: usize = env_or("BASHGATE_SCRIPT_ORACLE_COUNT", 3000);
    let seed: u64 = env_or("BASHGATE_SCRIPT_ORACLE_SEED", 0x7363_7269);
    let opts = Options {
        workers: env_or("BASHGATE_ORACLE_JOBS", 2),
        per_command: std::time::Duration::from_secs(3),
        ..Options::default()
    };
    let mut rng = Rng::new(seed);
    let commands: Vec<String> = (0..count).map(|_| script_command(&mut rng)).collect();
    let analyses: Vec<_> = commands.iter().map(|c| analyze(c)).collect();
    let t = Instant::now();
    let runs = sandbox()
        .run(&commands, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let run_time = t.elapsed();

    let mut report = String::new();
    let (mut safe, mut ran, mut mismatched) = (0, 0, 0);
    for (i, (a, r)) in analyses.iter().zip(&runs).enumerate() {
        safe += usize::from(a.verdict == Verdict::Safe);
        ran += usize::from(r.execs.iter().any(|e| e.program == "touch"));
        let found = check(a, r);
        if found.is_empty() {
            continue;
        }
        mismatched += 1;
        let _ = writeln!(
            report,
            "--- command {i} (verdict {}):\n{}",
            a.verdict, r.command
        );
        for m in &found {
            let _ = writeln!(report, "  {m}");
        }
    }
    let summary = format!(
        "script oracle: {count} commands (seed {seed:#x}), {safe} safe verdicts checked, \
         {ran} ran a program from their script, {mismatched} mismatched; run {run_time:.1?}"
    );
    eprintln!("{summary}");
    assert!(
        mismatched == 0,
        "{summary}\n{}",
        report.chars().take(20_000).collect::<String>()
    );
    // Both kinds must be there for the run to mean anything: scripts the
    // analyzer proves (about one in three), and scripts that really start
    // a program (about one in twenty-five: most random pieces make no
    // valid script, and a valid one runs its command only when the input
    // line reaches it).
    assert!(
        safe * 10 >= count,
        "too few safe verdicts: {safe} of {count}"
    );
    assert!(
        ran * 40 >= count,
        "too few scripts ran a program: {ran} of {count}"
    );
}
