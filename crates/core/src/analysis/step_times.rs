//! Cluster step times: per step number, the distribution of rank step-span lengths over the
//! ranks that profiled that step, and the rank with the most **own work** in it.
//!
//! `time_ns.max/median/min` are over rank span lengths; the median of an even count is the
//! floor of the mean of the two middle values. `slowest_rank` is the rank with the largest
//! own work (span − exposed communication; ties → lowest rank id): in a synchronous job every
//! rank's span is about the same because the fast ranks wait inside collectives, so the span
//! alone cannot name the rank that made the step slow — its own work can.

use super::breakdown::Breakdown;
use super::stats::median_sorted;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// One step across ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepTime {
    /// Step number.
    pub step: StepNo,
    /// Ranks that profiled this step.
    pub ranks: u32,
    /// Longest rank span.
    pub max_ns: Ns,
    /// Median rank span.
    pub median_ns: Ns,
    /// Shortest rank span.
    pub min_ns: Ns,
    /// Rank with the most own work.
    pub slowest_rank: RankId,
    /// That rank's own work.
    pub slowest_rank_work_ns: Ns,
}

/// Step times from per-(rank, step) breakdowns.
pub fn step_times(rows: &[Breakdown]) -> Vec<StepTime> {
    let mut by_step: BTreeMap<StepNo, Vec<&Breakdown>> = BTreeMap::new();
    for r in rows {
        by_step.entry(r.step).or_default().push(r);
    }
    by_step
        .into_iter()
        .map(|(step, rs)| {
            let mut spans: Vec<Ns> = rs.iter().map(|r| r.span_ns).collect();
            spans.sort_unstable();
            let slowest = rs
                .iter()
                .max_by(|a, b| {
                    a.own_work_ns()
                        .cmp(&b.own_work_ns())
                        .then(b.rank.cmp(&a.rank))
                })
                .expect("a step has at least one rank");
            StepTime {
                step,
                ranks: rs.len() as u32,
                max_ns: *spans.last().unwrap(),
                median_ns: median_sorted(&spans),
                min_ns: spans[0],
                slowest_rank: slowest.rank,
                slowest_rank_work_ns: slowest.own_work_ns(),
            }
        })
        .collect()
}

/// The slowest step: the one with the longest cluster step time (ties: the earlier step).
pub fn slowest(times: &[StepTime]) -> Option<StepNo> {
    times
        .iter()
        .max_by(|a, b| a.max_ns.cmp(&b.max_ns).then(b.step.cmp(&a.step)))
        .map(|s| s.step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: u32, step: u32, span: Ns, comm: Ns) -> Breakdown {
        Breakdown {
            rank: RankId(rank),
            step: StepNo(step),
            span_ns: span,
            comm_ns: comm,
            compute_ns: span - comm,
            ..Default::default()
        }
    }

    #[test]
    fn slowest_rank_is_the_one_with_most_own_work() {
        // Rank 1 computes longest; ranks 0 and 2 wait for it in communication.
        let rows = [row(0, 5, 100, 40), row(1, 5, 101, 5), row(2, 5, 99, 38)];
        let t = step_times(&rows);
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].max_ns, t[0].median_ns, t[0].min_ns), (101, 100, 99));
        assert_eq!(
            (t[0].slowest_rank, t[0].slowest_rank_work_ns),
            (RankId(1), 96)
        );
        assert_eq!(slowest(&t), Some(StepNo(5)));
    }
}
