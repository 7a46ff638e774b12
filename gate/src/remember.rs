//! Remembered answers. When the person approves a command bashgate asked
//! about (the client ran it: its post-tool event arrives), the same command
//! is approved for the rest of the session; when the person refuses (the
//! command was asked about and never ran, and the agent asks for it again),
//! the refusal is remembered too, so the agent does not ask in a loop.
//!
//! "The same command" is the analyzer's reading of it, not its text: the
//! programs and arguments after quote removal and unwrapping, the redirect
//! targets, and the working directory. `"cu"rl x` is `curl x`; `curl y`
//! or the same command in another directory is asked about again.

use std::path::Path;

use bashgate_analyzer::Analysis;
use sha2::{Digest, Sha256};

use crate::decision::{excerpt, Decision, Layer, Permission};
use crate::taint::{self, Remembered, SessionState};

/// At most this many commands are remembered per session.
pub const MAX_REMEMBERED: usize = 256;

/// The fingerprint of a command as the analyzer reads it. Where a value is
/// known only at run time (`rm -rf "$1"`, `rm -rf *`), the analyzer's
/// reading cannot tell two commands apart, so the text itself is part of
/// the fingerprint: only the very same text is the same command.
pub fn fingerprint(cwd: &Path, command: &str, analysis: &Analysis) -> String {
    let mut h = Sha256::new();
    let mut put = |s: &str| {
        h.update(s.as_bytes());
        h.update([0]);
    };
    put(&cwd.display().to_string());
    let dynamic = analysis
        .invocations
        .iter()
        .any(|i| i.program.is_none() || i.args.iter().any(Option::is_none))
        || analysis.redirects.iter().any(|r| r.target.is_none());
    if dynamic {
        put("\u{1}text");
        put(command);
    }
    for inv in &analysis.invocations {
        put("\u{1}inv");
        put(inv.program.as_deref().unwrap_or("\u{2}dynamic"));
        for a in &inv.args {
            put(a.as_deref().unwrap_or("\u{2}dynamic"));
        }
        for v in &inv.via {
            put(v);
        }
    }
    for r in &analysis.redirects {
        put("\u{1}redirect");
        put(&r.op);
        put(r.fd.as_deref().unwrap_or(""));
        put(r.target.as_deref().unwrap_or("\u{2}dynamic"));
    }
    taint::hex(&h.finalize()[..16])
}

/// What the session's memory makes of an `ask` about this command: the
/// person's earlier answer, or `None` to ask.
pub fn recall(state: &SessionState, fp: &str, what: &str) -> Option<Decision> {
    if let Some(r) = state.remembered.get(fp) {
        return Some(if r.approved {
            Decision::allow(
                Layer::Remembered,
                format!("bashgate allowed {what}: the person approved the same command (the same programs with the same arguments) earlier in this session"),
            )
        } else {
            refused(what)
        });
    }
    // Asked before and never seen to run: the person said no.
    state.asked.contains_key(fp).then(|| refused(what))
}

fn refused(what: &str) -> Decision {
    Decision::new(
        Permission::Deny,
        Layer::Remembered,
        None,
        format!(
            "bashgate stopped {what}: the person was asked about the same command (the same programs with the same arguments) earlier in this session and did not approve it. Do not ask for it again; if it is needed, say why in the conversation and let the person run it."
        ),
    )
}

/// Notes that the person is being asked about this command.
pub fn note_asked(state: &mut SessionState, fp: String, command: &str) {
    if state.asked.len() >= MAX_REMEMBERED {
        return;
    }
    state.asked.insert(fp, entry(command, false));
}

/// The command ran: if the person had been asked about it, they approved.
/// Returns whether an approval was remembered.
pub fn note_ran(state: &mut SessionState, fp: &str) -> bool {
    let Some(mut r) = state.asked.remove(fp) else {
        return false;
    };
    if state.remembered.len() >= MAX_REMEMBERED {
        return false;
    }
    r.approved = true;
    r.at_ms = taint::now_ms();
    state.remembered.insert(fp.to_string(), r);
    true
}

/// Remembers a refusal (the next identical request is denied).
pub fn note_refused(state: &mut SessionState, fp: &str) {
    if let Some(r) = state.asked.remove(fp) {
        state.remembered.insert(fp.to_string(), r);
    }
}

/// The person answered a question about this command outside the client
/// (the daemon's `bashgate approve` or `deny`, or an approval that expired
/// unanswered, which is a refusal).
pub fn note_answer(state: &mut SessionState, fp: &str, command: &str, approved: bool) {
    let mut r = state
        .asked
        .remove(fp)
        .unwrap_or_else(|| entry(command, approved));
    if state.remembered.len() >= MAX_REMEMBERED && !state.remembered.contains_key(fp) {
        return;
    }
    r.approved = approved;
    r.at_ms = taint::now_ms();
    state.remembered.insert(fp.to_string(), r);
}

/// The fingerprint of a command's text, read by the analyzer here.
pub fn fingerprint_of(cwd: &Path, command: &str) -> String {
    fingerprint(cwd, command, &bashgate_analyzer::analyze(command))
}

