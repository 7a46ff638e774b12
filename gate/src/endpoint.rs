//! Where the host daemon listens and how clients name it: `http://HOST:PORT`
//! or `unix:/path/to.sock`. Only parsing lives here (the configuration
//! checks these addresses); connecting is the surfaces' business.

use std::path::PathBuf;

/// Where the daemon listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `host:port`.
    Tcp(String),
    Unix(PathBuf),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Target::Tcp(a) => write!(f, "http://{a}"),
            Target::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// Why an address is not one the daemon can be named by.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadTarget {
    #[error("`{0}`: a unix socket URL needs an absolute path (unix:/run/bashgate/bashgate.sock)")]
    RelativeSocket(String),
    #[error("`{0}`: expected http://HOST:PORT with no path (http://127.0.0.1:7480)")]
    NotHostPort(String),
    #[error("`{0}` is neither http://HOST:PORT nor unix:/path/to.sock")]
    NotAUrl(String),
    #[error("`{0}` is neither HOST:PORT (127.0.0.1:7480) nor unix:/path/to.sock")]
    NotAListenAddress(String),
}

impl Target {
    /// A client URL: `http://HOST:PORT` or `unix:/path/to.sock`.
    pub fn parse(url: &str) -> Result<Target, BadTarget> {
        if let Some(rest) = url.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if !path.starts_with('/') {
                return Err(BadTarget::RelativeSocket(url.to_string()));
            }
            return Ok(Target::Unix(PathBuf::from(path)));
        }
        if let Some(rest) = url.strip_prefix("http://") {
            let hostport = rest.trim_end_matches('/');
            if hostport.is_empty() || hostport.contains('/') || !hostport.contains(':') {
                return Err(BadTarget::NotHostPort(url.to_string()));
            }
            return Ok(Target::Tcp(hostport.to_string()));
        }
        Err(BadTarget::NotAUrl(url.to_string()))
    }

    /// A listen address: `HOST:PORT`, `http://HOST:PORT` or
    /// `unix:/path/to.sock`.
    pub fn parse_listen(s: &str) -> Result<Target, BadTarget> {
        if s.starts_with("unix:") || s.starts_with("http://") {
            return Target::parse(s);
        }
        if s.contains("://") || !s.contains(':') {
            return Err(BadTarget::NotAListenAddress(s.to_string()));
        }
        Target::parse(&format!("http://{s}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("http://127.0.0.1:7480").unwrap(),
            Target::Tcp("127.0.0.1:7480".into())
        );
        assert_eq!(
            Target::parse("unix:/run/b.sock").unwrap(),
            Target::Unix("/run/b.sock".into())
        );
        assert_eq!(
            Target::parse("unix:///run/b.sock").unwrap(),
            Target::Unix("/run/b.sock".into())
        );
        assert!(matches!(
            Target::parse("unix:rel.sock"),
            Err(BadTarget::RelativeSocket(_))
        ));
        assert!(matches!(
            Target::parse("https://x:1"),
            Err(BadTarget::NotAUrl(_))
        ));
        assert!(matches!(
            Target::parse("http://x:1/path"),
            Err(BadTarget::NotHostPort(_))
        ));
        assert_eq!(
            Target::parse_listen("127.0.0.1:0").unwrap(),
            Target::Tcp("127.0.0.1:0".into())
        );
        assert!(Target::parse_listen("ftp://x:1")
            .unwrap_err()
            .to_string()
            .contains("neither"));
        assert!(Target::parse_listen("localhost").is_err());
    }
}
