//! The host side (io, cpu and memory categories): data loading, launch overhead, tiny
//! kernels, synchronizations, garbage collection, free time, host work on the critical path,
//! allocator churn, pageable copies.

use super::{Bound, Rule, distinct, per_rank, rows_span, share, undiluted};
use crate::analysis::advisor::{
    Category, Draft, Facts, Focus, HostCall, Kind, Quantity, Thresholds,
};
use crate::analysis::critical_path::{Category as Cp, Window};
use crate::analysis::host::{GcPause, RankStep};
use crate::model::{RankId, StepNo};
use crate::time::Ns;

/// The host-side rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "dataloader",
        category: Category::Io,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: dataloader,
    },
    Rule {
        id: "graph_capture",
        category: Category::Cpu,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: graph_capture,
    },
    Rule {
        id: "launch_bound",
        category: Category::Cpu,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: launch_bound,
    },
    Rule {
        id: "tiny_kernels",
        category: Category::Cpu,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: tiny_kernels,
    },
    Rule {
        id: "sync_points",
        category: Category::Cpu,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: sync_points,
    },
    Rule {
        id: "host_gap",
        category: Category::Cpu,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: host_gap,
    },
    Rule {
        id: "gc",
        category: Category::Cpu,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: gc,
    },
    Rule {
        id: "free_time",
        category: Category::Cpu,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: free_time,
    },
    Rule {
        id: "critical_path_host",
        category: Category::Cpu,
        kind: Kind::Opportunity,
        bound: Bound::Total,
        detect: critical_path_host,
    },
    Rule {
        id: "allocator_churn",
        category: Category::Memory,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: allocator_churn,
    },
    Rule {
        id: "op_dispatch",
        category: Category::Cpu,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: op_dispatch,
    },
    Rule {
        id: "pageable_memcpy",
        category: Category::Memory,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: pageable_memcpy,
    },
    Rule {
        id: "env_settings",
        category: Category::Cpu,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: env_settings,
    },
];

/// What a host-side finding claims.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The device idles while the data loader runs.
    DataLoader {
        /// Device idle while loading / span.
        share: f64,
        /// The longest load.
        longest_ns: Ns,
        /// Its rank and step.
        longest_at: Option<RankStep>,
        /// (rank, step) pairs where loading idles the device noticeably, of those in scope.
        stalls: (u64, u64),
        /// Ranks with such stalls, of those in scope.
        ranks: (u32, u32),
    },
    /// The device idles while a thread captures launches into a graph.
    GraphCapture {
        /// Device idle inside capture windows / span.
        share: f64,
        /// Capture windows.
        captures: u64,
        /// Kernel launches recorded into graphs.
        launches: u64,
        /// Graph replays in the trace.
        replays: u64,
    },
    /// The device idles while the host dispatches work.
    LaunchBound {
        /// Host-bound time (its named causes excluded) / span.
        share: f64,
        /// The trace already captures or replays graphs.
        uses_graphs: bool,
    },
    /// Kernels shorter than their launch.
    TinyKernels {
        /// Shorter / launched.
        share: f64,
        /// Kernels launched.
        launched: u64,
        /// The trace already captures or replays graphs.
        uses_graphs: bool,
    },
    /// Blocking calls the device idles after (the worst call and cause).
    SyncPoints {
        /// Calls of the worst (call, cause) pair.
        count: u64,
        /// The call.
        call: String,
        /// The operator around it.
        caused_by: String,
        /// Device idle after them.
        idle_ns: Ns,
    },
    /// Garbage-collection pauses the trace records.
    Gc {
        /// Pauses found.
        pauses: u64,
        /// The longest.
        longest_ns: Ns,
        /// Its rank.
        rank: RankId,
        /// Its step.
        step: StepNo,
    },
    /// Stretches of a step in which a rank ran nothing recorded (host and device idle).
    HostGap {
        /// Gaps found.
        gaps: u64,
        /// The longest.
        longest_ns: Ns,
        /// Its rank.
        rank: RankId,
        /// Its step.
        step: StepNo,
        /// The annotation on the main thread around it.
        within: Option<String>,
        /// The wait the rank imposed on the others in that step (0: none, or one rank).
        waited_ns: Ns,
        /// The other ranks in scope (what `waited_ns` is spread over).
        others: u32,
    },
    /// Neither the device nor the launching threads work.
    FreeTime {
        /// Free / span.
        share: f64,
        /// False when some rank in scope records no host thread: there, free is only the
        /// device's idle time.
        host_recorded: bool,
    },
    /// Host work on the critical path.
    CriticalPathHost {
        /// Host ops' share of the path.
        share: f64,
        /// The path's window.
        window: Window,
        /// The host op with the most time on it.
        led_by: Option<String>,
    },
    /// Allocator calls after the first step (every call when there is one step or none).
    AllocatorChurn {
        /// Allocator calls counted.
        calls: u64,
        /// Their time.
        total_ns: Ns,
        /// The trace has one step or none, so every call counted.
        every_call: bool,
        /// Ranks the calls and their time are summed over.
        ranks: usize,
    },
    /// Operators compiled at run time (Ascend's single-operator mode).
    OpDispatch {
        /// Calls in scope.
        calls: u64,
        /// Their host time.
        total_ns: Ns,
        /// The device idle inside them.
        idle_ns: Ns,
    },
    /// Host → device copies from pageable memory.
    PageableCopies {
        /// Pageable host → device copies.
        copies: u64,
        /// Their time.
        total_ns: Ns,
    },
    /// Recorded environment settings the tuning guide advises against: (variable, value —
    /// `None` when unset).
    EnvSettings {
        /// The settings.
        settings: Vec<(String, Option<String>)>,
    },
}

