//! Reading the Cop's verdict: exactly one JSON object with `flagged` (and
//! usually `reason`), possibly inside a code fence or surrounded by prose.
//! No readable `flagged`, or more than one object that has one (a second
//! verdict hidden after the first, a verdict quoted from the command), or
//! an object that names a key twice, is an error, never a guess.

use serde_json::Value;

use super::CopError;

const MAX_TEXT: usize = 64 * 1024;
/// Objects tried before the answer counts as unreadable.
const MAX_ATTEMPTS: usize = 64;

pub fn verdict(text: &str) -> Result<(bool, String), CopError> {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let shown = || crate::decision::excerpt(text.trim(), 120);
    let mut found: Vec<(bool, String)> = Vec::new();
    let mut at = 0;
    let mut attempts = 0;
    while let Some(i) = text[at..].find('{').map(|i| i + at) {
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            return Err(CopError::Unreadable(format!(
                "the reviewer's answer has too many braces to read one verdict: `{}`",
                shown()
            )));
        }
        match crate::json::first(&text[i..]) {
            // A key named twice: which one a reader takes is a guess.
            Some(Err(e)) if e.to_string().contains("appears twice") => {
                return Err(CopError::Unreadable(format!(
                    "the reviewer's answer names a key twice ({e}): `{}`",
                    shown()
                )));
            }
            Some(Ok((Value::Object(o), len))) => {
                // Objects nested inside this one are part of it.
                at = i + len;
                if let Some(v) = o.get("flagged") {
                    let Some(flagged) = flag(v) else {
                        return Err(CopError::Unreadable(format!(
                            "the reviewer's answer has an unreadable \"flagged\": `{}`",
                            shown()
                        )));
                    };
                    let reason = o
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given")
                        .to_string();
                    found.push((flagged, reason));
                }
            }
            _ => at = i + 1,
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CopError::Unreadable(format!(
            "the reviewer's answer has no {{\"flagged\": ...}} object: `{}`",
            shown()
        ))),
        n => Err(CopError::Unreadable(format!(
            "the reviewer's answer holds {n} verdicts, not one: `{}`",
            shown()
        ))),
    }
}

fn flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        Value::Number(n) if n.as_u64() == Some(0) => Some(false),
        Value::Number(n) if n.as_u64() == Some(1) => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_fenced_and_prose() {
        assert_eq!(
            verdict(r#"{"flagged": false, "reason": "local"}"#).unwrap(),
            (false, "local".into())
        );
        assert_eq!(
            verdict("```json\n{\"flagged\": true, \"reason\": \"exfil\"}\n```").unwrap(),
            (true, "exfil".into())
        );
        assert_eq!(
            verdict("Sure. Here is my verdict: {\"flagged\": \"true\", \"reason\": \"x\"} Hope it helps {").unwrap(),
            (true, "x".into())
        );
        assert_eq!(
            verdict("{\"note\": {\"a\": 1}} then {\"flagged\": false}").unwrap(),
            (false, "no reason given".into())
        );
    }

    #[test]
    fn unreadable_answers_are_errors() {
        for t in [
            "",
            "I think it is fine",
            "{\"flagged\": \"maybe\"}",
            "{\"reason\": \"x\"}",
            "{{{{",
            // A second verdict after the first: which one counts is a guess.
            "{\"flagged\": false} {\"flagged\": true}",
            "{\"flagged\": false, \"reason\": \"ok\"}\n```json\n{\"flagged\": true}\n```",
            "{\"flagged\": false} {\"flagged\": false}",
            "{\"flagged\": false} {\"flagged\": \"maybe\"}",
            // A key named twice: serde_json keeps the last, others the first.
            "{\"flagged\": true, \"flagged\": false}",
            "{\"flagged\": false, \"reason\": \"a\", \"reason\": \"b\"}",
            "{\"note\": {\"x\": 1, \"x\": 2}, \"flagged\": false}",
        ] {
            assert!(verdict(t).is_err(), "{t}");
        }
    }
}
