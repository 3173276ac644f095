//! The step-time change split into the breakdown's parts and by rank (docs/metrics.md,
//! "Diff"). Over the ranks both runs have and the aligned steps, each part is summed over
//! the (rank, step) rows; the parts partition the span in each row, so their changes add up
//! to the span's change exactly.

use super::steps::StepPair;
use crate::analysis::breakdown::{Breakdown, Part};
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;

/// A quantity in both runs (serialized with its change: `before_ns`, `after_ns`, `delta_ns`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delta {
    /// In the first run.
    pub before_ns: Ns,
    /// In the second run.
    pub after_ns: Ns,
}

impl Serialize for Delta {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Delta", 3)?;
        st.serialize_field("before_ns", &self.before_ns)?;
        st.serialize_field("after_ns", &self.after_ns)?;
        st.serialize_field("delta_ns", &self.delta_ns())?;
        st.end()
    }
}

impl Delta {
    /// After − before.
    pub fn delta_ns(&self) -> Ns {
        self.after_ns - self.before_ns
    }

    /// The change as a fraction of before (`None` when before is 0).
    pub fn ratio(&self) -> Option<f64> {
        (self.before_ns != 0).then(|| self.delta_ns() as f64 / self.before_ns as f64)
    }

    fn add(&mut self, b: Ns, a: Ns) {
        self.before_ns += b;
        self.after_ns += a;
    }
}

/// One breakdown part over the compared rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PartDelta {
    /// The part.
    pub part: Part,
    /// Σ over the compared (rank, step) rows.
    pub time: Delta,
}

/// One rank over the aligned steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankDelta {
    /// The rank (in the first run).
    pub rank: RankId,
    /// The second run's rank it is compared with, when its id differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_with: Option<RankId>,
    /// Σ of its step spans.
    pub span: Delta,
    /// Σ of its own work (span − exposed communication).
    pub own_work: Delta,
    /// The part that changed most (by magnitude) and by how much.
    pub top_part: Part,
    /// That part's change.
    pub top_part_delta_ns: Ns,
}

/// The parts and the ranks over the compared rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Parts {
    /// (rank, step) rows compared: the sums' divisor for a per-rank-step mean.
    pub rows: u64,
    /// Σ span over them.
    pub span: Delta,
    /// Each part, in partition order; their changes add up to the span's.
    pub parts: Vec<PartDelta>,
    /// Each rank both runs have, the largest |span change| first.
    pub ranks: Vec<RankDelta>,
    /// Ranks only the first run has.
    pub only_before: Vec<RankId>,
    /// Ranks only the second run has.
    pub only_after: Vec<RankId>,
}

/// Which rank of the second run is compared with which of the first: by id; when the runs
/// share no id but have as many ranks (one rank profiled in each, numbered differently), by
/// position. The second value says which.
pub fn rank_pairs(before: &[RankId], after: &[RankId]) -> (Vec<(RankId, RankId)>, &'static str) {
    let by_id: Vec<(RankId, RankId)> = before
        .iter()
        .filter(|r| after.contains(r))
        .map(|&r| (r, r))
        .collect();
    if by_id.is_empty() && before.len() == after.len() {
        (
            before.iter().copied().zip(after.iter().copied()).collect(),
            "order",
        )
    } else {
        (by_id, "id")
    }
}

