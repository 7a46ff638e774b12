//! The client side of the host daemon: where it listens, one HTTP/1.1
//! request over TCP or a unix socket, and the hooks' `--remote` decision
//! (classify locally, answer `safe` at once, ask the daemon otherwise, wait
//! for a person's answer, and apply `on_error` within a deadline when the
//! daemon cannot be reached).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request as HttpRequest;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use bashgate::call::FenceKind;
use bashgate::config::Config;
use bashgate::decision::{excerpt, Decision, Layer, Permission};
use bashgate::endpoint::Target;
use bashgate::engine::{Gate, ToolCall};
use bashgate::GateRule;

/// Answers above this size are not read.
const MAX_ANSWER: usize = 4 << 20;

/// An answer from the daemon: the HTTP status and its JSON body (a body
/// that is not JSON becomes `{"error": text}`).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    /// The daemon's explanation of an error status.
    pub fn error(&self) -> String {
        let msg = self.body["error"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| self.body.to_string());
        format!("the daemon answered {}: {msg}", self.status)
    }
}

async fn exchange<T>(io: T, req: HttpRequest<Full<Bytes>>) -> Result<Answer, String>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| format!("the request failed: {e}"))?;
    let status = resp.status().as_u16();
    let bytes = Limited::new(resp.into_body(), MAX_ANSWER)
        .collect()
        .await
        .map_err(|e| format!("cannot read the answer: {e}"))?
        .to_bytes();
    driver.abort();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({ "error": String::from_utf8_lossy(&bytes) }));
    Ok(Answer { status, body })
}

/// One request to the daemon. `token` is sent as a bearer token.
pub async fn call(
    target: &Target,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Answer, String> {
    let mut b = HttpRequest::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, "bashgate")
        .header(hyper::header::ACCEPT, "application/json");
    if let Some(t) = token {
        b = b.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let payload = match body {
        Some(v) => {
            b = b.header(hyper::header::CONTENT_TYPE, "application/json");
            Bytes::from(v.to_string())
        }
        None => Bytes::new(),
    };
    let req = b
        .body(Full::new(payload))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    match target {
        Target::Tcp(addr) => {
            let s = tokio::net::TcpStream::connect(addr.as_str())
                .await
                .map_err(|e| format!("cannot connect to {target}: {e}"))?;
            let _ = s.set_nodelay(true);
            exchange(s, req).await
        }
        Target::Unix(p) => {
            let s = tokio::net::UnixStream::connect(p)
                .await
                .map_err(|e| format!("cannot connect to {target}: {e}"))?;
            exchange(s, req).await
        }
    }
}

/// `call` bounded by `timeout`.
pub async fn call_within(
    timeout: Duration,
    target: &Target,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Answer, String> {
    match tokio::time::timeout(timeout, call(target, method, path, token, body)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "{target} did not answer within {} ms",
            timeout.as_millis()
        )),
    }
}

/// A single-threaded runtime for the hooks and the admin CLI.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// What to tell the person when the daemon cannot decide.
fn unreachable(config: &Config, target: &str, why: &str) -> Decision {
    Decision::on_error(
        config.on_error,
        Layer::Input,
        &format!(
            "the bashgate daemon at {target} could not decide ({why}). On the host, check that \
             `bashgate serve` is running and that this container has the socket (or port) and \
             its session token in ${}",
            config.remote.token_env
        ),
    )
}

