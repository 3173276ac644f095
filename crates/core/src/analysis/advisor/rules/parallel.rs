//! Parallelism: persistent stragglers, slow steps, pipeline-stage and rank imbalance.

use super::{Bound, Rule, distinct};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Kind, Quantity, Thresholds};
use crate::analysis::cluster::{IMBALANCE, Imbalance, SlowStep, Straggler};
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// The parallelism rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "straggler",
        category: Category::Parallel,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: straggler,
    },
    Rule {
        id: "slow_step",
        category: Category::Parallel,
        kind: Kind::Problem,
        bound: Bound::Total,
        detect: slow_step,
    },
    Rule {
        id: "stage_imbalance",
        category: Category::Parallel,
        kind: Kind::Problem,
        bound: Bound::Total,
        detect: stage_imbalance,
    },
    Rule {
        id: "rank_imbalance",
        category: Category::Parallel,
        kind: Kind::Problem,
        bound: Bound::None,
        detect: rank_imbalance,
    },
];

/// What a parallelism finding claims.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// A rank the others wait for, step after step (the first flagged one).
    Straggler {
        /// The rank.
        rank: RankId,
        /// The wait it imposed: Σ over the others and the steps.
        imposed_wait_ns: Ns,
        /// The others of its group the wait is summed over.
        others: u64,
        /// Its share of the group's waiting.
        share: f64,
        /// The group.
        group: String,
        /// Its own trace is loaded (else its peers' waits found it).
        loaded: bool,
        /// The collective it was waited for most in.
        collective: Option<String>,
    },
    /// A worker of a pipeline stage slower than its stage peers (M_W), where no collective
    /// shows a late arrival (its partners wait in receives instead).
    SlowWorker {
        /// The rank.
        rank: RankId,
        /// Its stage.
        stage: u32,
        /// Its mean compute per step.
        compute_ns: Ns,
        /// Over its stage's median worker, per step.
        excess_ns: Ns,
    },
    /// Slow steps (the first one).
    SlowStep(SlowStep),
    /// The slowest pipeline stage sets the pace.
    StageImbalance {
        /// The stage.
        stage: u32,
        /// Its compute over the stage mean, minus 1.
        excess: f64,
        /// Its ranks.
        ranks: Vec<RankId>,
        /// Its compute − the mean stage compute, per step.
        pace_cost_ns: Ns,
        /// The other stages' waits in receives per step, Σ over their ranks (the stage
        /// table's figure).
        others_wait_ns: Ns,
        /// The ranks of the other stages.
        others_ranks: usize,
    },
    /// A part spread unequally over a group.
    RankImbalance(Imbalance),
}

fn claim(c: Claim) -> crate::analysis::advisor::Claim {
    crate::analysis::advisor::Claim::Parallel(c)
}

/// Persistent stragglers: the rank the others wait for, step after step.
pub fn straggler(f: &Facts, _: &Thresholds) -> Option<Draft> {
    // Wait a rank imposed in a slow step it is the culprit of is that step's cost (the slow
    // step names it, with what grew): a straggler is what remains, step after step.
    let own = |x: &Straggler, st: Option<StepNo>| {
        !f.slow_steps.iter().any(|s| {
            Some(s.step) == st
                && s.culprit_rank == Some(x.rank)
                && f.steps.iter().any(|t| t.step == s.step)
        })
    };
    let s: Vec<_> = f.stragglers.iter().filter(|s| s.flagged).collect();
    if s.is_empty() {
        return slow_worker(f);
    }
    // The average wait per rank: what the step loses to the straggler, on the per-rank
    // basis of every impact (over the ranks in scope, the straggler's own zero included).
    // At least over the others of its domain: under `--rank` the scope is one rank, yet the
    // wait was spread over all the others. A rank that straggles in several groups at once
    // costs the union of their waits, once per step.
    let mut per_step: BTreeMap<(RankId, Option<StepNo>), (Ns, u64)> = BTreeMap::new();
    for x in &s {
        for st in x.steps.iter().filter(|st| own(x, st.step)) {
            let e = per_step.entry((x.rank, st.step)).or_default();
            *e = (st.any_group_wait_ns, e.1.max(x.members));
        }
    }
    let mut per_rank: BTreeMap<RankId, (Ns, u64)> = BTreeMap::new();
    for (&(rank, _), &(w, members)) in &per_step {
        let e = per_rank.entry(rank).or_default();
        *e = (e.0 + w, e.1.max(members));
    }
    let impact: Ns = per_rank
        .values()
        .map(|&(w, members)| w / members.saturating_sub(1).max(u64::from(f.ranks)).max(1) as Ns)
        .sum();
    let first = *s.first()?;
    if impact == 0
        && f.slow_steps
            .iter()
            .any(|x| x.culprit_rank == Some(first.rank))
    {
        return None;
    }
    let c = Claim::Straggler {
        rank: first.rank,
        imposed_wait_ns: first.imposed_wait_ns,
        others: first.members.saturating_sub(1),
        share: first.share,
        group: first.group.clone(),
        loaded: first.loaded,
        collective: first.worst_collective.clone(),
    };
    Some(
        Draft::new(impact, claim(c))
            .focus(Focus::LateArrival(first.rank))
            .ranks(distinct(s.iter().map(|x| x.rank)))
            .steps(
                first
                    .steps
                    .iter()
                    .filter(|x| own(first, x.step))
                    .filter_map(|x| x.step),
            )
            .ops(
                first
                    .worst_collective
                    .iter()
                    .map(String::as_str)
                    .chain(first.excess.iter().map(|e| e.part.as_str())),
            )
            .number("last_arrivals", Quantity::Count(first.last_arrivals))
            .number("instances", Quantity::Count(first.instances))
            .number("imposed_wait_ns", Quantity::Ns(first.imposed_wait_ns))
            .number("top_steps", Quantity::Count(first.top_steps)),
    )
}

