//! `bashgate analyze --jsonl`: one JSON object in, the same object out with
//! the analysis added. A bad line gets an "error" field; the run goes on.

use std::io::{self, BufRead, BufWriter, Write};

use bashgate_analyzer::analyze;
use serde_json::{Map, Value};

/// Lines read before a batch is analyzed: enough to keep every core busy,
/// few enough that memory stays small on any input.
const BATCH: usize = 4096;

/// Analyzes every line, on every core the machine offers, and writes the
/// results in input order.
pub fn run(input: impl BufRead, output: impl Write) -> io::Result<()> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = BufWriter::new(output);
    let mut lines = input.split(b'\n');
    let mut done = 0;
    loop {
        let batch = lines
            .by_ref()
            .take(BATCH)
            .collect::<io::Result<Vec<Vec<u8>>>>()?;
        if batch.is_empty() {
            break;
        }
        for text in annotate_batch(&batch, done, threads) {
            out.write_all(&text)?;
        }
        done += batch.len();
    }
    out.flush()
}

/// Lines a worker claims at a time: small enough that the threads finish a
/// batch together whatever its lines cost, large enough that claiming is
/// rare.
const CLAIM: usize = 32;

/// The output lines of one batch, whose first line is line `done + 1`. The
/// threads claim runs of [`CLAIM`] lines in turn, so one slow run of lines
/// does not leave the other cores idle.
fn annotate_batch(batch: &[Vec<u8>], done: usize, threads: usize) -> Vec<Vec<u8>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let claims = batch.len().div_ceil(CLAIM);
    let work = || {
        let mut mine: Vec<(usize, Vec<Vec<u8>>)> = Vec::new();
        loop {
            let claim = next.fetch_add(1, Ordering::Relaxed);
            if claim >= claims {
                return mine;
            }
            let first = claim * CLAIM;
            let lines = &batch[first..(first + CLAIM).min(batch.len())];
            let texts = lines
                .iter()
                .enumerate()
                .map(|(j, line)| {
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    let value = annotate(line, done + first + j + 1);
                    let mut text = serde_json::to_vec(&value).unwrap_or_default();
                    text.push(b'\n');
                    text
                })
                .collect();
            mine.push((claim, texts));
        }
    };
    let mut runs: Vec<(usize, Vec<Vec<u8>>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(claims).max(1))
            .map(|_| scope.spawn(work))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    runs.sort_unstable_by_key(|(claim, _)| *claim);
    runs.into_iter().flat_map(|(_, texts)| texts).collect()
}

/// The output object for one input line.
fn annotate(line: &[u8], lineno: usize) -> Value {
    let parsed: Result<Value, String> = match std::str::from_utf8(line) {
        Ok(text) => {
            serde_json::from_str(text).map_err(|e| format!("line {lineno}: not valid JSON: {e}"))
        }
        Err(e) => Err(format!(
            "line {lineno}: not valid UTF-8 at byte {}",
            e.valid_up_to()
        )),
    };
    let mut obj = match parsed {
        Ok(Value::Object(o)) => o,
        Ok(_) => {
            return error_only(format!(
                "line {lineno}: expected a JSON object with a \"command\" string"
            ))
        }
        Err(e) => return error_only(e),
    };
    let Some(command) = obj.get("command").and_then(Value::as_str) else {
        obj.insert(
            "error".into(),
            Value::String(format!("line {lineno}: no string \"command\" field")),
        );
        return Value::Object(obj);
    };
    let analysis = analyze(command);
    obj.insert(
        "verdict".into(),
        serde_json::to_value(analysis.verdict).unwrap_or(Value::Null),
    );
    obj.insert(
        "findings".into(),
        serde_json::to_value(&analysis.findings).unwrap_or(Value::Null),
    );
    Value::Object(obj)
}

fn error_only(message: String) -> Value {
    let mut m = Map::new();
    m.insert("error".into(), Value::String(message));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_str(input: &str) -> Vec<Value> {
        let mut out = Vec::new();
        run(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn keeps_fields_and_order() {
        let out = run_str("{\"id\":7,\"command\":\"curl x\"}\n{\"command\":\"ls\",\"x\":[1]}\n");
        assert_eq!(out.len(), 2);
        assert_eq!(out[0]["id"], 7);
        assert_eq!(out[0]["verdict"], "network");
        assert_eq!(out[0]["findings"][0]["rule"], "BG101");
        assert_eq!(out[0]["findings"][0]["span"], serde_json::json!([0, 4]));
        assert_eq!(out[1]["verdict"], "safe");
        assert_eq!(out[1]["x"], serde_json::json!([1]));
    }

    #[test]
    fn bad_lines_get_errors_and_the_run_goes_on() {
        let out =
            run_str("not json\n{\"cmd\":\"ls\"}\n[1]\n{\"command\":5}\n{\"command\":\"ls\"}\n");
        assert_eq!(out.len(), 5);
        assert!(out[0]["error"].as_str().unwrap().contains("line 1"));
        assert_eq!(out[1]["cmd"], "ls");
        assert!(out[1]["error"].is_string());
        assert!(out[2]["error"].is_string());
        assert!(out[3]["error"].is_string());
        assert_eq!(out[4]["verdict"], "safe");
    }

    #[test]
    fn lines_keep_their_order_and_numbers_across_batches_and_threads() {
        let mut input = String::new();
        for i in 0..(BATCH + 10) {
            match i % 3 {
                0 => input.push_str(&format!("{{\"i\":{i},\"command\":\"curl x{i}\"}}\n")),
                1 => input.push_str(&format!("{{\"i\":{i},\"command\":\"ls {i}\"}}\n")),
                _ => input.push_str("not json\n"),
            }
        }
        let out = run_str(&input);
        assert_eq!(out.len(), BATCH + 10);
        for (i, v) in out.iter().enumerate() {
            match i % 3 {
                0 => {
                    assert_eq!(v["i"], i);
                    assert_eq!(v["verdict"], "network");
                }
                1 => {
                    assert_eq!(v["i"], i);
                    assert_eq!(v["verdict"], "safe");
                }
                _ => assert_eq!(
                    v["error"].as_str().unwrap().split(':').next(),
                    Some(format!("line {}", i + 1).as_str())
                ),
            }
        }
    }

    #[test]
    fn invalid_utf8_line() {
        let mut out = Vec::new();
        run(
            &b"{\"command\":\"\xff\"}\n{\"command\":\"ls\"}\n"[..],
            &mut out,
        )
        .unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(lines[0]["error"].as_str().unwrap().contains("UTF-8"));
        assert_eq!(lines[1]["verdict"], "safe");
    }
}