/// The `--remote` decision for a PreToolUse request. The always-on
/// denials, and calls that need no taint (a `safe` Bash command, a
/// workspace-only tool), are decided here with no round trip; everything
/// else is the daemon's.
pub fn decide_hook(
    config: &Config,
    config_file: Option<PathBuf>,
    url: &str,
    call: &ToolCall,
) -> Decision {
    // The always-on denials are decided here, before the daemon is asked:
    // no failure to reach it (nor `on_error = "allow"`) lets them through.
    if let Some(d) = Gate::always_on(call, &config.always) {
        return d;
    }
    let gate = Gate::builder(config.clone())
        .config_file(config_file)
        .build();
    if gate.decides_locally(call) {
        return gate.decide_guarded(call).decision;
    }
    let target = match Target::parse(url) {
        Ok(t) => t,
        Err(e) => return unreachable(config, url, &format!("bad --remote URL: {e}")),
    };
    let token = match std::env::var(&config.remote.token_env) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => {
            return unreachable(
                config,
                url,
                &format!(
                    "${} is not set; create a session with `bashgate session create` on the host",
                    config.remote.token_env
                ),
            )
        }
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return unreachable(config, url, &e),
    };
    rt.block_on(ask_daemon(config, &target, &token, call))
}

/// What the daemon is told about a call.
fn body(call: &ToolCall) -> Value {
    json!({
        "tool_name": call.tool,
        "tool_input": call.input,
        "cwd": call.cwd.display().to_string(),
        "agent_session": call.session,
    })
}

async fn ask_daemon(
    config: &Config,
    target: &Target,
    token: &str,
    call: &ToolCall<'_>,
) -> Decision {
    let url = target.to_string();
    let timeout = Duration::from_millis(config.remote.timeout_ms);
    let mut body = body(call);
    // Whether the fence can be set up here, where the command runs.
    body["fence"] = json!(call.fence.get().wire());
    body["fence_writes"] = json!(call.fence.of(FenceKind::Writes).wire());
    let a = match call_within(
        timeout,
        target,
        "POST",
        "/v1/check",
        Some(token),
        Some(&body),
    )
    .await
    {
        Ok(a) => a,
        Err(e) => return unreachable(config, &url, &e),
    };
    if a.status != 200 {
        return unreachable(config, &url, &a.error());
    }
    match answer_decision(&a.body) {
        Some(d) => d,
        None if a.body["decision"] == "pending" => {
            let id = a.body["approval"]["id"].as_str().unwrap_or("").to_string();
            let expires_in = a.body["approval"]["expires_in_ms"].as_u64().unwrap_or(0);
            if id.is_empty() {
                return unreachable(config, &url, "a pending answer without an approval id");
            }
            let what = call
                .command()
                .map(|c| format!("`{}`", excerpt(c, 80)))
                .unwrap_or_else(|| format!("this {} call", call.tool));
            // The client shows this while the hook waits, where it shows
            // a hook's progress at all.
            eprintln!(
                "bashgate: {what} waits for a person: approval {id} (on the host: `bashgate pending` lists it; `bashgate approve {id}` or `bashgate deny {id}` answers it)"
            );
            let wait = Duration::from_secs(config.remote.approval_wait_s)
                .min(Duration::from_millis(expires_in) + Duration::from_secs(30));
            wait_for_approval(config, target, token, &id, wait).await
        }
        None => unreachable(
            config,
            &url,
            &format!("an answer bashgate cannot read: {}", a.body),
        ),
    }
}

/// `{"decision": "allow"|"deny"|"ask", "reason"}` as a decision.
fn answer_decision(v: &Value) -> Option<Decision> {
    let permission = match v["decision"].as_str()? {
        "allow" => Permission::Allow,
        "deny" => Permission::Deny,
        "ask" => Permission::Ask,
        _ => return None,
    };
    let reason = v["reason"].as_str().unwrap_or("").to_string();
    // The person's own earlier answer stays theirs on this side too.
    let layer = match v["layer"].as_str() {
        Some("remembered") => Layer::Remembered,
        _ => Layer::Cascade,
    };
    let mut d = Decision::new(
        permission,
        layer,
        v["rule"].as_str().and_then(GateRule::from_key),
        reason,
    );
    // An allow that holds only fenced stays so here.
    if permission == Permission::Allow && v["confined"] == true {
        d.fence = Some(if v["writes_only"] == true {
            bashgate::call::FenceKind::Writes
        } else {
            bashgate::call::FenceKind::Full
        });
    }
    Some(d)
}