/// A slow worker inside a pipeline (OSDI'25's M_W): the stages' worker most over its stage's
/// median, when that is at least [`IMBALANCE`] of the median and its stage is not the one
/// flagged for the imbalance (a heavier stage is M_S, the stage finding's). Impact: its
/// excess per step, over the steps.
fn slow_worker(f: &Facts) -> Option<Draft> {
    let stages = f.stages?;
    let (stage, w) = stages
        .iter()
        .filter(|s| !s.flagged && s.workers.len() >= 2)
        .flat_map(|s| s.workers.iter().map(move |w| (s, w)))
        .filter(|(_, w)| {
            let median = w.compute_ns - w.excess_ns;
            w.excess_ns > 0 && w.excess_ns as f64 >= IMBALANCE * median as f64
        })
        .max_by_key(|(_, w)| (w.excess_ns, std::cmp::Reverse(w.rank)))?;
    let steps = f.steps.len().max(1) as Ns;
    let c = Claim::SlowWorker {
        rank: w.rank,
        stage: stage.stage,
        compute_ns: w.compute_ns,
        excess_ns: w.excess_ns,
    };
    Some(
        Draft::new(w.excess_ns * steps, claim(c))
            .focus(Focus::LateArrival(w.rank))
            .ranks([w.rank])
            .steps(f.steps.iter().map(|s| s.step))
            .ops(["compute"])
            .number("compute_ns", Quantity::Ns(w.compute_ns))
            .number("excess_ns", Quantity::Ns(w.excess_ns)),
    )
}

