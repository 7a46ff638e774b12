//! Human approval in the daemon: a pending approval with a short id, a log
//! line and an optional webhook; answered from the admin API; expired (and
//! so denied) after `serve.approval_timeout_s`. Containers long-poll an
//! approval by id, so a client that reconnects after a daemon restart finds
//! it where it was.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{ApiError, App};
use bashgate::decision::excerpt;
use bashgate::{remember, taint};
use bashgate_store::Approval;

/// The longest a single long poll is held open.
pub const MAX_POLL: Duration = Duration::from_secs(60);

fn what(a: &Approval) -> String {
    match &a.command {
        Some(c) => format!("`{}`", excerpt(c, 120)),
        None => format!("this {} call", a.tool),
    }
}

/// Stores a new pending approval and tells the person. Runs on the
/// blocking pool (inside the runtime, so the webhook can be spawned).
pub fn create(
    app: &Arc<App>,
    session: &str,
    tool: &str,
    command: Option<String>,
    cwd: Option<String>,
    reason: &str,
) -> Result<Approval, ApiError> {
    let now = taint::now_ms() as i64;
    let mut a = Approval {
        id: String::new(),
        session: session.to_string(),
        tool: tool.to_string(),
        command,
        cwd,
        reason: reason.to_string(),
        created_ms: now,
        expires_ms: now + app.approval_timeout.as_millis() as i64,
        status: "pending".into(),
        answered_ms: None,
        answer: None,
    };
    app.db.insert_approval(&mut a).map_err(ApiError::internal)?;
    app.stats
        .approvals_created
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "bashgate serve: approval {id} pending for session {s}: {w} ({r}). Answer with `bashgate approve {id}` or `bashgate deny {id}` within {t} s.",
        id = a.id,
        s = a.session,
        w = what(&a),
        r = a.reason,
        t = app.approval_timeout.as_secs()
    );
    if let Some(hook) = &app.webhook {
        let hook = hook.clone();
        let body = notification(&a);
        tokio::runtime::Handle::current().spawn(async move { hook.post(body).await });
    }
    desktop_notice(&a, std::env::var_os("PATH").as_deref(), |k| {
        std::env::var_os(k)
    });
    Ok(a)
}

/// Tells the person on the host's desktop, where there is one (a display
/// and `notify-send`): an approval no one sees waits out its time and is
/// refused. Returns whether a notice was started.
pub fn desktop_notice(
    a: &Approval,
    path: Option<&std::ffi::OsStr>,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let desktop = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|k| var(k).is_some_and(|v| !v.is_empty()));
    let Some(program) = crate::hook::shell::find_in(path, "notify-send") else {
        return false;
    };
    if !desktop {
        return false;
    }
    let body = format!(
        "{}\n{}\nbashgate approve {id}   or   bashgate deny {id}",
        what(a),
        a.reason,
        id = a.id
    );
    let started = std::process::Command::new(program)
        .args([
            "--app-name=bashgate",
            "--urgency=critical",
            "bashgate: a command waits for your answer",
        ])
        .arg(body)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        // Reaped on its own thread: the daemon does not wait on it.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            true
        }
        Err(e) => {
            eprintln!(
                "bashgate serve: cannot show a desktop notice for approval {}: {e}",
                a.id
            );
            false
        }
    }
}

/// Remembers the person's answer in the session, so the same command is
/// not asked about again (an expired approval is a refusal). Runs on the
/// blocking pool.
pub fn remember(app: &App, a: &Approval) {
    let Some(command) = &a.command else { return };
    let approved = a.status == "approved";
    let cwd = std::path::PathBuf::from(a.cwd.as_deref().unwrap_or("/"));
    let fp = remember::fingerprint(&cwd, command);
    if let Err(e) = app.db.update_state(&a.session, |s| {
        remember::note_answer(s, &fp, command, approved)
    }) {
        eprintln!(
            "bashgate serve: cannot remember the answer to approval {}: {e}",
            a.id
        );
    }
}

