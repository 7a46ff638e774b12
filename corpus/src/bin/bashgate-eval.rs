//! Measures the analyzer on the project's own corpus and on the external
//! command sets, and writes `docs/accuracy.md`.
//!
//! ```text
//! cargo run --release -p bashgate-corpus --bin bashgate-eval [-- OPTIONS]
//!   --check        do not write; exit 1 when docs/accuracy.md is stale
//!   --stdout       print the report instead of writing it
//!   --labeled      leave out the large coverage sets (tldr, NL2Bash)
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
    let known = ["--check", "--stdout", "--labeled"];
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
    match run(scope, has("--check"), has("--stdout")) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bashgate-eval: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(scope: Scope, check: bool, stdout: bool) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let files = case::load_all()?;
    let corpora = paths::corpora_dir();
    let ev = eval::evaluate(&files, &corpora, scope)?;
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
    let text = report::render(&ev);
    let path = paths::report_path();
    if let Err(skip) = &ev.external {
        println!("{skip}; {} left unchanged", path.display());
    } else if check {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
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
