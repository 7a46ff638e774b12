//! A real HTTP/1.1 server on 127.0.0.1 for the Cop's tests: it reads each
//! request (headers and body) and answers as the test scripted, recording
//! what it received. It stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server answers every request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Status and JSON body.
    Json(u16, String),
    /// Waits this long, then answers.
    Slow(Duration, u16, String),
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

pub struct Server {
    pub url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub fn start(reply: Reply) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (rx, st) = (received.clone(), stop.clone());
        std::thread::spawn(move || {
            // Bounded: at most 10 minutes, stops when the test drops us.
            let deadline = std::time::Instant::now() + Duration::from_secs(600);
            while !st.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((s, _)) => {
                        let (reply, rx, st) = (reply.clone(), rx.clone(), st.clone());
                        std::thread::spawn(move || serve(s, reply, rx, st));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server {
            url,
            received,
            stop,
        }
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// An Anthropic Messages response whose text is `text`.
    pub fn anthropic_text(text: &str) -> String {
        serde_json::json!({
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 10}
        })
        .to_string()
    }

    /// An OpenAI chat completions response whose text is `text`.
    pub fn openai_text(text: &str) -> String {
        serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        })
        .to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(s: TcpStream, reply: Reply, rx: Arc<Mutex<Vec<Received>>>, stop: Arc<AtomicBool>) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match s.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if k.eq_ignore_ascii_case("content-length") {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0u8; len.min(16 << 20)];
    let _ = reader.read_exact(&mut body);
    rx.lock().unwrap().push(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let (status, text) = match reply {
        Reply::Json(st, b) => (st, b),
        Reply::Slow(d, st, b) => {
            let until = std::time::Instant::now() + d;
            while std::time::Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            (st, b)
        }
    };
    let mut w = s;
    let _ = write!(
        w,
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        if status < 300 { "OK" } else { "Error" },
        text.len()
    );
    let _ = w.flush();
}
