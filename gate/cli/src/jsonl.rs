//! `bashgate analyze --jsonl`: one JSON object in, the same object out with
//! the analysis added. A bad line gets an "error" field; the run goes on.

use std::io::{self, BufRead, BufWriter, Write};

use bashgate_analyzer::analyze;
use serde_json::{Map, Value};

/// Lines read before a batch is analyzed: enough to keep every core busy,
/// few enough that memory stays small on any input.
const BATCH: usize = 4096;

/// Analyzes every line, on every core the machine offers, and writes the
/// results in input order. Reading the next batch and writing the last
/// one's results happen while a batch is analysed, so the cores do not
/// wait for the pipes.
pub fn run(input: impl BufRead, output: impl Write) -> io::Result<()> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = BufWriter::new(output);
    let mut lines = input.split(b'\n');
    std::thread::scope(|scope| {
        let mut done = 0;
        let mut running = None;
        loop {
            let read = lines
                .by_ref()
                .take(BATCH)
                .collect::<io::Result<Vec<Vec<u8>>>>();
            let last = running.take();
            let (batch, failed) = match read {
                Ok(batch) => (batch, None),
                Err(e) => (Vec::new(), Some(e)),
            };
            if !batch.is_empty() {
                let first = done;
                done += batch.len();
                running = Some(scope.spawn(move || annotate_batch(&batch, first, threads)));
            }
            // What was analysed before a read error is still written.
            if let Some(last) = last {
                let texts = last.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                for text in texts {
                    out.write_all(&text)?;
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if running.is_none() {
                return out.flush();
            }
        }
    })
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
                    let mut text = annotate(line, done + first + j + 1);
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

/// The usual line, read without building it: an object whose `command`
/// is a string, which holds no `verdict` or `findings` yet. Every other
/// field is checked as JSON and skipped. A key given twice (`command`
/// under two spellings included) fails here and takes the general path.
#[derive(serde::Deserialize)]
struct Usual<'a> {
    #[serde(borrow)]
    command: std::borrow::Cow<'a, str>,
    /// Whether the key is there at all, `null` included.
    #[serde(default, deserialize_with = "present")]
    verdict: bool,
    #[serde(default, deserialize_with = "present")]
    findings: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    <serde::de::IgnoredAny as serde::Deserialize>::deserialize(value).map(|_| true)
}

/// The output object for one input line, as JSON text.
fn annotate(line: &[u8], lineno: usize) -> Vec<u8> {
    if let Some(text) = annotate_usual(line) {
        return text;
    }
    annotate_general(line, lineno)
}

/// The usual line: its own text, then the two fields; `None` for any other.
fn annotate_usual(line: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(line).ok()?;
    let usual: Usual = serde_json::from_str(text).ok()?;
    if usual.verdict || usual.findings {
        return None;
    }
    // A valid object ends in `}` (blanks aside) and holds "command", so a
    // `,` may follow its last field.
    let body = text.trim_end().strip_suffix('}')?;
    let analysis = analyze(&usual.command);
    let mut out = Vec::with_capacity(text.len() + 128);
    out.extend_from_slice(body.as_bytes());
    out.extend_from_slice(b",\"verdict\":");
    serde_json::to_writer(&mut out, &analysis.verdict).ok()?;
    out.extend_from_slice(b",\"findings\":");
    serde_json::to_writer(&mut out, &analysis.findings).ok()?;
    out.push(b'}');
    Some(out)
}

/// Any line: parsed as a value, so errors can be told and fields replaced.
fn annotate_general(line: &[u8], lineno: usize) -> Vec<u8> {
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
            return to_text(&error_only(format!(
                "line {lineno}: expected a JSON object with a \"command\" string"
            )))
        }
        Err(e) => return to_text(&error_only(e)),
    };
    let Some(command) = obj.get("command").and_then(Value::as_str) else {
        obj.insert(
            "error".into(),
            Value::String(format!("line {lineno}: no string \"command\" field")),
        );
        return to_text(&Value::Object(obj));
    };
    let analysis = analyze(command);
    // Fields already there are replaced where they stand; others go last.
    obj.insert(
        "verdict".into(),
        serde_json::to_value(analysis.verdict).unwrap_or(Value::Null),
    );
    obj.insert(
        "findings".into(),
        serde_json::to_value(&analysis.findings).unwrap_or(Value::Null),
    );
    to_text(&Value::Object(obj))
}