/// Environment settings Ascend's tuning guide advises against, as the profile recorded them
/// (msprof-analyze's environment rule). Configuration, not a measured cost: impact 0.
pub fn env_settings(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let env = &f.host?.env;
    if env.is_empty() {
        return None;
    }
    let settings = env
        .iter()
        .map(|s| (s.var.clone(), s.value.clone()))
        .collect();
    Some(
        Draft::new(0, claim(Claim::EnvSettings { settings }))
            .ranks(distinct(env.iter().flat_map(|s| s.ranks.iter().copied())))
            .ops(env.iter().map(|s| s.var.as_str()))
            .number("settings", Quantity::Count(env.len() as u64)),
    )
}

fn claim(c: Claim) -> crate::analysis::advisor::Claim {
    crate::analysis::advisor::Claim::Host(c)
}

/// Device idle while the data loader runs.
pub fn dataloader(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let d = &f.host?.data_loading;
    // The scope is every (rank, step) where loading idles the device for a noticeable share
    // of that step: all ranks and steps when every step stalls, one when one does. One
    // rank's stall is enough (everyone waits for it): the share over the whole cluster's
    // time would dilute it by the rank count.
    let hit: Vec<_> = d
        .per_step
        .iter()
        .filter(|x| x.1 > 0 && share(x.1, x.2) >= t.dataloader_share)
        .map(|x| x.0)
        .collect();
    if d.count == 0 || (hit.is_empty() && d.share_of_step < t.dataloader_share) {
        return None;
    }
    let ranks: Vec<RankId> = distinct(hit.iter().map(|x| x.rank));
    let steps: Vec<StepNo> = distinct(hit.iter().map(|x| x.step));
    let c = Claim::DataLoader {
        share: d.share_of_step,
        longest_ns: d.max_ns,
        longest_at: d.max_at,
        stalls: (hit.len() as u64, f.rows.len() as u64),
        ranks: (ranks.len() as u32, f.ranks),
    };
    Some(
        Draft::new(per_rank(d.device_idle_ns, f), claim(c))
            .focus(Focus::HostCall(HostCall::DataLoader))
            .ranks(ranks)
            .steps(steps)
            .ops(["enumerate(DataLoader)"])
            .number("device_idle_ns", Quantity::Ns(d.device_idle_ns))
            .number("count", Quantity::Count(d.count)),
    )
}

