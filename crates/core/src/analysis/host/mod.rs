//! Host-side causes (Hermes Table 2), over the ranks and steps in scope:
//!
//! - **Launch**: kernels launched, the share shorter than their launch call (the host cannot
//!   keep the device fed with them), time inside launch calls while every device lane is idle
//!   (`launch_idle_ns`), and the breakdown's host-bound time.
//! - **Synchronization points**: blocking runtime calls (the `sync` role: device/stream/event
//!   synchronize, synchronous copies), grouped by the call and the outermost framework op
//!   around it (`aten::item`, `aten::to`: the Python line's cause), with count, blocked
//!   time, and the device idle time right after each returns (the cost: the host could not
//!   queue ahead).
//! - **Data loading**: data-loader annotations: their time and the part of it during which
//!   the device idles, as a share of the step.
//! - **Garbage collection**: explicit GC events (the `gc` role); otherwise conjectured, as
//!   msprof-analyze does: free time (neither device nor the launching threads busy) in one
//!   stretch of at least [`GC_GAP_NS`].
//! - **Allocator churn**: allocator calls (`cudaMalloc`, `cudaFree`, ...) after a rank's first
//!   profiled step, when the caching allocator should be warm; every call when the rank has
//!   one step or none (nothing tells warm-up from steady state then), with the device idle
//!   time inside them.
//! - **Operator dispatch**: calls that compile an operator at run time (role
//!   `online_compile`, Ascend's `aclopCompileAndExecute`), with the device idle time inside.
//! - **Graphs**: capture windows and replays ([`graphs`]).
//! - **Pageable copies**: copies from or to pageable host memory, which are staged and
//!   synchronous.

mod blocking;
pub mod env;
mod gaps;
pub mod graphs;

use super::breakdown::Breakdown;
use super::intervals::IntervalSet;
use super::stats::ratio;
use super::steps::StepSpan;
use crate::model::{Job, Kind, LaneSide, PageableCopy, Rank, RankId, StepNo};
use crate::time::Ns;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// A free stretch at least this long with nothing recorded is a conjectured GC pause
/// (msprof-analyze: 200 ms).
pub const GC_GAP_NS: Ns = 200_000_000;

/// Per-rank interval sets the host analyses read.
#[derive(Debug, Default)]
pub struct RankBusy {
    /// C ∪ M ∪ Y: device busy.
    pub device: IntervalSet,
    /// C ∪ M ∪ Y ∪ H: device or launching host threads busy.
    pub busy: IntervalSet,
}

/// Kernel launches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Launch {
    /// Device work events (kernels, collectives, copies, sets), launched or not.
    pub device_work: u64,
    /// Device events with a launching runtime call.
    pub launched: u64,
    /// Those shorter than their launch call.
    pub shorter_than_launch: u64,
    /// shorter / launched.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub shorter_share: f64,
    /// Σ launch-call durations.
    pub launch_call_ns: Ns,
    /// Σ over ranks of launch-call time while every device lane is idle.
    pub launch_idle_ns: Ns,
    /// Σ breakdown host-bound time.
    pub host_bound_ns: Ns,
    /// Σ step spans.
    pub span_ns: Ns,
}

/// Blocking calls of one kind with one cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncPoint {
    /// The blocking runtime call.
    pub call: String,
    /// The outermost `aten::` op around it (`-` when none).
    pub caused_by: String,
    /// Calls of this kind from this op.
    pub count: u64,
    /// Σ call durations.
    pub blocked_ns: Ns,
    /// Σ over the calls of the time the host works (the device idle) right after the call
    /// returns until the device has work again, within the call's step span: what the sync
    /// costs, since the host could not run ahead to queue work.
    pub device_idle_after_ns: Ns,
    /// Ranks where it happens.
    pub ranks: Vec<RankId>,
}

/// A rank and a step (where the longest of something happened).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankStep {
    /// Rank id.
    pub rank: RankId,
    /// Step number.
    pub step: StepNo,
}

impl Serialize for RankStep {
    /// As `[rank, step]` (the report's schema).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.rank, self.step).serialize(s)
    }
}

