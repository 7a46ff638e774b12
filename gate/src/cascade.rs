//! The taint cascade (seeds 000, 001, 004): after the policy layers, the
//! analyzer's verdict and the session's taint decide, with the Cop for the
//! grey zone.
//!
//! | taint        | safe  | network                          | unknown                               |
//! |--------------|-------|----------------------------------|---------------------------------------|
//! | none         | allow | allow                            | allow                                 |
//! | one flag     | allow | Cop: clear allow, flagged deny   | Cop: clear allow, flagged deny        |
//! | both flags   | allow | human (ask)                      | Cop: clear allow, flagged human (ask) |
//!
//! A Cop that is not configured (no key) makes the decision `ask`; a Cop
//! that fails (timeout, HTTP error, unreadable answer) is `on_error`.

use bashgate_analyzer::Verdict;

use crate::config::OnError;
use crate::cop::CopResult;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;
use crate::taint::Taint;

/// Decides a command's fate from its verdict and the session's taint,
/// calling `cop` only when a row needs it.
pub fn decide(
    verdict: Verdict,
    taint: Taint,
    what: &str,
    on_err: OnError,
    cop: impl FnOnce() -> CopResult,
) -> Decision {
    if !taint.any() {
        return Decision::allow(
            Layer::Cascade,
            format!("bashgate allowed {what}: the session has read nothing untrusted or secret"),
        );
    }
    let state = taint.describe();
    let human = GateRule::NeedsHuman;
    match verdict {
        Verdict::Safe => Decision::allow(
            Layer::Cascade,
            format!("bashgate allowed {what}: it is provably local"),
        ),
        Verdict::Network if taint.both() => Decision::ask(
            Layer::Cascade,
            human,
            format!(
                "bashgate asks the person about {what}: it can reach the network and the session is \
                 {state} (it has read untrusted content and secrets), so it could leak them \
                 ({}). Approve only if you expect this exact command.",
                human.tag()
            ),
        ),
        Verdict::Network | Verdict::Unknown => {
            let kind = if verdict == Verdict::Network {
                "can reach the network"
            } else {
                "cannot be proven local"
            };
            let reviewed = cop().decide(
                Layer::Cascade,
                on_err,
                |_| format!("{what}: it {kind}, the session is {state}"),
                |r| {
                    if verdict == Verdict::Unknown && taint.both() {
                        Decision::ask(
                            Layer::Cascade,
                            human,
                            format!(
                                "bashgate asks the person about {what}: the reviewer flagged it ({r}) and the \
                                 session is {state} ({}). Approve only if you expect this exact command.",
                                human.tag()
                            ),
                        )
                    } else {
                        let rule = GateRule::CopFlagged;
                        Decision::deny(
                            Layer::Cascade,
                            rule,
                            format!(
                                "bashgate stopped {what}: the session is {state} and the reviewer flagged it: {r} \
                                 ({}). Instead: do the work with local tools, or ask the person to run it.",
                                rule.tag()
                            ),
                        )
                    }
                },
            );
            match reviewed {
                Ok(r) => Decision::allow(
                    Layer::Cascade,
                    format!("bashgate allowed {what}: it {kind} and the session is {state}, and the reviewer cleared it ({r})"),
                ),
                Err(d) => d,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Permission::{self, *};

    const NONE: Taint = Taint {
        corruption: false,
        secret: false,
    };
    const CORRUPT: Taint = Taint {
        corruption: true,
        secret: false,
    };
    const SECRET: Taint = Taint {
        corruption: false,
        secret: true,
    };
    const BOTH: Taint = Taint {
        corruption: true,
        secret: true,
    };

    fn clear() -> CopResult {
        CopResult::Clear("local build".into())
    }
    fn flagged() -> CopResult {
        CopResult::Flagged("exfiltration".into())
    }
    fn never() -> CopResult {
        panic!("the Cop must not be asked in this row")
    }

    fn run(v: Verdict, t: Taint, cop: impl FnOnce() -> CopResult) -> Permission {
        decide(v, t, "`x`", OnError::Ask, cop).permission
    }

    // Every row of the seeds' decision tables (001 task 4, 004 §5a).
    #[test]
    fn no_taint_allows_everything_without_the_cop() {
        for v in [Verdict::Safe, Verdict::Unknown, Verdict::Network] {
            assert_eq!(run(v, NONE, never), Allow);
        }
    }

    #[test]
    fn safe_is_allowed_whatever_the_taint() {
        for t in [CORRUPT, SECRET, BOTH] {
            assert_eq!(run(Verdict::Safe, t, never), Allow);
        }
    }

    #[test]
    fn network_with_one_taint_goes_to_the_cop() {
        for t in [CORRUPT, SECRET] {
            assert_eq!(run(Verdict::Network, t, clear), Allow);
            assert_eq!(run(Verdict::Network, t, flagged), Deny);
        }
    }

    #[test]
    fn network_with_both_taints_needs_the_person() {
        let d = decide(Verdict::Network, BOTH, "`curl x`", OnError::Ask, never);
        assert_eq!(d.permission, Ask);
        assert_eq!(d.rule, Some(GateRule::NeedsHuman));
    }

    #[test]
    fn unknown_goes_to_the_cop() {
        for t in [CORRUPT, SECRET, BOTH] {
            assert_eq!(run(Verdict::Unknown, t, clear), Allow);
        }
        assert_eq!(run(Verdict::Unknown, CORRUPT, flagged), Deny);
        assert_eq!(run(Verdict::Unknown, SECRET, flagged), Deny);
        assert_eq!(run(Verdict::Unknown, BOTH, flagged), Ask);
    }

    #[test]
    fn flagged_reason_reaches_the_agent() {
        let d = decide(Verdict::Network, CORRUPT, "`curl x`", OnError::Ask, || {
            CopResult::Flagged("Suspicious exfiltration".into())
        });
        assert!(d.reason.to_lowercase().contains("exfiltration"));
    }

    #[test]
    fn no_cop_asks_and_a_failing_cop_follows_on_error() {
        assert_eq!(
            run(Verdict::Unknown, CORRUPT, || CopResult::Unavailable(
                "no key".into()
            )),
            Ask
        );
        for (oe, p) in [
            (OnError::Allow, Allow),
            (OnError::Ask, Ask),
            (OnError::Deny, Deny),
        ] {
            let d = decide(Verdict::Network, SECRET, "`x`", oe, || {
                CopResult::Failed("timeout".into())
            });
            assert_eq!(d.permission, p);
            assert_eq!(d.rule, Some(GateRule::GateError));
        }
    }
}
