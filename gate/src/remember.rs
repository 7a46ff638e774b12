//! Remembered answers. When the person approves a command bashgate asked
//! about (the client ran it: its post-tool event arrives), the same command
//! is approved for the rest of the session; when the person refuses (the
//! command was asked about and never ran, and the agent asks for it again),
//! the refusal is remembered too, so the agent does not ask in a loop.
//!
//! "The same command" is the same text in the same working directory. Not
//! the analyzer's reading: two commands it reads alike can still differ in
//! effect (a heredoc's body, an environment prefix, `;` against `|`), and
//! an approval of one must not cover the other.
//!
//! Only the person approves: the command must have run in the very tool
//! call that asked (the client's call id, when it gives one), as the line
//! the hook itself wrote when it ran fenced (`rewrite::original`), and only
//! where the client asks the person itself (not the daemon, whose reports
//! come from containers).

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::decision::{excerpt, Decision, Layer, Permission};
use crate::taint::{self, Remembered, SessionState};

/// At most this many commands are remembered per session.
pub const MAX_REMEMBERED: usize = 256;

/// The fingerprint of a command: its exact text and working directory.
pub fn fingerprint(cwd: &Path, command: &str) -> String {
    let mut h = Sha256::new();
    h.update(cwd.as_os_str().as_encoded_bytes());
    h.update([0]);
    h.update(command.as_bytes());
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

/// Notes that the person is being asked about this command, in the tool
/// call `call` (the client's id for it, when it gives one).
pub fn note_asked(state: &mut SessionState, fp: String, command: &str, call: Option<&str>) {
    if state.asked.len() >= MAX_REMEMBERED {
        return;
    }
    let mut e = entry(command, false);
    e.call = call.map(str::to_string);
    state.asked.insert(fp, e);
}

/// The command ran in tool call `call`: if the person had been asked about
/// it in that call, they approved. Returns whether an approval was
/// remembered.
pub fn note_ran(state: &mut SessionState, fp: &str, call: Option<&str>) -> bool {
    match state.asked.get(fp) {
        Some(r) if r.call.is_none() || r.call.as_deref() == call => {}
        _ => return false,
    }
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
        call: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(cwd: &str, c: &str) -> String {
        fingerprint(Path::new(cwd), c)
    }

    #[test]
    fn the_same_command_is_the_same_text_in_the_same_place() {
        assert_eq!(
            fp("/p", "curl -d x https://e"),
            fp("/p", "curl -d x https://e")
        );
        // Read alike by the analyzer, different in effect (or not provably
        // the same): each is its own question.
        for (a, b) in [
            ("cat <<EOF\na\nEOF", "cat <<EOF\nb\nEOF"),
            ("cat <<< a", "cat <<< b"),
            ("curl https://e", "http_proxy=http://x curl https://e"),
            ("a; b", "a | b"),
            ("curl -d x https://e", "\"cu\"rl -d 'x' https://e"),
        ] {
            assert_ne!(fp("/p", a), fp("/p", b), "{a} / {b}");
        }
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
        note_asked(&mut s, "a".into(), "x", Some("call-1"));
        // Asked and never ran: refused.
        assert_eq!(recall(&s, "a", "`x`").unwrap().permission, Permission::Deny);
        // The same command run in another tool call is not the answer.
        assert!(!note_ran(&mut s, "a", Some("call-2")));
        assert!(!note_ran(&mut s, "a", None));
        assert!(note_ran(&mut s, "a", Some("call-1")));
        assert_eq!(
            recall(&s, "a", "`x`").unwrap().permission,
            Permission::Allow
        );
        assert!(!note_ran(&mut s, "b", None));
        note_asked(&mut s, "c".into(), "y", None);
        note_refused(&mut s, "c");
        assert_eq!(recall(&s, "c", "`y`").unwrap().permission, Permission::Deny);
    }

    #[test]
    fn answers_given_outside_the_client_are_remembered_and_can_be_forgotten() {
        let mut s = SessionState::default();
        let (a, b) = (fp("/p", "rm -rf build"), fp("/p", "git push -f"));
        note_asked(&mut s, a.clone(), "rm -rf build", None);
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
