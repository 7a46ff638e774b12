//! The taint cascade: after the policy layers, the analyzer's verdict and
//! the session's taint decide, with the Cop for the grey zone.
//!
//! | taint        | safe  | network                          | unknown                               |
//! |--------------|-------|----------------------------------|---------------------------------------|
//! | none         | allow | allow                            | allow                                 |
//! | one flag     | allow | Cop: clear allow, flagged deny   | Cop: clear allow, flagged deny        |
//! | both flags   | allow | human (ask)                      | Cop: clear allow, flagged human (ask) |
//!
//! A Cop that is not configured (no key) makes the decision `ask`; a Cop
//! that fails (timeout, HTTP error, unreadable answer) is `on_error`.
//!
//! Confinement (`[confine]`, issue 13) changes two cells when the surface
//! can run the command fenced: in a tainted session, a `safe` command runs
//! fenced (defence in depth against gaps in the proof) and an `unknown` one
//! runs fenced instead of going to the Cop or the person. `network` keeps
//! the table: fenced, it could only fail. With `when = "always"`, untainted
//! `safe` and `unknown` commands run fenced too.
//!
//! Untainted, a command that is not `safe` (`unknown` or `network`) runs
//! in the fence for writes (`[confine] untainted = "writes"`, the
//! default): it keeps the network, and may write only in the working
//! tree, the temporary directories and the caches, so a script, an
//! interpreter or a fan-out the analyzer cannot read cannot destroy
//! anything elsewhere.
//!
//! Two more rows where a fence is ready: a `network` command that only
//! *can* reach the network (a runtime running a local script:
//! `confinable_network` in gate/data/fence.toml) is decided as `unknown`
//! ([`Fencing::verdict`]); and where the session's taint cannot be read, an
//! `unknown` command runs fenced ([`taint_unreadable`]), since fenced it
//! can do no more than in a tainted session.
//!
//! This module is the one place that decides what runs fenced; the engine
//! only settles the asks a fence bounds (`Step::Bounded`) by what it
//! decided.

use bashgate_analyzer::Verdict;

use crate::call::{Fence, FenceKind, FenceOffer};
use crate::config::{ConfineWhen, OnError, UntaintedFence};
use crate::cop::CopResult;
use crate::decision::{Decision, Layer};
use crate::rules::GateRule;
use crate::taint::Taint;

/// Whether the commands the cascade lets through run fenced.
#[derive(Debug, Clone, Copy)]
pub struct Fencing<'a> {
    pub when: ConfineWhen,
    pub untainted: UntaintedFence,
    /// Whether the surface can run this command fenced, asked only for a
    /// command that could run fenced.
    pub offer: &'a FenceOffer<'a>,
}

/// The offer of a table with confinement off, which never asks it.
#[cfg(test)]
static NOT_ASKED: FenceOffer<'static> = FenceOffer::unasked();

impl Fencing<'_> {
    /// No confinement: the table in the module docs, with no cell changed.
    #[cfg(test)]
    pub const OFF: Fencing<'static> = Fencing {
        when: ConfineWhen::Never,
        untainted: UntaintedFence::Off,
        offer: &NOT_ASKED,
    };

    fn ready(&self) -> bool {
        self.when != ConfineWhen::Never && self.offer.offered()
    }

    /// The verdict the table reads: a `network` command whose every
    /// network finding only says it *can* reach the network (`confinable`,
    /// asked only then) is `unknown` where a fence is ready; fenced, it
    /// cannot reach it.
    pub fn verdict(&self, verdict: Verdict, confinable: impl FnOnce() -> bool) -> Verdict {
        if verdict == Verdict::Network
            && self.when != ConfineWhen::Never
            && confinable()
            && self.offer.offered()
        {
            Verdict::Unknown
        } else {
            verdict
        }
    }

    /// Why a command that could have run fenced goes to the Cop or the
    /// person instead, for the reason (empty when confinement is off).
    fn missing(&self) -> String {
        if self.when == ConfineWhen::Never {
            return String::new();
        }
        match self.offer.get() {
            Fence::Offered => String::new(),
            Fence::Unavailable(why) => {
                format!(" It could not run fenced instead: {why}.")
            }
        }
    }
}

