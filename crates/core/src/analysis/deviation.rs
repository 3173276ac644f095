//! The overview's heat map (docs/metrics.md, "Deviation from the step median"): for each
//! group of ranks and each step, how far the group's own work (span − exposed communication;
//! the group's largest, so a straggler stays visible) lies from that step's median own work
//! across ranks, as a fraction (+0.25: 25% more work than the median rank).

use super::breakdown::{Breakdown, median_own_work};
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Rows a heat map keeps at most: more ranks share a row.
pub const MAX_ROWS: usize = 64;

/// Ranks per row (positions in `job.ranks`): groups keep the map at ≤ [`MAX_ROWS`] rows.
pub fn rank_groups(n: usize) -> Vec<Range<usize>> {
    let g = n.div_ceil(MAX_ROWS).max(1);
    (0..n).step_by(g).map(|a| a..(a + g).min(n)).collect()
}

/// The heat map: one row per group (its ranks' positions in `ranks`), one cell per step —
/// the deviation, or `None` where no member has the step or the median is 0.
pub fn grid(
    rows: &[Breakdown],
    ranks: &[RankId],
    steps: &[StepNo],
    groups: &[Range<usize>],
) -> Vec<Vec<Option<f64>>> {
    let own: FxHashMap<(StepNo, RankId), Ns> = rows
        .iter()
        .map(|b| ((b.step, b.rank), b.own_work_ns()))
        .collect();
    let medians: Vec<Option<Ns>> = steps
        .iter()
        .map(|s| median_own_work(rows, *s).filter(|&m| m > 0))
        .collect();
    groups
        .iter()
        .map(|g| {
            steps
                .iter()
                .zip(&medians)
                .map(|(s, m)| {
                    let m = (*m)?;
                    let work = g.clone().filter_map(|i| own.get(&(*s, ranks[i]))).max()?;
                    Some((work - m) as f64 / m as f64)
                })
                .collect()
        })
        .collect()
}

/// The overview's rows: [`rank_groups`] ordered by their largest member's own work Σ over
/// the steps, most first (ties: rank order), as the report ranks a step's rows by own work;
/// Σ over the steps keeps the order still while the user moves between steps.
pub fn rows_by_own_work(rows: &[Breakdown], ranks: &[RankId]) -> Vec<Range<usize>> {
    let mut own: FxHashMap<RankId, Ns> = FxHashMap::default();
    for b in rows {
        let o = own.entry(b.rank).or_default();
        *o = o.saturating_add(b.own_work_ns());
    }
    let mut groups: Vec<(Ns, Range<usize>)> = rank_groups(ranks.len())
        .into_iter()
        .map(|g| {
            let most = g.clone().filter_map(|i| own.get(&ranks[i])).max();
            (most.copied().unwrap_or(0), g)
        })
        .collect();
    groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.start.cmp(&b.1.start)));
    groups.into_iter().map(|g| g.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A breakdown row of `rank` in `step`: its span and exposed communication.
    fn row(step: u32, rank: u32, span: Ns, comm: Ns) -> Breakdown {
        Breakdown {
            step: StepNo(step),
            rank: RankId(rank),
            span_ns: span,
            comm_ns: comm,
            ..Breakdown::default()
        }
    }

    #[test]
    fn overview_rows_lead_with_the_most_own_work() {
        // Own work Σ over steps: rank 0 100 + 50, rank 1 80 + 90, rank 2 150, rank 3 none.
        let rows = [
            row(1, 0, 120, 20),
            row(1, 1, 100, 20),
            row(1, 2, 150, 0),
            row(2, 0, 60, 10),
            row(2, 1, 90, 0),
        ];
        let ids = [RankId(0), RankId(1), RankId(2), RankId(3)];
        assert_eq!(rows_by_own_work(&rows, &ids), vec![1..2, 0..1, 2..3, 3..4]);
    }

    #[test]
    fn groups_keep_the_map_at_64_rows() {
        assert_eq!(rank_groups(3), vec![0..1, 1..2, 2..3]);
        let g = rank_groups(130);
        assert_eq!((g.len(), g[0].clone(), g[43].clone()), (44, 0..3, 129..130));
        assert!(rank_groups(0).is_empty());
    }

    #[test]
    fn a_cell_is_the_group_s_largest_own_work_against_the_step_median() {
        // Step 1 own work: 100, 80, 150 → median 100. Step 2: rank 2 missing; 50, 50 → 50.
        let rows = [
            row(1, 0, 120, 20),
            row(1, 1, 100, 20),
            row(1, 2, 150, 0),
            row(2, 0, 60, 10),
            row(2, 1, 50, 0),
        ];
        let ranks = [RankId(0), RankId(1), RankId(2)];
        let steps = [StepNo(1), StepNo(2), StepNo(3)];
        let g = grid(&rows, &ranks, &steps, &[0..1, 1..3]);
        // Rank 0: 100 vs 100 → 0; 50 vs 50 → 0; step 3 unknown.
        assert_eq!(g[0], vec![Some(0.0), Some(0.0), None]);
        // Ranks 1–2: max(80, 150) = 150 → +0.5; step 2 only rank 1: 50 → 0.
        assert_eq!(g[1], vec![Some(0.5), Some(0.0), None]);
    }
}
