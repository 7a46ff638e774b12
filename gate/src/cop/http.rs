//! The Cop's HTTP exchange with reqwest (rustls). A current-thread tokio
//! runtime and a client are built per call, only when the Cop is needed;
//! the whole exchange is bounded by the configured timeout.

use serde_json::{json, Value};

use super::{Cop, CopError, Credential};
use crate::config::Provider;

const MAX_BODY: usize = 1 << 20;

/// Sends the prompts and returns the reviewer's text.
pub fn ask(cop: &Cop, key: &Credential, system: &str, user: &str) -> Result<String, CopError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CopError::Exchange(format!("cannot start the HTTP runtime: {e}")))?;
    let ms = cop.timeout.as_millis();
    rt.block_on(async {
        match tokio::time::timeout(cop.timeout, exchange(cop, key, system, user)).await {
            Ok(r) => r,
            Err(_) => Err(CopError::Exchange(format!("no answer within {ms} ms"))),
        }
    })
}

async fn exchange(
    cop: &Cop,
    key: &Credential,
    system: &str,
    user: &str,
) -> Result<String, CopError> {
    let client = reqwest::Client::builder()
        .timeout(cop.timeout)
        .connect_timeout(cop.timeout)
        .build()
        .map_err(|e| CopError::Exchange(format!("cannot build the HTTP client: {e}")))?;
    let req = match cop.provider {
        Provider::Anthropic => {
            let r = client
                .post(format!("{}/v1/messages", cop.base_url))
                .header("anthropic-version", "2023-06-01")
                .json(&json!({
                    "model": cop.model,
                    "max_tokens": cop.max_tokens,
                    "system": system,
                    "messages": [{"role": "user", "content": user}],
                }));
            match key {
                Credential::ApiKey(k) => r.header("x-api-key", k),
                Credential::Bearer(t) => r.bearer_auth(t),
            }
        }
        Provider::Openai => {
            let k = match key {
                Credential::ApiKey(k) | Credential::Bearer(k) => k,
            };
            client
                .post(format!("{}/chat/completions", cop.base_url))
                .bearer_auth(k)
                .json(&json!({
                    "model": cop.model,
                    "max_tokens": cop.max_tokens,
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": user},
                    ],
                }))
        }
    };
    let resp = req.send().await.map_err(|e| describe(&e))?;
    let status = resp.status();
    let bytes = resp.bytes().await.map_err(|e| describe(&e))?;
    let body = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_BODY)]).into_owned();
    if !status.is_success() {
        let hint = match status.as_u16() {
            401 | 403 => " (check the key)",
            404 => " (check base_url and model)",
            429 => " (rate limited)",
            500..=599 => " (the provider failed)",
            _ => "",
        };
        return Err(CopError::Exchange(format!(
            "HTTP {}{hint}: {}",
            status.as_u16(),
            crate::decision::excerpt(body.trim(), 200)
        )));
    }
    let v: Value = serde_json::from_str(&body).map_err(|_| {
        CopError::Exchange(format!(
            "the response is not JSON: {}",
            crate::decision::excerpt(body.trim(), 120)
        ))
    })?;
    let text = match cop.provider {
        Provider::Anthropic => v.get("content").and_then(Value::as_array).map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        Provider::Openai => v
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    text.filter(|t| !t.trim().is_empty())
        .ok_or_else(|| CopError::Exchange("the response has no text in it".to_string()))
}

fn describe(e: &reqwest::Error) -> CopError {
    CopError::Exchange(if e.is_timeout() {
        "the request timed out".into()
    } else if e.is_connect() {
        format!("cannot connect: {e}")
    } else {
        format!("request failed: {e}")
    })
}