/// Data loading.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DataLoading {
    /// `…DataLoader…` annotations.
    pub count: u64,
    /// Σ their durations.
    pub total_ns: Ns,
    /// Σ over ranks of their union while the device idles.
    pub device_idle_ns: Ns,
    /// device_idle / Σ step spans.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share_of_step: f64,
    /// The longest single one.
    pub max_ns: Ns,
    /// Its rank and step.
    pub max_at: Option<RankStep>,
    /// Per (rank, step) with loading: device idle while loading, and the step's span (rank
    /// order, then step); what a finding's evidence scope is read from. Not in the JSON.
    #[serde(skip)]
    pub per_step: Vec<(RankStep, Ns, Ns)>,
}

/// A conjectured or recorded GC pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GcPause {
    /// The rank it stopped.
    pub rank: RankId,
    /// The step it fell in.
    pub step: StepNo,
    /// Start, rank clock.
    pub start_ns: Ns,
    /// Its length.
    pub dur_ns: Ns,
    /// A GC event in the trace, not a conjecture from free time.
    pub recorded: bool,
    /// For a conjectured pause (a host gap): the innermost user annotation on the rank's main
    /// thread around it (`DistributedDataParallel.forward`), when there is one.
    pub within: Option<String>,
}

/// Calls of one allocator or copy kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CallStat {
    /// Calls in scope.
    pub count: u64,
    /// Σ durations.
    pub total_ns: Ns,
    /// Ranks where they happen.
    pub ranks: Vec<RankId>,
    /// Σ over ranks of the time inside the calls with every device lane idle (counted for
    /// allocator calls).
    pub device_idle_ns: Ns,
}

/// Everything the host analyses find.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Host {
    /// Kernel launches.
    pub launch: Launch,
    /// Blocking calls by (call, cause), most blocked time first.
    pub syncs: Vec<SyncPoint>,
    /// Data loading.
    pub data_loading: DataLoading,
    /// GC pauses, recorded or conjectured, longest first.
    pub gc: Vec<GcPause>,
    /// Allocator calls after each rank's first step (every call of a rank with ≤ 1 step).
    pub allocator: CallStat,
    /// Operators dispatched through a compile-at-run-time path (Ascend's
    /// `aclopCompileAndExecute`): calls, host time, device idle inside them outside the
    /// catch-up after a sync (which the sync point counts).
    pub op_dispatch: CallStat,
    /// Every rank has one step or none, so every allocator call counted (not in the JSON).
    #[serde(skip)]
    pub allocator_every_call: bool,
    /// Σ of the conjectured pauses' (host gaps') time inside host-bound time (an annotation
    /// open on a launching thread), which launch-bound leaves to them (not in the JSON).
    #[serde(skip)]
    pub gaps_in_host_bound_ns: Ns,
    /// Pageable host → device copies.
    pub pageable_h2d: CallStat,
    /// Device → pageable host copies.
    pub pageable_d2h: CallStat,
    /// Graph capture and replay.
    pub graphs: graphs::Graphs,
    /// Environment settings advised against (Ascend's recorded `ENV_VARIABLES`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<env::EnvSetting>,
    /// Ranks whose input records no host thread (an Ascend kernel table alone): their free
    /// time is the device's idle time, with nothing to say what the host did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecorded_ranks: Vec<RankId>,
}

