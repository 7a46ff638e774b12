//! The secrets scanner for outbound payloads: known credential formats by
//! regex, then Shannon entropy for one-off secrets. A hit escalates the
//! call to the person whatever the taint. No maintained Rust crate covers
//! detect-secrets' ground without pulling in a file-walking scanner, so
//! the formats live in data/secrets.toml and run on the `regex` crate
//! (linear time, no backtracking).

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

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
    /// Literals one of which every match contains (ASCII, compared without
    /// case): the regex is compiled and run only on a text that has one.
    /// A test proves each list from the regex itself.
    needles: Vec<String>,
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
    patterns: Vec<Pattern>,
    entropy: Entropy,
}

struct Pattern {
    name: String,
    source: String,
    /// Lower-cased.
    needles: Vec<Vec<u8>>,
    regex: OnceLock<Regex>,
}

impl Pattern {
    fn find(&self, text: &[u8], lower: &[u8]) -> Option<String> {
        if !self.needles.iter().any(|n| contains(lower, n)) {
            return None;
        }
        let re = self.regex.get_or_init(|| compile(&self.source));
        re.find(text)
            .map(|m| mask(&String::from_utf8_lossy(m.as_bytes())))
    }
}

/// ASCII classes: credentials are ASCII, and Unicode-aware `\b`, `\s` and
/// `(?i)` cost the hook milliseconds to compile.
fn compile(source: &str) -> Regex {
    RegexBuilder::new(source)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("data/secrets.toml `{source}`: {e}"))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
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

/// The part of `text` that is scanned.
fn head(text: &str) -> &str {
    let mut end = text.len().min(MAX_SCAN);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Scanner {
    pub fn new() -> Scanner {
        let data: Data = crate::data::parse(crate::data::SECRETS, "secrets");
        let patterns = data
            .pattern
            .into_iter()
            .map(|p| Pattern {
                name: p.name,
                source: p.regex,
                needles: p
                    .needles
                    .iter()
                    .map(|n| n.to_ascii_lowercase().into_bytes())
                    .collect(),
                regex: OnceLock::new(),
            })
            .collect();
        Scanner {
            patterns,
            entropy: data.entropy,
        }
    }

    pub fn scan(&self, text: &str) -> Option<Hit> {
        let text = head(text);
        self.credential(text).or_else(|| self.high_entropy(text))
    }

    /// A credential in a known format, without the entropy guess: for
    /// output the agent was shown, where hashes and encoded data are
    /// everyday.
    pub fn credential(&self, text: &str) -> Option<Hit> {
        let text = head(text);
        let lower = text.as_bytes().to_ascii_lowercase();
        self.patterns.iter().find_map(|p| {
            p.find(text.as_bytes(), &lower).map(|masked| Hit {
                kind: p.name.clone(),
                masked,
            })
        })
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

    /// Every match of a pattern starts with one of the prefixes the regex
    /// syntax crate extracts from it; when each such prefix holds one of
    /// the pattern's needles, so does every match, and skipping a text
    /// without a needle skips nothing the regex would find.
    #[test]
    fn every_match_contains_a_needle() {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let data: Data = crate::data::parse(crate::data::SECRETS, "secrets");
        for p in data.pattern {
            assert!(!p.needles.is_empty(), "{}: no needles", p.name);
            let hir = regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(&p.regex)
                .unwrap();
            let mut extractor = Extractor::new();
            extractor.kind(ExtractKind::Prefix).limit_total(100_000);
            let seq = extractor.extract(&hir);
            let literals = seq
                .literals()
                .unwrap_or_else(|| panic!("{}: no finite set of prefixes", p.name));
            assert!(!literals.is_empty(), "{}: matches nothing?", p.name);
            for lit in literals {
                let lower = lit.as_bytes().to_ascii_lowercase();
                assert!(
                    p.needles
                        .iter()
                        .any(|n| contains(&lower, n.to_ascii_lowercase().as_bytes())),
                    "{}: a match can start with {:?}, which holds none of {:?}",
                    p.name,
                    String::from_utf8_lossy(lit.as_bytes()),
                    p.needles
                );
            }
        }
    }

    #[test]
    fn a_text_without_needles_compiles_no_regex() {
        let s = Scanner::new();
        assert_eq!(s.scan("ls -la src | grep rs"), None);
        assert!(s.patterns.iter().all(|p| p.regex.get().is_none()));
        assert!(s.scan("echo AKIAABCDEFGHIJKLMNOP").is_some());
        assert_eq!(
            s.patterns
                .iter()
                .filter(|p| p.regex.get().is_some())
                .count(),
            1
        );
    }

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