fn to_text(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

fn error_only(message: String) -> Value {
    let mut m = Map::new();
    m.insert("error".into(), Value::String(message));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output text for `input`.
    fn run_text(input: &str) -> String {
        let mut out = Vec::new();
        run(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn run_str(input: &str) -> Vec<Value> {
        run_text(input)
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
    fn fields_already_there_are_replaced_where_they_stand() {
        let out = run_str("{\"verdict\":\"x\",\"command\":\"curl x\",\"findings\":0,\"z\":1}\n");
        let keys: Vec<&String> = out[0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["verdict", "command", "findings", "z"]);
        assert_eq!(out[0]["verdict"], "network");
        assert_eq!(out[0]["findings"][0]["rule"], "BG101");
    }

    #[test]
    fn written_fields_read_back_as_the_analysis() {
        let line = run_text("{\"command\":\"ls \\\"a\\u00e9\\\" | curl x\"}\n");
        let v: Value = serde_json::from_str(&line).unwrap();
        let a = analyze("ls \"a\u{e9}\" | curl x");
        assert_eq!(v["verdict"], serde_json::to_value(a.verdict).unwrap());
        assert_eq!(v["findings"], serde_json::to_value(&a.findings).unwrap());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["command", "verdict", "findings"]);
        assert!(line.ends_with("}\n") && line.lines().count() == 1);
    }

    #[test]
    fn the_usual_line_is_written_as_read_with_the_fields_after_it() {
        assert_eq!(
            run_text("{ \"id\": 1, \"command\": \"ls\" }  \n"),
            "{ \"id\": 1, \"command\": \"ls\" ,\"verdict\":\"safe\",\"findings\":[]}\n"
        );
    }

    #[test]
    fn a_field_already_there_as_null_is_replaced_not_repeated() {
        for line in [
            "{\"command\":\"curl x\",\"verdict\":null}\n",
            "{\"command\":\"curl x\",\"findings\":null}\n",
        ] {
            let text = run_text(line);
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["verdict"], "network");
            // Each finding names its verdict too; the line itself once.
            let findings = v["findings"].as_array().unwrap().len();
            assert_eq!(text.matches("\"verdict\"").count(), 1 + findings, "{text}");
            assert_eq!(text.matches("\"findings\"").count(), 1, "{text}");
            assert!(!text.contains("null"), "{text}");
        }
    }

    #[test]
    fn a_command_given_twice_is_written_once_as_analysed() {
        // Whatever a reader of the output takes for the command must be
        // the command whose verdict sits beside it.
        for line in [
            "{\"command\":\"curl x\",\"command\":\"ls\"}\n",
            "{\"comm\\u0061nd\":\"curl x\",\"command\":\"ls\"}\n",
        ] {
            let text = run_text(line);
            assert_eq!(text.matches("\"comm").count(), 1, "{text}");
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["command"], "ls");
            assert_eq!(v["verdict"], "safe");
        }
    }

    #[test]
    fn a_read_error_ends_the_run_after_the_batches_before_it_are_written() {
        struct Broken;
        impl io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("the disk went away"))
            }
        }
        let good = "{\"command\":\"ls\"}\n".repeat(BATCH + 2);
        let input = io::BufReader::new(io::Read::chain(good.as_bytes(), Broken));
        let mut out = Vec::new();
        let err = run(input, &mut out).unwrap_err();
        assert_eq!(err.to_string(), "the disk went away");
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), BATCH);
        assert!(text
            .lines()
            .all(|l| l.ends_with("\"verdict\":\"safe\",\"findings\":[]}")));
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
