//! Fixes as transforms of a step's replay weights (docs/metrics.md, "Replay"): the cause a
//! finding names taken away, the step replayed, the step time it would take. A transform
//! only lowers, zeroes or drops measured edges, except [`Fix::Balance`] and
//! [`Fix::Stages`], which move work to the mean (so a lighter rank may get more).

use super::cover::{Cover, Stall};
use super::edges::EdgeFacts;
use super::step::StepReplay;
use super::transfers::{Speeds, mul_div};
use crate::analysis::breakdown::Breakdown;
use crate::analysis::clocks::AtTopClock;
use crate::analysis::cluster::Stage;
use crate::analysis::comm::Comm;
use crate::analysis::comm::matching::Instance;
use crate::analysis::comm::stats::BusTarget;
use crate::analysis::critical_path::Category;
use crate::analysis::host::GcPause;
use crate::analysis::roofline::speedup::Speedup;
use crate::model::{CollOp, Job, RankId, RankIx, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A change to the measured step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// A kind of host stall takes no time (with everything nested under it).
    Stall(Stall),
    /// On these ranks in these steps, each data-loader call takes the job's typical call
    /// elsewhere, or nothing when the loader is as slow everywhere ([`Cover::floor`]).
    Loader(Vec<RankId>, Vec<StepNo>),
    /// Blocking synchronizations no longer block: the host goes on at the call.
    Syncs,
    /// Launch delays 0, launch calls and framework operators free (graph capture): kernels
    /// start when their stream and inputs allow.
    LaunchDelays,
    /// These ranks' own work (device and host) at the mean of their peers (their pipeline
    /// stage's other ranks, else every other rank), their entry into the step at their
    /// peers' median; those not loaded arrive with the last loaded member
    /// ([`StepReplay::on_time`]).
    Ranks(Vec<RankId>),
    /// Every rank enters the step at its stage's median entry, when it entered later.
    Entries,
    /// Every late rank that is not loaded arrives with the last loaded member.
    Unloaded,
    /// Every rank's own work at the mean over the ranks: ranks and stages balanced.
    Balance,
    /// Every rank's own work at most its peers' mean (the others of its pipeline stage, else
    /// every other rank): no rank slower than the rest, none made slower. The ideal step's
    /// first balancing, so that it gives at least what fixing any one straggler gives.
    Level,
    /// Every pipeline stage's work at the mean stage's, keeping each stage's own spread.
    Stages,
    /// In these steps, each rank's own work at its mean over the other steps.
    SlowSteps(Vec<StepNo>),
    /// Collectives smaller than this many bytes (or of unknown size) fused into buckets.
    Fuse(u64),
    /// DDP's buckets: [`Fix::Fuse`] to this size, and the buckets started as their gradients
    /// are ready ([`Fix::Overlap`]) — what `bucket_cap_mb` gives a job that all-reduces many
    /// small tensors after backward.
    Buckets(u64),
    /// Transfers of instances these ranks are members of at their type's median speed.
    Links(Vec<RankId>),
    /// Transfers of these collectives at their type's median speed.
    MedianComm(CommKind),
    /// The stalled transfers ([`crate::analysis::comm::stalls`]) at what their size needs at
    /// their type's best bus bandwidth in the group.
    Stalls,
    /// Transfers of these collective types of these groups that reach less than the given
    /// bus bandwidth take what they would at it (a link brought up to health).
    Bandwidth(Vec<BusTarget>),
    /// Collectives overlap the compute before them, as DDP/FSDP buckets would: each but a
    /// rank's last in the step waits only for its launch and the collective before it.
    Overlap,
    /// The host's unrecorded time between operators (Python, descheduling) that no stall
    /// holds takes none: what making the loop's own Python faster, or asynchronous, gives.
    HostGaps,
    /// These unrecorded pauses (stretches in which nothing ran on their rank) take no time:
    /// the host gaps over them lose what they overlap.
    Pauses(Vec<GcPause>),
    /// Host → device copies through pageable memory made from pinned memory, without
    /// blocking the host ([`StepReplay::pin_copies`]).
    Pinned,
    /// These ranks' compute kernels in these steps at the share of their time the top
    /// clock gives ([`StepReplay::clock_up`]).
    Clocks(Vec<AtTopClock>),
    /// Kernels of these operator types keep the given share of their time (fused, at the
    /// attainable FLOP/s, in a faster precision).
    Kernels(Vec<Speedup>),
    /// All of the parameter-free fixes at once (OSDI'25's ideal step).
    Ideal,
}