/// Device idle inside graph-capture windows: capture, not a slow host.
pub fn graph_capture(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let h = f.host?;
    let g = &h.graphs;
    let s = share(g.capture_idle_ns, h.launch.span_ns);
    if g.captures == 0 || undiluted(s, f) < t.host_bound_share {
        return None;
    }
    let c = Claim::GraphCapture {
        share: s,
        captures: g.captures,
        launches: g.captured_launches,
        replays: g.replays,
    };
    Some(
        Draft::new(per_rank(g.capture_idle_ns, f), claim(c))
            .focus(Focus::HostCall(HostCall::Graph))
            .ranks(distinct(g.at.iter().map(|x| x.rank)))
            .steps(distinct(g.at.iter().map(|x| x.step)))
            .number("capture_ns", Quantity::Ns(g.capture_ns))
            .number("capture_idle_ns", Quantity::Ns(g.capture_idle_ns))
            .number("captured_launches", Quantity::Count(g.captured_launches)),
    )
}

/// Host-bound time no named cause explains: data loading, graph capture, allocator calls,
/// the catch-up after blocking calls and host gaps have their own rules (floored at 0: they
/// may overlap).
fn dispatch_ns(h: &crate::analysis::host::Host) -> Ns {
    let syncs: Ns = h.syncs.iter().map(|s| s.device_idle_after_ns).sum();
    let gaps = if h.gc.iter().any(|g| !g.recorded) {
        h.gaps_in_host_bound_ns
    } else {
        0
    };
    let named = h.data_loading.device_idle_ns
        + h.graphs.capture_idle_ns
        + h.allocator.device_idle_ns
        + h.op_dispatch.device_idle_ns
        + syncs
        + gaps;
    (h.launch.host_bound_ns - named).max(0)
}

/// Device idle while the host dispatches work (the named causes excluded: their own rules).
pub fn launch_bound(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let h = f.host?;
    let l = &h.launch;
    let dispatch = dispatch_ns(h);
    let s = share(dispatch, l.span_ns);
    // Host-bound needs a device the host feeds: launch links show it, or (a trace without
    // the runtime layer, Ascend's Level0 text export) device work on a rank with host work.
    if (l.launched == 0 && l.device_work == 0) || s < t.host_bound_share {
        return None;
    }
    let c = Claim::LaunchBound {
        share: s,
        uses_graphs: h.graphs.in_use(),
    };
    Some(
        Draft::new(per_rank(dispatch, f), claim(c))
            .focus(Focus::RankLanes)
            .steps(f.steps.iter().map(|s| s.step))
            .number("host_bound_ns", Quantity::Ns(dispatch))
            .number("launch_idle_ns", Quantity::Ns(l.launch_idle_ns))
            .number("launched", Quantity::Count(l.launched)),
    )
}

/// Kernels shorter than their launch.
pub fn tiny_kernels(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let h = f.host?;
    let l = &h.launch;
    if l.launched < t.tiny_kernel_min_launches || l.shorter_share < t.tiny_kernel_share {
        return None;
    }
    let c = Claim::TinyKernels {
        share: l.shorter_share,
        launched: l.launched,
        uses_graphs: h.graphs.in_use(),
    };
    // Launch calls with the device idle are host-bound time; what no named cause explains.
    let idle = l.launch_idle_ns.min(dispatch_ns(h));
    Some(
        Draft::new(per_rank(idle, f), claim(c))
            .focus(Focus::RankLanes)
            .number(
                "shorter_than_launch",
                Quantity::Count(l.shorter_than_launch),
            )
            .number("launched", Quantity::Count(l.launched)),
    )
}

/// Host synchronizations that starve the device.
pub fn sync_points(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let s: Vec<_> = f
        .host?
        .syncs
        .iter()
        .filter(|s| s.device_idle_after_ns > 0)
        .collect();
    let worst = s.iter().max_by_key(|s| s.device_idle_after_ns)?;
    let ranks = distinct(s.iter().flat_map(|x| x.ranks.iter().copied()));
    let c = Claim::SyncPoints {
        count: worst.count,
        call: worst.call.clone(),
        caused_by: worst.caused_by.clone(),
        idle_ns: worst.device_idle_after_ns,
    };
    let impact = per_rank(s.iter().map(|x| x.device_idle_after_ns).sum(), f);
    Some(
        Draft::new(impact, claim(c))
            .focus(Focus::HostCall(HostCall::Blocking))
            .ranks(ranks)
            .ops(s.iter().map(|x| match x.caused_by.as_str() {
                "-" => x.call.clone(),
                cause => format!("{} in {cause}", x.call),
            }))
            .number("count", Quantity::Count(worst.count))
            .number("blocked_ns", Quantity::Ns(worst.blocked_ns))
            .number(
                "device_idle_after_ns",
                Quantity::Ns(worst.device_idle_after_ns),
            ),
    )
}

