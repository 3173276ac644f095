//! Cluster step times: per step number, the distribution of rank step-span lengths over the
//! ranks that profiled that step, and the rank with the most **own work** in it.
//!
//! `time_ns.max/median/min` are over rank span lengths; the median of an even count is the
//! floor of the mean of the two middle values. `slowest_rank` is the rank with the largest
//! own work (span − exposed communication; ties → lowest rank id): in a synchronous job every
//! rank's span is about the same because the fast ranks wait inside collectives, so the span
//! alone cannot name the rank that made the step slow — its own work can.

use super::breakdown::Breakdown;
use crate::time::Ns;
use std::collections::BTreeMap;

/// One step across ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepTime {
    /// Step number.
    pub step: u32,
    /// Ranks that profiled this step.
    pub ranks: u32,
    /// Longest rank span.
    pub max_ns: Ns,
    /// Median rank span.
    pub median_ns: Ns,
    /// Shortest rank span.
    pub min_ns: Ns,
    /// Rank with the most own work.
    pub slowest_rank: u32,
    /// That rank's own work.
    pub slowest_rank_work_ns: Ns,
}

/// Step times from per-(rank, step) breakdowns.
pub fn step_times(rows: &[Breakdown]) -> Vec<StepTime> {
    let mut by_step: BTreeMap<u32, Vec<&Breakdown>> = BTreeMap::new();
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

/// Median of sorted values; even count: floor of the mean of the middle two.
pub fn median_sorted(v: &[Ns]) -> Ns {
    let n = v.len();
    if n == 0 {
        return 0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]).div_euclid(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: u32, step: u32, span: Ns, comm: Ns) -> Breakdown {
        Breakdown {
            rank,
            step,
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
        assert_eq!((t[0].slowest_rank, t[0].slowest_rank_work_ns), (1, 96));
    }

    #[test]
    fn even_median_floors() {
        assert_eq!(median_sorted(&[1, 2, 3, 4]), 2);
        assert_eq!(median_sorted(&[10, 13]), 11);
    }
}
