//! Pipeline stages from point-to-point traffic (see the module above).

use super::STAGE_IMBALANCE;
use crate::analysis::breakdown::Breakdown;
use crate::analysis::comm::Comm;
use crate::analysis::comm::matching::P2p;
use crate::analysis::comm::waits::Unions;
use crate::analysis::layout::{Dim, Layout};
use crate::model::{Job, RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One pipeline stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stage {
    /// Stage index (0 = first to send forward).
    pub stage: u32,
    /// Its ranks.
    pub ranks: Vec<RankId>,
    /// Mean compute (incl. overlapped) per (rank, step).
    pub compute_ns: Ns,
    /// Σ over its ranks of waits in receives (the bubble before data arrives), per step.
    pub recv_wait_ns: Ns,
    /// compute / mean stage compute − 1.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub excess: f64,
    /// What the stage costs each step: for the slowest stage, its compute − the mean stage
    /// compute (the pace it sets that balancing would give back; the others wait in receives
    /// meanwhile); 0 for the others.
    pub pace_cost_ns: Ns,
    /// The slowest stage, with a pace cost ≥ [`STAGE_IMBALANCE`] of its compute: the share
    /// of a pipelined step balancing would give back.
    pub flagged: bool,
    /// Where the stages come from: the send/recv traffic, or the layout's pipeline axis.
    pub from: StagesFrom,
    /// Each loaded rank of the stage against its stage peers (M_W): the stage is M_S.
    pub workers: Vec<Worker>,
    /// The operators that make a flagged stage heavier: its device time per (rank, step)
    /// against the other stages' mean, largest excess first (at most [`HEAVIER_OPS`]).
    pub heavier_ops: Vec<StageOp>,
}

/// How a job's pipeline stages were found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StagesFrom {
    /// The depth of each rank in the forward graph of send/recv.
    #[default]
    SendRecv,
    /// The layout's pipeline coordinate (declared, or inferred): for traffic whose direction
    /// is not recorded.
    Layout,
}

/// One worker of a stage against its peers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Worker {
    /// The rank.
    pub rank: RankId,
    /// Its mean compute (incl. overlapped) per step.
    pub compute_ns: Ns,
    /// compute − the median of its stage's workers (negative: faster than its peers).
    pub excess_ns: Ns,
}

/// An operator's device time in a stage against the other stages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StageOp {
    /// Operator name.
    pub name: String,
    /// Its mean device time per (rank, step) in the stage.
    pub stage_ns: Ns,
    /// Its mean per (rank, step) over the other stages' ranks.
    pub others_ns: Ns,
}

/// How many operators a flagged stage names.
pub const HEAVIER_OPS: usize = 5;

/// Each staged rank's stage.
pub fn stage_map(stages: &[Stage]) -> BTreeMap<RankId, u32> {
    stages
        .iter()
        .flat_map(|s| s.ranks.iter().map(move |&r| (r, s.stage)))
        .collect()
}

/// True when `members` are in more than one stage of `stage_of` ([`stage_map`]): a group
/// whose waits are the pipeline's (its drain, a heavier stage), not a late rank's.
pub fn spans_stages(stage_of: &BTreeMap<RankId, u32>, members: &[RankId]) -> bool {
    let mut of = members.iter().filter_map(|r| stage_of.get(r));
    let first = of.next();
    of.any(|s| Some(s) != first)
}

/// Pipeline stages from directed send/recv instances: the earliest transfer between two
/// ranks is the forward direction; a rank's stage is its depth in that forward graph.
/// `None` without directed point-to-point traffic, or when the graph has a cycle.
pub fn stages(comm: &Comm, rows: &[Breakdown], step: Option<StepNo>) -> Option<Vec<Stage>> {
    let depth = depths(&forward_edges(comm))?;
    Some(of_depths(comm, rows, step, &depth, StagesFrom::SendRecv))
}