/// Long-polls the daemon for an approval's answer until `wait` runs out,
/// reconnecting (with backoff) if the daemon goes away meanwhile: the
/// approval is in its database and survives a restart.
pub async fn wait_for_approval(
    config: &Config,
    target: &Target,
    token: &str,
    id: &str,
    wait: Duration,
) -> Decision {
    let deadline = Instant::now() + wait;
    let timeout = Duration::from_millis(config.remote.timeout_ms);
    let mut backoff = Duration::from_millis(100);
    let mut last_error = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let poll = left.min(Duration::from_secs(20));
        let path = format!("/v1/approvals/{id}?wait_ms={}", poll.as_millis());
        match call_within(poll + timeout, target, "GET", &path, Some(token), None).await {
            Ok(a) if a.status == 200 => {
                backoff = Duration::from_millis(100);
                if let Some(mut d) = answer_decision(&a.body) {
                    // The person answered this call.
                    d.layer = Layer::Person;
                    return d;
                }
            }
            Ok(a) => {
                // The daemon answered but refuses: waiting will not help.
                return unreachable(
                    config,
                    &target.to_string(),
                    &format!("while waiting for approval {id}: {}", a.error()),
                );
            }
            Err(e) => {
                last_error = Some(e);
                let left = deadline.saturating_duration_since(Instant::now());
                tokio::time::sleep(backoff.min(left)).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
    if let Some(e) = last_error {
        let why = format!(
            "no answer to approval {id} within {} s (last error: {e})",
            wait.as_secs().max(1)
        );
        return unreachable(config, &target.to_string(), &why);
    }
    // The daemon was there and the person did not say yes: not run.
    let rule = GateRule::NeedsHuman;
    Decision::deny(
        Layer::Person,
        rule,
        format!(
            "bashgate asked the person on the host about this call (approval {id}) and had no answer within {} s, so it did not run ({}). \
             Tell the person what you want to run and why: on the host `bashgate pending` lists the question and `bashgate approve {id}` answers it; then try again.",
            wait.as_secs().max(1),
            rule.tag()
        ),
    )
}

/// Reports a finished tool call to the daemon, which sets the session's
/// taint from what it read. Errors are returned for the caller to print.
pub fn report(config: &Config, url: &str, call: &ToolCall) -> Result<(), String> {
    post_taint(config, url, body(call))
}

/// Reports both taint flags for a session whose earlier report was lost
/// (`why` says what was lost).
pub fn report_lost(config: &Config, url: &str, why: &str) -> Result<(), String> {
    for flag in ["corruption", "secret"] {
        let detail = format!("a taint report was lost on the way to the daemon ({why})");
        report_flag(config, url, flag, &detail)?;
    }
    Ok(())
}

/// Reports one taint flag (`corruption` or `secret`) for the session,
/// with why: what the container found that the daemon cannot see (the
/// project's files are in the container).
pub fn report_flag(config: &Config, url: &str, flag: &str, detail: &str) -> Result<(), String> {
    post_taint(config, url, json!({ "flag": flag, "detail": detail }))
}

fn post_taint(config: &Config, url: &str, body: Value) -> Result<(), String> {
    let target = Target::parse(url).map_err(|e| e.to_string())?;
    let token = std::env::var(&config.remote.token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| format!("${} is not set", config.remote.token_env))?;
    let timeout = Duration::from_millis(config.remote.timeout_ms);
    let a = runtime()?.block_on(call_within(
        timeout,
        &target,
        "POST",
        "/v1/taint",
        Some(token.trim()),
        Some(&body),
    ))?;
    if a.status == 200 {
        Ok(())
    } else {
        Err(a.error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let d = answer_decision(&json!({"decision": "deny", "reason": "r"})).unwrap();
        assert_eq!(d.permission, Permission::Deny);
        assert!(answer_decision(&json!({"decision": "pending"})).is_none());
        assert!(answer_decision(&json!({})).is_none());
    }
}