const FENCE: &str = "no network, protected files read-only";
const WRITES: &str =
    "it may write only in the working tree, the temporary directories and the caches; the network stays";

/// A command no layer stopped, in a session that has read nothing
/// untrusted or secret (or where taint is not followed).
pub fn untainted(verdict: Verdict, what: &str, fencing: Fencing) -> Decision {
    if fencing.when == ConfineWhen::Always && fencing.ready() && verdict != Verdict::Network {
        return Decision::allow_confined(
            Layer::Cascade,
            format!("bashgate lets {what} run fenced ({FENCE}): confine.when = \"always\""),
        );
    }
    if verdict != Verdict::Safe
        && fencing.untainted == UntaintedFence::Writes
        && fencing.when != ConfineWhen::Never
    {
        let kind = if verdict == Verdict::Network {
            "it can reach the network"
        } else {
            "it cannot be proven local"
        };
        match fencing.offer.of(FenceKind::Writes) {
            Fence::Offered => {
                return Decision::allow_writes_fenced(
                    Layer::Cascade,
                    format!("bashgate lets {what} run with its writes bounded ({WRITES}): {kind}, and the session has read nothing untrusted or secret"),
                )
            }
            Fence::Unavailable(why) => {
                return Decision::allow(
                    Layer::Cascade,
                    format!("bashgate has no objection to {what}: the session has read nothing untrusted or secret. It runs with its writes unbounded: the fence for writes is not available here ({why})"),
                )
            }
        }
    }
    Decision::allow(
        Layer::Cascade,
        format!(
            "bashgate has no objection to {what}: the session has read nothing untrusted or secret"
        ),
    )
}

/// A command no layer stopped, where the session's taint cannot be read
/// (`why`): a `safe` one is allowed, an `unknown` one runs fenced where a
/// fence is ready (it can do no more than in a tainted session); `None`
/// for the rest, which the configuration's `on_error` decides.
pub fn taint_unreadable(
    verdict: Verdict,
    what: &str,
    why: &str,
    fencing: Fencing,
) -> Option<Decision> {
    match verdict {
        Verdict::Safe => Some(Decision::allow(
            Layer::Cascade,
            format!("bashgate has no objection to {what}: it is provably local (the session's taint could not be read)"),
        )),
        Verdict::Unknown if fencing.ready() => Some(Decision::allow_confined(
            Layer::Cascade,
            format!("bashgate lets {what} run fenced ({FENCE}): it cannot be proven local and the session's taint could not be read ({why})"),
        )),
        _ => None,
    }
}