/// Pipeline stages from the layout's pipeline coordinate of each loaded rank, for jobs
/// whose send/recv do not say who sent (HCCL's summaries, unpaired calls); `None` without a
/// pipeline axis or with fewer than two stages loaded.
pub fn stages_of_layout(
    layout: &Layout,
    ranks: &[RankId],
    comm: &Comm,
    rows: &[Breakdown],
    step: Option<StepNo>,
) -> Option<Vec<Stage>> {
    layout.axes.iter().find(|a| a.dim == Dim::Pp)?;
    let depth: BTreeMap<RankId, u32> = ranks
        .iter()
        .filter_map(|&r| Some((r, layout.coord(r, Dim::Pp)?)))
        .collect();
    let distinct: BTreeSet<u32> = depth.values().copied().collect();
    (distinct.len() >= 2).then(|| of_depths(comm, rows, step, &depth, StagesFrom::Layout))
}

/// The stages of ranks at these depths.
fn of_depths(
    comm: &Comm,
    rows: &[Breakdown],
    step: Option<StepNo>,
    depth: &BTreeMap<RankId, u32>,
    from: StagesFrom,
) -> Vec<Stage> {
    let mut by_stage: BTreeMap<u32, Vec<RankId>> = BTreeMap::new();
    for (&r, &d) in depth {
        by_stage.entry(d).or_default().push(r);
    }
    let steps: BTreeSet<StepNo> = rows
        .iter()
        .map(|b| b.step)
        .filter(|s| step.is_none_or(|x| x == *s))
        .collect();
    let n_steps = steps.len().max(1) as Ns;
    let recv_wait = recv_waits(comm, depth, step);
    let mut out: Vec<Stage> = by_stage
        .into_iter()
        .map(|(stage, ranks)| {
            let v: Vec<Ns> = rows
                .iter()
                .filter(|b| ranks.contains(&b.rank) && steps.contains(&b.step))
                .map(|b| b.compute_ns + b.overlap_ns)
                .collect();
            let compute = if v.is_empty() {
                0
            } else {
                v.iter().sum::<Ns>() / v.len() as Ns
            };
            Stage {
                stage,
                workers: workers(&ranks, rows, &steps),
                ranks,
                compute_ns: compute,
                recv_wait_ns: recv_wait.get(&stage).copied().unwrap_or(0) / n_steps,
                from,
                ..Stage::default()
            }
        })
        .collect();
    flag_excess(&mut out);
    out
}

/// Each loaded rank's mean compute per step against the median of its stage's ranks.
fn workers(ranks: &[RankId], rows: &[Breakdown], steps: &BTreeSet<StepNo>) -> Vec<Worker> {
    let mut per: BTreeMap<RankId, (Ns, Ns)> = BTreeMap::new();
    for b in rows
        .iter()
        .filter(|b| ranks.contains(&b.rank) && steps.contains(&b.step))
    {
        let e = per.entry(b.rank).or_default();
        *e = (e.0 + b.compute_ns + b.overlap_ns, e.1 + 1);
    }
    let mean: Vec<(RankId, Ns)> = per
        .into_iter()
        .map(|(r, (s, n))| (r, s / n.max(1)))
        .collect();
    let mut sorted: Vec<Ns> = mean.iter().map(|m| m.1).collect();
    sorted.sort_unstable();
    let median = crate::analysis::stats::median_sorted(&sorted);
    mean.into_iter()
        .map(|(rank, compute_ns)| Worker {
            rank,
            compute_ns,
            excess_ns: compute_ns - median,
        })
        .collect()
}

