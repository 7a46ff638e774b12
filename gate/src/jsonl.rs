//! `bashgate analyze --jsonl`: one JSON object in, the same object out with
//! the analysis added. A bad line gets an "error" field; the run goes on.

use std::io::{self, BufRead, BufWriter, Write};

use bashgate_analyzer::analyze;
use serde_json::{Map, Value};

pub fn run(input: impl BufRead, output: impl Write) -> io::Result<()> {
    let mut out = BufWriter::new(output);
    for (n, line) in input.split(b'\n').enumerate() {
        let line = line?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let value = annotate(line, n + 1);
        serde_json::to_writer(&mut out, &value).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
    }
    out.flush()
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
