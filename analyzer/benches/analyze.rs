//! Throughput of `analyze` over real command lines: tldr-pages and NL2Bash
//! from the external corpora (`BASHGATE_EXTERNAL_CORPORA`, default
//! `../shared/corpora` beside the workspace).
//!
//! Run: `cargo bench -p bashgate-analyzer --bench analyze`
//! The figure that matters is "thrpt": commands analyzed per second on one
//! core.

use std::path::PathBuf;

use bashgate_analyzer::analyze;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

fn corpora_dir() -> PathBuf {
    std::env::var_os("BASHGATE_EXTERNAL_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"))
}

/// The "command" field of every line of a JSON-lines file.
fn commands(file: &str) -> Vec<String> {
    let path = corpora_dir().join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped: {} not found (set BASHGATE_EXTERNAL_CORPORA)",
            path.display()
        );
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            v.get("command")
                .and_then(|c| c.as_str())
                .map(str::to_string)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for file in ["tldr.jsonl", "nl2bash.jsonl"] {
        let cmds = commands(file);
        if cmds.is_empty() {
            continue;
        }
        let mut group = c.benchmark_group("analyze");
        group.throughput(Throughput::Elements(cmds.len() as u64));
        group.sample_size(10);
        group.bench_function(file.trim_end_matches(".jsonl"), |b| {
            b.iter(|| {
                for cmd in &cmds {
                    black_box(analyze(black_box(cmd)));
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
