//! Fixes as transforms of a step's replay weights (docs/metrics.md, "Replay"): the cause a
//! finding names taken away, the step replayed, the step time it would take. A transform
//! only lowers, zeroes or drops measured edges, except [`Fix::Balance`] and
//! [`Fix::Stages`], which move work to the mean (so a lighter rank may get more).

use super::cover::{Cover, Stall};
use super::step::{StepReplay, Work};
use super::transfers::{Speeds, mul_div};
use crate::analysis::breakdown::Breakdown;
use crate::analysis::cluster::Stage;
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::Category;
use crate::model::{CollOp, Job, LaneSide, RankId, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A change to the measured step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// A kind of host stall takes no time (with everything nested under it).
    Stall(Stall),
    /// Blocking synchronizations no longer block: the host goes on at the call.
    Syncs,
    /// Launch delays 0, launch calls and framework operators free (graph capture): kernels
    /// start when their stream and inputs allow.
    LaunchDelays,
    /// These ranks' own work (device and host) at the mean of their peers (their pipeline
    /// stage's other ranks, else every other rank).
    Ranks(Vec<RankId>),
    /// Every rank's own work at the mean over the ranks: ranks and stages balanced.
    Balance,
    /// Every pipeline stage's work at the mean stage's, keeping each stage's own spread.
    Stages,
    /// In these steps, each rank's own work at its mean over the other steps.
    SlowSteps(Vec<StepNo>),
    /// Collectives smaller than this many bytes (or of unknown size) fused into buckets.
    Fuse(u64),
    /// Transfers of instances these ranks are members of at their type's median speed.
    Links(Vec<RankId>),
    /// Transfers of these collectives at their type's median speed.
    MedianComm(CommKind),
    /// All of the parameter-free fixes at once (OSDI'25's ideal step).
    Ideal,
}

/// Which collectives a communication fix concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommKind {
    /// Every collective and point-to-point transfer.
    All,
    /// One collective type.
    Op(CollOp),
    /// Point-to-point transfers (pipeline sends and receives).
    P2p,
}

/// The bucket size small collectives are fused to unless the user names one: DDP's 25 MiB.
pub const DEFAULT_BUCKET_BYTES: u64 = 25 << 20;

/// The fixes [`Fix::Ideal`] applies, in order (stalls before the work is balanced, so the
/// balance is of the work that remains).
const IDEAL: [Fix; 10] = [
    Fix::Stall(Stall::DataLoader),
    Fix::Stall(Stall::Gc),
    Fix::Stall(Stall::Allocator),
    Fix::Stall(Stall::GraphCapture),
    Fix::Stall(Stall::OnlineCompile),
    Fix::Syncs,
    Fix::LaunchDelays,
    Fix::Balance,
    Fix::Fuse(DEFAULT_BUCKET_BYTES),
    Fix::MedianComm(CommKind::All),
];

/// What the transforms read besides the step: the job's stalls, its collectives' speeds,
/// the breakdown rows and the pipeline stages.
pub struct Context<'a> {
    job: &'a Job,
    covers: [OnceLock<Cover>; Stall::ALL.len()],
    speeds: Speeds,
    rows: &'a [Breakdown],
    stages: Option<&'a [Stage]>,
}

impl<'a> Context<'a> {
    /// The context of a job with its analyses' rows and stages.
    pub fn new(
        job: &'a Job,
        comm: &Comm,
        rows: &'a [Breakdown],
        stages: Option<&'a [Stage]>,
    ) -> Context<'a> {
        Context {
            job,
            covers: Default::default(),
            speeds: Speeds::of(comm),
            rows,
            stages,
        }
    }

    /// Whether the job has pipeline stages.
    pub fn has_stages(&self) -> bool {
        self.stages.is_some_and(|s| s.len() > 1)
    }

    /// Where `s` holds the host threads (computed on first use).
    pub fn cover(&self, s: Stall) -> &Cover {
        let k = Stall::ALL.iter().position(|&x| x == s).unwrap_or(0);
        self.covers[k].get_or_init(|| Cover::of(self.job, s))
    }
}

