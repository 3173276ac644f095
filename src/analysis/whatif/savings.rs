//! Impacts become savings (docs/metrics.md, "Replay"): each finding's rule names the fix
//! that takes its cause away (one table); the replay says what that fix saves over the
//! steps shown, and that saving becomes the finding's impact, its severity and its rank.
//! Findings whose cause has no transform keep the rule's own estimate.

use super::cover::Stall;
use super::fix::{DEFAULT_BUCKET_BYTES, Fix};
use super::steps::WhatIf;
use crate::analysis::advisor::{Finding, Thresholds, fold};
use crate::time::Ns;

/// The fix of a finding, by its rule (`None`: its cause has no transform).
pub fn fix_for(f: &Finding) -> Option<Fix> {
    let ranks = || f.evidence.ranks.clone();
    Some(match f.rule {
        "straggler" => Fix::Ranks(ranks()),
        "rank_imbalance" => Fix::Balance,
        "stage_imbalance" => Fix::Stages,
        "slow_step" => Fix::SlowSteps(f.evidence.steps.clone()),
        // Scoped to the stalled rank-steps when the finding names them.
        "dataloader" if f.evidence.ranks.is_empty() || f.evidence.steps.is_empty() => {
            Fix::Stall(Stall::DataLoader)
        }
        "dataloader" => Fix::Loader(ranks(), f.evidence.steps.clone()),
        "gc" => Fix::Stall(Stall::Gc),
        "allocator_churn" => Fix::Stall(Stall::Allocator),
        "graph_capture" => Fix::Stall(Stall::GraphCapture),
        "dynamic_shapes" => Fix::Stall(Stall::OnlineCompile),
        "sync_points" => Fix::Syncs,
        "launch_bound" => Fix::LaunchDelays,
        "small_messages" => Fix::Fuse(DEFAULT_BUCKET_BYTES),
        // Slow links and stalled transfers keep the rule's estimate: on HCCL jobs the
        // transfer a stall is measured on is not the edge the replay times (Ascend level0's
        // 56 ms stall replays as no saving), so `Fix::Links` is only `whatif --rank`'s.
        _ => return None,
    })
}

/// Sets each replayed finding's saving as its impact (and severity, against `step_ns`),
/// then re-ranks by impact and re-applies the cap (together they never claim more than the
/// step time). `k`-th finding ↔ `index[k]`, its fix's column in `w` (`None`: not replayed).
pub fn apply(
    findings: &mut Vec<Finding>,
    index: &[Option<usize>],
    w: &WhatIf,
    step_ns: Ns,
    t: &Thresholds,
) {
    if !w.explains() {
        return;
    }
    for (f, k) in findings.iter_mut().zip(index) {
        if let Some(saves) = k.and_then(|k| w.saves(k)) {
            f.saves_ns = Some(saves);
            f.set_impact(saves, step_ns, t);
        }
    }
    let v = std::mem::take(findings);
    *findings = fold::rank(v, step_ns, t);
}
