//! Fixes of the ranks' own work (docs/metrics.md, "Replay"): each concerned rank's device
//! and host work scaled to a target — its peers' mean, the mean over the ranks, its stage's
//! pace, its other steps.

use super::fix::{Context, Fix};
use super::step::{StepReplay, Work};
use super::transfers::mul_div;
use crate::analysis::breakdown::Breakdown;
use crate::model::{RankId, RankIx};
use crate::time::Ns;
use rustc_hash::FxHashMap;

impl StepReplay<'_> {
    /// Scales each concerned rank's work to the target `fix` gives it (`measured`: `w` are
    /// still the measured weights, whose work is known without a pass).
    pub(super) fn rebalance(&self, cx: &Context, fix: &Fix, w: &mut [Option<Ns>], measured: bool) {
        let work: std::borrow::Cow<'_, [[Ns; 2]]> = if measured {
            self.base_work().into()
        } else {
            self.work(w).into()
        };
        let targets = match fix {
            Fix::Ranks(ids) => self.peer_means(cx, ids, &work),
            Fix::Balance => {
                let all: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
                let mean = mean_of(&work, &all);
                all.iter().map(|&r| (r, mean)).collect()
            }
            Fix::Level => self.levels(cx, &work),
            Fix::Stages => self.stage_targets(cx, &work),
            Fix::SlowSteps(steps) if steps.contains(&self.step) => self.other_steps(cx, &work),
            _ => return,
        };
        self.scale_work(w, &targets, &work);
    }

    /// Each rank's own work scaled to its target ([device, host] per rank position).
    /// (`work`: each rank's work under `w`.)
    fn scale_work(
        &self,
        w: &mut [Option<Ns>],
        targets: &FxHashMap<usize, [Ns; 2]>,
        work: &[[Ns; 2]],
    ) {
        // A rank at its target keeps its weights: no pass over its edges.
        for (&r, t) in targets.iter().filter(|&(&r, t)| *t != work[r]) {
            for k in self.rank_edges(r) {
                let e = &self.g.edges[k];
                let (Some(class), Some(x)) = (Work::of(e.cat), w[k]) else {
                    continue;
                };
                let c = class as usize;
                let own = work[r][c];
                if e.rank.get() == r && own > 0 {
                    w[k] = Some(mul_div(x, i128::from(t[c]), i128::from(own)));
                }
            }
        }
    }

    /// For each of `ids` on the step: its peers' mean work where its own is above it.
    fn peer_means(
        &self,
        cx: &Context,
        ids: &[RankId],
        work: &[[Ns; 2]],
    ) -> FxHashMap<usize, [Ns; 2]> {
        let present: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
        let stage_of = |r: usize| cx.stage_of(RankIx::of(r));
        let mut out = FxHashMap::default();
        for &r in &present {
            if !ids.contains(&self.job.ranks[r].id) {
                continue;
            }
            let peers: Vec<usize> = present
                .iter()
                .copied()
                .filter(|&p| p != r && !ids.contains(&self.job.ranks[p].id))
                .filter(|&p| stage_of(p) == stage_of(r))
                .collect();
            if peers.is_empty() {
                continue;
            }
            let mean = mean_of(work, &peers);
            out.insert(r, [mean[0].min(work[r][0]), mean[1].min(work[r][1])]);
        }
        out
    }

    /// Each rank on the step: its peers' mean work (the others of its stage), where its own
    /// is above it ([`Fix::Level`]); per stage sums, so linear in the ranks.
    fn levels(&self, cx: &Context, work: &[[Ns; 2]]) -> FxHashMap<usize, [Ns; 2]> {
        let present: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
        let stage_of = |r: usize| cx.stage_of(RankIx::of(r));
        let mut sums: FxHashMap<Option<usize>, ([Ns; 2], Ns)> = FxHashMap::default();
        for &r in &present {
            let s = sums.entry(stage_of(r)).or_default();
            s.0 = [s.0[0] + work[r][0], s.0[1] + work[r][1]];
            s.1 += 1;
        }
        let mut out = FxHashMap::default();
        for &r in &present {
            let (sum, n) = sums[&stage_of(r)];
            if n > 1 {
                let mean = |c: usize| (sum[c] - work[r][c]) / (n - 1);
                out.insert(r, [mean(0).min(work[r][0]), mean(1).min(work[r][1])]);
            }
        }
        out
    }

    /// Every stage's ranks scaled by (mean stage work / their stage's work).
    fn stage_targets(&self, cx: &Context, work: &[[Ns; 2]]) -> FxHashMap<usize, [Ns; 2]> {
        let present: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
        let Some(stages) = cx.stages else {
            let mean = mean_of(work, &present);
            return present.iter().map(|&r| (r, mean)).collect();
        };
        // Stages partition the ranks: each present rank joins its own.
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); stages.len()];
        for &r in &present {
            if let Some(k) = cx.stage_of(RankIx::of(r)) {
                members[k].push(r);
            }
        }
        members.retain(|m| !m.is_empty());
        let means: Vec<[Ns; 2]> = members.iter().map(|m| mean_of(work, m)).collect();
        let n = Ns::try_from(means.len().max(1)).unwrap_or(1);
        let overall: [Ns; 2] = std::array::from_fn(|c| means.iter().map(|m| m[c]).sum::<Ns>() / n);
        let mut out = FxHashMap::default();
        for (m, mean) in members.iter().zip(&means) {
            for &r in m {
                let t = std::array::from_fn(|c| {
                    mul_div(
                        work[r][c],
                        i128::from(overall[c]),
                        i128::from(mean[c].max(1)),
                    )
                });
                out.insert(r, t);
            }
        }
        out
    }

    /// Each rank's work at its mean over the other steps, when less: device work by compute
    /// (compute + overlap), host work by own work (span − exposed comm), so that a step slow
    /// on the host (a stall) is brought back as one slow on the device.
    fn other_steps(&self, cx: &Context, work: &[[Ns; 2]]) -> FxHashMap<usize, [Ns; 2]> {
        let measures: [fn(&Breakdown) -> Ns; 2] = [
            |b| b.compute_ns + b.overlap_ns,
            |b| b.span_ns.saturating_sub(b.comm_ns),
        ];
        // Per rank and measure: (this step's, Σ over the other steps, how many), in one pass
        // over the rows (a pass per rank is quadratic in the ranks).
        type Acc = [(Option<Ns>, Ns, Ns); 2];
        let mut per_rank: FxHashMap<RankId, Acc> = FxHashMap::default();
        for b in cx.rows {
            let acc = per_rank.entry(b.rank).or_default();
            for (c, m) in measures.iter().enumerate() {
                if b.step == self.step {
                    acc[c].0 = Some(m(b));
                } else {
                    acc[c].1 += m(b);
                    acc[c].2 += 1;
                }
            }
        }
        let mut out = FxHashMap::default();
        for &r in self.ranks() {
            let Some(acc) = per_rank.get(&self.job.rank(r).id) else {
                continue;
            };
            let own = work[r.get()];
            let mut target = own;
            for (c, &(here, sum, n)) in acc.iter().enumerate() {
                if let Some(here) = here.filter(|&h| h > 0 && n > 0) {
                    let other = (sum / n).min(here);
                    target[c] = mul_div(own[c], i128::from(other), i128::from(here));
                }
            }
            if target != own {
                out.insert(r.get(), target);
            }
        }
        out
    }
}

/// The mean [device, host] work of ranks `of` (positions).
fn mean_of(work: &[[Ns; 2]], of: &[usize]) -> [Ns; 2] {
    let n = Ns::try_from(of.len().max(1)).unwrap_or(1);
    std::array::from_fn(|c| of.iter().map(|&r| work[r][c]).sum::<Ns>() / n)
}
