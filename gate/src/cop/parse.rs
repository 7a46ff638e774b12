//! Tolerant reading of the Cop's verdict: a JSON object with `flagged`
//! (and usually `reason`), possibly inside a code fence or surrounded by
//! prose. Anything without a readable `flagged` is an error, never a guess.

use serde_json::Value;

const MAX_TEXT: usize = 64 * 1024;
const MAX_ATTEMPTS: usize = 64;

pub fn verdict(text: &str) -> Result<(bool, String), String> {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let mut candidates: Vec<&str> = Vec::new();
    if let Some(inner) = fenced(text) {
        candidates.push(inner);
    }
    candidates.push(text.trim());
    for c in candidates {
        if let Some(v) = first_object(c) {
            return Ok(v);
        }
    }
    Err(format!(
        "the reviewer's answer has no {{\"flagged\": ...}} object: `{}`",
        crate::decision::excerpt(text.trim(), 120)
    ))
}

fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
    let body = &after[body_start..];
    let end = body.find("```")?;
    Some(body[..end].trim())
}

fn first_object(text: &str) -> Option<(bool, String)> {
    for (n, (i, _)) in text.match_indices('{').enumerate() {
        if n >= MAX_ATTEMPTS {
            break;
        }
        let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(o))) = it.next() {
            let flagged = match o.get("flagged") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" | "yes" => true,
                    "false" | "no" => false,
                    _ => continue,
                },
                Some(Value::Number(n)) if n.as_u64() == Some(0) => false,
                Some(Value::Number(n)) if n.as_u64() == Some(1) => true,
                _ => continue,
            };
            let reason = o
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("no reason given")
                .to_string();
            return Some((flagged, reason));
        }
    }
    None
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
        ] {
            assert!(verdict(t).is_err(), "{t}");
        }
    }
}
