//! The container API. Every request carries `Authorization: Bearer TOKEN`;
//! the token names one session and reaches nothing else.
//!
//! - `POST /v1/check` `{"tool_name", "tool_input", "cwd", "session"?}` (or
//!   `"command"` for a shell command): `{"decision": "allow"|"deny",
//!   "reason"}`, or `{"decision": "pending", "approval": {"id",
//!   "expires_in_ms"}}` when a person must decide.
//! - `GET /v1/approvals/ID?wait_ms=N`: long-polls an approval of this
//!   session; the same answer shape, `pending` until it is answered.
//! - `POST /v1/taint`: a finished tool call `{"tool_name", "tool_input"}`
//!   (the daemon works out what it read), or `{"flag": "corruption"|
//!   "secret", "detail"}`.
//! - `GET /v1/session`: the token's session and its taint.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{approvals, blocking, ApiError, ApiJson, ApiResult, App};
use bashgate::audit::Record;
use bashgate::call::{Fence, FenceOffer};
use bashgate::decision::Permission;
use bashgate::engine::{Gate, ToolCall};
use bashgate::taint::{self, SessionState, Source};
use bashgate_store::{token_hash, DaemonSessions};

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/v1/check", post(check))
        .route("/v1/taint", post(report_taint))
        .route("/v1/approvals/{id}", get(approval))
        .route("/v1/session", get(whoami))
        .route("/admin", any(refuse_admin))
        .route("/admin/{*rest}", any(refuse_admin))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(app.config.serve.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            app.clone(),
            super::fairness::fair,
        ))
        .layer(middleware::from_fn_with_state(app.clone(), count))
        .with_state(app)
}

async fn count(State(app): State<Arc<App>>, req: axum::extract::Request, next: Next) -> Response {
    app.stats.container_requests.fetch_add(1, Ordering::Relaxed);
    next.run(req).await
}

async fn refuse_admin() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "the admin API is not served to containers; use the admin socket on the host \
         (`bashgate pending`, `bashgate approve ID`)",
    )
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such endpoint; the container API has POST /v1/check, POST /v1/taint, \
         GET /v1/approvals/ID and GET /v1/session",
    )
}

/// The session a request's bearer token belongs to.
fn authenticate(app: &App, headers: &HeaderMap) -> Result<String, ApiError> {
    let hash = token_hash(bearer(headers)?);
    match app.db.session_for(&hash).map_err(ApiError::internal)? {
        Some(s) => Ok(s),
        None => Err(no_session()),
    }
}

/// The same, with the session's state read in the same statement (what a
/// check decides with).
fn authenticate_with_state(
    app: &App,
    headers: &HeaderMap,
) -> Result<(String, SessionState), ApiError> {
    let hash = token_hash(bearer(headers)?);
    match app
        .db
        .session_state_for(&hash)
        .map_err(ApiError::internal)?
    {
        Some(s) => Ok(s),
        None => Err(no_session()),
    }
}

/// The request's bearer token.
fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else {
        return Err(unauthorized(
            "no session token: send `Authorization: Bearer TOKEN` with the token \
             `bashgate session create` printed on the host",
        ));
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| unauthorized("the Authorization header is not `Bearer TOKEN`"))
}

fn no_session() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "this token belongs to no session of this daemon; create one on the host \
         with `bashgate session create NAME` and pass its token to the container",
    )
}