impl StepReplay<'_> {
    /// The step's replay weights with `fixes` applied in order.
    pub fn weights(&self, cx: &Context, fixes: &[Fix]) -> Vec<Option<Ns>> {
        let mut w = self.base.w.clone();
        for f in fixes {
            self.apply(cx, f, &mut w);
        }
        w
    }

    /// Applies `fix` to weights `w`.
    pub fn apply(&self, cx: &Context, fix: &Fix, w: &mut [Option<Ns>]) {
        match fix {
            Fix::Stall(s) => self.zero_stall(cx.cover(*s), w),
            Fix::Syncs => self.drop_syncs(w),
            Fix::LaunchDelays => self.free_launches(w),
            Fix::Ranks(ids) => {
                let targets = self.peer_means(cx, ids, w);
                self.scale_work(w, &targets);
            }
            Fix::Balance => {
                let all: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
                let work = self.work(w);
                let mean = mean_of(&work, &all);
                let targets = all.iter().map(|&r| (r, mean)).collect();
                self.scale_work(w, &targets);
            }
            Fix::Stages => {
                let targets = self.stage_targets(cx, w);
                self.scale_work(w, &targets);
            }
            Fix::SlowSteps(steps) if steps.contains(&self.step) => {
                let targets = self.other_steps(cx, w);
                self.scale_work(w, &targets);
            }
            Fix::SlowSteps(_) => {}
            Fix::Fuse(_) | Fix::Links(_) | Fix::MedianComm(_) => {
                let targets = self.transfer_targets(cx, fix);
                self.scale_transfers(w, &targets);
            }
            Fix::Ideal => {
                for f in &IDEAL {
                    self.apply(cx, f, w);
                }
            }
        }
    }

    /// The event an edge spends, as (lane, start, end, role) on its rank.
    fn event(&self, k: usize) -> (u16, Ns, Ns, &crate::model::Role) {
        let e = &self.g.edges[k];
        let ev = &self.job.rank(e.rank).events;
        let i = e.event.index();
        (
            ev.lane[i],
            ev.start[i],
            ev.end(i),
            self.job.role(ev.name[i]),
        )
    }

    /// Host time inside the stall takes none; the device syncs of calls inside it no longer
    /// hold the host.
    fn zero_stall(&self, cover: &Cover, w: &mut [Option<Ns>]) {
        if cover.is_empty() {
            return;
        }
        for (k, e) in self.g.edges.iter().enumerate() {
            if w[k].is_none() || Work::of(e.cat) == Some(Work::Device) {
                continue;
            }
            if matches!(
                e.cat,
                Some(Category::Communication | Category::LaunchOverhead)
            ) {
                continue;
            }
            let (lane, s, end, _) = self.event(k);
            if cover.holds(e.rank, lane, s, end) {
                w[k] = if e.cat.is_some() { Some(0) } else { None };
            }
        }
    }

    /// A blocking call's dependency on the device work it waited for is dropped.
    fn drop_syncs(&self, w: &mut [Option<Ns>]) {
        for (k, e) in self.g.edges.iter().enumerate() {
            if e.cat.is_none() && w[k].is_some() && self.event(k).3.is_blocking() {
                w[k] = None;
            }
        }
    }

    /// Launch delays 0; on ranks with a device, launch calls and framework operators take
    /// no host time (a captured graph replays their kernels without dispatching them).
    fn free_launches(&self, w: &mut [Option<Ns>]) {
        let device: Vec<bool> = self
            .job
            .ranks
            .iter()
            .map(|r| r.lanes.iter().any(|l| l.side == LaneSide::Device))
            .collect();
        for (k, e) in self.g.edges.iter().enumerate() {
            let role = self.event(k).3;
            let dispatch = role.kernel_launch || (role.framework_op && device[e.rank.get()]);
            let host = e.cat == Some(Category::Cpu) && dispatch;
            if w[k].is_some() && (e.cat == Some(Category::LaunchOverhead) || host) {
                w[k] = Some(0);
            }
        }
    }

    /// Each rank's own work scaled to its target ([device, host] per rank position).
    fn scale_work(&self, w: &mut [Option<Ns>], targets: &FxHashMap<usize, [Ns; 2]>) {
        let work = self.work(w);
        for (k, e) in self.g.edges.iter().enumerate() {
            let (Some(class), Some(x)) = (Work::of(e.cat), w[k]) else {
                continue;
            };
            let Some(t) = targets.get(&e.rank.get()) else {
                continue;
            };
            let c = class as usize;
            let own = work[e.rank.get()][c];
            if own > 0 {
                w[k] = Some(mul_div(x, i128::from(t[c]), i128::from(own)));
            }
        }
    }

    /// For each of `ids` on the step: its peers' mean work where its own is above it.
    fn peer_means(
        &self,
        cx: &Context,
        ids: &[RankId],
        w: &[Option<Ns>],
    ) -> FxHashMap<usize, [Ns; 2]> {
        let work = self.work(w);
        let present: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
        let stage_of = |r: usize| {
            let id = self.job.ranks[r].id;
            cx.stages?.iter().position(|s| s.ranks.contains(&id))
        };
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
            let mean = mean_of(&work, &peers);
            out.insert(r, [mean[0].min(work[r][0]), mean[1].min(work[r][1])]);
        }
        out
    }

    /// Every stage's ranks scaled by (mean stage work / their stage's work).
    fn stage_targets(&self, cx: &Context, w: &[Option<Ns>]) -> FxHashMap<usize, [Ns; 2]> {
        let work = self.work(w);
        let present: Vec<usize> = self.ranks().iter().map(|r| r.get()).collect();
        let Some(stages) = cx.stages else {
            let mean = mean_of(&work, &present);
            return present.iter().map(|&r| (r, mean)).collect();
        };
        let members: Vec<Vec<usize>> = stages
            .iter()
            .map(|s| {
                present
                    .iter()
                    .copied()
                    .filter(|&r| s.ranks.contains(&self.job.ranks[r].id))
                    .collect()
            })
            .filter(|m: &Vec<usize>| !m.is_empty())
            .collect();
        let means: Vec<[Ns; 2]> = members.iter().map(|m| mean_of(&work, m)).collect();
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

    /// Each rank's work at (its mean compute over the other steps / this step's), when less.
    fn other_steps(&self, cx: &Context, w: &[Option<Ns>]) -> FxHashMap<usize, [Ns; 2]> {
        let work = self.work(w);
        let mut out = FxHashMap::default();
        for r in self.ranks() {
            let id = self.job.rank(r).id;
            let compute = |b: &Breakdown| b.compute_ns + b.overlap_ns;
            let mut here = None;
            let (mut sum, mut n) = (0 as Ns, 0 as Ns);
            for b in cx.rows.iter().filter(|b| b.rank == id) {
                if b.step == self.step {
                    here = Some(compute(b));
                } else {
                    sum += compute(b);
                    n += 1;
                }
            }
            let Some(here) = here.filter(|&h| h > 0 && n > 0) else {
                continue;
            };
            let other = (sum / n).min(here);
            let own = work[r.get()];
            out.insert(
                r.get(),
                std::array::from_fn(|c| mul_div(own[c], i128::from(other), i128::from(here))),
            );
        }
        out
    }

    /// Per instance of the step the fix concerns: its target transfer and its measured one.
    fn transfer_targets(&self, cx: &Context, fix: &Fix) -> FxHashMap<usize, (Ns, Ns)> {
        let comm = self.comm;
        let mut insts: Vec<usize> = self.instance_of.values().copied().collect();
        insts.sort_unstable();
        insts.dedup();
        let p2p = |k: usize| {
            comm.instance(k).is_some_and(|(i, _)| {
                i.p2p.is_some() || matches!(i.op, CollOp::Send | CollOp::Recv | CollOp::SendRecv)
            })
        };
        let concerned = |k: usize| -> bool {
            let Some((inst, _)) = comm.instance(k) else {
                return false;
            };
            match fix {
                Fix::Fuse(b) => !p2p(k) && inst.bytes.is_none_or(|x| x < *b),
                Fix::Links(ids) => inst
                    .members
                    .iter()
                    .any(|m| ids.contains(&self.job.rank(m.rank).id)),
                Fix::MedianComm(CommKind::All) => true,
                Fix::MedianComm(CommKind::P2p) => p2p(k),
                Fix::MedianComm(CommKind::Op(op)) => inst.op == *op && !p2p(k),
                _ => false,
            }
        };
        insts.retain(|&k| concerned(k));
        // Small calls per (type, group) in the step: what one fused call replaces.
        let mut per_group: FxHashMap<(CollOp, u32), u64> = FxHashMap::default();
        for &k in &insts {
            if let Some((i, _)) = comm.instance(k) {
                *per_group.entry((i.op, i.group)).or_default() += 1;
            }
        }
        let mut out = FxHashMap::default();
        for k in insts {
            let Some((inst, t)) = comm.instance(k) else {
                continue;
            };
            let target = match fix {
                Fix::Fuse(_) => {
                    let m = per_group.get(&(inst.op, inst.group)).copied().unwrap_or(1);
                    cx.speeds.fused(comm, k, m)
                }
                // At the type's median speed, or its best line when that is faster (a
                // type with few instances has the stalled one as its median).
                _ => {
                    let best = cx.speeds.fused(comm, k, 1);
                    match (cx.speeds.median(comm, k), best) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                }
            };
            if let Some(x) = target {
                out.insert(k, (x.min(t.timing.transit_ns), t.timing.transit_ns));
            }
        }
        out
    }

    /// Transfer edges of the concerned instances scaled by target / measured transit.
    fn scale_transfers(&self, w: &mut [Option<Ns>], targets: &FxHashMap<usize, (Ns, Ns)>) {
        for (k, e) in self.g.edges.iter().enumerate() {
            if e.cat != Some(Category::Communication) {
                continue;
            }
            let Some(x) = w[k] else { continue };
            let Some(inst) = self.instance_of.get(&(e.rank, e.event)) else {
                continue;
            };
            if let Some(&(target, measured)) = targets.get(inst) {
                if measured > 0 {
                    w[k] = Some(mul_div(x, i128::from(target), i128::from(measured)));
                }
            }
        }
    }
}

/// The mean [device, host] work of ranks `of` (positions).
fn mean_of(work: &[[Ns; 2]], of: &[usize]) -> [Ns; 2] {
    let n = Ns::try_from(of.len().max(1)).unwrap_or(1);
    std::array::from_fn(|c| of.iter().map(|&r| work[r][c]).sum::<Ns>() / n)
}
