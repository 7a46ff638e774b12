//! The differential oracle: generated commands run under real bash in a
//! fresh network namespace; every `safe` verdict must account for every
//! program bash started, and change nothing outside the project's
//! ordinary files and the scratch places. Needs `unshare --net` (root, or unprivileged user
//! namespaces); without it these tests fail, never pass silently.
//!
//! `BASHGATE_ORACLE_COUNT` (default 10000) sets how many commands,
//! `BASHGATE_ORACLE_SEED` the first seed, `BASHGATE_ORACLE_JOBS` (default 2)
//! the parallel drivers, `BASHGATE_ORACLE_KEEP=1` keeps the scratch dir.
//! `BASHGATE_ORACLE_ONLY=7339,21846` runs only those commands of the
//! campaign (numbered as its report numbers them), to replay a finding.
#![cfg(feature = "namespaces")]
// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::time::Instant;

use bashgate_analyzer::{analyze, Verdict};
use bashgate_tests::gen::{generate, Config, Rng};
use bashgate_tests::oracle::{Options, Run, Sandbox};
use bashgate_tests::oracle_check::{check, outside_the_work, Mismatch};
use bashgate_tests::oracle_minimize::{minimize, subjects};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a valid value")),
        Err(_) => default,
    }
}

fn run(commands: &[&str]) -> Vec<Run> {
    let sandbox = Sandbox::new(false).expect("scratch directory");
    sandbox
        .run(
            &commands.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
}

fn started(run: &Run) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<_> = run
        .execs
        .iter()
        .map(|e| {
            let name = if e.not_found {
                format!("?{}", e.program)
            } else {
                e.program.clone()
            };
            (name, e.args.clone())
        })
        .collect();
    v.sort();
    v
}

fn names(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<_> = list
        .iter()
        .map(|(p, a)| (p.to_string(), a.iter().map(|s| s.to_string()).collect()))
        .collect();
    v.sort();
    v
}

#[test]
fn the_harness_sees_what_bash_starts() {
    let runs = run(&[
        "curl -s x",
        "env FOO=1 timeout -s KILL 5 ls -l",
        "bash -c 'nc -l 1; echo hi'",
        "frobnicate_nowhere a",
        "echo x > /dev/tcp/127.0.0.1/9",
        "printf 'a\\n' | xargs -I{} wget {}",
        "sed '1e ssh' a.txt",
        "{ sleep 0; curl late; } & exit 0",
        "( while :; do :; done ) & exit 0",
    ]);
    assert_eq!(started(&runs[0]), names(&[("curl", &["-s", "x"])]));
    assert_eq!(
        started(&runs[1]),
        names(&[
            ("env", &["FOO=1", "timeout", "-s", "KILL", "5", "ls", "-l"]),
            ("timeout", &["-s", "KILL", "5", "ls", "-l"]),
            ("ls", &["-l"]),
        ])
    );
    assert_eq!(
        started(&runs[2]),
        names(&[("bash", &["-c", "nc -l 1; echo hi"]), ("nc", &["-l", "1"])])
    );
    assert_eq!(started(&runs[3]), names(&[("?frobnicate_nowhere", &["a"])]));
    assert!(runs[4].opened_socket(), "{:?}", runs[4]);
    assert!(!runs[0].opened_socket());
    assert_eq!(
        started(&runs[5]),
        names(&[("xargs", &["-I{}", "wget", "{}"]), ("wget", &["a"])])
    );
    assert_eq!(
        started(&runs[6]),
        names(&[("sed", &["1e ssh", "a.txt"]), ("ssh", &[])])
    );
    // A background job that outlives its shell is still waited for.
    assert_eq!(
        started(&runs[7]),
        names(&[("curl", &["late"]), ("sleep", &["0"])])
    );
    assert!(!runs[7].reaped);
    // One that never ends is killed, and the run says so.
    assert!(runs[8].reaped, "{:?}", runs[8]);
}

