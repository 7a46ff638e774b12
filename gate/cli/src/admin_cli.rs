//! The admin commands (`bashgate session`, `pending`, `approve`, `deny`,
//! `stats`, `approvals --daemon`): thin clients of the daemon's admin socket.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};

use crate::remote;
use bashgate::config::Config;
use bashgate::endpoint::Target;

/// One admin request; the answer's JSON, or a message for the person.
fn admin(
    config: &Config,
    socket: Option<&Path>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let sock = crate::serve::admin_socket_for(socket, config);
    let target = Target::Unix(sock.clone());
    let rt = remote::runtime()?;
    let a = rt
        .block_on(remote::call_within(
            Duration::from_secs(30),
            &target,
            method,
            path,
            None,
            body.as_ref(),
        ))
        .map_err(|e| {
            format!(
                "{e}. Is `bashgate serve` running? (admin socket {}; set it with --admin-socket, \
                 BASHGATE_ADMIN_SOCKET or serve.admin_socket)",
                sock.display()
            )
        })?;
    if (200..300).contains(&a.status) {
        Ok(a.body)
    } else {
        Err(a.error())
    }
}

fn finish(r: Result<(), String>, what: &str) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bashgate {what}: {e}");
            ExitCode::from(1)
        }
    }
}

fn age(ms: i64) -> String {
    let now = bashgate::taint::now_ms() as i64;
    let s = ((ms - now) / 1000).max(0);
    format!("{s} s")
}

pub fn session_create(
    config: &Config,
    socket: Option<&Path>,
    name: Option<String>,
    json_out: bool,
) -> ExitCode {
    let r = admin(
        config,
        socket,
        "POST",
        "/admin/sessions",
        Some(json!({ "name": name })),
    )
    .map(|v| {
        if json_out {
            println!("{v}");
        } else {
            let token = v["token"].as_str().unwrap_or("");
            println!(
                "session {} created; its token (shown once):",
                v["session"].as_str().unwrap_or("?")
            );
            println!("BASHGATE_TOKEN={token}");
        }
    });
    finish(r, "session create")
}

pub fn session_list(config: &Config, socket: Option<&Path>, json_out: bool) -> ExitCode {
    let r = admin(config, socket, "GET", "/admin/sessions", None).map(|v| {
        if json_out {
            println!("{v}");
            return;
        }
        let list = v["sessions"].as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            println!("no sessions; create one with `bashgate session create NAME`");
        }
        for s in list {
            let t = &s["taint"];
            println!(
                "{}  corruption={} secret={}",
                s["name"].as_str().unwrap_or("?"),
                t["corruption"],
                t["secret"]
            );
        }
    });
    finish(r, "session list")
}

pub fn session_delete(config: &Config, socket: Option<&Path>, name: &str) -> ExitCode {
    let r = admin(
        config,
        socket,
        "DELETE",
        &format!("/admin/sessions/{name}"),
        None,
    )
    .map(|_| println!("session {name} deleted; its token no longer works"));
    finish(r, "session delete")
}

pub fn session_taint(
    config: &Config,
    socket: Option<&Path>,
    name: &str,
    corruption: bool,
    secret: bool,
    clear: bool,
) -> ExitCode {
    let path = format!("/admin/sessions/{name}/taint");
    let r = if clear {
        admin(config, socket, "DELETE", &path, None)
    } else if !corruption && !secret {
        Err("name what to set (--corruption, --secret) or --clear".into())
    } else {
        admin(
            config,
            socket,
            "POST",
            &path,
            Some(json!({ "corruption": corruption, "secret": secret })),
        )
    }
    .map(|v| {
        let t = &v["taint"];
        println!(
            "{name}: corruption={} secret={}",
            t["corruption"], t["secret"]
        );
    });
    finish(r, "session taint")
}

pub fn pending(config: &Config, socket: Option<&Path>, all: bool, json_out: bool) -> ExitCode {
    let path = if all {
        "/admin/approvals?all=true"
    } else {
        "/admin/approvals"
    };
    let r = admin(config, socket, "GET", path, None).map(|v| {
        if json_out {
            println!("{v}");
            return;
        }
        let list = v["approvals"].as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            println!("no pending approvals");
        }
        for a in list {
            let cmd = a["command"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("({} call)", a["tool"].as_str().unwrap_or("?")));
            let status = a["status"].as_str().unwrap_or("?");
            let when = if status == "pending" {
                format!("expires in {}", age(a["expires_ms"].as_i64().unwrap_or(0)))
            } else {
                status.to_string()
            };
            println!(
                "{}  {}  [{}]  {}",
                a["id"].as_str().unwrap_or("?"),
                a["session"].as_str().unwrap_or("?"),
                when,
                cmd
            );
            println!("        {}", a["reason"].as_str().unwrap_or(""));
        }
    });
    finish(r, "pending")
}

pub fn answer(
    config: &Config,
    socket: Option<&Path>,
    id: &str,
    approve: bool,
    note: Option<String>,
) -> ExitCode {
    let verb = if approve { "approve" } else { "deny" };
    let r = admin(
        config,
        socket,
        "POST",
        &format!("/admin/approvals/{id}/{verb}"),
        Some(json!({ "note": note })),
    )
    .map(|v| {
        let a = &v["approval"];
        println!(
            "approval {} {}: {}",
            a["id"].as_str().unwrap_or(id),
            a["status"].as_str().unwrap_or("?"),
            a["command"].as_str().unwrap_or("")
        );
    });
    finish(r, verb)
}

pub fn stats(config: &Config, socket: Option<&Path>) -> ExitCode {
    let r = admin(config, socket, "GET", "/admin/stats", None).map(|v| println!("{v}"));
    finish(r, "stats")
}

/// `bashgate approvals --daemon`: a daemon session's remembered answers,
/// listed or forgotten (`forget` as in `commands::approvals`).
pub fn approvals(
    config: &Config,
    socket: Option<&Path>,
    session: &str,
    forget: Option<Option<String>>,
    json_out: bool,
) -> ExitCode {
    if session.is_empty()
        || !session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return finish(
            Err(format!("`{session}` is not a daemon session's name")),
            "approvals",
        );
    }
    let path = format!("/admin/sessions/{session}/remembered");
    let r = match forget {
        Some(id) => {
            let path = match id {
                Some(id) if id.bytes().all(|b| b.is_ascii_hexdigit()) => format!("{path}?id={id}"),
                Some(id) => {
                    return finish(Err(format!("`{id}` is not an answer's id")), "approvals")
                }
                None => path,
            };
            admin(config, socket, "DELETE", &path, None).map(|v| {
                let n = v["forgotten"].as_u64().unwrap_or(0) as usize;
                println!("{}", crate::render::forgotten(session, n));
            })
        }
        None => admin(config, socket, "GET", &path, None).map(|v| {
            if json_out {
                println!("{v}");
                return;
            }
            let rows: Vec<bashgate::remember::Listed> = v["remembered"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| bashgate::remember::Listed {
                    id: r["id"].as_str().unwrap_or("?").into(),
                    approved: r["approved"].as_bool().unwrap_or(false),
                    command: r["command"].as_str().unwrap_or("").into(),
                    at_ms: r["at_ms"].as_u64().unwrap_or(0),
                })
                .collect();
            print!("{}", crate::render::remembered(session, &rows));
        }),
    };
    finish(r, "approvals")
}
