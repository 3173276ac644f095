//! Host-side causes (Hermes Table 2), over the ranks and steps in scope:
//!
//! - **Launch**: kernels launched, the share shorter than their launch call (the host cannot
//!   keep the device fed with them), time inside launch calls while every device lane is idle
//!   (`launch_idle_ns`), and the breakdown's host-bound time.
//! - **Synchronization points**: blocking runtime calls (device/stream/event synchronize,
//!   synchronous `cudaMemcpy`), grouped by the call and the outermost `aten::` op around it
//!   (`aten::item`, `aten::to`: the Python line's cause), with count, blocked time, and the
//!   device idle time right after each returns (the cost: the host could not queue ahead).
//! - **Data loading**: `…DataLoader…` annotations: their time and the part of it during which
//!   the device idles, as a share of the step.
//! - **Garbage collection**: explicit GC events (names `gc`, `gc:*`, `…garbage collect…`);
//!   otherwise conjectured, as msprof-analyze does: free time (neither device nor the
//!   launching threads busy) in one stretch of at least [`GC_GAP_NS`].
//! - **Allocator churn**: `cudaMalloc`/`cudaFree` (and host/hip variants) after a rank's first
//!   profiled step, when the caching allocator should be warm.
//! - **Pageable copies**: `Memcpy HtoD (Pageable -> Device)` (and DtoH to pageable), which
//!   are staged and synchronous.

use super::breakdown::Breakdown;
use super::intervals::IntervalSet;
use super::steps::StepSpan;
use crate::model::{Job, Kind, LaneSide, NONE, Rank};
use crate::time::Ns;
use rayon::prelude::*;
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Launch {
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SyncPoint {
    /// The blocking runtime call.
    pub call: String,
    /// The outermost `aten::` op around it (`-` when none).
    pub caused_by: String,
    /// Calls.
    pub count: u64,
    /// Σ call durations.
    pub blocked_ns: Ns,
    /// Σ device idle time right after the calls return until the device has work again
    /// (within the call's step span): what the sync costs, since the host could not run
    /// ahead to queue work.
    pub device_idle_after_ns: Ns,
    /// Ranks where it happens.
    pub ranks: Vec<u32>,
}

/// Data loading.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
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
    pub max_at: Option<(u32, u32)>,
}

/// A conjectured or recorded GC pause.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GcPause {
    /// Rank.
    pub rank: u32,
    /// Step.
    pub step: u32,
    /// Start, rank clock.
    pub start_ns: Ns,
    /// Length.
    pub dur_ns: Ns,
    /// A GC event in the trace, not a conjecture from free time.
    pub recorded: bool,
}

/// Calls of one allocator or copy kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallStat {
    /// Calls.
    pub count: u64,
    /// Σ durations.
    pub total_ns: Ns,
    /// Ranks where they happen.
    pub ranks: Vec<u32>,
}

/// Everything the host analyses find.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Host {
    /// Kernel launches.
    pub launch: Launch,
    /// Blocking calls by (call, cause), most blocked time first.
    pub syncs: Vec<SyncPoint>,
    /// Data loading.
    pub data_loading: DataLoading,
    /// GC pauses, recorded or conjectured, longest first.
    pub gc: Vec<GcPause>,
    /// Allocator calls after each rank's first step.
    pub allocator: CallStat,
    /// Pageable host → device copies.
    pub pageable_h2d: CallStat,
    /// Device → pageable host copies.
    pub pageable_d2h: CallStat,
}

/// Name predicates, evaluated once per distinct name.
struct Names {
    blocking: Vec<bool>,
    aten: Vec<bool>,
    data_loader: Vec<bool>,
    gc: Vec<bool>,
    allocator: Vec<bool>,
    h2d: Vec<bool>,
    d2h: Vec<bool>,
}