/// Garbage-collection pauses the trace records.
pub fn gc(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let g: Vec<&GcPause> = f.host?.gc.iter().filter(|g| g.recorded).collect();
    let first = *g.first()?;
    let c = Claim::Gc {
        pauses: g.len() as u64,
        longest_ns: first.dur_ns,
        rank: first.rank,
        step: first.step,
    };
    Some(
        Draft::new(per_rank(g.iter().map(|x| x.dur_ns).sum(), f), claim(c))
            .focus(Focus::HostCall(HostCall::Gc))
            .ranks(distinct(g.iter().map(|x| x.rank)))
            .steps(distinct(g.iter().map(|x| x.step)))
            .number("pauses", Quantity::Count(g.len() as u64))
            .number("longest_ns", Quantity::Ns(first.dur_ns)),
    )
}

/// Host gaps: stretches of ≥ 200 ms in a step with nothing recorded on the rank (the
/// conjectured pauses of the host analysis), named by rank, step and the annotation around
/// them. What one costs the step is its length and the wait it made the others sit through
/// in that step (the straggler analysis's per-step imposed wait), per rank.
pub fn host_gap(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let g: Vec<&GcPause> = f.host?.gc.iter().filter(|g| !g.recorded).collect();
    let first = *g.first()?;
    let waited = |rank: RankId, step: StepNo| -> Ns {
        f.stragglers
            .iter()
            .filter(|s| s.rank == rank)
            .flat_map(|s| s.steps.iter())
            .filter(|x| x.step == Some(step))
            .map(|x| x.imposed_wait_ns)
            .sum()
    };
    let at = distinct(g.iter().map(|x| (x.rank, x.step)));
    let imposed: Ns = at.iter().map(|&(r, st)| waited(r, st)).sum();
    let gaps: Ns = g.iter().map(|x| x.dur_ns).sum();
    let c = Claim::HostGap {
        gaps: g.len() as u64,
        longest_ns: first.dur_ns,
        rank: first.rank,
        step: first.step,
        within: first.within.clone(),
        waited_ns: waited(first.rank, first.step),
        others: f.ranks.saturating_sub(1),
    };
    Some(
        Draft::new(per_rank(gaps + imposed, f), claim(c))
            .focus(Focus::RankLanes)
            .ranks(distinct(g.iter().map(|x| x.rank)))
            .steps(distinct(g.iter().map(|x| x.step)))
            .ops(first.within.iter().cloned())
            .number("gaps", Quantity::Count(g.len() as u64))
            .number("longest_ns", Quantity::Ns(first.dur_ns))
            .number("imposed_wait_ns", Quantity::Ns(imposed))
            .pauses(g.iter().map(|&x| x.clone())),
    )
}

/// Neither device nor host busy.
pub fn free_time(f: &Facts, t: &Thresholds) -> Option<Draft> {
    // Conjectured GC pauses are free stretches with their own finding.
    let pauses: Ns = f.host.map_or(0, |h| {
        h.gc.iter().filter(|g| !g.recorded).map(|g| g.dur_ns).sum()
    });
    let free: Ns = f.rows.iter().map(|b| b.free_ns).sum::<Ns>() - pauses;
    let s = share(free, rows_span(f));
    if s < t.free_share {
        return None;
    }
    let worst = f.rows.iter().max_by_key(|b| b.free_ns)?;
    let host_recorded = f
        .host
        .is_none_or(|h| f.rows.iter().all(|b| !h.unrecorded_ranks.contains(&b.rank)));
    let cl = Claim::FreeTime {
        share: s,
        host_recorded,
    };
    Some(
        Draft::new(per_rank(free, f), claim(cl))
            .focus(Focus::RankLanes)
            .ranks([worst.rank])
            .steps([worst.step])
            .number("free_share", Quantity::Ratio(s))
            .number("worst_free_ns", Quantity::Ns(worst.free_ns)),
    )
}