#[test]
fn commands_cannot_write_outside_their_scratch_directory() {
    // A directory like /dev: owned by the user running the harness, not
    // writable by anyone else. Run as root, the commands run as nobody.
    let guarded =
        std::env::temp_dir().join(format!("bashgate-oracle-guard-{}", std::process::id()));
    std::fs::create_dir_all(&guarded).expect("guard directory");
    let sandbox = Sandbox::new(false).expect("scratch directory");
    let name = format!("bashgate-oracle-escape-{}", std::process::id());
    // The guard, the harness's own directories (the shims are on every
    // command's PATH; `../..` holds the other commands' directories), and the
    // world-writable directories besides /tmp.
    let mut targets = vec![
        guarded.join("x"),
        sandbox.root().join("shims").join(&name),
        sandbox.root().join(&name),
        sandbox.root().join("work").join(&name),
    ];
    for dir in bashgate_tests::oracle::READ_ONLY_DIRS.split(' ') {
        if std::path::Path::new(dir).is_dir() {
            targets.push(std::path::Path::new(dir).join(&name));
        }
    }
    let commands: Vec<String> = targets
        .iter()
        .map(|t| {
            format!(
                ": > {0}; sed -i s/a/b/ {0}; cp a.txt {0}; mkdir {0}.d; tee {0}.t <a.txt; \
                 tar -cf {0}.tar a.txt; ln -s a.txt {0}.l",
                t.display()
            )
        })
        .chain([
            // `..` is the command's own home; `../..` holds the others'.
            "[[ $(echo ../../*) == '../../*' ]] || echo LISTED >&2; chmod 777 ../.. && echo LISTED >&2"
                .to_string(),
        ])
        .collect();
    let runs = sandbox
        .run(&commands, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let written: Vec<_> = targets
        .iter()
        .flat_map(|t| {
            ["", ".d", ".t", ".tar", ".l"]
                .map(|s| std::path::PathBuf::from(format!("{}{s}", t.display())))
        })
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    let listed = runs.last().unwrap().stderr.contains("LISTED");
    let _ = std::fs::remove_dir_all(&guarded);
    for p in &written {
        let _ = std::fs::remove_file(p).or_else(|_| std::fs::remove_dir(p));
    }
    if bashgate_tests::oracle::is_root() {
        assert!(written.is_empty(), "commands wrote {written:?}: {runs:#?}");
        assert!(
            !listed,
            "a command listed the others' directories: {runs:#?}"
        );
    } else {
        // Unprivileged, the harness's own files are all commands can reach.
        eprintln!("not root: commands run in an unprivileged user namespace");
    }
}

#[test]
fn the_harness_sees_what_commands_write() {
    let commands = [
        "cp a.txt .bashrc",
        "cp a.txt out.txt; mkdir build/y",
        "d=.git/hooks; cp a.txt \"$d\"/pre-commit",
        "ln -s .git/hooks h; cp a.txt h/pre-commit",
        "chmod 777 .git/hooks/pre-commit.sample; chmod g+w .git/config",
        "cat a.txt; sort a.txt; ls -l",
        "tar -xf pack.tar",
        "gunzip -N n.gz",
        "split -a1 -l1 lines.txt .bashr",
        "xargs touch <name.txt",
        "cp -r src/. .",
        "mkdir -p .local/bin && touch .local/bin/ls",
        "cp -S rc a.txt b.txt",
        // Times, and a mode that grants nothing new, change nothing that
        // decides what runs; nor does writing back the same contents.
        "touch .git/config .git/hooks; chmod -R u+w,go-w .git; cp -p .git/config c; mv c .git/config",
        // The project is below the home: both are seen.
        "cp a.txt ~/notes.txt; cp a.txt ../x; echo >> ~/.bashrc",
    ];
    let runs = run(&commands);
    let written: Vec<Vec<&str>> = runs
        .iter()
        .map(|r| r.written.iter().map(String::as_str).collect())
        .collect();
    let expected: [&[&str]; 15] = [
        &["proj/.bashrc"],
        &["proj/build/y", "proj/out.txt"],
        &["proj/.git/hooks/pre-commit"],
        &["proj/.git/hooks/pre-commit", "proj/h"],
        &["proj/.git/config", "proj/.git/hooks/pre-commit.sample"],
        &[],
        &["proj/.bashrc", "proj/.git/hooks/pre-commit"],
        &["proj/.bashrc"],
        &[
            "proj/.bashra",
            "proj/.bashrb",
            "proj/.bashrc",
            "proj/.bashrd",
            "proj/.bashre",
        ],
        &["proj/.bashrc"],
        &["proj/.envrc", "proj/.git/hooks/pre-commit"],
        &["proj/.local", "proj/.local/bin", "proj/.local/bin/ls"],
        &["proj/b.txt", "proj/b.txtrc"],
        &[],
        &[".bashrc", "notes.txt", "x"],
    ];
    for (i, (w, e)) in written.iter().zip(expected).enumerate() {
        assert_eq!(&w[..], e, "{}: {:?}", commands[i], runs[i]);
    }

    // Claimed safe, a command that wrote `.bashrc` is a mismatch; one that
    // wrote only harmless names is not.
    let claimed_safe = |c: &str| {
        let mut a = analyze(c);
        a.verdict = Verdict::Safe;
        a
    };
    let found = check(&claimed_safe(commands[0]), &runs[0]);
    assert!(
        matches!(&found[..], [Mismatch::WroteOutside { path, .. }] if path == "proj/.bashrc"),
        "{found:?}"
    );
    // Anything written outside the project is one too.
    assert_eq!(check(&claimed_safe(commands[14]), &runs[14]).len(), 3);
    assert_eq!(check(&analyze(commands[1]), &runs[1]), vec![]);
    assert_eq!(analyze(commands[1]).verdict, Verdict::Safe);
    // As root, the system directories are empty file systems the commands
    // may write, and what they leave there is seen.
    let sys =
        run(&["cp a.txt /etc/ssl/x.cnf; touch /usr/local/lib/y.pth; cp a.txt /etc/ssl/z.cnf"]);
    if bashgate_tests::oracle::is_root() {
        assert_eq!(
            sys[0].written,
            ["/etc/ssl/x.cnf", "/etc/ssl/z.cnf", "/usr/local/lib/y.pth"]
        );
        let outside = check(&claimed_safe("cp a.txt /etc/ssl/x.cnf"), &sys[0])
            .into_iter()
            .filter(|m| matches!(m, Mismatch::WroteOutside { .. }))
            .count();
        assert_eq!(outside, 3);
        assert!(
            !std::path::Path::new("/etc/ssl/x.cnf").exists(),
            "the machine's own /etc/ssl was written"
        );
    }
    // A write through a link shows where it landed.
    assert!(check(&claimed_safe(commands[3]), &runs[3]).iter().any(
        |m| matches!(m, Mismatch::WroteOutside { path, .. } if path == "proj/.git/hooks/pre-commit")
    ));
}

#[test]
fn the_harness_refuses_to_run_without_a_network_namespace() {
    // Where a namespace can be made this documents the check; where it
    // cannot, every oracle test fails with its message.
    bashgate_tests::oracle::check_namespace().unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn differential_oracle() {
    let count: usize = env_or("BASHGATE_ORACLE_COUNT", 10_000);
    let seed: u64 = env_or("BASHGATE_ORACLE_SEED", 0x6261_7368);
    let opts = Options {
        workers: env_or("BASHGATE_ORACLE_JOBS", 2),
        keep: env_or("BASHGATE_ORACLE_KEEP", 0u8) == 1,
        ..Options::default()
    };
    let mut rng = Rng::new(seed);
    let cfg = Config::oracle();
    let all: Vec<String> = (0..count)
        .map(|_| generate(&mut rng, &cfg).command)
        .collect();
    let (numbers, commands) = pick(all);
    let replay = numbers.len() < count;

    let t = Instant::now();
    let analyses: Vec<_> = commands.iter().map(|c| analyze(c)).collect();
    let analyze_time = t.elapsed();
    let t = Instant::now();
    let sandbox = Sandbox::new(opts.keep).expect("scratch directory");
    let runs = sandbox
        .run(&commands, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let run_time = t.elapsed();

    let mut report = String::new();
    let mut mismatched = 0;
    let (mut safe, mut execs, mut timeouts, mut reaped) = (0, 0, 0, 0);
    let (mut wrote, mut wrote_safe, mut outside) = (0, 0, 0);
    for (&i, (a, r)) in numbers.iter().zip(analyses.iter().zip(&runs)) {
        safe += usize::from(a.verdict == Verdict::Safe);
        execs += r.execs.len();
        timeouts += usize::from(r.timed_out());
        reaped += usize::from(r.reaped);
        wrote += usize::from(!r.written.is_empty());
        wrote_safe += usize::from(!r.written.is_empty() && a.verdict == Verdict::Safe);
        outside += usize::from(r.written.iter().any(|p| outside_the_work(p).is_some()));
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
        let listed: Vec<_> = a
            .invocations
            .iter()
            .map(|i| (&i.program, &i.args))
            .collect();
        let _ = writeln!(report, "  analyzer listed: {listed:?}");
        if !r.written.is_empty() {
            let _ = writeln!(report, "  it wrote: {:?}", r.written);
        }
    }
    let summary = format!(
        "oracle: {} commands (seed {seed:#x}), {safe} safe verdicts checked, \
         {execs} programs started, {timeouts} timed out, {reaped} left stragglers, \
         {wrote} wrote files ({wrote_safe} of them safe, {outside} wrote outside the work), \
         {mismatched} mismatched; analysis {analyze_time:.1?}, bash {run_time:.1?}",
        commands.len()
    );
    eprintln!("{summary}");
    if mismatched > 0 {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-mismatches.txt");
        let _ = std::fs::write(&path, &report);
        let shown: String = report.chars().take(20_000).collect();
        panic!("{summary}\nfull report: {}\n{shown}", path.display());
    }
    // The generator is built so that a good share of its commands can be
    // proven; fewer than one in sixteen means it has drifted from what the
    // analyzer proves. Since the write model of issue 14 (a writer given a
    // name known only at run time is not proven) about one in nine is; the
    // writers (`gen_writes.rs`), mostly of protected places, take a little
    // more, and since F36 a word the grammar splits at a line continuation
    // (the generator writes many) is refused: about one in fifteen. Since
    // issue 30 a write to the home (the generator spells many targets
    // `~/...`) is not proven either: about one in sixteen.
    assert!(
        replay || safe * 20 >= count,
        "too few safe verdicts to check: {safe} of {count}"
    );
}

/// The commands `BASHGATE_ORACLE_ONLY` names (all when unset), with their
/// numbers in the campaign.
fn pick(all: Vec<String>) -> (Vec<usize>, Vec<String>) {
    let Ok(only) = std::env::var("BASHGATE_ORACLE_ONLY") else {
        return ((0..all.len()).collect(), all);
    };
    let wanted: Vec<usize> = only
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("BASHGATE_ORACLE_ONLY: {n} is not a number"))
        })
        .collect();
    for &n in &wanted {
        assert!(
            n < all.len(),
            "BASHGATE_ORACLE_ONLY: {n} is past the campaign's count"
        );
    }
    let commands = wanted.iter().map(|&n| all[n].clone()).collect();
    (wanted, commands)
}