impl Fix {
    /// Whether the ideal step takes this fix from a finding: one whose parameter only the
    /// finding's evidence gives and that [`IDEAL`] has no stronger form of.
    pub fn is_ideal_extra(&self) -> bool {
        matches!(
            self,
            Fix::Kernels(_) | Fix::Bandwidth(_) | Fix::Clocks(_) | Fix::Links(_) | Fix::Stalls
        )
    }
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
const IDEAL: [Fix; 16] = [
    Fix::Stall(Stall::DataLoader),
    Fix::Stall(Stall::Gc),
    Fix::Stall(Stall::Allocator),
    Fix::Stall(Stall::GraphCapture),
    Fix::Stall(Stall::OnlineCompile),
    Fix::Syncs,
    Fix::Pinned,
    Fix::LaunchDelays,
    Fix::HostGaps,
    Fix::Entries,
    Fix::Unloaded,
    Fix::Level,
    Fix::Balance,
    Fix::Fuse(DEFAULT_BUCKET_BYTES),
    Fix::MedianComm(CommKind::All),
    Fix::Overlap,
];

/// What the transforms read besides the step: the job's stalls, its collectives' speeds,
/// the breakdown rows, the pipeline stages and the unrecorded pauses.
pub struct Context<'a> {
    job: &'a Job,
    covers: [OnceLock<Cover>; Stall::ALL.len()],
    speeds: Speeds,
    pub(super) rows: &'a [Breakdown],
    pub(super) stages: Option<&'a [Stage]>,
    /// Each rank's (by position) pipeline stage in `stages`, found once: a rank's stage is
    /// asked for every pair of ranks a balancing fix compares.
    stage_by_rank: Vec<Option<usize>>,
    /// The conjectured pauses the ideal step takes away ([`Fix::Pauses`]).
    pauses: Vec<GcPause>,
    /// The findings' fixes with a parameter the ideal step applies after its own.
    extras: Vec<Fix>,
}