/// Runs the host analyses over the ranks and steps `in_scope` accepts. `busy` and `spans` are
/// per `job.ranks` index; `rows` are every rank's breakdown rows.
pub fn host(
    job: &Job,
    busy: &[RankBusy],
    spans: &[Vec<StepSpan>],
    rows: &[Breakdown],
    in_scope: impl Fn(RankId, StepNo) -> bool + Sync,
) -> Host {
    // Ranks in parallel, each into its own partial result, merged in rank order.
    let parts: Vec<(Host, Syncs)> = job
        .ranks
        .par_iter()
        .enumerate()
        .map(|(ri, rank)| {
            let scan = RankScan {
                job,
                rank,
                busy: &busy[ri],
                spans: &spans[ri],
                in_scope: &in_scope,
            };
            scan.run()
        })
        .collect();
    let mut h = Host::default();
    let mut syncs = Syncs::new();
    for (p, s) in parts {
        merge(&mut h, p);
        merge_syncs(&mut syncs, s);
    }
    h.allocator_every_call = job.ranks.iter().all(|r| r.steps.len() <= 1);
    h.unrecorded_ranks = job
        .ranks
        .iter()
        .filter(|r| r.lanes.iter().all(|l| l.side != LaneSide::Cpu))
        .map(|r| r.id)
        .collect();
    if h.gc.iter().any(|g| g.recorded) {
        h.gc.retain(|g| g.recorded);
    }
    h.gc.sort_by_key(|g| (std::cmp::Reverse(g.dur_ns), g.rank, g.start_ns));
    for b in rows.iter().filter(|b| in_scope(b.rank, b.step)) {
        h.launch.host_bound_ns += b.host_bound_ns;
        h.launch.span_ns += b.span_ns;
    }
    let span = h.launch.span_ns;
    h.launch.shorter_share = ratio(
        h.launch.shorter_than_launch as i64,
        h.launch.launched as i64,
    );
    h.data_loading.share_of_step = ratio(h.data_loading.device_idle_ns, span);
    h.syncs = syncs.into_values().collect();
    h.syncs
        .sort_by(|a, b| b.blocked_ns.cmp(&a.blocked_ns).then(a.call.cmp(&b.call)));
    h
}

/// Sync points by (call, cause).
type Syncs = BTreeMap<(String, String), SyncPoint>;

/// One rank's host analyses.
struct RankScan<'a, F> {
    job: &'a Job,
    rank: &'a Rank,
    busy: &'a RankBusy,
    spans: &'a [StepSpan],
    in_scope: &'a F,
}