/// Records an approval's outcome in the audit log (event `approval`).
pub fn audit(app: &App, a: &Approval) {
    let Some(auditor) = &app.audit else { return };
    let v = answer_json(a);
    let now = taint::now_ms() as i64;
    auditor.record(bashgate::audit::Record {
        time: bashgate::audit::rfc3339(now),
        unix_ms: now,
        session: a.session.clone(),
        event: "approval".into(),
        tool: a.tool.clone(),
        command: a.command.clone(),
        cwd: a.cwd.clone(),
        layer: "approval".into(),
        rule: Some(bashgate::GateRule::NeedsHuman.id().into()),
        decision: v["decision"].as_str().unwrap_or("deny").into(),
        reason: v["reason"].as_str().unwrap_or("").into(),
        ..Default::default()
    });
}

/// The webhook's JSON body for a pending approval.
pub fn notification(a: &Approval) -> Value {
    json!({
        "event": "approval_pending",
        "id": a.id,
        "session": a.session,
        "tool": a.tool,
        "command": a.command,
        "cwd": a.cwd,
        "reason": a.reason,
        "created_ms": a.created_ms,
        "expires_ms": a.expires_ms,
        "approve": format!("bashgate approve {}", a.id),
        "deny": format!("bashgate deny {}", a.id),
    })
}

/// What a container is told about an approval: `pending`, or the final
/// decision with a reason.
pub fn answer_json(a: &Approval) -> Value {
    let now = taint::now_ms() as i64;
    let note = a
        .answer
        .as_deref()
        .filter(|n| !n.is_empty())
        .map(|n| format!(" Their note: {n}"))
        .unwrap_or_default();
    let (decision, reason) = match a.status.as_str() {
        "approved" => (
            "allow",
            format!(
                "bashgate allowed {}: a person approved it (approval {}).{note}",
                what(a),
                a.id
            ),
        ),
        "denied" => (
            "deny",
            format!(
                "bashgate stopped {}: a person denied it (approval {}).{note} Do not retry it; \
                 ask the person what to do instead.",
                what(a),
                a.id
            ),
        ),
        "pending" if a.expires_ms > now => ("pending", a.reason.clone()),
        _ => (
            "deny",
            format!(
                "bashgate stopped {}: nobody answered approval {} within {} s, so it is denied. \
                 Ask the person to watch for approvals (`bashgate pending` on the host) and retry.",
                what(a),
                a.id,
                ((a.expires_ms - a.created_ms) / 1000).max(0)
            ),
        ),
    };
    let mut v = json!({
        "decision": decision,
        "reason": reason,
        "approval": {
            "id": a.id,
            "status": a.status,
            "expires_in_ms": (a.expires_ms - now).max(0),
        }
    });
    if decision == "pending" {
        v["rule"] = json!(bashgate::GateRule::NeedsHuman);
    }
    v
}

/// Waits until the approval is answered or expires, or `wait` runs out;
/// returns its state then. The approval must belong to `session`.
pub async fn wait(
    app: Arc<App>,
    id: String,
    session: String,
    wait: Duration,
) -> Result<Approval, ApiError> {
    let deadline = tokio::time::Instant::now() + wait.min(MAX_POLL);
    let mut rx = app.changes.subscribe();
    loop {
        rx.mark_unchanged();
        let (db, id2) = (app.db.clone(), id.clone());
        let a = super::blocking(move || db.approval(&id2).map_err(ApiError::internal)).await?;
        let a = match a {
            Some(a) if a.session == session => a,
            // Another session's approval is as absent as a missing one.
            _ => {
                return Err(ApiError::new(
                    axum::http::StatusCode::NOT_FOUND,
                    format!("no approval `{id}` in this session"),
                ))
            }
        };
        let now = taint::now_ms() as i64;
        if a.status != "pending" || a.expires_ms <= now {
            return Ok(a);
        }
        let until_expiry = Duration::from_millis((a.expires_ms - now) as u64);
        let stop = deadline.min(tokio::time::Instant::now() + until_expiry);
        if tokio::time::Instant::now() >= deadline {
            return Ok(a);
        }
        // Woken by any approval change, or at the expiry or the deadline.
        let _ = tokio::time::timeout_at(stop, rx.changed()).await;
        if tokio::time::Instant::now() >= deadline {
            let (db, id2) = (app.db.clone(), id.clone());
            let a = super::blocking(move || db.approval(&id2).map_err(ApiError::internal)).await?;
            return a.ok_or_else(|| ApiError::internal("the approval disappeared"));
        }
    }
}

