//! Cluster analysis (Hermes §4.1.1: find the problematic steps and devices), over every rank
//! and step of the job (DESIGN §4 "slow step", "slow rank"):
//!
//! - **Slow steps**: cluster step time = max rank span; a step is slow when it exceeds
//!   median + max(3·1.4826·MAD, 5% of median) over the steps seen. Its **culprit** is the rank
//!   whose own work (span − exposed comm) grew the most over that rank's median step, with
//!   the breakdown part that grew and the collectives of the step it arrived last at.
//! - **Stragglers**, per communication domain: how often each rank arrived last, the wait it
//!   imposed on the others (Σ of their waits at those instances), its share of all the
//!   domain's waiting, and which breakdown parts exceed the domain median. A part is
//!   imbalanced when (max − min) over the members exceeds [`IMBALANCE`] of the mean span
//!   (msprof-analyze's slow-rank rule).
//! - **Pipeline stages** (send/recv between ranks): stage compute and the receive wait of
//!   each stage (bubble); a stage computing ≥ [`STAGE_IMBALANCE`] above the stage mean is
//!   flagged (seed 002 §5.2.4).

use super::breakdown::Breakdown;
use super::comm::Comm;
use super::step_times::{StepTime, median_sorted};
use crate::time::{Ns, human};
use std::collections::{BTreeMap, BTreeSet};

/// MAD multiplier: 1.4826 (normal consistency) × 3, in ten-thousandths.
pub const MAD_FACTOR_E4: i64 = 44_478;
/// Minimum excess of a slow step over the median: 5%.
pub const MIN_EXCESS_PCT: i64 = 5;
/// Imbalance threshold: (max − min) / mean span.
pub const IMBALANCE: f64 = 0.05;
/// A straggler is persistent: it imposes the most wait in at least this share of the
/// domain's steps (a rank that stalls once is a slow step's culprit, not a straggler).
pub const PERSISTENCE: f64 = 2.0 / 3.0;
/// With fewer steps than this, persistence cannot be judged: the share of all waiting decides.
pub const MIN_STEPS_FOR_PERSISTENCE: u64 = 3;
/// Share of a domain's waiting that flags a rank when persistence cannot be judged.
pub const STRAGGLER_SHARE: f64 = 0.5;
/// A pipeline stage computing this much above the stage mean is flagged.
pub const STAGE_IMBALANCE: f64 = 0.2;

/// A breakdown part, as named in reports.
pub const PARTS: [&str; 4] = ["compute", "memory", "host_bound", "free"];

fn part(b: &Breakdown, k: usize) -> Ns {
    match k {
        0 => b.compute_ns + b.overlap_ns,
        1 => b.memory_ns,
        2 => b.host_bound_ns,
        _ => b.free_ns,
    }
}

/// A step flagged slow.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SlowStep {
    /// Step number.
    pub step: u32,
    /// Cluster step time (max rank span).
    pub time_ns: Ns,
    /// Median cluster step time over the steps.
    pub median_ns: Ns,
    /// The threshold it exceeded.
    pub threshold_ns: Ns,
    /// The rank whose own work grew the most.
    pub culprit_rank: Option<u32>,
    /// Its own-work growth over its median step.
    pub growth_ns: Ns,
    /// The breakdown part that grew the most in it.
    pub part: Option<&'static str>,
    /// That part's growth.
    pub part_growth_ns: Ns,
    /// Collectives of the step the culprit arrived last at, and the step's instances.
    pub last_arrivals: (u64, u64),
    /// One line for people.
    pub reason: String,
}

/// Slow-step threshold over the cluster step times: `None` with no steps.
pub fn threshold(times: &[Ns]) -> Option<(Ns, Ns)> {
    if times.is_empty() {
        return None;
    }
    let mut t = times.to_vec();
    t.sort_unstable();
    let median = median_sorted(&t);
    let mut dev: Vec<Ns> = t.iter().map(|x| (x - median).abs()).collect();
    dev.sort_unstable();
    let mad = median_sorted(&dev);
    let excess = (mad * MAD_FACTOR_E4 / 10_000).max(median * MIN_EXCESS_PCT / 100);
    Some((median, median + excess))
}