impl Names {
    fn new(job: &Job) -> Names {
        let mut n = Names {
            blocking: vec![],
            aten: vec![],
            data_loader: vec![],
            gc: vec![],
            allocator: vec![],
            h2d: vec![],
            d2h: vec![],
        };
        for (_, s) in job.strings.iter() {
            n.blocking.push(is_sync_call(s));
            n.aten.push(s.starts_with("aten::"));
            n.data_loader.push(is_data_loader(s));
            let l = s.to_ascii_lowercase();
            n.gc.push(l == "gc" || l.starts_with("gc:") || l.contains("garbage collect"));
            n.allocator.push(matches!(
                s,
                "cudaMalloc"
                    | "cudaFree"
                    | "cudaMallocHost"
                    | "cudaFreeHost"
                    | "cudaHostAlloc"
                    | "cudaMallocAsync"
                    | "cudaFreeAsync"
                    | "hipMalloc"
                    | "hipFree"
            ));
            n.h2d.push(s.starts_with("Memcpy HtoD (Pageable"));
            n.d2h
                .push(s.starts_with("Memcpy DtoH") && s.contains("-> Pageable"));
        }
        n
    }
}

/// Runs the host analyses over the ranks in `ranks` (indices into `job.ranks`) and the step
/// numbers `in_step` accepts. `busy[r]` and `spans[r]` are per `job.ranks` index.
pub fn host(
    job: &Job,
    busy: &[RankBusy],
    spans: &[Vec<StepSpan>],
    rows: &[Breakdown],
    in_scope: impl Fn(u32, u32) -> bool + Sync,
) -> Host {
    let names = Names::new(job);
    let mut h = Host::default();
    // Ranks in parallel, each into its own partial result, merged in rank order.
    let parts: Vec<(Host, Syncs)> = job
        .ranks
        .par_iter()
        .enumerate()
        .map(|(ri, rank)| {
            let mut h = Host::default();
            let mut syncs: BTreeMap<(String, String), SyncPoint> = BTreeMap::new();
            let step_no = |i: usize| {
                let s = rank.events.step[i];
                (s != NONE).then(|| rank.steps[s as usize].number)
            };
            let ok = |i: usize| step_no(i).is_some_and(|n| in_scope(rank.id, n));
            let first_step = rank.steps.first().map(|s| s.number);
            let ev = &rank.events;
            let mut launch_calls = Vec::new();
            let mut loaders = Vec::new();
            for i in 0..ev.len() {
                if !ok(i) {
                    continue;
                }
                let name = ev.name[i] as usize;
                let k = ev.kind[i];
                if k.is_device_work() && ev.link[i] != NONE {
                    let l = ev.link[i] as usize;
                    h.launch.launched += 1;
                    h.launch.shorter_than_launch += u64::from(ev.dur[i] < ev.dur[l]);
                    h.launch.launch_call_ns += ev.dur[l];
                    launch_calls.push((ev.start[l], ev.end(l)));
                }
                if k == Kind::Annotation && names.data_loader[name] && is_cpu(rank, i) {
                    loaders.push((ev.start[i], ev.end(i)));
                    h.data_loading.count += 1;
                    h.data_loading.total_ns += ev.dur[i];
                    if ev.dur[i] > h.data_loading.max_ns {
                        h.data_loading.max_ns = ev.dur[i];
                        h.data_loading.max_at = step_no(i).map(|s| (rank.id, s));
                    }
                }
                if names.gc[name] && is_cpu(rank, i) {
                    h.gc.push(GcPause {
                        rank: rank.id,
                        step: step_no(i).unwrap_or(0),
                        start_ns: ev.start[i],
                        dur_ns: ev.dur[i],
                        recorded: true,
                    });
                }
                if k == Kind::Launch && names.allocator[name] && step_no(i) != first_step {
                    add(&mut h.allocator, rank.id, ev.dur[i]);
                }
                if k == Kind::Memcpy && names.h2d[name] {
                    add(&mut h.pageable_h2d, rank.id, ev.dur[i]);
                }
                if k == Kind::Memcpy && names.d2h[name] {
                    add(&mut h.pageable_d2h, rank.id, ev.dur[i]);
                }
            }
            let device = &busy[ri].device;
            let idle_in = |iv: Vec<(Ns, Ns)>| {
                let set = IntervalSet::from_intervals(iv);
                set.total() - set.intersect(device).total()
            };
            h.launch.launch_idle_ns += idle_in(launch_calls);
            h.data_loading.device_idle_ns += idle_in(loaders);
            for_blocking_calls(job, rank, &names, &ok, |call, cause, dur, end| {
                // Within the call's step span: the next step's own idle is its own business.
                let horizon = spans[ri]
                    .iter()
                    .find(|s| s.start <= end && end < s.end)
                    .map_or(end, |s| s.end);
                let idle_after = device
                    .gaps_within(end, horizon)
                    .first()
                    .filter(|g| g.0 == end)
                    .map_or(0, |g| g.1 - g.0);
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
            // Conjectured GC: long free stretches, when the trace records no GC itself.
            for sp in spans[ri].iter().filter(|s| in_scope(rank.id, s.number)) {
                for (a, b) in busy[ri].busy.gaps_within(sp.start, sp.end) {
                    if b - a >= GC_GAP_NS {
                        h.gc.push(GcPause {
                            rank: rank.id,
                            step: sp.number,
                            start_ns: a,
                            dur_ns: b - a,
                            recorded: false,
                        });
                    }
                }
            }
            (h, syncs)
        })
        .collect();
    let mut syncs: BTreeMap<(String, String), SyncPoint> = BTreeMap::new();
    for (p, s) in parts {
        merge(&mut h, p);
        for (k, v) in s {
            match syncs.get_mut(&k) {
                Some(e) => {
                    e.count += v.count;
                    e.blocked_ns += v.blocked_ns;
                    e.device_idle_after_ns += v.device_idle_after_ns;
                    e.ranks.extend(v.ranks);
                }
                None => {
                    syncs.insert(k, v);
                }
            }
        }
    }
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

/// Runtime calls that block the host until the device catches up: device, stream and event
/// synchronize, synchronous `cudaMemcpy` (and their hip twins).
pub fn is_sync_call(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// Data-loader annotations (`enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__`).
pub fn is_data_loader(name: &str) -> bool {
    name.contains("DataLoader")
}

/// Sync points by (call, cause).
type Syncs = BTreeMap<(String, String), SyncPoint>;

/// Adds one rank's partial result (launch counts, data loading, GC, call stats).
fn merge(h: &mut Host, p: Host) {
    let (l, q) = (&mut h.launch, p.launch);
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
    h.gc.extend(p.gc);
    for (a, b) in [
        (&mut h.allocator, p.allocator),
        (&mut h.pageable_h2d, p.pageable_h2d),
        (&mut h.pageable_d2h, p.pageable_d2h),
    ] {
        a.count += b.count;
        a.total_ns += b.total_ns;
        a.ranks.extend(b.ranks);
    }
}

fn is_cpu(rank: &Rank, i: usize) -> bool {
    rank.lanes[rank.events.lane[i] as usize].side == LaneSide::Cpu
}

fn add(s: &mut CallStat, rank: u32, dur: Ns) {
    s.count += 1;
    s.total_ns += dur;
    if s.ranks.last() != Some(&rank) {
        s.ranks.push(rank);
    }
}

fn ratio(a: i64, b: i64) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

/// Calls `f(call, cause, duration, end)` for every blocking call in scope, with the outermost
/// `aten::` op enclosing it on its thread.
fn for_blocking_calls(
    job: &Job,
    rank: &Rank,
    names: &Names,
    ok: &dyn Fn(usize) -> bool,
    mut f: impl FnMut(&str, &str, Ns, Ns),
) {
    let ev = &rank.events;
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut open: Vec<usize> = Vec::new();
        for i in rank.lane_events(l as u16) {
            while open.last().is_some_and(|&p| ev.end(p) <= ev.start[i]) {
                open.pop();
            }
            let name = ev.name[i] as usize;
            if names.blocking[name] && ev.kind[i] == Kind::Launch && ok(i) {
                let cause = open
                    .iter()
                    .find(|&&p| names.aten[ev.name[p] as usize])
                    .map_or("-", |&p| job.strings.resolve(ev.name[p]));
                f(job.strings.resolve(ev.name[i]), cause, ev.dur[i], ev.end(i));
            }
            if matches!(ev.kind[i], Kind::HostOp | Kind::Annotation | Kind::Launch) {
                open.push(i);
            }
        }
    }
}
