//! Slow steps and their culprits (see the module above for the rule).

use super::{MAD_FACTOR_E4, MIN_EXCESS_PCT};
use crate::analysis::breakdown::{Breakdown, Part};
use crate::analysis::comm::Comm;
use crate::analysis::stats::median_sorted;
use crate::analysis::step_times::StepTime;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many of a step's collectives a rank arrived last at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastArrivals {
    /// Instances it arrived last at.
    pub last: u64,
    /// Instances of the step it took part in.
    pub of: u64,
}

impl Serialize for LastArrivals {
    /// As `[last, of]` (the report's schema).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.last, self.of).serialize(s)
    }
}

/// A step flagged slow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SlowStep {
    /// Step number.
    pub step: StepNo,
    /// Cluster step time (max rank span).
    pub time_ns: Ns,
    /// Median cluster step time over the steps.
    pub median_ns: Ns,
    /// The threshold it exceeded.
    pub threshold_ns: Ns,
    /// The rank whose own work grew the most, when it stands out ([`SHARED_GROWTH`]).
    pub culprit_rank: Option<RankId>,
    /// Every rank's own work grew alike (no rank stands out): the step's work itself grew.
    /// `growth_ns` and `part` are then those of the median rank.
    pub shared_growth: bool,
    /// Its own-work growth over its median step.
    pub growth_ns: Ns,
    /// The own-work part that grew the most in it.
    pub part: Option<Part>,
    /// That part's growth.
    pub part_growth_ns: Ns,
    /// Collectives of the step the culprit arrived last at.
    pub last_arrivals: LastArrivals,
}

/// Slow-step threshold over the cluster step times: (median, limit); `None` with no steps.
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
    // In i128: a step time may be days long (a corrupt timestamp inside the range a rank
    // may span), and days × the MAD factor leave i64.
    let scaled = |x: Ns, num: i64, den: i64| {
        let v = i128::from(x) * i128::from(num) / i128::from(den);
        Ns::try_from(v).unwrap_or(Ns::MAX)
    };
    let excess = scaled(mad, MAD_FACTOR_E4, 10_000).max(scaled(median, MIN_EXCESS_PCT, 100));
    Some((median, median.saturating_add(excess)))
}

/// The steps whose cluster time (max rank span) exceeds the limit, with the median and the
/// limit; `None` with no steps.
fn over_limit(step_times: &[StepTime]) -> Option<(Ns, Ns, Vec<&StepTime>)> {
    let times: Vec<Ns> = step_times.iter().map(|s| s.max_ns).collect();
    let (median, limit) = threshold(&times)?;
    let slow = step_times.iter().filter(|s| s.max_ns > limit).collect();
    Some((median, limit, slow))
}

/// Slow steps and their culprits.
pub fn slow_steps(step_times: &[StepTime], rows: &[Breakdown], comm: &Comm) -> Vec<SlowStep> {
    let Some((median, limit, slow)) = over_limit(step_times) else {
        return Vec::new();
    };
    let by_rank = by_rank(rows);
    slow.into_iter()
        .map(|s| {
            let (c, shared_growth) = match culprit(s.step, &by_rank) {
                Growth::One(c) => (Some(c), false),
                Growth::Shared(c) => (Some(c), true),
                Growth::None => (None, false),
            };
            let named = c.filter(|_| !shared_growth);
            SlowStep {
                step: s.step,
                time_ns: s.max_ns,
                median_ns: median,
                threshold_ns: limit,
                culprit_rank: named.map(|c| c.rank),
                shared_growth,
                growth_ns: c.map_or(0, |c| c.growth),
                part: c.map(|c| c.part),
                part_growth_ns: c.map_or(0, |c| c.part_growth),
                last_arrivals: named.map_or_else(LastArrivals::default, |c| {
                    last_arrivals_in_step(comm, c.rank, s.step)
                }),
            }
        })
        .collect()
}

/// Breakdown rows grouped by rank.
fn by_rank(rows: &[Breakdown]) -> BTreeMap<RankId, Vec<&Breakdown>> {
    let mut m: BTreeMap<RankId, Vec<&Breakdown>> = BTreeMap::new();
    for r in rows {
        m.entry(r.rank).or_default().push(r);
    }
    m
}

/// The rank whose own work grew most in a step.
#[derive(Clone, Copy)]
struct Culprit {
    rank: RankId,
    growth: Ns,
    part: Part,
    part_growth: Ns,
}

