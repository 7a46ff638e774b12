//! A small HTTP/1.1 client over TCP or a unix socket (std only), for the
//! daemon's end-to-end tests and the load test: one request per
//! connection, `Connection: close`, the answer read to the end. It speaks
//! the real protocol to the real daemon; it also sends what a well-behaved
//! client never would (malformed bodies, oversized bodies).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Where to send a request.
#[derive(Debug, Clone)]
pub enum Addr {
    /// `host:port`.
    Tcp(String),
    Unix(PathBuf),
}

impl Addr {
    /// `http://host:port` or `unix:/path`.
    pub fn parse(url: &str) -> Addr {
        if let Some(p) = url.strip_prefix("unix:") {
            Addr::Unix(PathBuf::from(p))
        } else {
            Addr::Tcp(
                url.trim_start_matches("http://")
                    .trim_end_matches('/')
                    .to_string(),
            )
        }
    }

    pub fn url(&self) -> String {
        match self {
            Addr::Tcp(a) => format!("http://{a}"),
            Addr::Unix(p) => format!("unix:{}", p.display()),
        }
    }
}

/// An answer: status and body (JSON when it parses, else `Value::String`).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or("")
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

fn connect(addr: &Addr) -> io::Result<Box<dyn Stream>> {
    let guard = Some(Duration::from_secs(120));
    Ok(match addr {
        Addr::Tcp(a) => {
            let s = TcpStream::connect(a.as_str())?;
            s.set_nodelay(true)?;
            s.set_read_timeout(guard)?;
            Box::new(s)
        }
        Addr::Unix(p) => {
            let s = UnixStream::connect(p)?;
            s.set_read_timeout(guard)?;
            Box::new(s)
        }
    })
}

/// Sends one request; `extra` headers are `(name, value)` pairs.
pub fn request(
    addr: &Addr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> io::Result<Reply> {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: bashgate\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    let mut s = connect(addr)?;
    s.write_all(head.as_bytes())?;
    // A daemon that refuses a body early may close before reading it all:
    // the answer still arrives, so a failed write is not the end.
    let _ = s.write_all(body);
    let _ = s.flush();
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A peer that closes with part of our body unread resets the
            // connection after its answer: keep the answer.
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset && !raw.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    parse(&raw)
}

/// A JSON request (`Value::Null` sends no body).
pub fn json(
    addr: &Addr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> io::Result<Reply> {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    request(addr, method, path, token, &bytes)
}

fn bad(m: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, m.to_string())
}

fn parse(raw: &[u8]) -> io::Result<Reply> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers in the answer"))?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let chunked = lines.any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let mut body = raw[end + 4..].to_vec();
    if chunked {
        body = dechunk(&body)?;
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok(Reply { status, body })
}

fn dechunk(mut b: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let nl = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| bad("bad chunk"))?;
        let size_text = String::from_utf8_lossy(&b[..nl]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| bad("bad chunk size"))?;
        b = &b[nl + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size + 2 {
            return Err(bad("short chunk"));
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}