impl<F: Fn(RankId, StepNo) -> bool> RankScan<'_, F> {
    fn ok(&self, i: usize) -> bool {
        self.rank
            .step_of(i)
            .is_some_and(|n| (self.in_scope)(self.rank.id, n))
    }

    fn run(&self) -> (Host, Syncs) {
        let mut h = Host::default();
        let Scanned {
            launch_calls,
            loaders,
            allocs,
            compiles,
            work,
        } = self.events(&mut h);
        let idle_in = |iv: Vec<(Ns, Ns)>| {
            let set = IntervalSet::from_intervals(iv);
            set.total() - set.intersect(&self.busy.device).total()
        };
        h.launch.launch_idle_ns += idle_in(launch_calls);
        h.data_loading.per_step = self.loading_per_step(&loaders);
        h.data_loading.device_idle_ns += idle_in(loaders);
        h.allocator.device_idle_ns += idle_in(allocs);
        let (syncs, catch_up) = self.sync_points();
        // A compile in the catch-up after a sync is the sync's cost: without the sync the
        // queue would have run ahead of it.
        let compiles = IntervalSet::from_intervals(compiles);
        h.op_dispatch.device_idle_ns += compiles.total()
            - compiles
                .intersect(&self.busy.device.union(&catch_up))
                .total();
        let (g, windows) = graphs::scan(self.job, self.rank, &|i| self.ok(i));
        h.graphs = g;
        h.graphs.capture_idle_ns = idle_in(windows);
        let worked = IntervalSet::from_intervals(work).union(&self.busy.device);
        self.host_gaps(&mut h, &worked);
        (h, syncs)
    }

    /// One pass over the events in scope: launches, data loading, recorded GC, allocator
    /// calls, run-time compiles and pageable copies; returns the intervals the rest of the
    /// scan needs.
    fn events(&self, h: &mut Host) -> Scanned {
        let (job, rank) = (self.job, self.rank);
        let ev = &rank.events;
        // With one step or none, warm-up cannot be told apart: every call counts.
        let warm_up = (rank.steps.len() > 1).then(|| rank.steps[0].number);
        let mut s = Scanned::default();
        for i in 0..ev.len() {
            if !self.ok(i) {
                continue;
            }
            let role = job.role(ev.name[i]);
            let k = ev.kind[i];
            // Work on a CPU thread: ops, runtime calls, data loading, a backend's transfers
            // (annotations are windows around work, not work).
            let runs = matches!(k, Kind::HostOp | Kind::Launch)
                || (k == Kind::Annotation && (role.data_loader || role.host_collective.is_some()));
            if runs && is_cpu(rank, i) {
                s.work.push((ev.start[i], ev.end(i)));
            }
            h.launch.device_work += u64::from(k.is_device_work() && !is_cpu(rank, i));
            if let Some(l) = ev.link[i].get().filter(|_| k.is_device_work()) {
                h.launch.launched += 1;
                h.launch.shorter_than_launch += u64::from(ev.dur[i] < ev.dur[l]);
                h.launch.launch_call_ns += ev.dur[l];
                s.launch_calls.push((ev.start[l], ev.end(l)));
            }
            // Old Kineto records `enumerate(DataLoader)#…` as an operator, newer as a
            // user annotation.
            let marks = matches!(k, Kind::Annotation | Kind::HostOp);
            if marks && role.data_loader && is_cpu(rank, i) {
                self.loading(h, &mut s, i);
            }
            if role.gc && is_cpu(rank, i) {
                h.gc.push(GcPause {
                    rank: rank.id,
                    step: rank.step_of(i).unwrap_or_default(),
                    start_ns: ev.start[i],
                    dur_ns: ev.dur[i],
                    recorded: true,
                    within: None,
                });
            }
            self.costly_call(h, &mut s, i, warm_up);
        }
        s
    }

    /// A data-loader event.
    fn loading(&self, h: &mut Host, s: &mut Scanned, i: usize) {
        let (rank, ev) = (self.rank, &self.rank.events);
        s.loaders.push((ev.start[i], ev.end(i)));
        let d = &mut h.data_loading;
        d.count += 1;
        d.total_ns += ev.dur[i];
        if ev.dur[i] > d.max_ns {
            d.max_ns = ev.dur[i];
            d.max_at = rank.step_of(i).map(|step| RankStep {
                rank: rank.id,
                step,
            });
        }
    }

    /// Allocator calls after warm-up, run-time compiles and pageable copies.
    fn costly_call(&self, h: &mut Host, s: &mut Scanned, i: usize, warm_up: Option<StepNo>) {
        let (rank, ev) = (self.rank, &self.rank.events);
        let role = self.job.role(ev.name[i]);
        let (k, iv) = (ev.kind[i], (ev.start[i], ev.end(i)));
        if k == Kind::Launch && role.allocator && (warm_up.is_none() || rank.step_of(i) != warm_up)
        {
            add(&mut h.allocator, rank.id, ev.dur[i]);
            s.allocs.push(iv);
        }
        if k == Kind::Launch && role.online_compile {
            add(&mut h.op_dispatch, rank.id, ev.dur[i]);
            s.compiles.push(iv);
        }
        match (k, role.pageable) {
            (Kind::Memcpy, Some(PageableCopy::HostToDevice)) => {
                add(&mut h.pageable_h2d, rank.id, ev.dur[i])
            }
            (Kind::Memcpy, Some(PageableCopy::DeviceToHost)) => {
                add(&mut h.pageable_d2h, rank.id, ev.dur[i])
            }
            _ => {}
        }
    }

    /// Device idle while loading and the span, per step of this rank with loading.
    fn loading_per_step(&self, loaders: &[(Ns, Ns)]) -> Vec<(RankStep, Ns, Ns)> {
        let mut out = Vec::new();
        for sp in self.spans {
            let iv: Vec<(Ns, Ns)> = loaders
                .iter()
                .filter(|l| sp.start <= l.0 && l.0 < sp.end)
                .copied()
                .collect();
            if iv.is_empty() {
                continue;
            }
            let set = IntervalSet::from_intervals(iv);
            let idle = set.total() - set.intersect(&self.busy.device).total();
            let at = RankStep {
                rank: self.rank.id,
                step: sp.number,
            };
            out.push((at, idle, sp.end - sp.start));
        }
        out
    }

    /// Blocking calls in scope by (call, cause), with the device idle time after each; and
    /// those idle gaps (the catch-up after each call).
    fn sync_points(&self) -> (Syncs, IntervalSet) {
        let mut syncs = Syncs::new();
        let mut catch_up = Vec::new();
        let rank = self.rank;
        let device = &self.busy.device;
        blocking::for_blocking_calls(self.job, rank, &|i| self.ok(i), |call, cause, dur, end| {
            // Within the call's step span: the next step's own idle is its own business.
            let horizon = self
                .spans
                .iter()
                .find(|s| s.start <= end && end < s.end)
                .map_or(end, |s| s.end);
            // The device idles after the call until it has work again; what the sync costs is
            // the part of that gap in which the host is busy catching up (queueing the next
            // work). A gap with the host idle too is free time, its cause unrecorded. A call
            // the device was idle throughout did not wait: the host was behind already, and
            // the idle after it is no sync's (HTA's `nccl_data`: 24 event syncs of 2-9 µs had
            // claimed 118.5 ms of the host's dispatch).
            let waited = device.measure_within(end - dur, end) > 0;
            let gap = device
                .gaps_within(end, horizon)
                .first()
                .filter(|g| g.0 == end && waited)
                .copied();
            catch_up.extend(gap);
            let idle_after = gap.map_or(0, |g| self.busy.busy.measure_within(g.0, g.1));
            let e = syncs
                .entry((call.to_string(), cause.to_string()))
                .or_insert_with(|| SyncPoint {
                    call: call.to_string(),
                    caused_by: cause.to_string(),
                    count: 0,
                    blocked_ns: 0,
                    device_idle_after_ns: 0,
                    ranks: Vec::new(),
                });
            e.count += 1;
            e.blocked_ns += dur;
            e.device_idle_after_ns += idle_after;
            if e.ranks.last() != Some(&rank.id) {
                e.ranks.push(rank.id);
            }
        });
        (syncs, IntervalSet::from_intervals(catch_up))
    }
}

