//! The overlap fix (docs/metrics.md, "Replay": poor_overlap), as DDP/FSDP bucketing would
//! issue a step's collectives: each starts as soon as it is launched, except the last of
//! each rank in the step, whose gradients are the last to be ready; of that one only the
//! last bucket ([`DEFAULT_BUCKET_BYTES`]) stays exposed, the rest is hidden behind the
//! rank's compute as far as that compute goes. Point-to-point transfers keep their holds: a
//! send's data is the compute before it, and a pipeline's schedule is not an overlap choice.

use super::fix::{Context, DEFAULT_BUCKET_BYTES};
use super::step::StepReplay;
use super::transfers::mul_div;
use crate::analysis::critical_path::Category;
use crate::model::{CollOp, EventIx, RankIx};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// A rank's collective calls in the step (not point-to-point), by kernel: bytes, when known.
type Collectives = FxHashMap<(RankIx, EventIx), Option<u64>>;

impl StepReplay<'_> {
    /// Frees the holds of every collective but each rank's last (stream gaps from compute
    /// and other device work dropped, launch delays 0), and hides the last one's transfer
    /// but its last bucket.
    pub(super) fn overlap(&self, cx: &Context, w: &mut [Option<Ns>]) {
        let mut held: Vec<(usize, RankIx, usize)> = self
            .edge_facts(cx)
            .held_collectives()
            .filter_map(|k| {
                let e = &self.g.edges[k];
                let ev = &self.job.rank(e.rank).events;
                let coll = match e.cat {
                    Some(Category::LaunchOverhead) => ev.link[e.event.index()].get()?,
                    _ => e.event.index(),
                };
                Some((k, e.rank, coll))
            })
            .collect();
        let collectives = self.collectives(held.iter().map(|h| h.1));
        held.retain(|&(_, r, c)| collectives.contains_key(&(r, EventIx::of(c))));
        let mut last: FxHashMap<RankIx, usize> = FxHashMap::default();
        for &(_, r, c) in &held {
            let start = &self.job.rank(r).events.start;
            let l = last.entry(r).or_insert(c);
            if start[c] > start[*l] {
                *l = c;
            }
        }
        for (k, r, c) in held {
            if last.get(&r) == Some(&c) {
                continue;
            }
            w[k] = match self.g.edges[k].cat {
                Some(Category::LaunchOverhead) => w[k].map(|_| 0),
                _ => None,
            };
        }
        for (r, c) in last {
            let bytes = collectives.get(&(r, EventIx::of(c))).copied().flatten();
            self.last_bucket(w, r, EventIx::of(c), bytes);
        }
    }

    /// The transfer of rank `r`'s last collective `c` (of `bytes`) kept to its last bucket's
    /// share, hiding at most the rank's device work in the step.
    fn last_bucket(&self, w: &mut [Option<Ns>], r: RankIx, c: EventIx, bytes: Option<u64>) {
        let Some(bytes) = bytes.filter(|&b| b > DEFAULT_BUCKET_BYTES) else {
            return;
        };
        let compute = self.base_work().get(r.get()).map_or(0, |x| x[0]);
        for k in self.rank_edges(r.get()) {
            let e = &self.g.edges[k];
            if e.cat != Some(Category::Communication) || e.event != c || e.rank != r {
                continue;
            }
            let Some(t) = w[k] else { continue };
            let bucket = mul_div(t, i128::from(DEFAULT_BUCKET_BYTES), i128::from(bytes));
            w[k] = Some(bucket.max(t.saturating_sub(compute)));
        }
    }

    /// The collective calls (not point-to-point) of `ranks` in the step, matched or not (a
    /// rank loaded alone has no matched instance), with their bytes.
    fn collectives(&self, ranks: impl Iterator<Item = RankIx>) -> Collectives {
        let mut ranks: Vec<RankIx> = ranks.collect();
        ranks.sort_unstable();
        ranks.dedup();
        let mut out = Collectives::default();
        for r in ranks {
            for c in &self.comm.calls.per_rank[r.get()] {
                let p2p = c.peer.is_some()
                    || matches!(c.op, CollOp::Send | CollOp::Recv | CollOp::SendRecv);
                if c.step == Some(self.step) && !p2p {
                    out.insert((r, c.event), c.bytes);
                }
            }
        }
        out
    }
}
