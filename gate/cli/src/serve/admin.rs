//! The admin API, served only on the owner-only admin socket:
//!
//! - `POST /admin/sessions` `{"name"?}`: a new session and its token (shown
//!   once; only its hash is stored). `GET /admin/sessions`: all sessions
//!   with their taint. `DELETE /admin/sessions/NAME`: the token stops
//!   working and the session's pending approvals are denied.
//! - `POST /admin/sessions/NAME/taint` `{"corruption"?, "secret"?,
//!   "detail"?}` sets taint; `DELETE` clears it (and the Cop cache).
//! - `GET /admin/sessions/NAME/remembered`: the commands a person approved
//!   or refused in the session; `DELETE` (`?id=ID` for one) forgets them.
//! - `GET /admin/approvals?all=true`: pending (or all) approvals.
//! - `POST /admin/approvals/ID/approve` and `/deny` `{"note"?}`.
//! - `GET /admin/stats`: request counters since the daemon started.
//!
//! A request carrying a bearer token is a container's and is refused.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::{blocking, ApiError, ApiJson, ApiResult, App};
use bashgate::remember;
use bashgate::taint::{self, SessionState, Source};
use bashgate_store::{random_bytes, token_hash, Answered};

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/admin/sessions", post(create_session).get(list_sessions))
        .route("/admin/sessions/{name}", delete(delete_session))
        .route(
            "/admin/sessions/{name}/taint",
            post(set_taint).delete(clear_taint),
        )
        .route(
            "/admin/sessions/{name}/remembered",
            get(list_remembered).delete(forget_remembered),
        )
        .route("/admin/approvals", get(list_approvals))
        .route("/admin/approvals/{id}/{verb}", post(answer))
        .route("/admin/stats", get(stats))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such admin endpoint") })
        .layer(DefaultBodyLimit::max(app.config.serve.max_body_bytes))
        .layer(middleware::from_fn(refuse_tokens))
        .with_state(app)
}

/// Session tokens are for the container API only.
async fn refuse_tokens(req: axum::extract::Request, next: Next) -> Response {
    if req
        .headers()
        .contains_key(axum::http::header::AUTHORIZATION)
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "the admin API does not take session tokens: it is for the person on the host, \
             through its owner-only socket; containers use the container API",
        )
        .into_response();
    }
    next.run(req).await
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct CreateBody {
    name: Option<String>,
}

async fn create_session(
    State(app): State<Arc<App>>,
    ApiJson(body): ApiJson<CreateBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    blocking(move || {
        let name = match body.name {
            Some(n) if valid_name(&n) => n,
            Some(n) => {
                return Err(ApiError::bad_request(format!(
                    "`{n}` is not a session name: use up to 64 letters, digits, `-`, `_` or `.`"
                )))
            }
            None => format!(
                "s-{}",
                taint::hex(&random_bytes(4).map_err(ApiError::internal)?)
            ),
        };
        let token = format!(
            "bgt_{}",
            taint::hex(&random_bytes(32).map_err(ApiError::internal)?)
        );
        if !app
            .db
            .create_session(&name, &token_hash(&token))
            .map_err(ApiError::internal)?
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("session `{name}` exists; choose another name"),
            ));
        }
        eprintln!("bashgate serve: session {name} created");
        Ok((
            StatusCode::CREATED,
            Json(json!({ "session": name, "token": token })),
        ))
    })
    .await
}

async fn list_sessions(State(app): State<Arc<App>>) -> ApiResult {
    blocking(move || {
        let rows = app.db.sessions().map_err(ApiError::internal)?;
        Ok(Json(json!({ "sessions": rows })))
    })
    .await
}

async fn delete_session(State(app): State<Arc<App>>, Path(name): Path<String>) -> ApiResult {
    let app2 = app.clone();
    let n2 = name.clone();
    let deleted = blocking(move || app2.db.delete_session(&n2).map_err(ApiError::internal)).await?;
    if !deleted {
        return Err(no_session(&name));
    }
    app.changed();
    eprintln!("bashgate serve: session {name} deleted; its token no longer works");
    Ok(Json(json!({ "session": name, "deleted": true })))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct TaintBody {
    corruption: bool,
    secret: bool,
    detail: Option<String>,
}

fn no_session(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no session `{name}`; `bashgate session list` shows them"),
    )
}

