//! The secrets scanner for outbound payloads (seed 004): known credential
//! formats by regex, then Shannon entropy for one-off secrets. A hit
//! escalates the call to the person whatever the taint. No maintained Rust
//! crate covers detect-secrets' ground without pulling in a file-walking
//! scanner, so the formats live in data/secrets.toml and run on the
//! `regex` crate (linear time, no backtracking).

use regex::Regex;
use serde::Deserialize;

const DATA: &str = include_str!("../data/secrets.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    pattern: Vec<PatternData>,
    entropy: Entropy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternData {
    name: String,
    regex: String,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct Entropy {
    base64_min_length: usize,
    base64_threshold: f64,
    hex_min_length: usize,
    hex_threshold: f64,
}

pub struct Scanner {
    patterns: Vec<(String, Regex)>,
    entropy: Entropy,
}

/// What the scanner found; the secret itself is never repeated, only its
/// kind and a masked prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub kind: String,
    pub masked: String,
}

/// Inputs above this size are scanned in their first part only.
const MAX_SCAN: usize = 1 << 20;

impl Scanner {
    pub fn new() -> Scanner {
        let data: Data = toml::from_str(DATA).expect("data/secrets.toml is valid");
        let patterns = data
            .pattern
            .into_iter()
            .map(|p| {
                let re = Regex::new(&p.regex)
                    .unwrap_or_else(|e| panic!("data/secrets.toml `{}`: {e}", p.name));
                (p.name, re)
            })
            .collect();
        Scanner {
            patterns,
            entropy: data.entropy,
        }
    }

    pub fn scan(&self, text: &str) -> Option<Hit> {
        let mut end = text.len().min(MAX_SCAN);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        for (name, re) in &self.patterns {
            if let Some(m) = re.find(text) {
                return Some(Hit {
                    kind: name.clone(),
                    masked: mask(m.as_str()),
                });
            }
        }
        self.high_entropy(text)
    }

    fn high_entropy(&self, text: &str) -> Option<Hit> {
        let e = self.entropy;
        let tokens = text.split(|c: char| {
            !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
        });
        for tok in tokens {
            let tok = tok.trim_matches(['=', '/', '-', '_']);
            if tok.len() >= e.hex_min_length
                && tok.len() != 40
                && tok.bytes().all(|b| b.is_ascii_hexdigit())
                && tok.bytes().any(|b| b.is_ascii_digit())
                && tok.bytes().any(|b| b.is_ascii_alphabetic())
                && shannon(tok) >= e.hex_threshold
            {
                return Some(Hit {
                    kind: "high-entropy hex string".into(),
                    masked: mask(tok),
                });
            }
            if tok.len() >= e.base64_min_length
                && !tok.contains('/')
                && tok.bytes().any(|b| b.is_ascii_digit())
                && tok.bytes().any(|b| b.is_ascii_uppercase())
                && tok.bytes().any(|b| b.is_ascii_lowercase())
                && shannon(tok) >= e.base64_threshold
            {
                return Some(Hit {
                    kind: "high-entropy string".into(),
                    masked: mask(tok),
                });
            }
        }
        None
    }
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new()
    }
}

/// Bits of entropy per character.
pub fn shannon(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

fn mask(s: &str) -> String {
    let shown: String = s.chars().take(4).collect();
    format!("{shown}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_formats() {
        let s = Scanner::new();
        for (text, kind) in [
            ("key=AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "GitHub token",
            ),
            ("xoxb-123456789012-abcdefghij", "Slack token"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "private key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key"),
            (
                "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
                "Anthropic API key",
            ),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key"),
            ("password: hunter2hunter2", "password or key assignment"),
        ] {
            let h = s.scan(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(h.kind, kind, "{text}");
            assert!(h.masked.ends_with('…') && h.masked.chars().count() <= 5);
        }
    }

    #[test]
    fn entropy() {
        let s = Scanner::new();
        assert!(s.scan("here: q8Zt3LmW9pXv2RkB7nYc4HdJ6sFa1GeU").is_some());
        assert!(s
            .scan("d41d8cd98f00b204e9800998ecf8427e5a1b2c3d4e5f6a7b")
            .is_some());
        for clean in [
            "Please summarize the meeting notes from Tuesday.",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "uuid 123e4567-e89b-12d3-a456-426614174000",
            "path src/components/navigation/SidebarMenuItem.tsx",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(s.scan(clean), None, "{clean}");
        }
    }
}