/// Who grew in a slow step.
enum Growth {
    /// One rank's growth stands out: the culprit.
    One(Culprit),
    /// Every rank grew alike: the median rank's growth.
    Shared(Culprit),
    /// No rank's own work grew.
    None,
}

/// A culprit stands out when the median growth of the other ranks is below this share of
/// its own; above it, every rank grew alike and none is blamed.
pub(super) const SHARED_GROWTH: f64 = 0.5;

/// Who grew in `step`: the rank whose own work grew the most over its median of its other
/// steps (ties: lowest rank), with the own-work part that grew the most (ties: the earlier
/// part) — unless the other ranks grew at least [`SHARED_GROWTH`] of that as well.
fn culprit(step: StepNo, by_rank: &BTreeMap<RankId, Vec<&Breakdown>>) -> Growth {
    let mut all: Vec<Culprit> = by_rank
        .iter()
        .filter_map(|(&rank, rows)| growth(step, rank, rows))
        .collect();
    // Largest growth first; ties: lowest rank (the map is in rank order, the sort stable).
    all.sort_by_key(|c| std::cmp::Reverse(c.growth));
    let Some(&top) = all.first().filter(|c| c.growth > 0) else {
        return Growth::None;
    };
    let others: Vec<Ns> = all[1..].iter().rev().map(|c| c.growth).collect();
    let typical = if others.is_empty() {
        0
    } else {
        median_sorted(&others)
    };
    if typical > 0 && typical as f64 >= SHARED_GROWTH * top.growth as f64 {
        Growth::Shared(all[all.len() / 2])
    } else {
        Growth::One(top)
    }
}

/// How `rank`'s own work in `step` grew over its median of its other steps, and the part
/// that grew most; `None` when it did not run the step or ran no other.
fn growth(step: StepNo, rank: RankId, rows: &[&Breakdown]) -> Option<Culprit> {
    let this = rows.iter().find(|b| b.step == step)?;
    let others: Vec<&&Breakdown> = rows.iter().filter(|b| b.step != step).collect();
    if others.is_empty() {
        return None;
    }
    let med = |f: &dyn Fn(&Breakdown) -> Ns| {
        let mut v: Vec<Ns> = others.iter().map(|b| f(b)).collect();
        v.sort_unstable();
        median_sorted(&v)
    };
    let (k, part_growth) = (0..Part::OWN_WORK.len())
        .map(|k| {
            let p = Part::OWN_WORK[k];
            (k, this.own_part(p) - med(&|b| b.own_part(p)))
        })
        .max_by_key(|&(k, g)| (g, std::cmp::Reverse(k)))
        .unwrap_or((0, 0));
    Some(Culprit {
        rank,
        growth: this.own_work_ns() - med(&|b| b.own_work_ns()),
        part: Part::OWN_WORK[k],
        part_growth,
    })
}

