//! Prints the slowest commands of a JSON-lines file (a "command" per line).
//! Run: cargo run --release -p bashgate-analyzer --example slowest -- FILE
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: slowest FILE.jsonl");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let cmds: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            v.get("command")
                .and_then(|c| c.as_str())
                .map(str::to_string)
        })
        .collect();
    let mut times: Vec<(f64, &str)> = Vec::new();
    let start = Instant::now();
    for c in &cmds {
        let t = Instant::now();
        std::hint::black_box(bashgate_analyzer::analyze(c));
        times.push((t.elapsed().as_secs_f64() * 1e6, c));
    }
    let total = start.elapsed().as_secs_f64();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "{} commands in {:.3} s: {:.0} commands/s",
        cmds.len(),
        total,
        cmds.len() as f64 / total
    );
    for (us, c) in times.iter().take(8) {
        println!("{us:>10.0} µs  {}", c.chars().take(100).collect::<String>());
    }
}
