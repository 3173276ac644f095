//! The host side (io, cpu and memory categories): data loading, launch overhead, tiny
//! kernels, synchronizations, garbage collection, free time, host work on the critical path,
//! allocator churn, pageable copies.

use super::{Rule, per_rank, rows_span, share};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Quantity, Thresholds};
use crate::analysis::critical_path::{Category as Cp, Window};
use crate::model::{RankId, StepNo};
use crate::time::Ns;

/// The host-side rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "dataloader",
        category: Category::Io,
        detect: dataloader,
    },
    Rule {
        id: "launch_bound",
        category: Category::Cpu,
        detect: launch_bound,
    },
    Rule {
        id: "tiny_kernels",
        category: Category::Cpu,
        detect: tiny_kernels,
    },
    Rule {
        id: "sync_points",
        category: Category::Cpu,
        detect: sync_points,
    },
    Rule {
        id: "gc",
        category: Category::Cpu,
        detect: gc,
    },
    Rule {
        id: "free_time",
        category: Category::Cpu,
        detect: free_time,
    },
    Rule {
        id: "critical_path_host",
        category: Category::Cpu,
        detect: critical_path_host,
    },
    Rule {
        id: "allocator_churn",
        category: Category::Memory,
        detect: allocator_churn,
    },
    Rule {
        id: "pageable_memcpy",
        category: Category::Memory,
        detect: pageable_memcpy,
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
    },
    /// The device idles while the host dispatches work.
    LaunchBound {
        /// Host-bound time (data loading excluded) / span.
        share: f64,
    },
    /// Kernels shorter than their launch.
    TinyKernels {
        /// Shorter / launched.
        share: f64,
        /// Kernels launched.
        launched: u64,
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
    /// Garbage-collection pauses.
    Gc {
        /// Pauses found.
        pauses: u64,
        /// Recorded by the trace (else conjectured from free time).
        recorded: bool,
        /// The longest.
        longest_ns: Ns,
        /// Its rank.
        rank: RankId,
        /// Its step.
        step: StepNo,
    },
    /// Neither the device nor the launching threads work.
    FreeTime {
        /// Free / span.
        share: f64,
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
    /// Allocator calls after the first step.
    AllocatorChurn {
        /// Allocator calls after the first step.
        calls: u64,
        /// Their time.
        total_ns: Ns,
    },
    /// Host → device copies from pageable memory.
    PageableCopies {
        /// Pageable host → device copies.
        copies: u64,
        /// Their time.
        total_ns: Ns,
    },
}

fn claim(c: Claim) -> crate::analysis::advisor::Claim {
    crate::analysis::advisor::Claim::Host(c)
}

/// Device idle while the data loader runs.
pub fn dataloader(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let d = &f.host?.data_loading;
    if d.count == 0 || d.share_of_step < t.dataloader_share {
        return None;
    }
    let c = Claim::DataLoader {
        share: d.share_of_step,
        longest_ns: d.max_ns,
    };
    Some(
        Draft::new(per_rank(d.device_idle_ns, f), claim(c))
            .ranks(d.max_at.map(|x| x.rank))
            .steps(d.max_at.map(|x| x.step))
            .ops(["enumerate(DataLoader)"])
            .number("device_idle_ns", Quantity::Ns(d.device_idle_ns))
            .number("count", Quantity::Count(d.count)),
    )
}

/// Device idle while the host dispatches work (data loading excluded: its own rule).
pub fn launch_bound(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let h = f.host?;
    let l = &h.launch;
    let dispatch = (l.host_bound_ns - h.data_loading.device_idle_ns).max(0);
    let s = share(dispatch, l.span_ns);
    if l.launched == 0 || s < t.host_bound_share {
        return None;
    }
    Some(
        Draft::new(
            per_rank(dispatch, f),
            claim(Claim::LaunchBound { share: s }),
        )
        .steps(f.steps.iter().map(|s| s.step))
        .number("host_bound_ns", Quantity::Ns(dispatch))
        .number("launch_idle_ns", Quantity::Ns(l.launch_idle_ns))
        .number("launched", Quantity::Count(l.launched)),
    )
}

/// Kernels shorter than their launch.
pub fn tiny_kernels(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let l = &f.host?.launch;
    if l.launched < t.tiny_kernel_min_launches || l.shorter_share < t.tiny_kernel_share {
        return None;
    }
    let c = Claim::TinyKernels {
        share: l.shorter_share,
        launched: l.launched,
    };
    Some(
        Draft::new(per_rank(l.launch_idle_ns, f), claim(c))
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
    let mut ranks: Vec<RankId> = s.iter().flat_map(|x| x.ranks.iter().copied()).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let c = Claim::SyncPoints {
        count: worst.count,
        call: worst.call.clone(),
        caused_by: worst.caused_by.clone(),
        idle_ns: worst.device_idle_after_ns,
    };
    let impact = per_rank(s.iter().map(|x| x.device_idle_after_ns).sum(), f);
    Some(
        Draft::new(impact, claim(c))
            .ranks(ranks)
            .ops(s.iter().map(|x| format!("{} in {}", x.call, x.caused_by)))
            .number("count", Quantity::Count(worst.count))
            .number("blocked_ns", Quantity::Ns(worst.blocked_ns))
            .number(
                "device_idle_after_ns",
                Quantity::Ns(worst.device_idle_after_ns),
            ),
    )
}

/// Garbage-collection pauses.
pub fn gc(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let g = &f.host?.gc;
    let first = g.first()?;
    let mut ranks: Vec<RankId> = g.iter().map(|x| x.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let c = Claim::Gc {
        pauses: g.len() as u64,
        recorded: first.recorded,
        longest_ns: first.dur_ns,
        rank: first.rank,
        step: first.step,
    };
    Some(
        Draft::new(per_rank(g.iter().map(|x| x.dur_ns).sum(), f), claim(c))
            .ranks(ranks)
            .steps(g.iter().map(|x| x.step))
            .number("pauses", Quantity::Count(g.len() as u64))
            .number("longest_ns", Quantity::Ns(first.dur_ns)),
    )
}

/// Neither device nor host busy.
pub fn free_time(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let free: Ns = f.rows.iter().map(|b| b.free_ns).sum();
    let s = share(free, rows_span(f));
    if s < t.free_share {
        return None;
    }
    let worst = f.rows.iter().max_by_key(|b| b.free_ns)?;
    Some(
        Draft::new(per_rank(free, f), claim(Claim::FreeTime { share: s }))
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
    let device = c.time_in(Cp::GpuCompute) + c.time_in(Cp::Communication);
    let host_ops = c
        .top_ops
        .iter()
        .filter(|o| o.category == Cp::Cpu && !o.data_loader);
    let cpu: Ns = host_ops.clone().map(|o| o.total_ns).sum();
    let s = share(cpu, c.total_ns);
    if device == 0 || s < t.critical_cpu_share {
        return None;
    }
    let ops: Vec<String> = host_ops.take(5).map(|o| o.name.clone()).collect();
    let cl = Claim::CriticalPathHost {
        share: s,
        window: c.window.clone(),
        led_by: ops.first().cloned(),
    };
    Some(
        Draft::new(cpu, claim(cl))
            .ranks(c.ranks.iter().copied())
            .ops(ops)
            .number("cpu_ns", Quantity::Ns(cpu))
            .number("path_ns", Quantity::Ns(c.total_ns))
            .focus(Focus::CriticalPath),
    )
}

/// Allocator calls in steady-state steps.
pub fn allocator_churn(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let a = &f.host?.allocator;
    if a.count == 0 {
        return None;
    }
    let c = Claim::AllocatorChurn {
        calls: a.count,
        total_ns: a.total_ns,
    };
    Some(
        Draft::new(per_rank(a.total_ns, f), claim(c))
            .ranks(a.ranks.iter().copied())
            .number("calls", Quantity::Count(a.count))
            .number("total_ns", Quantity::Ns(a.total_ns)),
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
            .ranks(p.ranks.iter().copied())
            .ops(["Memcpy HtoD (Pageable -> Device)"])
            .number("copies", Quantity::Count(p.count))
            .number("total_ns", Quantity::Ns(p.total_ns)),
    )
}
