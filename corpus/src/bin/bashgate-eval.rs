//! Measures the analyzer on the project's own corpus and on the external
//! command sets, and writes `docs/accuracy.md`.
//!
//! ```text
//! cargo run --release -p bashgate-corpus --bin bashgate-eval [-- OPTIONS]
//!   --check        do not write; exit 1 when docs/accuracy.md is stale
//!   --stdout       print the report instead of writing it
//!   --labeled      leave out the large coverage sets (tldr, NL2Bash)
//!   --details      also print each escape, network miss and panic with
//!                  its command (to the terminal only, never the report)
//! ```
//!
//! The external sets are read from `$BASHGATE_EXTERNAL_CORPORA` (default
//! `../shared/corpora` from the workspace root). When the folder is
//! missing the run says so and evaluates the own corpus only. Exit status:
//! 0 when there is no escape and no panic, 1 otherwise, 2 on an error or a
//! hang.

use std::process::ExitCode;

use bashgate_corpus::eval::{self, Scope};
use bashgate_corpus::{case, paths, report};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let known = ["--check", "--stdout", "--labeled", "--details"];
    if let Some(bad) = args.iter().find(|a| !known.contains(&a.as_str())) {
        eprintln!("unknown option {bad}; options: {}", known.join(" "));
        return ExitCode::from(2);
    }
    let has = |o: &str| args.iter().any(|a| a == o);
    let scope = if has("--labeled") {
        Scope::Labeled
    } else {
        Scope::All
    };
    let opts = Options {
        check: has("--check"),
        stdout: has("--stdout"),
        details: has("--details"),
    };
    match run(scope, &opts) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bashgate-eval: {e}");
            ExitCode::from(2)
        }
    }
}

struct Options {
    check: bool,
    stdout: bool,
    details: bool,
}

fn run(scope: Scope, opts: &Options) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let (check, stdout) = (opts.check, opts.stdout);
    let files = case::load_all()?;
    let corpora = paths::corpora_dir();
    let ev = eval::evaluate(&files, &corpora, scope)?;
    if opts.details {
        print_details(&ev, &corpora);
    }
    for set in ev.sets() {
        let s = &set.stats;
        println!(
            "{:<24} {:>6} records  escapes {:>3}/{:<5} recall {:>4}/{:<4} friction {:>3}/{:<4} panics {}  {:.0} ms",
            set.name,
            s.records,
            s.escapes.len(),
            s.never_safe,
            s.network_expected - s.network_misses.len(),
            s.network_expected,
            s.friction.len(),
            s.benign,
            s.panics.len(),
            s.time.as_secs_f64() * 1000.0
        );
    }
    let path = paths::report_path();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let text = report::keep_measured(&report::render(&ev), &current);
    if let Err(skip) = &ev.external {
        println!("{skip}; {} left unchanged", path.display());
    } else if check {
        if report::deterministic(&current) != report::deterministic(&text) {
            println!("{} is stale: run `{}`", path.display(), report::REGENERATE);
            return Ok(ExitCode::from(1));
        }
        println!("{} is current", path.display());
    } else if stdout {
        print!("{text}");
    } else if scope == Scope::Labeled {
        println!("--labeled leaves sets out: {} not written", path.display());
    } else {
        std::fs::write(&path, &text)?;
        println!("wrote {}", path.display());
    }
    let (escapes, panics) = ev.failures();
    if escapes + panics > 0 {
        println!("{escapes} escapes, {panics} panics");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints every escape, network miss and panic with its command text, read
/// back from the set's file by line.
fn print_details(ev: &eval::Evaluation, corpora: &std::path::Path) {
    for set in ev.sets() {
        let s = &set.stats;
        let lines: Vec<String> = set
            .spec
            .and_then(|spec| std::fs::read_to_string(corpora.join(spec.file)).ok())
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default();
        let lists = [
            ("escape", &s.escapes),
            ("network miss", &s.network_misses),
            ("panic", &s.panics),
        ];
        for (what, notes) in lists {
            for n in notes {
                let text = if set.spec.is_none() {
                    n.detail.clone()
                } else {
                    lines.get(n.line - 1).cloned().unwrap_or_default()
                };
                println!(
                    "{what}: {} line {} [{}] {} -> {}\n    {text}",
                    set.name,
                    n.line,
                    n.group,
                    n.name,
                    n.got.map_or("panic", |v| v.as_str())
                );
            }
        }
    }
}
