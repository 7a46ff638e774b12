//! Secret-looking paths (seed 004's blocked patterns: .ssh, .aws, .env,
//! id_rsa, credentials...). Reading one sets the session's secret taint,
//! whichever tool reads it. Patterns: data/secret_paths.toml plus
//! `[taint] secret_paths`.

use serde::Deserialize;

const DATA: &str = include_str!("../data/secret_paths.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    patterns: Vec<String>,
}

pub struct SecretPaths {
    patterns: Vec<String>,
}

impl SecretPaths {
    pub fn new(extra: &[String]) -> SecretPaths {
        let data: Data = toml::from_str(DATA).expect("data/secret_paths.toml is valid");
        let mut patterns = data.patterns;
        patterns.extend(extra.iter().cloned());
        SecretPaths { patterns }
    }

    /// The pattern a path matches: a component equal to a pattern, or
    /// starting with it followed by `.`, `-` or `_`.
    pub fn matches(&self, path: &str) -> Option<&str> {
        for comp in path.split(['/', '\\']) {
            for p in &self.patterns {
                if let Some(rest) = comp.strip_prefix(p.as_str()) {
                    if rest.is_empty() || rest.starts_with(['.', '-', '_']) {
                        return Some(p);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_patterns() {
        let s = SecretPaths::new(&[]);
        for p in [
            ".env",
            "./.env.local",
            "/home/u/.ssh/id_ed25519",
            "~/.aws/credentials",
            "config/credentials.json",
            "id_rsa",
            "/root/.kube/config",
            ".netrc",
            "x/.npmrc",
            "private_key.pem",
            ".gnupg/x",
        ] {
            assert!(s.matches(p).is_some(), "{p}");
        }
        for p in ["src/main.rs", "environment.md", ".envrc_notes/x", "README"] {
            // `.envrc_notes` starts with `.env` followed by `r`: no match.
            assert!(s.matches(p).is_none(), "{p}");
        }
    }

    #[test]
    fn extra_patterns() {
        let s = SecretPaths::new(&["vault.yml".to_string()]);
        assert!(s.matches("deploy/vault.yml").is_some());
    }
}