async fn set_taint(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<TaintBody>,
) -> ApiResult {
    if !body.corruption && !body.secret {
        return Err(ApiError::bad_request(
            "name a flag to set: {\"corruption\": true} and/or {\"secret\": true}",
        ));
    }
    blocking(move || {
        let detail = body.detail.unwrap_or_else(|| "set by the admin".into());
        let now = taint::now_ms();
        let state = app
            .db
            .update_state(&name, |s| {
                for (on, flag) in [(body.corruption, "corruption"), (body.secret, "secret")] {
                    if on {
                        s.add_source(Source {
                            flag: flag.into(),
                            tool: "admin".into(),
                            detail: detail.clone(),
                            at_ms: now,
                        });
                    }
                }
                s.taint
            })
            .map_err(ApiError::internal)?
            .ok_or_else(|| no_session(&name))?;
        Ok(Json(json!({ "session": name, "taint": state })))
    })
    .await
}

async fn clear_taint(State(app): State<Arc<App>>, Path(name): Path<String>) -> ApiResult {
    blocking(move || {
        app.db
            .update_state(&name, |s| *s = SessionState::default())
            .map_err(ApiError::internal)?
            .ok_or_else(|| no_session(&name))?;
        Ok(Json(
            json!({ "session": name, "taint": SessionState::default().taint }),
        ))
    })
    .await
}

async fn list_remembered(State(app): State<Arc<App>>, Path(name): Path<String>) -> ApiResult {
    blocking(move || {
        let state = app
            .db
            .load_state(&name)
            .map_err(ApiError::internal)?
            .ok_or_else(|| no_session(&name))?;
        Ok(Json(
            json!({ "session": name, "remembered": remember::list(&state) }),
        ))
    })
    .await
}

#[derive(Deserialize)]
struct ForgetQuery {
    id: Option<String>,
}

async fn forget_remembered(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    Query(q): Query<ForgetQuery>,
) -> ApiResult {
    blocking(move || {
        let n = app
            .db
            .update_state(&name, |s| remember::forget(s, q.id.as_deref()))
            .map_err(ApiError::internal)?
            .ok_or_else(|| no_session(&name))?
            .map_err(|e| ApiError::new(StatusCode::NOT_FOUND, e))?;
        Ok(Json(json!({ "session": name, "forgotten": n })))
    })
    .await
}

#[derive(Deserialize)]
struct ListQuery {
    all: Option<bool>,
}

async fn list_approvals(State(app): State<Arc<App>>, Query(q): Query<ListQuery>) -> ApiResult {
    blocking(move || {
        let list = app
            .db
            .approvals(q.all.unwrap_or(false), 1000)
            .map_err(ApiError::internal)?;
        Ok(Json(json!({ "approvals": list })))
    })
    .await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct AnswerBody {
    note: Option<String>,
}

async fn answer(
    State(app): State<Arc<App>>,
    Path((id, verb)): Path<(String, String)>,
    ApiJson(body): ApiJson<AnswerBody>,
) -> ApiResult {
    let approve = match verb.as_str() {
        "approve" => true,
        "deny" => false,
        _ => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "answer an approval with POST /admin/approvals/ID/approve or /deny",
            ))
        }
    };
    let app2 = app.clone();
    let result = blocking(move || {
        let r = app2
            .db
            .answer(&id, approve, body.note.as_deref())
            .map_err(ApiError::internal)?;
        if let Answered::Done(a) = &r {
            super::approvals::remember(&app2, a);
        }
        Ok((id, r))
    })
    .await?;
    match result {
        (_, Answered::Done(a)) => {
            app.changed();
            super::approvals::audit(&app, &a);
            eprintln!(
                "bashgate serve: approval {} {} (session {})",
                a.id, a.status, a.session
            );
            Ok(Json(json!({ "approval": a })))
        }
        (id, Answered::NotFound) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no approval `{id}`; `bashgate pending` lists the open ones"),
        )),
        (id, Answered::Closed(a)) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "approval `{id}` is already {}",
                if a.status == "pending" {
                    "expired"
                } else {
                    a.status.as_str()
                }
            ),
        )),
    }
}

async fn stats(State(app): State<Arc<App>>, _h: HeaderMap) -> ApiResult {
    let pending = {
        let db = app.db.clone();
        blocking(move || db.count_pending().map_err(ApiError::internal)).await?
    };
    let mut v = app.stats.json();
    v["approvals_pending"] = json!(pending);
    Ok(Json(v))
}
