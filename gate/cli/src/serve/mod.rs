//! `bashgate serve`: the host daemon for agents in containers.
//!
//! Two faces, two listeners:
//! - the container API (`api`), on loopback TCP or a unix socket that can be
//!   mounted into containers; every request carries a session's bearer
//!   token and reaches only that session;
//! - the admin API (`admin`), on a unix socket only its owner can open,
//!   never mounted into containers: sessions, taint, approvals.
//!
//! All state (sessions, taint, approvals, the daemon's audit) lives in the
//! store (`bashgate_store`): SQLite on one machine, or PostgreSQL shared by
//! a fleet of daemons that act as one gate. A restart loses nothing: a
//! client waiting for an approval reconnects and asks again.

mod admin;
mod api;
mod approvals;
mod auditor;
mod fairness;
mod listen;
mod webhook;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::watch;

use bashgate::config::Config;
use bashgate::endpoint::Target;
use bashgate_store::{DaemonStore, Engine};

/// Counters the admin API reports (since the daemon started).
#[derive(Default)]
pub struct Stats {
    /// Every request on the container listener.
    pub container_requests: AtomicU64,
    pub checks: AtomicU64,
    pub taint_reports: AtomicU64,
    pub approvals_created: AtomicU64,
}

impl Stats {
    fn json(&self) -> Value {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        json!({
            "container_requests": g(&self.container_requests),
            "checks": g(&self.checks),
            "taint_reports": g(&self.taint_reports),
            "approvals_created": g(&self.approvals_created),
        })
    }
}

pub struct App {
    pub config: Config,
    pub config_file: Option<PathBuf>,
    pub db: Arc<dyn DaemonStore>,
    pub audit: Option<auditor::Auditor>,
    pub approval_timeout: Duration,
    /// Bumped whenever an approval changes state; long polls wait on it.
    pub changes: watch::Sender<u64>,
    pub stats: Stats,
    pub webhook: Option<webhook::Webhook>,
    /// Requests in flight per session (see `fairness.rs`).
    pub in_flight: fairness::InFlight,
}

impl App {
    pub fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn internal(message: impl std::fmt::Display) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

pub type ApiResult = Result<Json<Value>, ApiError>;

/// A JSON body whose problems (not JSON, wrong fields, too large) are
/// answered as `{"error": ...}` saying what was expected.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            let status = e.status();
            let hint = if status == StatusCode::PAYLOAD_TOO_LARGE {
                " (the body is larger than serve.max_body_bytes)"
            } else {
                ""
            };
            ApiError::new(
                status,
                format!("cannot read the request body: {}{hint}", e.body_text()),
            )
        })?;
        let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        serde_json::from_slice(bytes).map(ApiJson).map_err(|e| {
            ApiError::bad_request(format!(
                "the request body is not the JSON this endpoint expects: {e}"
            ))
        })
    }
}

/// Runs blocking work (the database, the engine) off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    // The store operations of one request share `store_timeout_ms`.
    let budget = REQUEST_BUDGET
        .get()
        .copied()
        .unwrap_or(Duration::from_secs(2));
    tokio::task::spawn_blocking(move || bashgate_store::within(budget, f))
        .await
        .unwrap_or_else(|e| {
            Err(ApiError::internal(format!(
                "internal error while deciding (a bug; please report it): {e}"
            )))
        })
}

/// Flags of `bashgate serve` that override the configuration.
pub struct Flags {
    pub listen: Option<String>,
    pub admin_socket: Option<PathBuf>,
}

/// How long the store operations of one request may take together
/// (`[serve] store_timeout_ms`), set once when the daemon starts.
static REQUEST_BUDGET: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

