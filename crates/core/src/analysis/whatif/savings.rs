//! Impacts become savings (docs/metrics.md, "Replay"): each finding's rule names the fix
//! that takes its cause away (one table); the replay says what that fix saves over the
//! steps shown, and that saving — never more than the time the finding's own evidence
//! covers — becomes the finding's impact, its severity and its rank. Symptoms fold under
//! their causes by the replay's counterfactual ([`attribution`](super::attribution)).
//! Findings whose cause has no transform keep the rule's own estimate ("not replayed").

use super::attribution::{self, Explained};
use super::cover::Stall;
use super::fix::{DEFAULT_BUCKET_BYTES, Fix};
use super::steps::WhatIf;
use crate::analysis::advisor::rules::communication::Claim as Comm;
use crate::analysis::advisor::{Claim, Finding, Folded, Thresholds, fold};
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
        // Operators compiled at run time: compiled once (static shapes, a cached kernel).
        "dynamic_shapes" | "op_dispatch" => Fix::Stall(Stall::OnlineCompile),
        "sync_points" => Fix::Syncs,
        "pageable_memcpy" => Fix::Pinned,
        "clock_drop" if !f.evidence.clocks.is_empty() => Fix::Clocks(f.evidence.clocks.clone()),
        // Launches and framework operators free (a captured graph): the cause of kernels
        // shorter than their launch and of host operators on the critical path too.
        "launch_bound" | "tiny_kernels" | "critical_path_host" => Fix::LaunchDelays,
        "small_messages" => Fix::Buckets(DEFAULT_BUCKET_BYTES),
        "poor_overlap" => Fix::Overlap,
        "free_time" => Fix::HostGaps,
        "host_gap" if !f.evidence.pauses.is_empty() => Fix::Pauses(f.evidence.pauses.clone()),
        // The kernel rules: their operators' kernels at what the rule's model gives.
        _ if !f.evidence.speedups.is_empty() => Fix::Kernels(f.evidence.speedups.clone()),
        // Waiting for a named late rank: that rank's own work at its peers'; waiting with
        // no rank named: every rank's at the mean. A wait for a member that is not loaded
        // has no edge the replay could change.
        "comm_wait_dominated" => match &f.claim {
            Claim::Communication(Comm::WaitDominated {
                unloaded: Some(_), ..
            }) => Fix::Unloaded,
            _ if f.evidence.ranks.is_empty() => Fix::Balance,
            _ => Fix::Ranks(ranks()),
        },
        // A slow link: its ranks' transfers at their type's median speed.
        "slow_link" => Fix::Links(ranks()),
        "stalled_transfer" => Fix::Stalls,
        "low_bandwidth" if !f.evidence.bandwidth.is_empty() => {
            Fix::Bandwidth(f.evidence.bandwidth.clone())
        }
        _ => return None,
    })
}

/// Sets each replayed finding's saving as its impact (at most the time its evidence covers;
/// severity against `step_ns`), folds each symptom under the finding of its cause (the
/// replay's counterfactual, then [`fold`]'s rules for the pairs the replay did not judge),
/// then ranks them ([`fold::rank`]). `k`-th finding ↔ `index[k]`, its fix's column in `w`
/// (`None`: not replayed). Without a step the graph explains, only [`fold`]'s rules.
pub fn apply(
    findings: &mut Vec<Finding>,
    index: &[Option<usize>],
    w: &WhatIf,
    step_ns: Ns,
    t: &Thresholds,
    together: Option<&attribution::Together>,
) {
    let v = std::mem::take(findings);
    if !w.explains() {
        *findings = fold::fold(v, step_ns, t);
        return;
    }
    let mut v = v;
    for (f, k) in v.iter_mut().zip(index) {
        if let Some(saves) = k.and_then(|k| w.saves(k)) {
            f.saves_ns = Some(saves);
            f.set_impact(saves.min(f.covers_ns.unwrap_or(saves)), step_ns, t);
        }
    }
    let min_ns = (step_ns as f64 * t.lead_min_pct) as Ns;
    let explained = attribution::attribute(&v, index, w, t.explained_share, min_ns, together);
    *findings = fold::fold(fold_explained(v, &explained), step_ns, t);
}

/// Each explained finding leaves the list and becomes its cause's evidence.
fn fold_explained(v: Vec<Finding>, explained: &[Option<Explained>]) -> Vec<Finding> {
    let mut slots: Vec<Option<Finding>> = v.into_iter().map(Some).collect();
    for (b, e) in explained.iter().enumerate() {
        let Some(e) = e else { continue };
        let Some(symptom) = slots[b].take() else {
            continue;
        };
        if let Some(cause) = slots[e.cause].as_mut() {
            cause.folded.push(Folded {
                rule: symptom.rule,
                impact_ns: symptom.impact_ns,
                remains_ns: Some(e.remains_ns),
                claim: symptom.claim,
            });
            cause.folded.extend(symptom.folded);
        }
    }
    slots.into_iter().flatten().collect()
}