/// Decides a command's fate from its verdict and the session's taint,
/// calling `cop` only when a row needs it.
pub fn decide(
    verdict: Verdict,
    taint: Taint,
    what: &str,
    on_err: OnError,
    fencing: Fencing,
    cop: impl FnOnce() -> CopResult,
) -> Decision {
    if !taint.any() {
        return untainted(verdict, what, fencing);
    }
    let state = taint.describe();
    let human = GateRule::NeedsHuman;
    match verdict {
        Verdict::Safe if fencing.ready() => Decision::allow_confined(
            Layer::Cascade,
            format!(
                "bashgate lets {what} run fenced ({FENCE}): it is provably local, and the session is {state}"
            ),
        ),
        Verdict::Safe => Decision::allow(
            Layer::Cascade,
            format!("bashgate has no objection to {what}: it is provably local"),
        ),
        Verdict::Unknown if fencing.ready() => Decision::allow_confined(
            Layer::Cascade,
            format!(
                "bashgate lets {what} run fenced ({FENCE}): it cannot be proven local and the session is {state}"
            ),
        ),
        Verdict::Network if taint.both() => Decision::ask(
            Layer::Cascade,
            human,
            format!(
                "bashgate asks the person about {what}: it can reach the network and the session is \
                 {state}, so it could leak them \
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
                    format!("bashgate has no objection to {what}: it {kind} and the session is {state}, and the reviewer cleared it ({r})"),
                ),
                Err(mut d) => {
                    if verdict == Verdict::Unknown {
                        d.reason.push_str(&fencing.missing());
                    }
                    d
                }
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
        decide(v, t, "`x`", OnError::Ask, Fencing::OFF, cop).permission
    }

    // Every row of the decision table in the module docs, without confinement.
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
        let d = decide(
            Verdict::Network,
            BOTH,
            "`curl x`",
            OnError::Ask,
            Fencing::OFF,
            never,
        );
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
        let d = decide(
            Verdict::Network,
            CORRUPT,
            "`curl x`",
            OnError::Ask,
            Fencing::OFF,
            || CopResult::Flagged("Suspicious exfiltration".into()),
        );
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
            let d = decide(Verdict::Network, SECRET, "`x`", oe, Fencing::OFF, || {
                CopResult::Failed("timeout".into())
            });
            assert_eq!(d.permission, p);
            assert_eq!(d.rule, Some(GateRule::GateError));
        }
    }

    fn fenced(v: Verdict, t: Taint, when: ConfineWhen, offer: &Fence) -> Decision {
        let offer = FenceOffer::known(offer.clone());
        decide(
            v,
            t,
            "`x`",
            OnError::Ask,
            Fencing {
                when,
                untainted: UntaintedFence::Off,
                offer: &offer,
            },
            never,
        )
    }

    #[test]
    fn a_tainted_session_runs_what_it_lets_through_fenced() {
        for t in [CORRUPT, SECRET, BOTH] {
            for v in [Verdict::Safe, Verdict::Unknown] {
                let d = fenced(v, t, ConfineWhen::Tainted, &Fence::Offered);
                assert_eq!((d.permission, d.confined()), (Allow, true), "{v:?} {t:?}");
                assert!(d.reason.contains("fenced"), "{}", d.reason);
            }
        }
    }

    #[test]
    fn network_keeps_the_table_even_when_the_fence_is_offered() {
        let d = decide(
            Verdict::Network,
            BOTH,
            "`curl x`",
            OnError::Ask,
            Fencing {
                when: ConfineWhen::Always,
                untainted: UntaintedFence::Off,
                offer: &FenceOffer::known(Fence::Offered),
            },
            never,
        );
        assert_eq!((d.permission, d.confined()), (Ask, false));
        let d = decide(
            Verdict::Network,
            CORRUPT,
            "`curl x`",
            OnError::Ask,
            Fencing {
                when: ConfineWhen::Tainted,
                untainted: UntaintedFence::Off,
                offer: &FenceOffer::known(Fence::Offered),
            },
            clear,
        );
        assert_eq!((d.permission, d.confined()), (Allow, false));
    }

    #[test]
    fn only_a_command_that_could_run_fenced_asks_whether_it_can() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let asked = AtomicUsize::new(0);
        let probe = |_: FenceKind| {
            asked.fetch_add(1, Ordering::Relaxed);
            Fence::Offered
        };
        let offer = FenceOffer::probed(&probe);
        let fencing = Fencing {
            when: ConfineWhen::Tainted,
            untainted: UntaintedFence::Off,
            offer: &offer,
        };
        for v in [Verdict::Safe, Verdict::Unknown, Verdict::Network] {
            let d = decide(v, NONE, "`x`", OnError::Ask, fencing, never);
            assert_eq!((d.permission, d.confined()), (Allow, false));
        }
        assert_eq!(asked.load(Ordering::Relaxed), 0, "a clean session asked");
        for _ in 0..2 {
            let d = decide(
                Verdict::Unknown,
                CORRUPT,
                "`x`",
                OnError::Ask,
                fencing,
                never,
            );
            assert_eq!((d.permission, d.confined()), (Allow, true));
        }
        assert_eq!(asked.load(Ordering::Relaxed), 1, "asked once, then known");
    }

    #[test]
    fn untainted_sessions_are_fenced_only_when_asked_to_be() {
        for v in [Verdict::Safe, Verdict::Unknown, Verdict::Network] {
            let d = fenced(v, NONE, ConfineWhen::Tainted, &Fence::Offered);
            assert_eq!((d.permission, d.confined()), (Allow, false));
        }
        for v in [Verdict::Safe, Verdict::Unknown] {
            let d = fenced(v, NONE, ConfineWhen::Always, &Fence::Offered);
            assert_eq!((d.permission, d.confined()), (Allow, true));
        }
        let d = fenced(Verdict::Network, NONE, ConfineWhen::Always, &Fence::Offered);
        assert_eq!((d.permission, d.confined()), (Allow, false));
    }

    #[test]
    fn without_the_fence_the_old_table_applies_and_says_why() {
        let gone = Fence::Unavailable("user namespaces are disabled".into());
        let d = decide(
            Verdict::Unknown,
            CORRUPT,
            "`make`",
            OnError::Ask,
            Fencing {
                when: ConfineWhen::Tainted,
                untainted: UntaintedFence::Off,
                offer: &FenceOffer::known(gone.clone()),
            },
            || CopResult::Unavailable("no key".into()),
        );
        assert_eq!((d.permission, d.confined()), (Ask, false));
        assert!(
            d.reason.contains("user namespaces are disabled"),
            "{}",
            d.reason
        );
        let d = fenced(Verdict::Safe, BOTH, ConfineWhen::Tainted, &gone);
        assert_eq!((d.permission, d.confined()), (Allow, false));
        // `never` is the unconfined table, with no word about the fence.
        let d = decide(
            Verdict::Unknown,
            CORRUPT,
            "`make`",
            OnError::Ask,
            Fencing {
                when: ConfineWhen::Never,
                untainted: UntaintedFence::Off,
                offer: &FenceOffer::known(Fence::Offered),
            },
            || CopResult::Unavailable("no key".into()),
        );
        assert_eq!((d.permission, d.confined()), (Ask, false));
        assert!(!d.reason.contains("fenced"), "{}", d.reason);
    }

    fn untainted_with(v: Verdict, offer: &FenceOffer, when: ConfineWhen) -> Decision {
        let fencing = Fencing {
            when,
            untainted: UntaintedFence::Writes,
            offer,
        };
        decide(v, NONE, "`x`", OnError::Ask, fencing, never)
    }

    #[test]
    fn untainted_what_is_not_proven_local_runs_with_its_writes_bounded() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let asked = AtomicUsize::new(0);
        let probe = |kind: FenceKind| {
            asked.fetch_add(1, Ordering::Relaxed);
            assert_eq!(
                kind,
                FenceKind::Writes,
                "an untainted session needs only the fence for writes"
            );
            Fence::Offered
        };
        let offer = FenceOffer::probed(&probe);
        // Provably local: as it is, and nothing is asked of the surface.
        let d = untainted_with(Verdict::Safe, &offer, ConfineWhen::Tainted);
        assert_eq!((d.permission, d.confined()), (Allow, false));
        assert_eq!(asked.load(Ordering::Relaxed), 0);
        for v in [Verdict::Unknown, Verdict::Network] {
            let d = untainted_with(v, &offer, ConfineWhen::Tainted);
            assert_eq!(
                (d.permission, d.fence),
                (Allow, Some(FenceKind::Writes)),
                "{v:?}"
            );
            assert!(d.reason.contains("writes bounded"), "{}", d.reason);
        }
        assert_eq!(asked.load(Ordering::Relaxed), 1, "asked once, then known");
        // `always` keeps its full fence for what is not network.
        let d = untainted_with(
            Verdict::Unknown,
            &FenceOffer::known(Fence::Offered),
            ConfineWhen::Always,
        );
        assert_eq!(d.fence, Some(FenceKind::Full));
        let d = untainted_with(
            Verdict::Network,
            &FenceOffer::known(Fence::Offered),
            ConfineWhen::Always,
        );
        assert_eq!(d.fence, Some(FenceKind::Writes));
        // `never`: no fence of any kind.
        let d = untainted_with(
            Verdict::Unknown,
            &FenceOffer::known(Fence::Offered),
            ConfineWhen::Never,
        );
        assert_eq!((d.permission, d.confined()), (Allow, false));
    }

    #[test]
    fn untainted_without_the_fence_for_writes_runs_as_before_and_says_so() {
        let gone = FenceOffer::known(Fence::Unavailable("Landlock is not available".into()));
        let d = untainted_with(Verdict::Unknown, &gone, ConfineWhen::Tainted);
        assert_eq!((d.permission, d.confined()), (Allow, false));
        assert!(
            d.reason.contains("Landlock is not available"),
            "{}",
            d.reason
        );
        assert!(d.reason.contains("unbounded"), "{}", d.reason);
    }
}
