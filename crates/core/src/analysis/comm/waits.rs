//! Waiting measured as a union (docs/metrics.md, "Wait"): a rank that has several
//! collectives in flight at once (DDP buckets, gloo, several process groups) waits for all
//! of them at the same time, so its wait in a step is the length of the union of its
//! waiting intervals `[own start, last arrival)`, never their sum. Transit likewise is the
//! union of `[last arrival, own end)`. Every Σ of waits in the communication and cluster
//! analyses goes through [`Unions`].

use crate::analysis::intervals::IntervalSet;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// Where intervals are collected: a key, a rank and a step.
type Slot<K> = (K, RankId, Option<StepNo>);

/// Intervals collected per (key, rank, step); each total is Σ over (rank, step) of the
/// union's length, so no rank is charged twice for one moment of one step.
#[derive(Debug)]
pub struct Unions<K: Ord> {
    by: BTreeMap<Slot<K>, Vec<(Ns, Ns)>>,
}

impl<K: Ord> Default for Unions<K> {
    fn default() -> Self {
        Self {
            by: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> Unions<K> {
    /// Adds `[lo, hi)` for `rank` in `step` under `key` (empty intervals count nothing).
    pub fn add(&mut self, key: K, rank: RankId, step: Option<StepNo>, lo: Ns, hi: Ns) {
        if hi > lo {
            self.by.entry((key, rank, step)).or_default().push((lo, hi));
        }
    }

    /// Σ over (rank, step) of the union's length, per key.
    pub fn totals(self) -> BTreeMap<K, Ns> {
        let mut out: BTreeMap<K, Ns> = BTreeMap::new();
        for ((key, _, _), v) in self.by {
            *out.entry(key).or_default() += union_len(v);
        }
        out
    }

    /// Σ over steps of the union's length, per (key, rank).
    pub fn per_rank(self) -> BTreeMap<(K, RankId), Ns> {
        let mut out: BTreeMap<(K, RankId), Ns> = BTreeMap::new();
        for ((key, rank, _), v) in self.by {
            *out.entry((key, rank)).or_default() += union_len(v);
        }
        out
    }
}

/// The length of the union of intervals; a lone interval skips the set.
fn union_len(v: Vec<(Ns, Ns)>) -> Ns {
    match v.as_slice() {
        [(lo, hi)] => hi - lo,
        _ => IntervalSet::from_intervals(v).total(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_waits_of_one_rank_count_once_and_ranks_and_steps_add() {
        let mut u = Unions::default();
        let s1 = Some(StepNo(1));
        // Rank 0 waits in two buckets at once: [0, 100) and [10, 110) → 110, not 200.
        u.add('a', RankId(0), s1, 0, 100);
        u.add('a', RankId(0), s1, 10, 110);
        // Another rank's wait at the same moment is its own: + 50.
        u.add('a', RankId(1), s1, 0, 50);
        // The same rank in another step: + 30.
        u.add('a', RankId(0), Some(StepNo(2)), 500, 530);
        // Another key is apart; an empty interval counts nothing.
        u.add('b', RankId(0), s1, 0, 100);
        u.add('b', RankId(0), s1, 7, 7);
        let per_rank = {
            let mut v = Unions::default();
            v.add('a', RankId(0), s1, 0, 100);
            v.add('a', RankId(0), s1, 10, 110);
            v.add('a', RankId(0), Some(StepNo(2)), 500, 530);
            v.per_rank()
        };
        let t = u.totals();
        assert_eq!(t[&'a'], 110 + 50 + 30);
        assert_eq!(t[&'b'], 100);
        assert_eq!(per_rank[&('a', RankId(0))], 140);
    }
}