pub fn run(config: Config, config_file: Option<PathBuf>, flags: Flags) -> ExitCode {
    let _ = REQUEST_BUDGET.set(Duration::from_millis(config.serve.store_timeout_ms));
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bashgate serve: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // Opened before the runtime runs: the store may block (PostgreSQL
    // connects and migrates on a runtime of its own).
    let db = match Engine::of(&config).and_then(|e| e.open()) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("bashgate serve: {e}");
            return ExitCode::from(1);
        }
    };
    db.warm();
    match rt.block_on(serve(config, config_file, flags, db)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bashgate serve: {e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(
    config: Config,
    config_file: Option<PathBuf>,
    flags: Flags,
    db: Arc<dyn DaemonStore>,
) -> Result<(), String> {
    let listen = flags.listen.unwrap_or_else(|| config.listen());
    let target = Target::parse_listen(&listen).map_err(|e| format!("--listen: {e}"))?;
    let admin_path = flags.admin_socket.unwrap_or_else(|| config.admin_socket());
    let audit = config.audit.enabled.then(|| {
        auditor::Auditor::start(db.clone(), config.state_dir().join("daemon-audit.unsent"))
    });
    let webhook = match &config.serve.webhook_url {
        Some(url) => Some(webhook::Webhook::new(
            url,
            Duration::from_millis(config.serve.webhook_timeout_ms),
        )?),
        None => None,
    };
    let (changes, _) = watch::channel(0u64);
    let app = Arc::new(App {
        approval_timeout: Duration::from_secs(config.serve.approval_timeout_s),
        config,
        config_file,
        db,
        audit,
        changes,
        stats: Stats::default(),
        in_flight: fairness::InFlight::default(),
        webhook,
    });

    // Approvals changed through another daemon on the same store wake the
    // long polls here at once.
    let weak = Arc::downgrade(&app);
    app.db
        .watch(
            Arc::new(move || {
                if let Some(app) = weak.upgrade() {
                    app.changed();
                }
            }),
            Arc::new(|w| eprintln!("bashgate serve: {w}")),
        )
        .map_err(|e| e.to_string())?;

    let admin_listener = listen::admin(&admin_path)?;
    let container = listen::container(&target).await?;
    println!(
        "bashgate serve: container API on {}; admin API on unix:{}; store {}",
        container.describe(),
        admin_path.display(),
        app.db.describe()
    );
    eprintln!(
        "bashgate serve: pending approvals time out after {} s; create a container's token with `bashgate session create NAME`",
        app.approval_timeout.as_secs()
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();

    tokio::spawn(approvals::sweep(app.clone()));
    let admin_router = admin::router(app.clone());
    let api_router = api::router(app.clone());
    let cleanup: Vec<PathBuf> = [Some(admin_path.clone()), container.socket_path()]
        .into_iter()
        .flatten()
        .collect();
    tokio::spawn(shutdown_on_signal(cleanup));
    tokio::spawn(listen::serve(admin_listener, admin_router));
    container.serve(api_router).await;
    Err("the container API stopped".into())
}

/// `bashgate serve --check-store`: whether the store the configuration
/// names is reachable and its schema current; changes nothing.
pub fn check_store(config: &Config) -> ExitCode {
    match Engine::of(config).and_then(|e| e.check()) {
        Ok(line) => {
            println!("store {line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bashgate serve: the store is not ready: {e}");
            ExitCode::from(1)
        }
    }
}

/// On SIGTERM or SIGINT: remove the sockets and exit. Every state change is
/// committed when it is answered, so nothing is lost.
async fn shutdown_on_signal(sockets: Vec<PathBuf>) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bashgate serve: cannot watch for SIGTERM: {e}");
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    for s in &sockets {
        let _ = std::fs::remove_file(s);
    }
    eprintln!("bashgate serve: stopped; pending approvals stay pending until it starts again");
    std::process::exit(0);
}

/// The admin socket a CLI command talks to: `--admin-socket`,
/// `BASHGATE_ADMIN_SOCKET`, then the configuration.
pub fn admin_socket_for(flag: Option<&Path>, config: &Config) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("BASHGATE_ADMIN_SOCKET").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    config.admin_socket()
}