/// Adds one rank's sync points to the job's.
fn merge_syncs(all: &mut Syncs, s: Syncs) {
    for (k, v) in s {
        match all.get_mut(&k) {
            Some(e) => {
                e.count += v.count;
                e.blocked_ns += v.blocked_ns;
                e.device_idle_after_ns += v.device_idle_after_ns;
                e.ranks.extend(v.ranks);
            }
            None => {
                all.insert(k, v);
            }
        }
    }
}

/// Adds one rank's partial result (launch counts, data loading, GC, call stats).
fn merge(h: &mut Host, p: Host) {
    let (l, q) = (&mut h.launch, p.launch);
    l.device_work += q.device_work;
    l.launched += q.launched;
    l.shorter_than_launch += q.shorter_than_launch;
    l.launch_call_ns += q.launch_call_ns;
    l.launch_idle_ns += q.launch_idle_ns;
    let (d, e) = (&mut h.data_loading, p.data_loading);
    d.count += e.count;
    d.total_ns += e.total_ns;
    d.device_idle_ns += e.device_idle_ns;
    if e.max_ns > d.max_ns {
        d.max_ns = e.max_ns;
        d.max_at = e.max_at;
    }
    d.per_step.extend(e.per_step);
    h.gc.extend(p.gc);
    h.gaps_in_host_bound_ns += p.gaps_in_host_bound_ns;
    for (a, b) in [
        (&mut h.allocator, p.allocator),
        (&mut h.op_dispatch, p.op_dispatch),
        (&mut h.pageable_h2d, p.pageable_h2d),
        (&mut h.pageable_d2h, p.pageable_d2h),
    ] {
        a.count += b.count;
        a.total_ns += b.total_ns;
        a.ranks.extend(b.ranks);
        a.device_idle_ns += b.device_idle_ns;
    }
    h.graphs.merge(p.graphs);
}

/// Time intervals `[start, end)`, unsorted.
type Intervals = Vec<(Ns, Ns)>;

/// What one pass over a rank's events collects for the rest of its scan.
#[derive(Default)]
struct Scanned {
    /// Launch calls of device work.
    launch_calls: Intervals,
    /// Data-loader events.
    loaders: Intervals,
    /// Allocator calls counted.
    allocs: Intervals,
    /// Operators compiled at run time (Ascend's single-operator mode).
    compiles: Intervals,
    /// Work on CPU threads (ops, runtime calls, loading, transfers).
    work: Intervals,
}

fn is_cpu(rank: &Rank, i: usize) -> bool {
    rank.lanes[rank.events.lane[i] as usize].side == LaneSide::Cpu
}

fn add(s: &mut CallStat, rank: RankId, dur: Ns) {
    s.count += 1;
    s.total_ns += dur;
    if s.ranks.last() != Some(&rank) {
        s.ranks.push(rank);
    }
}