/// The instances of `step` the rank arrived last at, of those it took part in.
fn last_arrivals_in_step(comm: &Comm, rank: RankId, step: StepNo) -> LastArrivals {
    let mut n = LastArrivals::default();
    for (inst, t) in comm.instances() {
        if inst.step != Some(step) || inst.op.is_p2p() || !t.members.iter().any(|x| x.rank == rank)
        {
            continue;
        }
        n.of += 1;
        if t.timing.skew_ns > 0 && t.timing.last_arriver == rank {
            n.last += 1;
        }
    }
    n
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

    fn time(step: u32, max: Ns, min: Ns) -> StepTime {
        StepTime {
            step: StepNo(step),
            ranks: 2,
            max_ns: max,
            median_ns: min,
            min_ns: min,
            slowest_rank: RankId(0),
            slowest_rank_work_ns: min,
        }
    }

    #[test]
    fn a_step_is_slow_above_the_limit_not_at_it() {
        // Cluster times 100, 100, 100, 105: median 100, MAD 0, limit 100 + 5% = 105. Step 4
        // sits exactly at the limit: not slow. At 106 it is.
        let mut t = vec![
            time(1, 100, 100),
            time(2, 100, 100),
            time(3, 100, 100),
            time(4, 105, 100),
        ];
        let (median, limit, slow) = over_limit(&t).unwrap();
        assert_eq!((median, limit, slow.len()), (100, 105, 0));
        t[3].max_ns = 106;
        let (_, _, slow) = over_limit(&t).unwrap();
        assert_eq!(slow.iter().map(|s| s.step).collect::<Vec<_>>(), [StepNo(4)]);
    }

    #[test]
    fn the_cluster_step_time_is_the_longest_rank_span() {
        // Step 3's fastest rank took 100 like every other step, its slowest 300: slow.
        let t = [time(1, 100, 100), time(2, 100, 100), time(3, 300, 100)];
        let (_, _, slow) = over_limit(&t).unwrap();
        assert_eq!(slow.iter().map(|s| s.step).collect::<Vec<_>>(), [StepNo(3)]);
    }

    fn row(rank: u32, step: u32, compute: Ns, host: Ns, comm: Ns) -> Breakdown {
        Breakdown {
            step: StepNo(step),
            rank: RankId(rank),
            span_ns: compute + host + comm,
            compute_ns: compute,
            host_bound_ns: host,
            comm_ns: comm,
            ..Default::default()
        }
    }

    /// Steps 1 and 2: ranks 0 and 1 compute 100 each; then the two rows of step 3.
    fn two_steps_then(rank0: Breakdown, rank1: Breakdown) -> Vec<Breakdown> {
        let mut rows: Vec<Breakdown> = (1..=2)
            .flat_map(|s| [row(0, s, 100, 0, 0), row(1, s, 100, 0, 0)])
            .collect();
        rows.extend([rank0, rank1]);
        rows
    }

    #[test]
    fn the_culprit_is_the_rank_whose_own_work_grew_most() {
        // Steps 1, 2: both ranks compute 100. Step 3: rank 1's host-bound time grows by 50
        // (own work 150 over its median 100), rank 0 waits 50 in communication (own work 100).
        let rows = two_steps_then(row(0, 3, 100, 0, 50), row(1, 3, 100, 50, 0));
        let Growth::One(c) = culprit(StepNo(3), &by_rank(&rows)) else {
            panic!("rank 1 grew")
        };
        assert_eq!((c.rank, c.growth), (RankId(1), 50));
        assert_eq!((c.part, c.part_growth), (Part::HostBound, 50));
    }

    #[test]
    fn no_culprit_when_every_rank_waited_alike() {
        // Step 3 is longer for both ranks only by communication (own work unchanged): nobody's
        // own work grew, so nobody is blamed.
        let rows = two_steps_then(row(0, 3, 100, 0, 80), row(1, 3, 100, 0, 80));
        assert!(matches!(culprit(StepNo(3), &by_rank(&rows)), Growth::None));
    }

    #[test]
    fn a_growth_every_rank_shares_blames_no_rank() {
        // Both ranks' own work grew in step 3 (rank 0 by 30, rank 1 by 20 ≥ half of 30):
        // the step's work grew, not one rank's; the median rank's growth is reported.
        let rows = two_steps_then(row(0, 3, 130, 0, 0), row(1, 3, 100, 20, 0));
        let Growth::Shared(c) = culprit(StepNo(3), &by_rank(&rows)) else {
            panic!("shared growth")
        };
        assert_eq!((c.rank, c.growth, c.part), (RankId(1), 20, Part::HostBound));
        // Rank 1 growing 14 (< half of 30) leaves rank 0 standing out.
        let rows = two_steps_then(row(0, 3, 130, 0, 0), row(1, 3, 100, 14, 0));
        assert!(
            matches!(culprit(StepNo(3), &by_rank(&rows)), Growth::One(c) if c.rank == RankId(0))
        );
    }

    #[test]
    fn a_tie_blames_the_lowest_rank() {
        // Ranks 1 and 2 of four grew by 30 in step 3, ranks 0 and 3 not at all: the others'
        // median growth is 0, so a culprit stands out, and of the tied two rank 1 is named.
        let mut rows: Vec<Breakdown> = (1..=2)
            .flat_map(|s| (0..4).map(move |r| row(r, s, 100, 0, 0)))
            .collect();
        rows.extend([
            row(0, 3, 100, 0, 0),
            row(1, 3, 130, 0, 0),
            row(2, 3, 100, 30, 0),
            row(3, 3, 100, 0, 0),
        ]);
        let Growth::One(c) = culprit(StepNo(3), &by_rank(&rows)) else {
            panic!("a culprit")
        };
        assert_eq!((c.rank, c.growth, c.part), (RankId(1), 30, Part::Compute));
    }
}