/// One remembered answer, as `bashgate approvals` lists it; `id` is the
/// start of its fingerprint, enough to forget just this one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub id: String,
    pub approved: bool,
    pub command: String,
    pub at_ms: u64,
}

/// The session's remembered answers, newest first.
pub fn list(state: &SessionState) -> Vec<Listed> {
    let mut rows: Vec<Listed> = state
        .remembered
        .iter()
        .map(|(fp, r)| Listed {
            id: fp.chars().take(12).collect(),
            approved: r.approved,
            command: r.command.clone(),
            at_ms: r.at_ms,
        })
        .collect();
    rows.sort_by(|a, b| b.at_ms.cmp(&a.at_ms).then(a.id.cmp(&b.id)));
    rows
}

/// Forgets the remembered answer whose id starts with `id` (at least six
/// characters, and only one may match), or every one (with the pending
/// questions) when `id` is `None`. Returns how many were forgotten.
pub fn forget(state: &mut SessionState, id: Option<&str>) -> Result<usize, String> {
    let Some(id) = id else {
        let n = state.remembered.len();
        state.remembered.clear();
        state.asked.clear();
        return Ok(n);
    };
    if id.len() < 6 {
        return Err(format!(
            "`{id}` is too short to name one answer: give at least six characters of its id"
        ));
    }
    let hits: Vec<String> = state
        .remembered
        .keys()
        .filter(|fp| fp.starts_with(id))
        .cloned()
        .collect();
    match hits.as_slice() {
        [] => Err(format!("no remembered answer has the id `{id}`")),
        [fp] => {
            state.remembered.remove(fp);
            Ok(1)
        }
        _ => Err(format!(
            "`{id}` names {} answers; give more of the id",
            hits.len()
        )),
    }
}

fn entry(command: &str, approved: bool) -> Remembered {
    Remembered {
        approved,
        command: excerpt(command, 200),
        at_ms: taint::now_ms(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    fn fp(cwd: &str, c: &str) -> String {
        fingerprint(Path::new(cwd), c, &analyze(c))
    }

    #[test]
    fn the_same_command_as_the_analyzer_reads_it() {
        assert_eq!(
            fp("/p", "curl -d x https://e"),
            fp("/p", "\"cu\"rl -d 'x' https://e")
        );
        assert_ne!(
            fp("/p", "curl -d x https://e"),
            fp("/p", "curl -d y https://e")
        );
        assert_ne!(fp("/p", "curl https://e"), fp("/q", "curl https://e"));
        assert_ne!(
            fp("/p", "curl https://e > a"),
            fp("/p", "curl https://e > b")
        );
        assert_ne!(fp("/p", "curl https://e"), fp("/p", "sudo curl https://e"));
        // Values known only at run time: only the same text is the same.
        assert_ne!(fp("/p", "rm -rf \"$1\""), fp("/p", "rm -rf *"));
        assert_ne!(fp("/p", "curl $A"), fp("/p", "curl $B"));
        assert_eq!(fp("/p", "curl $A"), fp("/p", "curl $A"));
    }

    #[test]
    fn approvals_and_refusals_are_recalled() {
        let mut s = SessionState::default();
        assert!(recall(&s, "a", "`x`").is_none());
        note_asked(&mut s, "a".into(), "x");
        // Asked and never ran: refused.
        assert_eq!(recall(&s, "a", "`x`").unwrap().permission, Permission::Deny);
        assert!(note_ran(&mut s, "a"));
        assert_eq!(
            recall(&s, "a", "`x`").unwrap().permission,
            Permission::Allow
        );
        assert!(!note_ran(&mut s, "b"));
        note_asked(&mut s, "c".into(), "y");
        note_refused(&mut s, "c");
        assert_eq!(recall(&s, "c", "`y`").unwrap().permission, Permission::Deny);
    }

    #[test]
    fn answers_given_outside_the_client_are_remembered_and_can_be_forgotten() {
        let mut s = SessionState::default();
        let (a, b) = (fp("/p", "rm -rf build"), fp("/p", "git push -f"));
        note_asked(&mut s, a.clone(), "rm -rf build");
        note_answer(&mut s, &a, "rm -rf build", true);
        note_answer(&mut s, &b, "git push -f", false);
        assert!(s.asked.is_empty());
        assert_eq!(recall(&s, &a, "x").unwrap().permission, Permission::Allow);
        assert_eq!(recall(&s, &b, "x").unwrap().permission, Permission::Deny);
        let rows = list(&s);
        assert_eq!(rows.len(), 2);
        assert!(forget(&mut s, Some("abc")).is_err());
        assert!(forget(&mut s, Some("zzzzzzzz")).is_err());
        assert_eq!(forget(&mut s, Some(&b[..8])), Ok(1));
        assert!(recall(&s, &b, "x").is_none());
        assert!(recall(&s, &a, "x").is_some());
        assert_eq!(forget(&mut s, None), Ok(1));
        assert!(recall(&s, &a, "x").is_none());
    }
}