/// A request naming a session must name the token's own.
fn same_session(own: &str, named: Option<&str>) -> Result<(), ApiError> {
    match named {
        Some(n) if !n.is_empty() && n != own => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("this token belongs to session `{own}`; it cannot act on session `{n}`"),
        )),
        _ => Ok(()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckBody {
    session: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    command: Option<String>,
    cwd: Option<String>,
    /// The agent's own session id, kept in the audit log.
    agent_session: Option<String>,
    /// `"offered"` when the client runs an allow-confined command under
    /// `bashgate run` where it runs; otherwise why it cannot.
    fence: Option<String>,
    /// The same for the fence for writes (profile `writes`).
    fence_writes: Option<String>,
}

thread_local! {
    /// One gate per blocking thread: its tables (catalog lookups, secret
    /// paths, the Cop client) are built once, not per check. The state it
    /// reads is in the database, not in the gate.
    static GATE: std::cell::OnceCell<Gate> = const { std::cell::OnceCell::new() };
}

/// Runs `f` with this thread's gate for `app`.
fn with_gate<T>(app: &App, f: impl FnOnce(&Gate) -> T) -> T {
    GATE.with(|cell| {
        let g = cell.get_or_init(|| {
            Gate::builder(app.config.clone())
                .store(Box::new(DaemonSessions(app.db.clone())))
                .config_file(app.config_file.clone())
                // The daemon decides for containers.
                .runs_in(bashgate::RunsIn::Container)
                .build()
        });
        f(g)
    })
}

async fn check(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<CheckBody>,
) -> ApiResult {
    blocking(move || {
        let (session, state) = authenticate_with_state(&app, &headers)?;
        same_session(&session, body.session.as_deref())?;
        app.stats.checks.fetch_add(1, Ordering::Relaxed);
        let input = match (body.tool_input, body.command) {
            (Some(v @ Value::Object(_)), _) => v,
            (Some(_), _) => return Err(ApiError::bad_request("\"tool_input\" is not an object")),
            (None, Some(c)) => json!({ "command": c }),
            (None, None) => {
                return Err(ApiError::bad_request(
                    "the check names nothing to decide: send \"tool_input\" (or \"command\")",
                ))
            }
        };
        let cwd = PathBuf::from(body.cwd.filter(|c| !c.is_empty()).unwrap_or("/".into()));
        let tool = body
            .tool_name
            .filter(|t| !t.is_empty())
            .unwrap_or("Bash".into());
        let fence = FenceOffer::known_each(
            Fence::from_wire(body.fence.as_deref()),
            Fence::from_wire(body.fence_writes.as_deref()),
        );
        let call = ToolCall {
            call_id: None,
            session: &session,
            cwd: &cwd,
            tool: &tool,
            input: &input,
            fence: &fence,
        };
        let (outcome, _) = DaemonSessions::read_with(&session, state, || {
            with_gate(&app, |g| g.decide_guarded(&call))
        });
        for w in &outcome.warnings {
            eprintln!("bashgate serve: {w}");
        }
        if let Some(auditor) = &app.audit {
            let mut r = Record::of_outcome(&call, "daemon-check", &outcome);
            if let Some(a) = &body.agent_session {
                r.reason = format!("{} [agent session {a}]", r.reason);
            }
            // On disk before the answer leaves.
            auditor.record_durably(r);
        }
        let d = &outcome.decision;
        if d.permission == Permission::Ask {
            let a = approvals::create(
                &app,
                &session,
                &tool,
                outcome.command.clone(),
                Some(cwd.display().to_string()),
                &d.reason,
            )?;
            app.changed();
            let mut v = approvals::answer_json(&a);
            v["reason"] = json!(format!(
                "{} Waiting for a person: approval {} (`bashgate approve {}` on the host).",
                d.reason, a.id, a.id
            ));
            return Ok(Json(v));
        }
        let mut v = json!({
            "decision": d.permission.as_str(),
            "reason": d.reason,
            "rule": d.rule,
            "layer": d.layer.as_str(),
        });
        // The wire keeps two flags: `confined`, and `writes_only` for the
        // fence for writes.
        if let Some(kind) = d.fence {
            v["confined"] = json!(true);
            if kind == bashgate::call::FenceKind::Writes {
                v["writes_only"] = json!(true);
            }
        }
        Ok(Json(v))
    })
    .await
}

#[derive(Deserialize)]
struct WaitQuery {
    wait_ms: Option<u64>,
}

async fn approval(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: Result<Query<WaitQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult {
    let Query(q) = q.map_err(|e| {
        ApiError::bad_request(format!(
            "bad query string ({}); use ?wait_ms=MILLISECONDS",
            e.body_text()
        ))
    })?;
    let a2 = app.clone();
    let session = blocking(move || authenticate(&a2, &headers)).await?;
    let wait = Duration::from_millis(q.wait_ms.unwrap_or(0));
    let a = approvals::wait(app, id, session, wait).await?;
    Ok(Json(approvals::answer_json(&a)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaintBody {
    session: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    cwd: Option<String>,
    flag: Option<String>,
    detail: Option<String>,
    agent_session: Option<String>,
}

async fn report_taint(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<TaintBody>,
) -> ApiResult {
    blocking(move || {
        // The state comes with the token: a report that adds nothing is
        // answered with it, in one statement.
        let (session, read) = authenticate_with_state(&app, &headers)?;
        same_session(&session, body.session.as_deref())?;
        app.stats.taint_reports.fetch_add(1, Ordering::Relaxed);
        let _ = body.agent_session;
        let added: Vec<Source> = match (body.flag, body.tool_name, body.tool_input) {
            (Some(flag), None, None) => {
                if flag != "corruption" && flag != "secret" {
                    return Err(ApiError::bad_request(format!(
                        "\"flag\" must be \"corruption\" or \"secret\", not `{flag}`"
                    )));
                }
                let src = Source {
                    flag,
                    tool: "report".into(),
                    detail: body
                        .detail
                        .unwrap_or_else(|| "reported by the container".into()),
                    at_ms: taint::now_ms(),
                };
                let s2 = src.clone();
                // The state as changed answers the report (no second read).
                let changed = app
                    .db
                    .update_state(&session, move |s| {
                        s.add_source(s2);
                        s.clone()
                    })
                    .map_err(ApiError::internal)?;
                let taint = changed.unwrap_or_default().taint;
                return Ok(Json(
                    json!({ "session": session, "taint": taint, "added": vec![src] }),
                ));
            }
            (None, Some(tool), Some(input @ Value::Object(_))) => {
                let cwd = PathBuf::from(body.cwd.unwrap_or_else(|| "/".into()));
                let call = ToolCall {
                    call_id: None,
                    session: &session,
                    cwd: &cwd,
                    tool: &tool,
                    input: &input,
                    fence: &FenceOffer::known(Fence::not_offered()),
                };
                let (recorded, unchanged) = DaemonSessions::read_with(&session, read, || {
                    with_gate(&app, |g| g.record(&call))
                });
                let added = recorded.map_err(|e| ApiError::internal(e.to_string()))?;
                if let Some(state) = unchanged {
                    return Ok(Json(
                        json!({ "session": session, "taint": state.taint, "added": added }),
                    ));
                }
                added
            }
            _ => {
                return Err(ApiError::bad_request(
                    "send either a finished tool call {\"tool_name\", \"tool_input\"} \
                     or {\"flag\": \"corruption\"|\"secret\", \"detail\"}",
                ))
            }
        };
        let state = app
            .db
            .load_state(&session)
            .map_err(ApiError::internal)?
            .unwrap_or_default();
        Ok(Json(
            json!({ "session": session, "taint": state.taint, "added": added }),
        ))
    })
    .await
}

async fn whoami(State(app): State<Arc<App>>, headers: HeaderMap) -> ApiResult {
    blocking(move || {
        let session = authenticate(&app, &headers)?;
        let state = app
            .db
            .load_state(&session)
            .map_err(ApiError::internal)?
            .unwrap_or_default();
        Ok(Json(json!({ "session": session, "taint": state.taint })))
    })
    .await
}
