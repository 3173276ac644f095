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
//!    what leaves communication exposed, and bucketing is the fix.
//! 3. Tiny kernels and host work on the critical path fold into launch-bound: all three are
//!    the host failing to keep the device fed, measured three ways.
//!
//! Then, largest first, each finding's impact is capped at the step time the ones before it
//! left, so the findings together never claim more than the step time.

use super::{Finding, Folded, Severity, Thresholds};
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
    ("poor_overlap", &["small_messages"], Same::SharedOp),
    ("tiny_kernels", &["launch_bound"], Same::Always),
    ("critical_path_host", &["launch_bound"], Same::Always),
];

/// When a symptom and a candidate cause are one thing.
#[derive(Debug, Clone, Copy)]
enum Same {
    /// The symptom's culprit ranks and steps are all in the cause's evidence.
    CulpritInScope,
    /// They name a common operator or collective type.
    SharedOp,
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
            // Collective types are written `all_reduce` or `all_reduce (group)`.
            Same::SharedOp => {
                let op = |o: &String| o.split(" (").next().unwrap_or("").to_string();
                s.ops.iter().any(|a| c.ops.iter().any(|b| op(a) == op(b)))
            }
            Same::Grew(part) => s.ops.iter().any(|o| o == part),
            Same::Always => true,
        }
    }
}

/// Applies the fold rules to findings (any order); the result is sorted by impact.
/// `step_ns` is what impacts are relative to (severity is recomputed for a cause that
/// took a larger impact).
pub fn fold(mut v: Vec<Finding>, step_ns: Ns, t: &Thresholds) -> Vec<Finding> {
    for &(symptom, causes, same) in FOLDS {
        let Some(si) = v.iter().position(|f| f.rule == symptom) else {
            continue;
        };
        let found = causes
            .iter()
            .find_map(|&c| v.iter().position(|f| f.rule == c && same.holds(&v[si], f)));
        let Some(ci) = found else { continue };
        let s = v.remove(si);
        let ci = if ci > si { ci - 1 } else { ci };
        absorb(&mut v[ci], s, step_ns, t);
    }
    v.sort_by(|a, b| b.impact_ns.cmp(&a.impact_ns).then(a.rule.cmp(b.rule)));
    cap(&mut v, step_ns, t);
    v
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
            f.impact_ns = left.max(0);
            f.impact_pct = if step_ns > 0 {
                f.impact_ns as f64 / step_ns as f64
            } else {
                0.0
            };
            f.severity = severity(f.impact_ns, step_ns, t);
        }
        left -= f.impact_ns;
    }
}

/// The cause takes the symptom in as evidence, and its impact when larger.
fn absorb(cause: &mut Finding, symptom: Finding, step_ns: Ns, t: &Thresholds) {
    if symptom.impact_ns > cause.impact_ns {
        cause.impact_ns = symptom.impact_ns;
        cause.impact_pct = symptom.impact_pct;
        cause.severity = severity(cause.impact_ns, step_ns, t);
    }
    cause.folded.push(Folded {
        rule: symptom.rule,
        impact_ns: symptom.impact_ns,
        claim: symptom.claim,
    });
    cause.folded.extend(symptom.folded);
}

/// The severity of an impact (docs/advisor.md: high ≥ high_pct, medium ≥ medium_pct).
pub fn severity(impact_ns: Ns, step_ns: Ns, t: &Thresholds) -> Severity {
    let pct = if step_ns > 0 {
        impact_ns as f64 / step_ns as f64
    } else {
        0.0
    };
    if pct >= t.high_pct {
        Severity::High
    } else if pct >= t.medium_pct {
        Severity::Medium
    } else {
        Severity::Low
    }
}