/// Fills the flagged stage's [`Stage::heavier_ops`]: per operator, its device time per
/// (rank, step) on the stage's ranks against the other stages' ranks (ranks whose timeline
/// is loaded; steps of `step`, all when `None`).
pub fn name_heavier_ops(job: &Job, stages: &mut [Stage], step: Option<StepNo>) {
    let Some(k) = stages.iter().position(|s| s.flagged) else {
        return;
    };
    let stage_of: BTreeMap<RankId, usize> = stages
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.ranks.iter().map(move |&r| (r, i)))
        .collect();
    // Per operator: (this stage's Σ, the others' Σ); per side: its (rank, step) count.
    let mut totals: BTreeMap<crate::model::Sym, (Ns, Ns)> = BTreeMap::new();
    let mut cells = [0 as Ns; 2];
    for rank in job.ranks.iter().filter(|r| !r.summary_only) {
        let Some(&i) = stage_of.get(&rank.id) else {
            continue;
        };
        let side = usize::from(i != k);
        let in_scope = |s: u32| {
            rank.steps
                .get(s as usize)
                .is_some_and(|h| step.is_none_or(|n| n == h.number))
        };
        cells[side] += rank
            .steps
            .iter()
            .filter(|h| step.is_none_or(|n| n == h.number))
            .count() as Ns;
        let ev = &rank.events;
        for e in 0..ev.len() {
            if ev.kind[e] == crate::model::Kind::Compute && in_scope(ev.step[e]) {
                let t = totals.entry(ev.name[e]).or_default();
                if side == 0 {
                    t.0 += ev.dur[e];
                } else {
                    t.1 += ev.dur[e];
                }
            }
        }
    }
    let [mine, others] = cells.map(|c| c.max(1));
    let mut ops: Vec<StageOp> = totals
        .into_iter()
        .map(|(name, (a, b))| StageOp {
            name: job.strings.resolve(name).to_string(),
            stage_ns: a / mine,
            others_ns: b / others,
        })
        .filter(|o| o.stage_ns > o.others_ns)
        .collect();
    ops.sort_by_key(|o| (std::cmp::Reverse(o.stage_ns - o.others_ns), o.name.clone()));
    ops.truncate(HEAVIER_OPS);
    stages[k].heavier_ops = ops;
}

/// One directed edge (sender, receiver) per pair of ranks that exchange point-to-point
/// traffic: the direction of their earliest transfer.
fn forward_edges(comm: &Comm) -> Vec<(RankId, RankId)> {
    let mut first: BTreeMap<(RankId, RankId), (Ns, RankId, RankId)> = BTreeMap::new();
    for (inst, t) in comm.instances() {
        let Some(P2p { src, dst }) = inst.p2p else {
            continue;
        };
        let at = t.members.iter().map(|x| x.start_ns).min().unwrap_or(0);
        let key = (src.min(dst), src.max(dst));
        let e = first.entry(key).or_insert((at, src, dst));
        if at < e.0 {
            *e = (at, src, dst);
        }
    }
    first.values().map(|e| (e.1, e.2)).collect()
}

/// Each rank's longest-path depth in the forward graph, by relaxation; `None` without edges
/// or with a cycle (more rounds than nodes).
fn depths(edges: &[(RankId, RankId)]) -> Option<BTreeMap<RankId, u32>> {
    if edges.is_empty() {
        return None;
    }
    let nodes: BTreeSet<RankId> = edges.iter().flat_map(|e| [e.0, e.1]).collect();
    let mut depth: BTreeMap<RankId, u32> = nodes.iter().map(|&n| (n, 0)).collect();
    for round in 0..=nodes.len() {
        let mut changed = false;
        for &(a, b) in edges {
            if depth[&b] < depth[&a] + 1 {
                depth.insert(b, depth[&a] + 1);
                changed = true;
            }
        }
        if !changed {
            break;
        }
        if round == nodes.len() {
            return None;
        }
    }
    Some(depth)
}

/// Σ per stage of its ranks' waits in receives (in `step`, when set), each rank's a union
/// per step.
fn recv_waits(
    comm: &Comm,
    depth: &BTreeMap<RankId, u32>,
    step: Option<StepNo>,
) -> BTreeMap<u32, Ns> {
    let mut waits = Unions::default();
    for (inst, t) in comm.instances() {
        let Some(P2p { dst, .. }) = inst.p2p else {
            continue;
        };
        if step.is_some() && inst.step != step {
            continue;
        }
        let (Some(x), Some(&d)) = (t.members.iter().find(|x| x.rank == dst), depth.get(&dst))
        else {
            continue;
        };
        {
            waits.add(d, dst, inst.step, x.start_ns, x.start_ns + x.wait_ns);
        }
    }
    waits.totals()
}