impl<'a> Context<'a> {
    /// The context of a job with its analyses' rows, stages and GC pauses (the host
    /// analysis's; the recorded ones are a stall of their own).
    pub fn new(
        job: &'a Job,
        comm: &Comm,
        rows: &'a [Breakdown],
        stages: Option<&'a [Stage]>,
        pauses: &[GcPause],
    ) -> Context<'a> {
        let mut stage_by_rank = vec![None; job.ranks.len()];
        for (k, s) in stages.unwrap_or_default().iter().enumerate().rev() {
            for r in s.ranks.iter().filter_map(|&id| job.rank_ix(id)) {
                stage_by_rank[r.get()] = Some(k);
            }
        }
        Context {
            job,
            covers: Default::default(),
            speeds: Speeds::of(comm),
            rows,
            stages,
            stage_by_rank,
            pauses: pauses.iter().filter(|p| !p.recorded).cloned().collect(),
            extras: Vec::new(),
        }
    }

    /// The context whose ideal step also applies `fixes` — the findings' fixes that take a
    /// parameter [`IDEAL`] cannot know (operator types' speedups, bandwidth targets, clocks,
    /// slow links, stalled transfers): the ideal step is every fix at once, so it gives at
    /// least what each finding's does. Others are left out ([`Fix::is_ideal_extra`]).
    pub fn with_extras(mut self, fixes: impl IntoIterator<Item = Fix>) -> Context<'a> {
        self.extras = fixes.into_iter().filter(Fix::is_ideal_extra).collect();
        self
    }

    /// The fixes the ideal step applies after its own.
    pub fn extras(&self) -> &[Fix] {
        &self.extras
    }

    /// The context of a job's analysis, as every face replays it (its rows, stages and
    /// pauses), so that they all show the same savings.
    pub fn of(job: &'a Job, a: &'a crate::analysis::Analysis) -> Context<'a> {
        Context::new(job, &a.comm, &a.breakdown, a.stages.as_deref(), &a.host.gc)
            .with_extras(a.whatif.ideal_extras.iter().cloned())
    }

    /// Whether the job has pipeline stages.
    pub fn has_stages(&self) -> bool {
        self.stages.is_some_and(|s| s.len() > 1)
    }

    /// The pipeline stage of the rank at position `r` (`None`: no stages, or not in one).
    pub fn stage_of(&self, r: RankIx) -> Option<usize> {
        self.stage_by_rank.get(r.get()).copied().flatten()
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
        let mut w = Vec::new();
        self.weights_into(cx, fixes, &mut w);
        w
    }

    /// [`Self::weights`] into `w`, reusing its memory (a step replays a dozen fix lists:
    /// fresh vectors of millions of edges each were mostly the kernel zeroing pages).
    pub fn weights_into(&self, cx: &Context, fixes: &[Fix], w: &mut Vec<Option<Ns>>) {
        w.clear();
        // Exactly: a doubling of millions of edges' weights was 50 MB of peak on 64 ranks.
        w.reserve_exact(self.base.w.len() + self.base.ties.len());
        w.extend_from_slice(&self.base.w);
        // The ties' weights after the edges', so that a fix can move a rank's entry.
        w.extend(self.base.ties.iter().map(|t| Some(t.2)));
        for (k, f) in fixes.iter().enumerate() {
            self.apply_to(cx, f, w, k == 0);
        }
    }

    /// What the host transforms ask of each edge (found on first use).
    pub(super) fn edge_facts(&self, cx: &Context) -> &EdgeFacts {
        self.facts
            .get_or_init(|| EdgeFacts::of(self.job, &self.g, &|s| cx.cover(s)))
    }

    /// Applies `fix` to weights `w`.
    pub fn apply(&self, cx: &Context, fix: &Fix, w: &mut [Option<Ns>]) {
        self.apply_to(cx, fix, w, false);
    }

    /// Applies `fix` to `w`; `measured`: `w` are still the measured weights (their work is
    /// known without a pass).
    fn apply_to(&self, cx: &Context, fix: &Fix, w: &mut [Option<Ns>], measured: bool) {
        match fix {
            Fix::Stall(s) => self.shrink_stall(cx, *s, 0, None, w),
            Fix::Loader(ranks, steps) if steps.contains(&self.step) => {
                let floor = cx.cover(Stall::DataLoader).floor(cx.job, ranks, steps);
                self.shrink_stall(cx, Stall::DataLoader, floor, Some(ranks), w);
            }
            Fix::Loader(..) => {}
            Fix::Syncs => self.drop_syncs(cx, w),
            Fix::LaunchDelays => self.free_launches(cx, w),
            Fix::Ranks(ids) => {
                self.rebalance(cx, fix, w, measured);
                self.on_time(Some(ids), w);
                self.enter_with_peers(cx, Some(ids), w);
            }
            Fix::Entries => self.enter_with_peers(cx, None, w),
            Fix::Unloaded => self.on_time(None, w),
            Fix::Balance | Fix::Level | Fix::Stages | Fix::SlowSteps(_) => {
                self.rebalance(cx, fix, w, measured);
            }
            Fix::Fuse(_) | Fix::Links(_) | Fix::MedianComm(_) | Fix::Stalls | Fix::Bandwidth(_) => {
                let targets = self.transfer_targets(cx, fix);
                self.scale_transfers(w, &targets);
                if *fix == Fix::Stalls {
                    self.cut_stalls(w);
                }
            }
            Fix::Overlap => self.overlap(cx, w),
            Fix::Buckets(b) => {
                self.apply_to(cx, &Fix::Fuse(*b), w, measured);
                self.overlap(cx, w);
            }
            Fix::HostGaps => {
                let facts = self.edge_facts(cx);
                for (k, e) in self.g.edges.iter().enumerate() {
                    if e.cat == Some(Category::HostGap) && w[k].is_some() && facts.unstalled(k) {
                        w[k] = Some(0);
                    }
                }
                self.leave_at_once(w);
            }
            Fix::Kernels(edits) => self.speed_up(w, edits),
            Fix::Pinned => self.pin_copies(w),
            Fix::Clocks(c) => self.clock_up(w, c),
            Fix::Pauses(p) => {
                self.drop_pauses(p, w);
                self.bounds_without(p, w);
            }
            Fix::Ideal => {
                for (k, f) in IDEAL.iter().enumerate() {
                    self.apply_to(cx, f, w, measured && k == 0);
                    // The fixes with a parameter, at the parameter the job gives: its
                    // pauses, and this step at most the rank's other steps.
                    if *f == Fix::HostGaps && !cx.pauses.is_empty() {
                        self.drop_pauses(&cx.pauses, w);
                        self.bounds_without(&cx.pauses, w);
                    }
                    if *f == Fix::Level {
                        self.apply_to(cx, &Fix::SlowSteps(vec![self.step]), w, false);
                    }
                }
                for f in &cx.extras {
                    self.apply_to(cx, f, w, false);
                }
            }
        }
    }

    /// Host time inside a stall's intervals longer than `to` (on `ranks`, or all) scaled
    /// to `to` in proportion; removed entirely (`to` 0), the device syncs of calls inside
    /// no longer hold the host.
    fn shrink_stall(
        &self,
        cx: &Context,
        stall: Stall,
        to: Ns,
        ranks: Option<&[RankId]>,
        w: &mut [Option<Ns>],
    ) {
        let cover = cx.cover(stall);
        if cover.is_empty() {
            return;
        }
        for k in self.edge_facts(cx).in_stall(stall) {
            let e = &self.g.edges[k];
            let Some(x) = w[k] else { continue };
            if ranks.is_some_and(|r| !r.contains(&self.job.rank(e.rank).id)) {
                continue;
            }
            if to == 0 {
                // Removed: its time and its syncs' hold on the host go.
                w[k] = e.cat.map(|_| 0);
                continue;
            }
            let ev = &self.job.rank(e.rank).events;
            let i = e.event.index();
            let held = cover.holds(e.rank, ev.lane[i], ev.start[i], ev.end(i));
            if let (Some(len), Some(_)) = (held.filter(|&l| l > to), e.cat) {
                w[k] = Some(mul_div(x, i128::from(to), i128::from(len)));
            }
        }
    }

    /// Each host gap loses the time it overlaps the pauses of its rank (rank clock).
    fn drop_pauses(&self, pauses: &[GcPause], w: &mut [Option<Ns>]) {
        for (k, e) in self.g.edges.iter().enumerate() {
            let (Some(x), Some(Category::HostGap)) = (w[k], e.cat) else {
                continue;
            };
            let id = self.job.rank(e.rank).id;
            let (a, b) = (
                self.g.nodes[e.from as usize].1,
                self.g.nodes[e.to as usize].1,
            );
            let over: Ns = pauses
                .iter()
                .filter(|p| p.rank == id)
                .map(|p| (b.min(p.start_ns + p.dur_ns) - a.max(p.start_ns)).max(0))
                .sum();
            if over > 0 {
                w[k] = Some((x - over).max(0));
            }
        }
    }

    /// A blocking call's dependency on the device work it waited for is dropped.
    fn drop_syncs(&self, cx: &Context, w: &mut [Option<Ns>]) {
        for k in self.edge_facts(cx).syncs() {
            w[k] = None;
        }
    }

    /// Launch delays 0; on ranks with a device, launch calls and framework operators take
    /// no host time (a captured graph replays their kernels without dispatching them).
    fn free_launches(&self, cx: &Context, w: &mut [Option<Ns>]) {
        for (k, e) in self.g.edges.iter().enumerate() {
            if e.cat == Some(Category::LaunchOverhead) && w[k].is_some() {
                w[k] = Some(0);
            }
        }
        for k in self.edge_facts(cx).dispatches() {
            if w[k].is_some() {
                w[k] = Some(0);
            }
        }
    }

    /// Per instance of the step the fix concerns: its target transfer and its measured one.
    fn transfer_targets(&self, cx: &Context, fix: &Fix) -> FxHashMap<usize, (Ns, Ns)> {
        let comm = self.comm;
        let mut insts = self.step_instances();
        let p2p = |k: usize| {
            comm.instance(k).is_some_and(|(i, _)| {
                i.p2p.is_some() || matches!(i.op, CollOp::Send | CollOp::Recv | CollOp::SendRecv)
            })
        };
        let stalled = |k: usize| self.stalled_expected(k);
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
                Fix::Stalls => stalled(k).is_some(),
                Fix::Bandwidth(b) => !p2p(k) && self.bus_target(b, inst).is_some(),
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
                Fix::Stalls => stalled(k),
                Fix::Bandwidth(b) => {
                    let mbps = self.bus_target(b, inst).unwrap_or(0);
                    // busbw ∝ 1 / transit for the same bytes.
                    let busbw = t.timing.busbw_gbps.map(|g| g * 1000.0).unwrap_or(0.0);
                    (busbw > 0.0 && mbps > 0 && busbw < mbps as f64)
                        .then(|| (t.timing.transit_ns as f64 * busbw / mbps as f64) as Ns)
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

    /// The bus bandwidth `targets` names for an instance's type and group, MB/s.
    fn bus_target(&self, targets: &[BusTarget], inst: &Instance) -> Option<u64> {
        let group = &self.comm.calls.groups.get(inst.group as usize)?.name;
        let t = targets
            .iter()
            .find(|t| t.op == inst.op && &t.group == group)?;
        Some(t.mbps)
    }

    /// What instance `k`'s transfer needs when it is one of the job's stalled transfers.
    pub(super) fn stalled_expected(&self, k: usize) -> Option<Ns> {
        let (inst, _) = self.comm.instance(k)?;
        let group = &self.comm.calls.groups.get(inst.group as usize)?.name;
        self.comm
            .stalls
            .iter()
            .find(|s| {
                (s.step, s.index, s.op) == (inst.step, inst.index, inst.op) && &s.group == group
            })
            .map(|s| s.expected_ns)
    }

    /// Transfer edges of the concerned instances scaled by target / measured transit.
    fn scale_transfers(&self, w: &mut [Option<Ns>], targets: &FxHashMap<usize, (Ns, Ns)>) {
        for &(k, inst) in self.transfers() {
            let Some(x) = w[k] else { continue };
            if let Some(&(target, measured)) = targets.get(&inst) {
                if measured > 0 {
                    w[k] = Some(mul_div(x, i128::from(target), i128::from(measured)));
                }
            }
        }
    }
}
