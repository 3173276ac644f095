//! When ranks enter the step (docs/metrics.md, "Replay": straggler, comm_wait_dominated).
//! A rank whose first node in the step is later than its peers' was held by what it did
//! before the step (its previous step, a stall between steps); its peers then wait for it
//! at the step's first collective. On time, it enters with its peers: its entry tie
//! ([`entry_ties`](super::bounds::entry_ties)) at their median entry, never later than
//! measured. A pause before a rank's first node is cut from its entry, one after its last
//! node from its exit ([`bounds`](super::bounds)).

use super::fix::Context;
use super::step::StepReplay;
use crate::analysis::host::GcPause;
use crate::model::{RankId, RankIx};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// The median (lower middle) of sorted `v` with one element equal to `x` taken out
/// (`None`: nothing left).
fn median_without(v: &[Ns], x: Ns) -> Option<Ns> {
    let n = v.len().checked_sub(1).filter(|&n| n > 0)?;
    let out = v.partition_point(|&y| y < x).min(n);
    let m = (n - 1) / 2;
    Some(if m < out { v[m] } else { v[m + 1] })
}

impl StepReplay<'_> {
    /// The entries of `ids` (every rank: `None`) at the median entry of their peers — the
    /// other ranks of their pipeline stage present in the step, those of `ids` excepted.
    /// `w` holds the ties' weights after the edges' ([`Self::weights_into`]).
    pub(super) fn enter_with_peers(
        &self,
        cx: &Context,
        ids: Option<&[RankId]>,
        w: &mut [Option<Ns>],
    ) {
        let ne = self.g.edges.len();
        let named = |r: RankIx| ids.is_none_or(|ids| ids.contains(&self.job.rank(r).id));
        // Per stage: the entries after the step's start of its peer ranks, sorted (ranks
        // whose first node has a predecessor have none: they enter when it lets them).
        let entries = &self.base.bounds.entries;
        let mut peers: FxHashMap<Option<usize>, Vec<Ns>> = FxHashMap::default();
        for &(r, k) in entries {
            if let (Some(&Some(x)), true) = (w.get(ne + k), ids.is_none() || !named(r)) {
                peers.entry(cx.stage_of(r)).or_default().push(x);
            }
        }
        peers.values_mut().for_each(|v| v.sort_unstable());
        for &(r, k) in entries {
            let (Some(Some(x)), true) = (w.get(ne + k).copied(), named(r)) else {
                continue;
            };
            let Some(p) = peers.get(&cx.stage_of(r)) else {
                continue;
            };
            // Every rank: its peers are its stage's list less itself.
            let median = if ids.is_none() {
                median_without(p, x)
            } else {
                p.get((p.len().max(1) - 1) / 2).copied()
            };
            if let (Some(m), Some(slot)) = (median, w.get_mut(ne + k)) {
                *slot = Some(x.min(m));
            }
        }
    }

    /// Each rank's entry and exit lose their overlap with `pauses` of that rank: nothing
    /// ran on it before its first node or after its last while paused.
    pub(super) fn bounds_without(&self, pauses: &[GcPause], w: &mut [Option<Ns>]) {
        let ne = self.g.edges.len();
        let b = &self.base.bounds;
        for &(r, k) in b.entries.iter().chain(&b.exits) {
            let (id, off) = (self.job.rank(r).id, self.offset(r));
            let (u, x) = (self.base.ties[k].0, self.base.ties[k].2);
            // The tie's span on the aligned clock: [start, first node) or [last node, +x).
            let lo = self.base.at[u as usize];
            let hi = lo.saturating_add(x);
            let over: Ns = pauses
                .iter()
                .filter(|p| p.rank == id)
                .map(|p| {
                    let (a, b) = (p.start_ns + off, p.start_ns + p.dur_ns + off);
                    (b.min(hi) - a.max(lo)).max(0)
                })
                .sum();
            if let Some(Some(x)) = w.get_mut(ne + k).filter(|_| over > 0) {
                *x = (*x - over).max(0);
            }
        }
    }

    /// Every rank leaves the step at its last node: the unrecorded host time after it (the
    /// loop's Python after the last operator) takes none.
    pub(super) fn leave_at_once(&self, w: &mut [Option<Ns>]) {
        let ne = self.g.edges.len();
        for &(_, k) in &self.base.bounds.exits {
            if let Some(Some(x)) = w.get_mut(ne + k) {
                *x = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::median_without;

    #[test]
    fn the_median_of_the_others() {
        // [1, 2, 5, 9]: without 9 → [1, 2, 5] → 2; without 1 → [2, 5, 9] → 5.
        let v = [1, 2, 5, 9];
        assert_eq!(median_without(&v, 9), Some(2));
        assert_eq!(median_without(&v, 1), Some(5));
        assert_eq!(median_without(&v, 2), Some(5));
        assert_eq!(median_without(&[3], 3), None);
        assert_eq!(median_without(&[3, 3], 3), Some(3));
    }
}