/// Expires overdue approvals every half second and tells the waiters.
pub async fn sweep(app: Arc<App>) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let app2 = app.clone();
        let expired = tokio::task::spawn_blocking(move || {
            let due = app2.db.expire_due()?;
            for a in &due {
                remember(&app2, a);
            }
            Ok::<_, bashgate_store::StoreError>(due)
        });
        match expired.await {
            Ok(Ok(due)) if !due.is_empty() => {
                for a in &due {
                    audit(&app, a);
                    eprintln!(
                        "bashgate serve: approval {} for session {} expired unanswered: {} is denied",
                        a.id,
                        a.session,
                        what(a)
                    );
                }
                app.changed();
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => eprintln!("bashgate serve: cannot expire approvals: {e}"),
            Err(e) => eprintln!("bashgate serve: cannot expire approvals: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(status: &str, expires_in_ms: i64) -> Approval {
        let now = taint::now_ms() as i64;
        Approval {
            id: "abc234".into(),
            session: "s".into(),
            tool: "Bash".into(),
            command: Some("curl x".into()),
            cwd: None,
            reason: "needs a person".into(),
            created_ms: now - 1000,
            expires_ms: now + expires_in_ms,
            status: status.into(),
            answered_ms: None,
            answer: Some("use the mirror".into()),
        }
    }

    #[test]
    fn answers_follow_the_status() {
        let v = answer_json(&approval("pending", 60_000));
        assert_eq!(v["decision"], "pending");
        assert_eq!(v["approval"]["id"], "abc234");
        // Pending past its expiry is a denial, even before the sweep.
        let v = answer_json(&approval("pending", -1));
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("nobody answered"));
        let v = answer_json(&approval("approved", -1));
        assert_eq!(v["decision"], "allow");
        assert!(v["reason"].as_str().unwrap().contains("use the mirror"));
        let v = answer_json(&approval("denied", 60_000));
        assert_eq!(v["decision"], "deny");
        assert_eq!(answer_json(&approval("expired", 0))["decision"], "deny");
    }

    #[test]
    fn a_desktop_notice_names_the_command_and_how_to_answer() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let seen = t.path().join("seen");
        let fake = t.path().join("notify-send");
        std::fs::write(
            &fake,
            format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", seen.display()),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let a = approval("pending", 60_000);
        let path = Some(t.path().as_os_str());
        // No display: nobody would see it.
        assert!(!desktop_notice(&a, path, |_| None));
        let display = |k: &str| (k == "DISPLAY").then(|| std::ffi::OsString::from(":0"));
        assert!(desktop_notice(&a, path, display));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !seen.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let text = std::fs::read_to_string(&seen).unwrap();
        assert!(
            text.contains(&format!("bashgate approve {}", a.id)),
            "{text}"
        );
        assert!(text.contains("curl"), "{text}");
        // No notify-send: nothing.
        let empty = tempfile::tempdir().unwrap();
        assert!(!desktop_notice(&a, Some(empty.path().as_os_str()), display));
    }

    #[test]
    fn the_webhook_body_says_how_to_answer() {
        let v = notification(&approval("pending", 1));
        assert_eq!(v["event"], "approval_pending");
        assert_eq!(v["approve"], "bashgate approve abc234");
        assert_eq!(v["deny"], "bashgate deny abc234");
    }
}