/// Host operators on the critical path of a job with device work (data loading has its own
/// rule; a CPU-only job's path is all host by nature).
pub fn critical_path_host(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let c = f.critical?;
    // Device work on the path (a CPU backend's transfers are communication, not device).
    let device =
        c.time_in(Cp::GpuCompute) + c.time_in(Cp::KernelGap) + c.time_in(Cp::LaunchOverhead);
    let host_ops = c
        .top_ops
        .iter()
        .filter(|o| o.category == Cp::Cpu && !o.data_loader);
    let cpu: Ns = host_ops.clone().map(|o| o.total_ns).sum();
    let s = share(cpu, c.total_ns);
    // Host work costs step time only while the device idles for it, and the named host
    // causes (data loading, capture, allocator, syncs) have their own findings.
    let cost = f.host.map_or(cpu, |h| cpu.min(per_rank(dispatch_ns(h), f)));
    if device == 0 || s < t.critical_cpu_share || cost == 0 {
        return None;
    }
    let ops: Vec<String> = host_ops.take(5).map(|o| o.name.clone()).collect();
    let cl = Claim::CriticalPathHost {
        share: s,
        window: c.window.clone(),
        led_by: ops.first().cloned(),
    };
    Some(
        Draft::new(cost, claim(cl))
            .ranks(c.ranks.iter().copied())
            .ops(ops)
            .number("cpu_ns", Quantity::Ns(cpu))
            .number("path_ns", Quantity::Ns(c.total_ns))
            .focus(Focus::CriticalPath),
    )
}

/// Allocator calls in steady-state steps.
pub fn allocator_churn(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let h = f.host?;
    let a = &h.allocator;
    if a.count == 0 {
        return None;
    }
    let c = Claim::AllocatorChurn {
        calls: a.count,
        total_ns: a.total_ns,
        every_call: h.allocator_every_call,
        ranks: a.ranks.len(),
    };
    // What the calls cost is the time the device idles inside them.
    Some(
        Draft::new(per_rank(a.device_idle_ns, f), claim(c))
            .focus(Focus::HostCall(HostCall::Allocator))
            .ranks(a.ranks.iter().copied())
            .number("calls", Quantity::Count(a.count))
            .number("total_ns", Quantity::Ns(a.total_ns))
            .number("device_idle_ns", Quantity::Ns(a.device_idle_ns)),
    )
}

/// Operators dispatched through a compile-at-run-time path (msprof-analyze's operator
/// dispatch rule: ≥ 20 `aclopCompileAndExecute`), or whose dispatch idles the device for a
/// share of the step. Impact: the device idle inside the calls, per rank.
pub fn op_dispatch(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let d = &f.host?.op_dispatch;
    let ranks = (d.ranks.len() as u64).max(1);
    let idle = per_rank(d.device_idle_ns, f);
    let many = d.count >= t.op_dispatch_calls * ranks;
    if d.count == 0 || !(many || share(idle, per_rank(rows_span(f), f)) >= t.op_dispatch_share) {
        return None;
    }
    let c = Claim::OpDispatch {
        calls: d.count,
        total_ns: d.total_ns,
        idle_ns: d.device_idle_ns,
    };
    Some(
        Draft::new(idle, claim(c))
            .focus(Focus::HostCall(HostCall::OnlineCompile))
            .ranks(d.ranks.iter().copied())
            .steps(f.steps.iter().map(|s| s.step))
            .number("calls", Quantity::Count(d.count))
            .number("total_ns", Quantity::Ns(d.total_ns))
            .number("device_idle_ns", Quantity::Ns(d.device_idle_ns)),
    )
}

/// Pageable host → device copies.
pub fn pageable_memcpy(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let p = &f.host?.pageable_h2d;
    if p.count == 0 {
        return None;
    }
    let c = Claim::PageableCopies {
        copies: p.count,
        total_ns: p.total_ns,
    };
    Some(
        Draft::new(per_rank(p.total_ns, f), claim(c))
            .focus(Focus::HostCall(HostCall::Pageable))
            .ranks(p.ranks.iter().copied())
            .ops(["Memcpy HtoD (Pageable -> Device)"])
            .number("copies", Quantity::Count(p.count))
            .number("total_ns", Quantity::Ns(p.total_ns)),
    )
}