/// Each stage's compute relative to the mean stage; the slowest stage's pace cost, flagged
/// at [`STAGE_IMBALANCE`] of its compute (with many micro-batches a step takes about the
/// slowest stage's time; balanced, the mean's).
fn flag_excess(out: &mut [Stage]) {
    let mean = out.iter().map(|s| s.compute_ns).sum::<Ns>() / (out.len().max(1) as Ns);
    for s in out.iter_mut() {
        s.excess = if mean > 0 {
            s.compute_ns as f64 / mean as f64 - 1.0
        } else {
            0.0
        };
    }
    // The slowest stage (ties: the first) sets the pace.
    let slowest = out
        .iter()
        .enumerate()
        .max_by_key(|(k, s)| (s.compute_ns, std::cmp::Reverse(*k)))
        .map(|(k, _)| k);
    if let Some(k) = slowest {
        let s = &mut out[k];
        s.pace_cost_ns = (s.compute_ns - mean).max(0);
        s.flagged =
            s.compute_ns > 0 && s.pace_cost_ns as f64 >= STAGE_IMBALANCE * s.compute_ns as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(v: &[(u32, u32)]) -> Vec<(RankId, RankId)> {
        v.iter().map(|&(a, b)| (RankId(a), RankId(b))).collect()
    }

    fn depth_list(v: &[(u32, u32)]) -> Option<Vec<(u32, u32)>> {
        depths(&edges(v)).map(|d| d.into_iter().map(|(r, d)| (r.0, d)).collect())
    }

    #[test]
    fn a_stage_is_the_depth_in_the_forward_graph() {
        assert_eq!(
            depth_list(&[(0, 1), (1, 2)]),
            Some(vec![(0, 0), (1, 1), (2, 2)])
        );
        // A diamond: rank 3 is two hops down either way; the longest path decides.
        assert_eq!(
            depth_list(&[(0, 1), (0, 2), (1, 3), (2, 3), (0, 3)]),
            Some(vec![(0, 0), (1, 1), (2, 1), (3, 2)])
        );
        // A ring (ring attention, a cycle of sends) is no pipeline; nor is no traffic.
        assert_eq!(depth_list(&[(0, 1), (1, 2), (2, 0)]), None);
        assert_eq!(depth_list(&[]), None);
    }

    #[test]
    fn stages_compare_with_the_mean_stage() {
        let stage = |stage, compute| Stage {
            stage,
            compute_ns: compute,
            ..Default::default()
        };
        // One stage computes 1.3× the other (130 vs 100): the slow stage sets the pace,
        // 130 − mean 115 = 15 per step, 11.5% of its compute (≥ 10%): flagged; the fast stage
        // costs nothing itself.
        let mut s = vec![stage(0, 100), stage(1, 130)];
        flag_excess(&mut s);
        assert_eq!((s[1].pace_cost_ns, s[1].flagged), (15, true));
        assert_eq!((s[0].pace_cost_ns, s[0].flagged), (0, false));
        assert_eq!(s[1].excess, 130.0 / 115.0 - 1.0);
        // 1.2×: 120 − 110 = 10, 8.3% of 120: not flagged.
        let mut s = vec![stage(0, 100), stage(1, 120)];
        flag_excess(&mut s);
        assert!(!s[1].flagged);
        // Nothing computed: no excess, no cost.
        let mut s = vec![stage(0, 0), stage(1, 0)];
        flag_excess(&mut s);
        assert_eq!(
            (s[0].excess, s[0].pace_cost_ns, s[0].flagged),
            (0.0, 0, false)
        );
    }
}