/// Slow steps and their culprits.
pub fn slow_steps(step_times: &[StepTime], rows: &[Breakdown], comm: &Comm) -> Vec<SlowStep> {
    let times: Vec<Ns> = step_times.iter().map(|s| s.max_ns).collect();
    let Some((median, limit)) = threshold(&times) else {
        return Vec::new();
    };
    let mut by_rank: BTreeMap<u32, Vec<&Breakdown>> = BTreeMap::new();
    for r in rows {
        by_rank.entry(r.rank).or_default().push(r);
    }
    step_times
        .iter()
        .filter(|s| s.max_ns > limit)
        .map(|s| {
            let culprit = culprit(s.step, &by_rank);
            let (rank, growth, part_k, part_growth) = match culprit {
                Some((r, g, k, pg)) => (Some(r), g, Some(k), pg),
                None => (None, 0, None, 0),
            };
            let last = rank.map_or((0, 0), |r| last_arrivals_in_step(comm, r, s.step));
            let reason = match rank {
                Some(r) => format!(
                    "rank {r}'s own work grew {} over its median step ({} {}); last to arrive at {} of {} collectives",
                    human(growth),
                    PARTS[part_k.unwrap_or(0)],
                    signed(part_growth),
                    last.0,
                    last.1
                ),
                None => "no rank's own work grew: every rank waited alike".to_string(),
            };
            SlowStep {
                step: s.step,
                time_ns: s.max_ns,
                median_ns: median,
                threshold_ns: limit,
                culprit_rank: rank,
                growth_ns: growth,
                part: part_k.map(|k| PARTS[k]),
                part_growth_ns: part_growth,
                last_arrivals: last,
                reason,
            }
        })
        .collect()
}

/// (rank, own-work growth, part index, part growth) of the rank whose own work in `step`
/// grew the most over its median of its other steps (ties: lowest rank).
fn culprit(step: u32, by_rank: &BTreeMap<u32, Vec<&Breakdown>>) -> Option<(u32, Ns, usize, Ns)> {
    let mut best: Option<(u32, Ns, usize, Ns)> = None;
    for (&rank, rows) in by_rank {
        let Some(this) = rows.iter().find(|b| b.step == step) else {
            continue;
        };
        let others: Vec<&&Breakdown> = rows.iter().filter(|b| b.step != step).collect();
        if others.is_empty() {
            continue;
        }
        let med = |f: &dyn Fn(&Breakdown) -> Ns| {
            let mut v: Vec<Ns> = others.iter().map(|b| f(b)).collect();
            v.sort_unstable();
            median_sorted(&v)
        };
        let growth = this.own_work_ns() - med(&|b| b.own_work_ns());
        let (k, pg) = (0..PARTS.len())
            .map(|k| (k, part(this, k) - med(&|b| part(b, k))))
            .max_by_key(|&(k, g)| (g, std::cmp::Reverse(k)))
            .unwrap_or((0, 0));
        if growth > 0 && best.is_none_or(|b| growth > b.1) {
            best = Some((rank, growth, k, pg));
        }
    }
    best
}

/// (instances of `step` the rank arrived last at, instances of `step` it took part in).
fn last_arrivals_in_step(comm: &Comm, rank: u32, step: u32) -> (u64, u64) {
    let mut n = (0, 0);
    for (inst, (t, m)) in comm.matching.instances.iter().zip(&comm.timed) {
        if inst.step != Some(step) || inst.op.is_p2p() || !m.iter().any(|x| x.rank == rank) {
            continue;
        }
        n.1 += 1;
        if t.skew_ns > 0 && t.last_arriver == rank {
            n.0 += 1;
        }
    }
    n
}

fn signed(ns: Ns) -> String {
    if ns >= 0 {
        format!("+{}", human(ns))
    } else {
        format!("-{}", human(-ns))
    }
}

/// One step of a straggler.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StragglerStep {
    /// Step number.
    pub step: Option<u32>,
    /// Instances it arrived last at.
    pub last_arrivals: u64,
    /// Wait it imposed.
    pub imposed_wait_ns: Ns,
}

