//! Keeping one client from stalling the daemon for everyone: a request's
//! body must arrive within a deadline (a client that starts a body and
//! never finishes it is answered 408 and its connection closed), and each
//! session token may have only so many requests in flight (one session's
//! flood is answered 429 at once, before its body is read), with requests
//! that carry no token sharing one small allowance. Well-behaved sessions
//! keep their share of the connection slots.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, App};

/// The longest a client may take to send a request's body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(5);
/// Requests in flight per session token.
pub const PER_SESSION: usize = 32;
/// Requests in flight, all together, that carry no token.
pub const WITHOUT_TOKEN: usize = 16;

/// In-flight counts by token (its hash), and for requests without one.
#[derive(Default)]
pub struct InFlight {
    counts: Mutex<HashMap<String, usize>>,
}

/// Decrements its key's count when the request is done.
struct Slot {
    table: Arc<App>,
    key: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self
            .table
            .in_flight
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(n) = c.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.remove(&self.key);
            }
        }
    }
}

fn closing(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The middleware for the container API.
pub async fn fair(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let key = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| bashgate_store::token_hash(t.trim()))
        .unwrap_or_default();
    let cap = if key.is_empty() {
        WITHOUT_TOKEN
    } else {
        PER_SESSION
    };
    let slot = {
        let mut c = app
            .in_flight
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let n = c.entry(key.clone()).or_insert(0);
        if *n >= cap {
            drop(c);
            return closing(
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "this session already has {cap} requests in flight; wait for their answers"
                    ),
                )
                .into_response(),
            );
        }
        *n += 1;
        Slot {
            table: app.clone(),
            key,
        }
    };
    let (parts, body) = req.into_parts();
    let limit = app.config.serve.max_body_bytes;
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, limit)).await
    {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return closing(
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body is larger than serve.max_body_bytes ({limit} bytes), or was cut off"),
                )
                .into_response(),
            )
        }
        Err(_) => {
            return closing(
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within {} s",
                        BODY_TIMEOUT.as_secs()
                    ),
                )
                .into_response(),
            )
        }
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    drop(slot);
    response
}
