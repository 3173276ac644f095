//! Cause before symptom (docs/advisor.md, "Precedence"): when two findings are one cause
//! seen twice, the symptom folds into the cause — it leaves the list and becomes the cause's
//! evidence (`folded`), and the cause keeps the larger impact of the two (the symptom's time
//! is the cause's time, measured elsewhere). The rules, in the order they apply:
//!
//! 1. A slow step folds into the finding that names its culprit rank in that step with a
//!    host cause of its own (data loading, a host gap, a GC pause): the stall is the cause,
//!    the slow step what the cluster saw of it; so does a straggler whose every step is a
//!    host gap of its own. Else, when what grew is host-bound time and the job
//!    is launch-bound, into launch-bound.
//! 2. Poor overlap folds into small messages: many small collectives after backward are
//!    what leaves communication exposed, and bucketing is the fix. So does waiting in those
//!    collectives when no late rank is named: each small collective is one more point where
//!    every rank synchronizes, and the skew between them accumulates there. Both only
//!    when small messages can cost at least half of the symptom's time themselves.
//!    Before small messages, poor overlap and low bandwidth fold into a stalled transfer
//!    of the same collective type: the exposed, slow time is the stall's (same guard).
//! 3. Tiny kernels and host work on the critical path fold into launch-bound: all three are
//!    the host failing to keep the device fed, measured three ways.
//!
//! A pair the what-if replay judged (both findings replayed) is not folded by these rules:
//! the replay's counterfactual attribution (`whatif::attribution`) decides it — but for the
//! pairs of rule 3, whose fixes are one (the launches freed): the replay cannot tell them
//! apart, so they fold as measured three ways even when both were replayed.
//!
//! Then the findings are ranked ([`rank`]) and, first to last, each finding's impact is
//! capped at the step time the ones before it left, so that together they never claim more
//! than the step time.

use super::{Finding, Folded, Kind, Severity, Thresholds};
use crate::time::Ns;

/// (symptom, cause) rule pairs in the order they apply; `same` says whether two findings
/// of those rules are about the same thing.
const FOLDS: &[(&str, &[&str], Same)] = &[
    (
        "slow_step",
        &["dataloader", "host_gap", "gc"],
        Same::CulpritInScope,
    ),
    ("straggler", &["host_gap"], Same::CulpritInScope),
    ("slow_step", &["launch_bound"], Same::Grew("host_bound")),
    (
        "rank_imbalance",
        &["launch_bound"],
        Same::Grew("host_bound"),
    ),
    (
        "poor_overlap",
        &["stalled_transfer", "small_messages"],
        Same::Exposed,
    ),
    ("low_bandwidth", &["stalled_transfer"], Same::SharedOp),
    (
        "comm_wait_dominated",
        &["small_messages"],
        Same::SharedOpNoCulprit,
    ),
    ("tiny_kernels", &["launch_bound"], Same::Always),
    ("critical_path_host", &["launch_bound"], Same::Always),
];

/// Whether a finding of rule `symptom` always folds into one of rule `cause` (one cause
/// measured two ways): the attribution keeps this direction when both fixes are one.
pub fn always_folds(symptom: &str, cause: &str) -> bool {
    FOLDS
        .iter()
        .any(|(s, c, same)| *s == symptom && c.contains(&cause) && matches!(same, Same::Always))
}

