//! The kernel fix: compute kernels of the operator types a finding names keep the share of
//! their time its model gives (docs/metrics.md, "Replay": the kernel rules).

use super::step::StepReplay;
use crate::analysis::critical_path::Category;
use crate::analysis::roofline::speedup::{Speedup, kept, kernel_operator, speedup_for};
use crate::model::{EventIx, Kind, RankIx};
use crate::time::Ns;
use rustc_hash::FxHashMap;

impl StepReplay<'_> {
    /// Each compute kernel edge whose operator type `edits` names at most its share kept of
    /// its measured time (looked up once per launching operator).
    pub(super) fn speed_up(&self, w: &mut [Option<Ns>], edits: &[Speedup]) {
        let mut by_op: FxHashMap<(RankIx, EventIx), Option<u32>> = FxHashMap::default();
        for (k, e) in self.g.edges.iter().enumerate() {
            let Some(x) = w[k].filter(|_| e.cat == Some(Category::GpuCompute)) else {
                continue;
            };
            let rank = self.job.rank(e.rank);
            let (ev, i) = (&rank.events, e.event.index());
            if ev.kind[i] != Kind::Compute || ev.op[i].is_none() {
                continue;
            }
            let keep = *by_op.entry((e.rank, ev.op[i])).or_insert_with(|| {
                let (op, dtype) = kernel_operator(self.job, rank, i)?;
                let name = self.job.strings.resolve(ev.name[op.index()]);
                speedup_for(edits, name, dtype.as_deref()).map(|s| s.keep_ppm)
            });
            // The target is absolute — the share of the measured time the model gives (the
            // FLOPs at the attainable rate) — so a kernel another fix already brought under
            // it (a straggler's, a slow step's) keeps its time.
            if let (Some(ppm), Some(base)) = (keep, self.base.w[k]) {
                w[k] = Some(x.min(kept(base, ppm)));
            }
        }
    }
}