/// The parts over `pairs` and the paired `ranks`, from each run's breakdown rows (sorted by
/// (step, rank)).
pub fn parts(
    before: &[Breakdown],
    after: &[Breakdown],
    pairs: &[StepPair],
    ranks: &[(RankId, RankId)],
) -> Parts {
    let ranks_of = |rows: &[Breakdown]| {
        let mut v: Vec<RankId> = rows.iter().map(|r| r.rank).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut out = Parts {
        parts: Part::ALL
            .map(|part| PartDelta {
                part,
                time: Delta::default(),
            })
            .to_vec(),
        only_before: ranks_of(before)
            .into_iter()
            .filter(|r| !ranks.iter().any(|p| p.0 == *r))
            .collect(),
        only_after: ranks_of(after)
            .into_iter()
            .filter(|r| !ranks.iter().any(|p| p.1 == *r))
            .collect(),
        ..Parts::default()
    };
    for &(rank, rank_after) in ranks {
        let mut span = Delta::default();
        let mut own = Delta::default();
        let mut by_part = [Delta::default(); 6];
        for p in pairs {
            let (Some(b), Some(a)) = (row(before, p.before, rank), row(after, p.after, rank_after))
            else {
                continue;
            };
            out.rows += 1;
            span.add(b.span_ns, a.span_ns);
            own.add(b.own_work_ns(), a.own_work_ns());
            for (k, part) in Part::ALL.into_iter().enumerate() {
                by_part[k].add(b.part(part), a.part(part));
            }
        }
        out.span.add(span.before_ns, span.after_ns);
        for (k, d) in by_part.iter().enumerate() {
            out.parts[k].time.add(d.before_ns, d.after_ns);
        }
        let (k, top) = by_part
            .iter()
            .enumerate()
            .max_by_key(|(k, d)| (d.delta_ns().unsigned_abs(), std::cmp::Reverse(*k)))
            .expect("six parts");
        out.ranks.push(RankDelta {
            rank,
            paired_with: (rank_after != rank).then_some(rank_after),
            span,
            own_work: own,
            top_part: Part::ALL[k],
            top_part_delta_ns: top.delta_ns(),
        });
    }
    out.ranks.sort_by_key(|r| {
        use std::cmp::Reverse;
        (
            Reverse(r.span.delta_ns().unsigned_abs()),
            Reverse(r.own_work.delta_ns().unsigned_abs()),
            r.rank,
        )
    });
    out
}

/// The row of (step, rank) in rows sorted by (step, rank).
fn row(rows: &[Breakdown], step: StepNo, rank: RankId) -> Option<&Breakdown> {
    rows.binary_search_by_key(&(step, rank), |r| (r.step, r.rank))
        .ok()
        .map(|k| &rows[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(step: u32, rank: u32, compute: Ns, comm: Ns, free: Ns) -> Breakdown {
        Breakdown {
            step: StepNo(step),
            rank: RankId(rank),
            span_ns: compute + comm + free,
            compute_ns: compute,
            comm_ns: comm,
            free_ns: free,
            ..Default::default()
        }
    }

    #[test]
    fn part_changes_add_up_to_the_span_change_and_name_the_rank() {
        let before = [r(1, 0, 100, 20, 5), r(1, 1, 100, 20, 5), r(1, 2, 90, 0, 0)];
        let after = [r(1, 0, 100, 60, 5), r(1, 1, 140, 20, 5), r(1, 3, 1, 1, 1)];
        let pair = StepPair {
            before: StepNo(1),
            after: StepNo(1),
            before_ns: 125,
            after_ns: 165,
        };
        let ids = |rows: &[Breakdown]| rows.iter().map(|r| r.rank).collect::<Vec<_>>();
        let (ranks, how) = rank_pairs(&ids(&before), &ids(&after));
        assert_eq!(how, "id");
        let p = parts(&before, &after, &[pair], &ranks);
        assert_eq!(p.rows, 2);
        assert_eq!((p.span.before_ns, p.span.after_ns), (250, 330));
        let sum: Ns = p.parts.iter().map(|d| d.time.delta_ns()).sum();
        assert_eq!(sum, p.span.delta_ns());
        assert_eq!(p.parts[0].time.delta_ns(), 40); // compute
        assert_eq!(p.parts[2].time.delta_ns(), 40); // comm
        assert_eq!(
            (p.only_before.clone(), p.only_after.clone()),
            (vec![RankId(2)], vec![RankId(3)])
        );
        // Both ranks grew 40 ns: rank 1 in its own compute (first), rank 0 in comm (waiting).
        assert_eq!(p.ranks[0].rank, RankId(1));
        assert_eq!(
            (p.ranks[0].top_part, p.ranks[0].own_work.delta_ns()),
            (Part::Compute, 40)
        );
        assert_eq!(
            (p.ranks[1].top_part, p.ranks[1].own_work.delta_ns()),
            (Part::Comm, 0)
        );
    }

    #[test]
    fn one_rank_each_numbered_differently_pairs_by_position() {
        let (p, how) = rank_pairs(&[RankId(3)], &[RankId(1)]);
        assert_eq!((p, how), (vec![(RankId(3), RankId(1))], "order"));
        let (p, how) = rank_pairs(&[RankId(0), RankId(1)], &[RankId(1), RankId(2)]);
        assert_eq!((p, how), (vec![(RankId(1), RankId(1))], "id"));
    }
}