/// Triage, not a check: runs the generated commands, then shrinks one
/// command per kind of mismatch and prints the reproducers.
/// `cargo test -p bashgate-tests --test oracle triage -- --ignored --nocapture`
/// (`BASHGATE_ORACLE_COUNT`, `BASHGATE_ORACLE_SEED` as above;
/// `BASHGATE_ORACLE_MINIMIZE` caps how many kinds are shrunk, default 20).
#[test]
#[ignore]
fn triage() {
    let count: usize = env_or("BASHGATE_ORACLE_COUNT", 10_000);
    let seed: u64 = env_or("BASHGATE_ORACLE_SEED", 0x6261_7368);
    let cap: usize = env_or("BASHGATE_ORACLE_MINIMIZE", 20);
    let opts = Options {
        workers: env_or("BASHGATE_ORACLE_JOBS", 2),
        ..Options::default()
    };
    let mut rng = Rng::new(seed);
    let cfg = Config::oracle();
    let commands: Vec<String> = (0..count)
        .map(|_| generate(&mut rng, &cfg).command)
        .collect();
    let sandbox = Sandbox::new(false).expect("scratch directory");
    let runs = sandbox
        .run(&commands, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut kinds: std::collections::BTreeMap<String, (usize, &str)> = Default::default();
    for (c, r) in commands.iter().zip(&runs) {
        for s in subjects(c, r) {
            let e = kinds.entry(s).or_insert((0, c.as_str()));
            e.0 += 1;
            if c.len() < e.1.len() {
                e.1 = c;
            }
        }
    }
    eprintln!("{} kinds of mismatch", kinds.len());
    // Shrinking makes endless loops out of bounded ones: give them less time.
    let quick = Options {
        per_command: std::time::Duration::from_secs(1),
        ..opts
    };
    for (subject, (n, cmd)) in kinds.iter().take(cap) {
        let small = minimize(&sandbox, &quick, cmd, subject).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("=== {subject} ({n} commands)\n{small}\n--- {:?}", small);
    }
}

/// Runs one command (`BASHGATE_ORACLE_CMD`) under the harness and prints
/// what bash started next to what the analyzer listed; with
/// `BASHGATE_ORACLE_SHRINK=1` also shrinks it per kind of mismatch.
/// `BASHGATE_ORACLE_CMD='ls a' cargo test -p bashgate-tests --test oracle one -- --ignored --nocapture`
#[test]
#[ignore]
fn one() {
    let cmd = std::env::var("BASHGATE_ORACLE_CMD").expect("set BASHGATE_ORACLE_CMD");
    let runs = run(&[cmd.as_str()]);
    let a = analyze(&cmd);
    eprintln!("verdict: {}", a.verdict);
    for inv in &a.invocations {
        eprintln!("analyzer: {:?} {:?}", inv.program, inv.args);
    }
    for e in &runs[0].execs {
        eprintln!(
            "bash:     {:?} {:?}{}",
            e.program,
            e.args,
            if e.not_found { " (not found)" } else { "" }
        );
    }
    eprintln!("stderr: {}", runs[0].stderr);
    eprintln!("wrote: {:?}", runs[0].written);
    for m in check(&a, &runs[0]) {
        eprintln!("MISMATCH: {m}");
    }
    if env_or("BASHGATE_ORACLE_SHRINK", 0u8) == 1 {
        let sandbox = Sandbox::new(false).expect("scratch directory");
        let opts = Options {
            per_command: std::time::Duration::from_secs(1),
            ..Options::default()
        };
        for subject in subjects(&cmd, &runs[0]) {
            let small = minimize(&sandbox, &opts, &cmd, &subject).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("=== {subject}\n{small}\n--- {small:?}");
        }
    }
}