/// A breakdown part of a rank against its domain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartExcess {
    /// Part name.
    pub part: &'static str,
    /// The rank's Σ over its steps.
    pub rank_ns: Ns,
    /// The domain members' median of that Σ.
    pub median_ns: Ns,
}

/// A rank the others in a domain waited for.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Straggler {
    /// Group name.
    pub group: String,
    /// Rank id.
    pub rank: u32,
    /// Instances it arrived last at (with a nonzero skew).
    pub last_arrivals: u64,
    /// Instances of the domain it took part in.
    pub instances: u64,
    /// Σ of the others' waits at the instances it arrived last at.
    pub imposed_wait_ns: Ns,
    /// imposed_wait / all the waiting in the domain.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share: f64,
    /// Steps in which it imposed the most wait, of `steps_with_wait`.
    pub top_steps: u64,
    /// Steps of the domain in which anyone waited.
    pub steps_with_wait: u64,
    /// Persistent: `top_steps` ≥ [`PERSISTENCE`] × `steps_with_wait` (with at least
    /// [`MIN_STEPS_FOR_PERSISTENCE`] steps; else share ≥ [`STRAGGLER_SHARE`]).
    pub flagged: bool,
    /// Parts above the domain median by more than [`IMBALANCE`] of the mean span.
    pub excess: Vec<PartExcess>,
    /// Per step.
    pub steps: Vec<StragglerStep>,
    /// One line for people.
    pub evidence: String,
}

/// Spread of one part over a domain's members.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Imbalance {
    /// Group name.
    pub group: String,
    /// Part name.
    pub part: &'static str,
    /// Rank with the most.
    pub max_rank: u32,
    /// Its Σ.
    pub max_ns: Ns,
    /// Rank with the least.
    pub min_rank: u32,
    /// Its Σ.
    pub min_ns: Ns,
    /// (max − min) / mean Σ span.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub spread: f64,
    /// spread > [`IMBALANCE`].
    pub flagged: bool,
}

/// One rank's arrivals in a domain.
#[derive(Default)]
struct RankWaits {
    /// Instances it arrived last at.
    last: u64,
    /// Instances it took part in.
    instances: u64,
    /// Σ of the others' waits at those.
    imposed: Ns,
    /// Per step: (last arrivals, imposed wait).
    steps: BTreeMap<Option<u32>, (u64, Ns)>,
}