/// Slow steps and their culprits: those among the steps in scope (slowness is judged over
/// the whole job, but under `--step N` another slow step costs the shown step nothing).
pub fn slow_step(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let slow: Vec<&SlowStep> = f
        .slow_steps
        .iter()
        .filter(|s| f.steps.iter().any(|t| t.step == s.step))
        .collect();
    let first = *slow.first()?;
    let mut ranks: Vec<RankId> = slow.iter().filter_map(|s| s.culprit_rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let impact = slow.iter().map(|s| s.time_ns - s.median_ns).sum();
    Some(
        Draft::new(impact, claim(Claim::SlowStep(first.clone())))
            .focus(Focus::SlowRank)
            .ranks(ranks)
            .steps(slow.iter().map(|s| s.step))
            .ops(first.part.iter().map(|p| p.as_str()))
            .number("time_ns", Quantity::Ns(first.time_ns))
            .number("median_ns", Quantity::Ns(first.median_ns))
            .number("growth_ns", Quantity::Ns(first.growth_ns)),
    )
}

/// Pipeline stages with unequal compute.
pub fn stage_imbalance(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let stages = f.stages?;
    let bad: Vec<_> = stages.iter().filter(|s| s.flagged).collect();
    if bad.is_empty() {
        return None;
    }
    let mean = stages.iter().map(|s| s.compute_ns).sum::<Ns>() / stages.len() as Ns;
    let steps = f.steps.len().max(1) as Ns;
    let worst = bad.iter().max_by_key(|s| s.pace_cost_ns)?;
    let others = stages.iter().filter(|s| s.stage != worst.stage);
    let others_wait: Ns = others.clone().map(|s| s.recv_wait_ns).sum();
    let c = Claim::StageImbalance {
        stage: worst.stage,
        excess: worst.excess,
        ranks: worst.ranks.clone(),
        pace_cost_ns: worst.pace_cost_ns,
        others_wait_ns: others_wait,
        others_ranks: others.map(|s| s.ranks.len()).sum(),
    };
    // The pace it sets costs every step.
    Some(
        Draft::new(worst.pace_cost_ns * steps, claim(c))
            .focus(Focus::Rows)
            .ranks(worst.ranks.iter().copied())
            .steps(f.steps.iter().map(|s| s.step))
            .ops(worst.heavier_ops.iter().map(|o| o.name.as_str()))
            .number("compute_ns", Quantity::Ns(worst.compute_ns))
            .number("mean_ns", Quantity::Ns(mean))
            .number("recv_wait_ns", Quantity::Ns(worst.recv_wait_ns))
            .number("others_recv_wait_ns", Quantity::Ns(others_wait))
            .number("pace_cost_ns", Quantity::Ns(worst.pace_cost_ns)),
    )
}

/// A breakdown part unequal across a group (the msprof-analyze slow-rank rule), when no
/// persistent straggler already explains it.
pub fn rank_imbalance(f: &Facts, _: &Thresholds) -> Option<Draft> {
    if f.stragglers.iter().any(|s| s.flagged) {
        return None;
    }
    let worst = f
        .imbalance
        .iter()
        .filter(|i| i.flagged)
        .max_by(|a, b| a.spread.total_cmp(&b.spread))?;
    let steps = f.steps.len().max(1) as Ns;
    Some(
        Draft::new(
            (worst.max_ns - worst.min_ns) / steps,
            claim(Claim::RankImbalance(worst.clone())),
        )
        .focus(Focus::Rows)
        .ranks([worst.max_rank, worst.min_rank])
        .steps(f.steps.iter().map(|s| s.step))
        .ops([worst.part.as_str()])
        .number("spread", Quantity::Ratio(worst.spread))
        .number("max_ns", Quantity::Ns(worst.max_ns))
        .number("min_ns", Quantity::Ns(worst.min_ns)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cluster::{Stage, Worker};
    use crate::analysis::step_times::StepTime;

    fn worker(rank: u32, compute_ns: Ns, median: Ns) -> Worker {
        Worker {
            rank: RankId(rank),
            compute_ns,
            excess_ns: compute_ns - median,
        }
    }

    #[test]
    fn a_slow_worker_of_a_balanced_stage_is_a_straggler() {
        // Stage 0: ranks 0-2 at 100, rank 3 at 125 (median 100): +25, over 5% of 100.
        // Stage 1 is even. Three steps: impact 25 × 3 = 75.
        let stage = |k, workers: Vec<Worker>| Stage {
            stage: k,
            ranks: workers.iter().map(|w| w.rank).collect(),
            workers,
            ..Stage::default()
        };
        let stages = vec![
            stage(
                0,
                vec![
                    worker(0, 100, 100),
                    worker(1, 100, 100),
                    worker(2, 100, 100),
                    worker(3, 125, 100),
                ],
            ),
            stage(1, vec![worker(4, 101, 101), worker(5, 101, 101)]),
        ];
        let steps: Vec<StepTime> = (1..=3)
            .map(|n| StepTime {
                step: StepNo(n),
                ..StepTime::default()
            })
            .collect();
        let f = Facts::new(&steps, &[]).cluster(&[], &[], &[], Some(&stages));
        let d = straggler(&f, &Thresholds::default()).expect("a slow worker");
        assert_eq!(d.impact_ns, 75);
        assert_eq!(d.evidence.ranks, [RankId(3)]);
        // 4% over its stage's median is within the spread of peers: no finding.
        let mut even = stages.clone();
        even[0].workers[3] = worker(3, 104, 100);
        let f = Facts::new(&steps, &[]).cluster(&[], &[], &[], Some(&even));
        assert!(straggler(&f, &Thresholds::default()).is_none());
        // In the flagged (heavier) stage, the excess is the stage's: M_S, not M_W.
        let mut heavy = stages.clone();
        heavy[0].flagged = true;
        let f = Facts::new(&steps, &[]).cluster(&[], &[], &[], Some(&heavy));
        assert!(straggler(&f, &Thresholds::default()).is_none());
    }
}