/// When a symptom and a candidate cause are one thing.
#[derive(Debug, Clone, Copy)]
enum Same {
    /// The symptom's culprit ranks and steps are all in the cause's evidence.
    CulpritInScope,
    /// They name a common operator or collective type, and the cause's own impact is at
    /// least half the symptom's (else the symptom has a larger cause of its own).
    SharedOp,
    /// They name a common collective type, and the symptom's time is overlap the replay
    /// measured (each rank's last collective kept waiting: no lateness in it, and bucketing
    /// gives it back) or [`Same::SharedOp`]'s bound holds.
    Exposed,
    /// They name a common collective type, and the symptom names no rank to blame.
    SharedOpNoCulprit,
    /// The symptom (a slow step) grew in this breakdown part, the one the cause is about.
    Grew(&'static str),
    /// Both fired: one job, one cause.
    Always,
}

impl Same {
    fn holds(self, symptom: &Finding, cause: &Finding) -> bool {
        let (s, c) = (&symptom.evidence, &cause.evidence);
        match self {
            Same::CulpritInScope => {
                !s.ranks.is_empty()
                    && s.ranks.iter().all(|r| c.ranks.contains(r))
                    && s.steps.iter().all(|x| c.steps.contains(x))
            }
            // The cause's own bound covers at least half of the symptom: bucketing saves
            // per-call costs, never tens of ms of waiting inside one collective.
            Same::SharedOp => shares_op(s, c) && 2 * cause.impact_ns >= symptom.impact_ns,
            Same::SharedOpNoCulprit => s.ranks.is_empty() && Same::SharedOp.holds(symptom, cause),
            Same::Exposed => {
                Same::SharedOp.holds(symptom, cause)
                    || (symptom.saves_ns.is_some() && shares_op(s, c))
            }
            Same::Grew(part) => s.ops.iter().any(|o| o == part),
            Same::Always => true,
        }
    }
}

/// Whether two findings name a common collective type (written `all_reduce` or
/// `all_reduce (group)`).
fn shares_op(s: &super::Evidence, c: &super::Evidence) -> bool {
    let op = |o: &String| o.split(" (").next().unwrap_or("").to_string();
    s.ops.iter().any(|a| c.ops.iter().any(|b| op(a) == op(b)))
}

/// Applies the fold rules to findings (any order); the result is sorted by impact.
/// `step_ns` is what impacts are relative to (severity is recomputed for a cause that
/// took a larger impact).
pub fn fold(mut v: Vec<Finding>, step_ns: Ns, t: &Thresholds) -> Vec<Finding> {
    for &(symptom, causes, same) in FOLDS {
        let Some(si) = v.iter().position(|f| f.rule == symptom) else {
            continue;
        };
        let judged = |f: &Finding| f.saves_ns.is_some() && v[si].saves_ns.is_some();
        let found = causes.iter().find_map(|&c| {
            v.iter().position(|f| {
                let decided = judged(f) && !matches!(same, Same::Always);
                f.rule == c && !decided && same.holds(&v[si], f)
            })
        });
        let Some(ci) = found else { continue };
        let s = v.remove(si);
        let ci = if ci > si { ci - 1 } else { ci };
        absorb(&mut v[ci], s, step_ns, t);
    }
    rank(v, step_ns, t)
}

/// Findings ranked (docs/advisor.md, "Ranking"): a finding under `lead_min_pct` of the step
/// after every other; then by severity; within a severity by impact, a rule's estimate (not
/// replayed) weighed at `estimate_weight` of its size against replayed savings; ties by rule
/// id. An opportunity is at most medium on a job with no problem of medium severity or more.
/// Each is then capped at what the ones before it left of the step time.
pub fn rank(mut v: Vec<Finding>, step_ns: Ns, t: &Thresholds) -> Vec<Finding> {
    cap_opportunities(&mut v);
    let leads = |f: &Finding| f.impact_pct >= t.lead_min_pct;
    let weight = |f: &Finding| {
        if f.saves_ns.is_some() {
            f.impact_ns as f64
        } else {
            f.impact_ns as f64 * t.estimate_weight
        }
    };
    v.sort_by(|a, b| {
        leads(b)
            .cmp(&leads(a))
            .then(b.severity.cmp(&a.severity))
            .then(weight(b).total_cmp(&weight(a)))
            .then(a.rule.cmp(b.rule))
    });
    cap(&mut v, step_ns, t);
    cap_opportunities(&mut v);
    v
}

/// An opportunity is never high on a job with no problem of at least medium severity: what
/// any healthy job could still gain does not outrank the job being healthy.
fn cap_opportunities(v: &mut [Finding]) {
    let problem = v
        .iter()
        .any(|f| f.kind == Kind::Problem && f.severity >= Severity::Medium);
    if problem {
        return;
    }
    for f in v.iter_mut().filter(|f| f.kind == Kind::Opportunity) {
        f.severity = f.severity.min(Severity::Medium);
    }
}

/// Findings together never claim more than the step time: where definitions still overlap
/// (a slow step's excess and the free time inside it), a later finding's impact is capped
/// at what the earlier ones left, and keeps its own figure as `uncapped_impact_ns`.
fn cap(v: &mut [Finding], step_ns: Ns, t: &Thresholds) {
    let mut left = step_ns;
    for f in v.iter_mut() {
        if f.impact_ns > left {
            f.evidence
                .numbers
                .insert("uncapped_impact_ns", super::Quantity::Ns(f.impact_ns));
            f.set_impact(left.max(0), step_ns, t);
        }
        left -= f.impact_ns;
    }
}

/// The cause takes the symptom in as evidence, and its impact when larger — unless the
/// cause's impact is its replayed saving, which is what fixing it saves, symptoms included.
fn absorb(cause: &mut Finding, symptom: Finding, step_ns: Ns, t: &Thresholds) {
    if symptom.impact_ns > cause.impact_ns && cause.saves_ns.is_none() {
        cause.set_impact(symptom.impact_ns, step_ns, t);
    }
    cause.folded.push(Folded {
        rule: symptom.rule,
        impact_ns: symptom.impact_ns,
        remains_ns: None,
        claim: symptom.claim,
    });
    cause.folded.extend(symptom.folded);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advisor::rules::communication::{Claim as Comm, TypeInGroup};
    use crate::analysis::advisor::{Category, Claim, Draft};
    use crate::model::{CollOp, RankId};

    const MS: Ns = 1_000_000;

    fn of() -> TypeInGroup {
        TypeInGroup {
            op: CollOp::AllReduce,
            group: "0".into(),
        }
    }

    fn finding(rule: &'static str, ns: Ns, claim: Comm, ranks: &[u32]) -> Finding {
        let mut f = Draft::new(ns, Claim::Communication(claim))
            .ops(["all_reduce"])
            .ranks(ranks.iter().copied().map(RankId))
            .finish(rule, Category::Communication);
        f.set_impact(ns, 100 * MS, &Thresholds::default());
        f
    }

    impl Claim {
        fn as_comm(&self) -> &Comm {
            match self {
                Claim::Communication(c) => c,
                _ => unreachable!(),
            }
        }
    }

    fn small() -> Finding {
        let c = Comm::SmallMessages {
            of: of(),
            small: 200,
            calls: 200,
            threshold: 16 << 20,
        };
        finding("small_messages", 4 * MS, c, &[])
    }

    fn waits(ranks: &[u32]) -> Finding {
        let c = Comm::WaitDominated {
            of: of(),
            wait_ratio: 0.8,
            late: None,
            late_entry: false,
            unloaded: None,
        };
        finding("comm_wait_dominated", 6 * MS, c, ranks)
    }

    #[test]
    fn small_collectives_absorb_their_waiting_unless_a_rank_is_blamed() {
        let t = Thresholds::default();
        // 200 small all-reduces that mostly wait, no late rank named: one cause, bucketing;
        // the cause takes the larger impact (6 ms) and its severity (6% ≥ medium 3%; an
        // opportunity, and no problem left: at most medium).
        let v = fold(vec![waits(&[]), small()], 100 * MS, &t);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].rule, v[0].impact_ns), ("small_messages", 6 * MS));
        assert_eq!(v[0].severity, crate::analysis::advisor::Severity::Medium);
        assert_eq!(v[0].folded[0].rule, "comm_wait_dominated");
        // A named late rank is a cause of its own: both stay.
        let v = fold(vec![waits(&[3]), small()], 100 * MS, &t);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].rule, "comm_wait_dominated");
        // Waiting more than twice what small messages can cost has a larger cause: both
        // stay, and small messages keep their own 4 ms.
        let mut long = waits(&[]);
        long.set_impact(9 * MS, 100 * MS, &t);
        let v = fold(vec![long, small()], 100 * MS, &t);
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].rule, v[1].impact_ns), ("small_messages", 4 * MS));
    }

    #[test]
    fn exposed_and_slow_communication_folds_into_a_stall_before_small_messages() {
        let t = Thresholds::default();
        let stall = Comm::StalledTransfer {
            of: of(),
            name: None,
            transit_ns: 56 * MS,
            expected_ns: MS / 4,
            reference_gbps: 60.0,
            instances: 2,
            missing: Vec::new(),
        };
        let overlap = Comm::PoorOverlap {
            ratio: 0.05,
            exposed_ns: 70 * MS,
            exposed_share: 0.5,
        };
        let low = Comm::LowBandwidth {
            of: of(),
            busbw_gbps: 16.0,
            of_peak: 0.13,
            link: None,
        };
        let v = fold(
            vec![
                finding("poor_overlap", 65 * MS, overlap, &[]),
                finding("low_bandwidth", 55 * MS, low, &[]),
                small(),
                finding("stalled_transfer", 60 * MS, stall.clone(), &[0, 1]),
            ],
            140 * MS,
            &t,
        );
        let rules: Vec<_> = v.iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["stalled_transfer", "small_messages"]);
        assert_eq!(v[0].impact_ns, 65 * MS);
        let folded: Vec<_> = v[0].folded.iter().map(|f| f.rule).collect();
        assert_eq!(folded, ["poor_overlap", "low_bandwidth"]);
        // A stall worth less than half of the exposed time does not explain it.
        let v = fold(
            vec![
                finding(
                    "poor_overlap",
                    65 * MS,
                    Comm::PoorOverlap {
                        ratio: 0.05,
                        exposed_ns: 70 * MS,
                        exposed_share: 0.5,
                    },
                    &[],
                ),
                finding("stalled_transfer", 30 * MS, stall, &[0, 1]),
            ],
            140 * MS,
            &t,
        );
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn ranking_puts_replayed_savings_first_within_a_severity_and_tiny_ones_last() {
        let t = Thresholds::default();
        let step = 100 * MS;
        let at = |rule, ns: Ns, replayed: bool| {
            let mut f = finding(rule, ns, small().claim.as_comm().clone(), &[]);
            f.saves_ns = replayed.then_some(ns);
            f.set_impact(ns, step, &t);
            f
        };
        // A wait (problem) 12 ms replayed, small messages (opportunity) 20 ms estimated: both
        // high; the estimate weighs 10 ms against the replayed 12. A 0.4 ms problem never
        // leads.
        let v = rank(
            vec![
                at("small_messages", 20 * MS, false),
                at("comm_wait_dominated", 12 * MS, true),
                at("straggler", MS * 4 / 10, true),
            ],
            step,
            &t,
        );
        let rules: Vec<_> = v.iter().map(|f| f.rule).collect();
        assert_eq!(
            rules,
            ["comm_wait_dominated", "small_messages", "straggler"]
        );
        // No problem of medium severity or more: an opportunity is at most medium, and a
        // finding under 0.5% of the step still never leads, however it is ranked.
        let v = rank(
            vec![
                at("small_messages", 20 * MS, true),
                at("straggler", MS / 10, true),
            ],
            step,
            &t,
        );
        assert_eq!(v[0].rule, "small_messages");
        assert_eq!(v[0].severity, crate::analysis::advisor::Severity::Medium);
        let v = rank(
            vec![at("straggler", MS / 10, true), at("gc", 2 * MS, false)],
            step,
            &t,
        );
        assert_eq!(v[0].rule, "gc");
    }

    #[test]
    fn impacts_are_capped_at_the_step_time_left() {
        let t = Thresholds::default();
        let v = fold(vec![waits(&[3]), small()], 8 * MS, &t);
        // 6 ms then 4 ms against an 8 ms step: the second keeps 2 ms and its own figure.
        assert_eq!((v[0].impact_ns, v[1].impact_ns), (6 * MS, 2 * MS));
        assert_eq!(v[1].impact_pct, 0.25);
        assert_eq!(
            v[1].evidence.numbers["uncapped_impact_ns"],
            crate::analysis::advisor::Quantity::Ns(4 * MS)
        );
    }
}