/// Stragglers and imbalance of every domain with at least two ranks present.
pub fn stragglers(
    comm: &Comm,
    rows: &[Breakdown],
    step: Option<u32>,
) -> (Vec<Straggler>, Vec<Imbalance>) {
    let mut out = Vec::new();
    let mut imbalance = Vec::new();
    for (g, group) in comm.calls.groups.iter().enumerate() {
        let mut acc: BTreeMap<u32, RankWaits> = BTreeMap::new();
        let mut total_wait: Ns = 0;
        for (inst, (t, m)) in comm.matching.instances.iter().zip(&comm.timed) {
            if inst.group != g as u32 || inst.op.is_p2p() || (step.is_some() && inst.step != step) {
                continue;
            }
            total_wait += t.wait_ns;
            for x in m {
                acc.entry(x.rank).or_default().instances += 1;
            }
            if t.skew_ns > 0 {
                let a = acc.entry(t.last_arriver).or_default();
                a.last += 1;
                a.imposed += t.wait_ns;
                let s = a.steps.entry(inst.step).or_default();
                s.0 += 1;
                s.1 += t.wait_ns;
            }
        }
        if acc.len() < 2 {
            continue;
        }
        // The top imposer of each step (ties: lowest rank).
        let mut top: BTreeMap<Option<u32>, (Ns, u32)> = BTreeMap::new();
        for (&rank, a) in &acc {
            for (&st, &(_, w)) in &a.steps {
                let e = top.entry(st).or_insert((w, rank));
                if w > e.0 {
                    *e = (w, rank);
                }
            }
        }
        let steps_with_wait = top.values().filter(|t| t.0 > 0).count() as u64;
        // Σ parts over the steps in scope per member.
        let members: BTreeSet<u32> = acc.keys().copied().collect();
        let mut sums: BTreeMap<u32, ([Ns; 4], Ns)> = BTreeMap::new();
        for b in rows.iter().filter(|b| members.contains(&b.rank)) {
            if step.is_some_and(|s| s != b.step) {
                continue;
            }
            let e = sums.entry(b.rank).or_default();
            for (k, v) in e.0.iter_mut().enumerate() {
                *v += part(b, k);
            }
            e.1 += b.span_ns;
        }
        let mean_span = if sums.is_empty() {
            0.0
        } else {
            sums.values().map(|s| s.1 as f64).sum::<f64>() / sums.len() as f64
        };
        let mut medians = [0; 4];
        for (k, name) in PARTS.iter().enumerate() {
            let mut v: Vec<(Ns, u32)> = sums.iter().map(|(&r, s)| (s.0[k], r)).collect();
            if v.len() < 2 {
                continue;
            }
            v.sort_unstable();
            let vals: Vec<Ns> = v.iter().map(|x| x.0).collect();
            medians[k] = median_sorted(&vals);
            let (min, max) = (
                v[0],
                *v.iter()
                    .max_by_key(|x| (x.0, std::cmp::Reverse(x.1)))
                    .unwrap(),
            );
            let spread = if mean_span > 0.0 {
                (max.0 - min.0) as f64 / mean_span
            } else {
                0.0
            };
            let flagged = spread > IMBALANCE;
            imbalance.push(Imbalance {
                group: group.name.clone(),
                part: name,
                max_rank: max.1,
                max_ns: max.0,
                min_rank: min.1,
                min_ns: min.0,
                spread,
                flagged,
            });
        }
        let mut ranked: Vec<Straggler> = acc
            .into_iter()
            .filter(|(_, a)| a.last > 0)
            .map(|(rank, a)| {
                let RankWaits {
                    last,
                    instances: n,
                    imposed,
                    steps,
                } = a;
                let share = if total_wait > 0 { imposed as f64 / total_wait as f64 } else { 0.0 };
                let excess: Vec<PartExcess> = sums
                    .get(&rank)
                    .map(|s| {
                        (0..PARTS.len())
                            .filter(|&k| (s.0[k] - medians[k]) as f64 > IMBALANCE * mean_span)
                            .map(|k| PartExcess {
                                part: PARTS[k],
                                rank_ns: s.0[k],
                                median_ns: medians[k],
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let parts = excess
                    .iter()
                    .map(|e| format!("{} {} vs median {}", e.part, human(e.rank_ns), human(e.median_ns)))
                    .collect::<Vec<_>>()
                    .join(", ");
                let top_steps =
                    top.values().filter(|t| t.1 == rank && t.0 > 0).count() as u64;
                let flagged = if steps_with_wait >= MIN_STEPS_FOR_PERSISTENCE {
                    top_steps as f64 >= PERSISTENCE * steps_with_wait as f64
                } else {
                    share >= STRAGGLER_SHARE
                };
                let evidence = format!(
                    "last to arrive at {last} of {n} collectives, the most waited-for rank in {top_steps} of {steps_with_wait} steps; the others waited {} for it ({:.0}% of the domain's waiting){}",
                    human(imposed),
                    share * 100.0,
                    if parts.is_empty() { String::new() } else { format!("; {parts}") }
                );
                Straggler {
                    group: group.name.clone(),
                    rank,
                    last_arrivals: last,
                    instances: n,
                    imposed_wait_ns: imposed,
                    share,
                    top_steps,
                    steps_with_wait,
                    flagged,
                    excess,
                    steps: steps
                        .into_iter()
                        .map(|(step, (l, w))| StragglerStep {
                            step,
                            last_arrivals: l,
                            imposed_wait_ns: w,
                        })
                        .collect(),
                    evidence,
                }
            })
            .collect();
        ranked.sort_by_key(|s| (std::cmp::Reverse(s.imposed_wait_ns), s.rank));
        out.extend(ranked);
    }
    (out, imbalance)
}

/// One pipeline stage.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Stage {
    /// Stage index (0 = first to send forward).
    pub stage: u32,
    /// Its ranks.
    pub ranks: Vec<u32>,
    /// Mean compute (incl. overlapped) per (rank, step).
    pub compute_ns: Ns,
    /// Σ over its ranks of waits in receives (the bubble before data arrives), per step.
    pub recv_wait_ns: Ns,
    /// compute / mean stage compute − 1.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub excess: f64,
    /// excess ≥ [`STAGE_IMBALANCE`].
    pub flagged: bool,
}

/// Pipeline stages from directed send/recv instances: the earliest transfer between two
/// ranks is the forward direction; a rank's stage is its depth in that forward graph.
/// `None` without directed point-to-point traffic, or when the graph has a cycle.
pub fn stages(comm: &Comm, rows: &[Breakdown], step: Option<u32>) -> Option<Vec<Stage>> {
    let mut first: BTreeMap<(u32, u32), (Ns, u32, u32)> = BTreeMap::new();
    for (inst, (_, m)) in comm.matching.instances.iter().zip(&comm.timed) {
        let Some((src, dst)) = inst.p2p else { continue };
        let at = m.iter().map(|x| x.start_ns).min().unwrap_or(0);
        let key = (src.min(dst), src.max(dst));
        let e = first.entry(key).or_insert((at, src, dst));
        if at < e.0 {
            *e = (at, src, dst);
        }
    }
    if first.is_empty() {
        return None;
    }
    let edges: Vec<(u32, u32)> = first.values().map(|e| (e.1, e.2)).collect();
    let nodes: BTreeSet<u32> = edges.iter().flat_map(|e| [e.0, e.1]).collect();
    // Longest-path depth by relaxation; more rounds than nodes means a cycle.
    let mut depth: BTreeMap<u32, u32> = nodes.iter().map(|&n| (n, 0)).collect();
    for round in 0..=nodes.len() {
        let mut changed = false;
        for &(a, b) in &edges {
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
    let mut by_stage: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (&r, &d) in &depth {
        by_stage.entry(d).or_default().push(r);
    }
    let steps: BTreeSet<u32> = rows
        .iter()
        .map(|b| b.step)
        .filter(|s| step.is_none_or(|x| x == *s))
        .collect();
    let n_steps = steps.len().max(1) as Ns;
    let mut recv_wait: BTreeMap<u32, Ns> = BTreeMap::new();
    for (inst, (_, m)) in comm.matching.instances.iter().zip(&comm.timed) {
        let Some((_, dst)) = inst.p2p else { continue };
        if step.is_some() && inst.step != step {
            continue;
        }
        if let Some(x) = m.iter().find(|x| x.rank == dst) {
            *recv_wait.entry(depth[&dst]).or_default() += x.wait_ns;
        }
    }
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
                ranks,
                compute_ns: compute,
                recv_wait_ns: recv_wait.get(&stage).copied().unwrap_or(0) / n_steps,
                excess: 0.0,
                flagged: false,
            }
        })
        .collect();
    let mean = out.iter().map(|s| s.compute_ns as f64).sum::<f64>() / out.len() as f64;
    for s in &mut out {
        s.excess = if mean > 0.0 {
            s.compute_ns as f64 / mean - 1.0
        } else {
            0.0
        };
        s.flagged = s.excess >= STAGE_IMBALANCE;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_step_threshold() {
        // Median 100; deviations 0,0,2,2,50 → MAD 2; 3·1.4826·2 = 8.8956 → 8 ns (floor), but
        // 5% of the median (5) is smaller: threshold 108.
        assert_eq!(threshold(&[100, 98, 102, 150, 100]), Some((100, 108)));
        // MAD 0: the 5% floor applies.
        assert_eq!(threshold(&[1000, 1000, 1000, 1300]), Some((1000, 1050)));
        assert_eq!(threshold(&[]), None);
        // Even count: the median is the floor of the mean of the middle two.
        assert_eq!(threshold(&[10, 11]).unwrap().0, 10);
    }
}
