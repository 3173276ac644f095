//! Stalled transfers (docs/metrics.md, "Stalled transfer"): instances whose transit — the
//! time after the last loaded rank arrived — is many times what their size needs at the
//! best bus bandwidth the same collective type reached in the same group. Every loaded rank
//! was there, so the time went to something the loaded ranks do not show: a rank that is
//! not loaded arriving late, or a link that stalled.
//!
//! - reference: the largest instance busbw of the (group, type) among instances of at
//!   least [`MIN_BYTES`] (smaller ones are latency-bound and say nothing of bandwidth),
//!   over every step, at most the link's peak;
//! - expected = bytes × bus factor / reference; excess = transit − expected;
//! - stalled when transit ≥ [`STALL_RATIO`] × expected and excess ≥ [`MIN_EXCESS_NS`],
//!   with at least two loaded members (one rank's transit is its whole call, waits
//!   included) and the last arrival not measured outside them (that is a straggler's
//!   wait, [`super::measured`]);
//! - exposed excess: Σ over members of the last `excess` of the member's call not covered
//!   by its compute — the step time the stall cost that rank.

use super::links::Topology;
use super::op::bus_factor;
use super::stats::Matched;
use crate::analysis::intervals::IntervalSet;
use crate::model::{CollOp, Job, RankId, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// Instances below this size are latency-bound: no reference, never stalled.
pub const MIN_BYTES: u64 = 1 << 20;
/// Transit at least this multiple of the expected time is a stall …
pub const STALL_RATIO: f64 = 20.0;
/// … when it exceeds the expected time by at least this much.
pub const MIN_EXCESS_NS: Ns = 1_000_000;

/// One stalled instance.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stall {
    /// Group name.
    pub group: String,
    /// The collective operation.
    pub op: CollOp,
    /// Its step.
    pub step: Option<StepNo>,
    /// Its position in its (group, step).
    pub index: u64,
    /// Its event name (`hcom_allReduce__868_0_1`, `ncclDevKernel_AllReduce_…`).
    pub name: Option<String>,
    /// Message size, bytes.
    pub bytes: u64,
    /// The last loaded rank to arrive.
    pub last_arriver: RankId,
    /// The loaded members.
    pub ranks: Vec<RankId>,
    /// Members of the group that are not loaded: who the transfer may have waited for.
    pub missing_ranks: Vec<RankId>,
    /// Transit: the last arriver's call, every loaded rank present.
    pub transit_ns: Ns,
    /// What the size needs at the reference busbw.
    pub expected_ns: Ns,
    /// The reference: the type's best busbw in the group, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub reference_busbw_gbps: f64,
    /// Σ over members of the excess not hidden behind compute.
    pub exposed_excess_ns: Ns,
}

/// Stalled instances in scope, largest exposed excess first. `compute` is each rank's C
/// set (`job.ranks` order).
pub fn stalls(job: &Job, m: &Matched, compute: &[IntervalSet], topo: &Topology) -> Vec<Stall> {
    let reference = references(m, topo);
    let mut out: Vec<Stall> = m
        .each()
        .filter_map(|(inst, t)| {
            let best = *reference.get(&(inst.group, inst.op))?;
            let bytes = inst.bytes.filter(|&b| b >= MIN_BYTES)?;
            if inst.op.is_p2p() || t.members.len() < 2 || t.timing.last_arriver_measured {
                return None;
            }
            let size = m.calls.groups[inst.group as usize].members.len() as u32;
            let transit = t.timing.transit_ns;
            let expected = stalled(inst.op, size, bytes, transit, best)?;
            let group = &m.calls.groups[inst.group as usize];
            Some(Stall {
                group: group.name.clone(),
                op: inst.op,
                step: inst.step,
                index: inst.index,
                name: super::instance_name(job, m.calls, inst),
                bytes,
                last_arriver: t.timing.last_arriver,
                ranks: t.members.iter().map(|x| x.rank).collect(),
                missing_ranks: missing(job, &group.members),
                transit_ns: transit,
                expected_ns: expected,
                reference_busbw_gbps: best,
                exposed_excess_ns: exposed_excess(job, m, compute, (inst, t), expected),
            })
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.exposed_excess_ns));
    out
}

/// The group's members that are not loaded.
fn missing(job: &Job, group: &[RankId]) -> Vec<RankId> {
    group
        .iter()
        .copied()
        .filter(|r| job.rank_ix(*r).is_none())
        .collect()
}

/// Σ over an instance's members of the last `transit − expected` of each member's call not
/// covered by its compute.
fn exposed_excess(
    job: &Job,
    m: &Matched,
    compute: &[IntervalSet],
    (inst, t): (&super::matching::Instance, &super::TimedInstance),
    expected: Ns,
) -> Ns {
    inst.members
        .iter()
        .zip(&t.members)
        .map(|(mem, x)| {
            let e = m.calls.per_rank[mem.rank.get()][mem.call as usize].event;
            let end = job.rank(mem.rank).events.end(e.index());
            let excess = (x.transit_ns - expected).max(0);
            let tail = IntervalSet::from_intervals(vec![(end - excess, end)]);
            tail.total() - tail.intersect(&compute[mem.rank.get()]).total()
        })
        .sum()
}

/// The expected transit of `bytes` of `op` in a group of `group_size` at `best` GB/s bus
/// bandwidth, when `transit` is a stall against it.
fn stalled(op: CollOp, group_size: u32, bytes: u64, transit: Ns, best: f64) -> Option<Ns> {
    let (num, den) = bus_factor(op, group_size);
    let expected = (bytes as f64 * num as f64 / den as f64 / best) as Ns;
    (transit as f64 >= STALL_RATIO * expected as f64 && transit - expected >= MIN_EXCESS_NS)
        .then_some(expected)
}

/// The best busbw (GB/s = B/ns) per (group, type) over instances of at least
/// [`MIN_BYTES`], every step, at most the group's link peak (a busbw above it comes from a
/// transit that clock alignment shortened, not from the link).
fn references(m: &Matched, topo: &Topology) -> BTreeMap<(u32, CollOp), f64> {
    let mut best: BTreeMap<(u32, CollOp), f64> = BTreeMap::new();
    for (inst, t) in m.instances.iter().zip(m.timed) {
        let big = inst.bytes.is_some_and(|b| b >= MIN_BYTES);
        if let (true, Some(bw)) = (big, t.timing.busbw_gbps) {
            let e = best.entry((inst.group, inst.op)).or_insert(0.0);
            *e = e.max(bw);
        }
    }
    for (&(g, _), bw) in best.iter_mut() {
        if let Some(link) = topo.link(&m.calls.groups[g as usize].members) {
            *bw = bw.min(link.peak_gbps);
        }
    }
    best.retain(|_, bw| *bw > 0.0);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_twenty_times_the_expected_and_a_millisecond_more() {
        // 8-rank all-reduce of 100 MB: bus bytes 100 MB × 14/8 = 175 MB; at 175 GB/s: 1 ms.
        let ar = |transit| stalled(CollOp::AllReduce, 8, 100_000_000, transit, 175.0);
        assert_eq!(ar(20_000_000), Some(1_000_000));
        assert_eq!(ar(19_999_999), None);
        // All-gather of 4 ranks, 4 MB: bus bytes 3 MB; at 100 GB/s 30 µs; 20× is 600 µs,
        // but the excess must reach 1 ms too.
        let ag = |transit| stalled(CollOp::AllGather, 4, 4_000_000, transit, 100.0);
        assert_eq!(ag(900_000), None);
        assert_eq!(ag(1_030_000), Some(30_000));
    }
}
