//! The Cop's answers, cached in the session's state: the same question in
//! the same session is asked once (keyed by the question, the model and the
//! endpoint).

use sha2::{Digest, Sha256};

use super::{Cop, CopResult, Question};
use crate::taint::{self, CachedReview, SessionState, SessionStore};

/// Asks the Cop through the session's cache. `before_slow` runs before a
/// request goes out. A cache that cannot be written is a warning, returned
/// beside the answer; it never changes the answer.
pub fn review(
    cop: &Cop,
    store: &dyn SessionStore,
    session: &str,
    state: &SessionState,
    q: &Question,
    before_slow: &dyn Fn(),
) -> (CopResult, Option<String>) {
    if !cop.available() {
        return (cop.review(q), None);
    }
    let mut h = Sha256::new();
    for part in [q.kind(), cop.model.as_str(), cop.base_url.as_str()] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(q.subject().as_bytes());
    let key = taint::hex(&h.finalize()[..16]);
    if let Some(c) = state.cop_cache.get(&key) {
        let r = format!("{} (cached)", c.reason);
        let result = if c.flagged {
            CopResult::Flagged(r)
        } else {
            CopResult::Clear(r)
        };
        return (result, None);
    }
    before_slow();
    let result = cop.review(q);
    let cached = match &result {
        CopResult::Clear(r) => Some((false, r.clone())),
        CopResult::Flagged(r) => Some((true, r.clone())),
        _ => None,
    };
    let mut warning = None;
    if let Some((flagged, reason)) = cached {
        let entry = CachedReview {
            flagged,
            reason,
            at_ms: taint::now_ms(),
        };
        if let Err(e) = store.update_with(session, Box::new(|s| s.cache(key, entry))) {
            warning = Some(format!("cannot cache the reviewer's answer: {e}"));
        }
    }
    (result, warning)
}
