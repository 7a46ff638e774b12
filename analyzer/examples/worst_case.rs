//! The analyzer's worst case: families of generated inputs, each repeated up
//! to the size limit, timed one by one (median of several runs, after a
//! warm-up). A family is a unit that repeats (`env `, `cat | `, an arm of a
//! `case`), so a family's time at the limit is the cost of the most
//! expensive construct at the largest input accepted.
//!
//! ```sh
//! cargo run --release -p bashgate-analyzer --example worst_case [-- --runs N]
//! cargo run --release -p bashgate-analyzer --example worst_case -- --emit > inputs.jsonl
//! ```
//!
//! `--emit` prints the inputs as JSON lines (`{"family", "command"}`)
//! instead, for timing them through the whole gate (`bashgate check`).

use std::time::Instant;

use bashgate_analyzer::limits::Limits;

/// (name, prefix, repeated unit, suffix). `{i}` in a unit is its index.
const FAMILIES: &[(&str, &str, &str, &str)] = &[
    ("env chain", "", "env ", "ls"),
    ("sudo chain", "", "sudo ", "ls"),
    ("nice chain", "", "nice ", "ls"),
    ("timeout chain", "", "timeout 1 ", "ls"),
    ("xargs chain", "", "xargs ", "ls"),
    ("command builtin chain", "", "command builtin ", "ls"),
    ("pipeline", "", "cat | ", "cat"),
    ("and-list", "", "true && ", "true"),
    ("semicolon list", "", "ls; ", "ls"),
    ("background list", "", "ls & ", "ls"),
    ("words", "echo", " a", ""),
    ("options", "ls", " -l", ""),
    ("cp operands", "cp", " a", " b/"),
    ("redirects", "ls", " >o{i}", ""),
    ("assignments", "", "A{i}=1 ", "ls"),
    ("case arms", "case x in ", "a{i}) ls;; ", "esac"),
    ("if chain", "", "if true; then ls; fi; ", "ls"),
    ("functions", "", "f{i}() { ls; }; ", "f1"),
    ("subshells", "", "(ls); ", "ls"),
    ("command substitutions", "echo", " $(ls)", ""),
    ("nested substitutions", "echo ", "$(echo ", ""),
    ("nested subshells", "", "(", "ls"),
    ("arithmetic", "echo $((1", "+1", "))"),
    ("parameter expansions", "echo", " ${a:-b}", ""),
    ("brace expansions", "echo", " {a,b}", ""),
    ("globs", "ls", " *.rs", ""),
    ("double-quoted expansions", "echo \"", "$a ", "\""),
    ("find -exec", "find .", " -exec ls {} ;", ""),
    ("sed script", "sed '", "s/a/b/;", "'"),
    ("awk program", "awk '", "{print $1} ", "'"),
    ("bash -c nest", "", "bash -c ", "ls"),
    ("eval words", "eval", " ls", ""),
    ("heredoc body", "cat <<EOF\n", "some text $HOME\n", "EOF"),
    (
        "quoted heredoc body",
        "cat <<'EOF'\n",
        "some text $HOME\n",
        "EOF",
    ),
    ("single-quoted string", "echo '", "text ", "'"),
    ("escapes", "echo", " \\a", ""),
    ("ansi-c strings", "echo", " $'\\x41'", ""),
    ("arrays", "a=(", "x ", ")"),
    ("test expression", "[[ a", " && a", " ]]"),
    ("git arguments", "git log", " --oneline", ""),
];

fn generate(prefix: &str, unit: &str, suffix: &str, bytes: usize) -> String {
    let mut s = String::from(prefix);
    let mut i = 0;
    loop {
        let next = unit.replace("{i}", &i.to_string());
        if s.len() + next.len() + suffix.len() > bytes {
            break;
        }
        s.push_str(&next);
        i += 1;
    }
    s.push_str(suffix);
    s
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut runs = 5;
    let mut emit = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--emit" => emit = true,
            other => panic!("unknown argument {other:?} (--runs N, --emit)"),
        }
    }
    let limit = Limits::default().max_bytes;
    if emit {
        for (name, prefix, unit, suffix) in FAMILIES {
            for bytes in [limit / 8, limit / 4, limit / 2, limit] {
                let command = generate(prefix, unit, suffix, bytes);
                println!(
                    "{}",
                    serde_json::json!({"family": name, "command": command})
                );
            }
        }
        return;
    }
    // Warm-up: the parser, the catalog and the allocator's first pages.
    for _ in 0..20 {
        std::hint::black_box(bashgate_analyzer::analyze("ls -la | grep rs && git status"));
    }
    let mut rows: Vec<(f64, &str, usize, String)> = Vec::new();
    for (name, prefix, unit, suffix) in FAMILIES {
        for bytes in [limit / 8, limit / 4, limit / 2, limit] {
            let command = generate(prefix, unit, suffix, bytes);
            let times: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(bashgate_analyzer::analyze(&command));
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            let verdict = format!("{:?}", bashgate_analyzer::analyze(&command).verdict);
            rows.push((median(times), name, command.len(), verdict));
        }
    }
    println!("medians of {runs} runs, in ms; the size limit is {limit} bytes");
    println!("{:<28} {:>8} {:>9}  verdict", "family", "bytes", "ms");
    for (ms, name, len, verdict) in &rows {
        println!("{name:<28} {len:>8} {ms:>9.2}  {verdict}");
    }
    let worst = rows
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("families");
    println!("worst: {} at {} bytes, {:.2} ms", worst.1, worst.2, worst.0);
}
