//! The device-work fixes: compute kernels of the operator types a finding names keep the
//! share of their time its model gives (docs/metrics.md, "Replay": the kernel rules), and
//! copies through pageable memory made from pinned memory.

use super::step::{Keeps, StepReplay};
use super::transfers::mul_div;
use crate::analysis::clocks::AtTopClock;
use crate::analysis::critical_path::Category;
use crate::analysis::roofline::speedup::{
    By, Speedup, kept, kernel_operator, speedup_for, task_type,
};
use crate::analysis::stats::median_sorted;
use crate::model::{EventIx, Kind, PageableCopy, RankId, RankIx, Role};
use crate::time::Ns;
use rustc_hash::{FxHashMap, FxHashSet};

impl StepReplay<'_> {
    /// Each compute kernel edge whose operator type `edits` names at most its share kept of
    /// its measured time (looked up once per launching operator).
    pub(super) fn speed_up(&self, w: &mut [Option<Ns>], edits: &[Speedup]) {
        for &(k, ppm) in self.keeps_of(edits).iter() {
            // The target is absolute — the share of the measured time the model gives (the
            // FLOPs at the attainable rate) — so a kernel another fix already brought under
            // it (a straggler's, a slow step's) keeps its time.
            if let (Some(x), Some(base)) = (w[k], self.base.w[k]) {
                w[k] = Some(x.min(kept(base, ppm)));
            }
        }
    }

    /// The (edge, kept ppm) pairs of `edits` in this step, found on first use.
    fn keeps_of(&self, edits: &[Speedup]) -> Keeps {
        let hit = self.keeps.lock().ok().and_then(|c| {
            c.iter()
                .find(|(e, _)| e.as_slice() == edits)
                .map(|x| x.1.clone())
        });
        if let Some(k) = hit {
            return k;
        }
        let found = std::sync::Arc::new(self.find_keeps(edits));
        if let Ok(mut c) = self.keeps.lock() {
            c.push((edits.to_vec(), found.clone()));
        }
        found
    }

    /// Each compute kernel edge whose operator type (or task type) `edits` names, with the
    /// share of its time kept (looked up once per launching operator).
    fn find_keeps(&self, edits: &[Speedup]) -> Vec<(usize, u32)> {
        let mut by_op: FxHashMap<(RankIx, EventIx), Option<u32>> = FxHashMap::default();
        let tasks: Vec<&Speedup> = edits.iter().filter(|s| s.by == By::Task).collect();
        let mut out = Vec::new();
        for (k, e) in self.g.edges.iter().enumerate() {
            if e.cat != Some(Category::GpuCompute) {
                continue;
            }
            let rank = self.job.rank(e.rank);
            let (ev, i) = (&rank.events, e.event.index());
            if ev.kind[i] != Kind::Compute {
                continue;
            }
            let by_task = || {
                let t = task_type(self.job, rank, i)?;
                tasks.iter().find(|s| s.op == t).map(|s| s.keep_ppm)
            };
            let keep = match ev.op[i].is_none() {
                true => None,
                false => *by_op.entry((e.rank, ev.op[i])).or_insert_with(|| {
                    let (op, dtype) = kernel_operator(self.job, rank, i)?;
                    let name = self.job.strings.resolve(ev.name[op.index()]);
                    speedup_for(edits, name, dtype.as_deref()).map(|s| s.keep_ppm)
                }),
            };
            if let Some(ppm) = keep.or_else(|| if tasks.is_empty() { None } else { by_task() }) {
                out.push((k, ppm));
            }
        }
        out
    }
}

/// What a copy staged through pageable memory keeps of its time once its host buffer is
/// pinned: the driver copies each chunk into a pinned staging buffer and then DMAs it, so
/// the bytes cross host memory twice and the DMA waits for the staging (docs/metrics.md,
/// "Replay": pageable_memcpy).
pub(super) const PINNED_KEEP_PPM: u32 = 500_000;

impl StepReplay<'_> {
    /// Host → device copies through pageable memory come from pinned memory, asynchronously
    /// (`pin_memory=True`, `non_blocking=True`): each copy keeps [`PINNED_KEEP_PPM`] of its
    /// time, and the runtime call that issued it, which held the host until the copy was
    /// done, takes what the rank's median kernel launch takes (an enqueue).
    pub(super) fn pin_copies(&self, w: &mut [Option<Ns>]) {
        let mut callers: FxHashSet<(RankIx, EventIx)> = FxHashSet::default();
        let mut copies = false;
        for e in &self.g.edges {
            let ev = &self.job.rank(e.rank).events;
            let i = e.event.index();
            if e.cat == Some(Category::GpuCompute)
                && pageable_h2d(ev.kind[i], self.job.role(ev.name[i]))
            {
                copies = true;
                if let Some(l) = ev.link[i].get() {
                    callers.insert((e.rank, EventIx::of(l)));
                }
            }
        }
        // Most steps copy nothing through pageable memory (the ideal step runs this on all).
        if !copies {
            return;
        }
        let mut launches: FxHashMap<RankIx, Vec<Ns>> = FxHashMap::default();
        for e in &self.g.edges {
            let ev = &self.job.rank(e.rank).events;
            let i = e.event.index();
            if e.cat == Some(Category::Cpu) && self.job.role(ev.name[i]).kernel_launch {
                launches.entry(e.rank).or_default().push(ev.dur[i]);
            }
        }
        let typical: FxHashMap<RankIx, Ns> = launches
            .into_iter()
            .map(|(r, mut v)| {
                v.sort_unstable();
                (r, median_sorted(&v))
            })
            .collect();
        for (k, e) in self.g.edges.iter().enumerate() {
            let Some(x) = w[k] else { continue };
            let ev = &self.job.rank(e.rank).events;
            let i = e.event.index();
            match e.cat {
                Some(Category::GpuCompute)
                    if pageable_h2d(ev.kind[i], self.job.role(ev.name[i])) =>
                {
                    if let Some(base) = self.base.w[k] {
                        w[k] = Some(x.min(kept(base, PINNED_KEEP_PPM)));
                    }
                }
                Some(Category::Cpu) if callers.contains(&(e.rank, e.event)) => {
                    let (Some(&t), dur) = (typical.get(&e.rank), ev.dur[i]) else {
                        continue;
                    };
                    if dur > t {
                        w[k] = Some(mul_div(x, i128::from(t), i128::from(dur)));
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether a device event is a host → device copy through pageable memory.
fn pageable_h2d(kind: Kind, role: &Role) -> bool {
    kind == Kind::Memcpy && role.pageable == Some(PageableCopy::HostToDevice)
}

impl StepReplay<'_> {
    /// On each rank-step of `clocks` in this step, every compute kernel edge at most its
    /// share of its measured time (the kernels ran at the top clock).
    pub(super) fn clock_up(&self, w: &mut [Option<Ns>], clocks: &[AtTopClock]) {
        let here: FxHashMap<RankId, u32> = clocks
            .iter()
            .filter(|c| c.step == self.step)
            .map(|c| (c.rank, c.keep_ppm))
            .collect();
        if here.is_empty() {
            return;
        }
        for (k, e) in self.g.edges.iter().enumerate() {
            let Some(x) = w[k].filter(|_| e.cat == Some(Category::GpuCompute)) else {
                continue;
            };
            let rank = self.job.rank(e.rank);
            let (Some(&ppm), Some(base)) = (here.get(&rank.id), self.base.w[k]) else {
                continue;
            };
            if rank.events.kind[e.event.index()] == Kind::Compute {
                w[k] = Some(x.min(kept(base, ppm)));
            }
        }
    }
}
