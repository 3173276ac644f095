//! The rules (docs/advisor.md). Each reads [`Facts`], and returns at most one [`Draft`] per
//! cause, listing every rank, step and operator concerned. Impacts are step time over the
//! steps in scope, per rank: Σ-over-ranks quantities are divided by the rank count.

use super::{Category, Draft, Evidence, Facts, Thresholds};
use crate::analysis::comm::op::CollOp;
use crate::analysis::roofline::Class;
use crate::analysis::roofline::shapes::Family;
use crate::time::{Ns, human};
use std::collections::BTreeMap;

/// A rule.
pub type Rule = fn(&Facts, &Thresholds) -> Option<Draft>;

/// Every rule, in docs/advisor.md order.
pub const ALL: [Rule; 24] = [
    straggler,
    slow_step,
    stage_imbalance,
    rank_imbalance,
    poor_overlap,
    comm_wait_dominated,
    low_bandwidth,
    small_messages,
    misaligned_sizes,
    slow_link,
    dataloader,
    launch_bound,
    tiny_kernels,
    sync_points,
    gc,
    free_time,
    critical_path_host,
    allocator_churn,
    pageable_memcpy,
    memory_bound_elementwise,
    under_utilized_gemms,
    gemm_shape_alignment,
    fp32_gemms,
    roofline_unknown,
];

fn numbers<const N: usize>(v: [(&'static str, f64); N]) -> BTreeMap<&'static str, f64> {
    v.into_iter().collect()
}

fn per_rank(ns: Ns, f: &Facts) -> Ns {
    ns / Ns::from(f.ranks.max(1))
}

fn share(a: Ns, b: Ns) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

fn rows_span(f: &Facts) -> Ns {
    f.rows.iter().map(|b| b.span_ns).sum()
}

/// Persistent stragglers: the rank the others wait for, step after step.
pub fn straggler(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let s: Vec<_> = f.stragglers.iter().filter(|s| s.flagged).collect();
    if s.is_empty() {
        return None;
    }
    // The others' average wait: what the step loses to the straggler.
    let impact: Ns = s
        .iter()
        .map(|x| x.imposed_wait_ns / Ns::from(f.ranks.saturating_sub(1).max(1)))
        .sum();
    let first = s[0];
    Some(Draft {
        rule: "straggler",
        category: Category::Parallel,
        impact_ns: impact,
        title: format!(
            "rank {} is a straggler: the others waited {} for it ({:.0}% of group {}'s waiting)",
            first.rank,
            human(first.imposed_wait_ns),
            first.share * 100.0,
            first.group
        ),
        evidence: Evidence {
            ranks: s.iter().map(|x| x.rank).collect(),
            steps: first.steps.iter().filter_map(|x| x.step).collect(),
            ops: first.excess.iter().map(|e| e.part.to_string()).collect(),
            numbers: numbers([
                ("last_arrivals", first.last_arrivals as f64),
                ("instances", first.instances as f64),
                ("imposed_wait_ns", first.imposed_wait_ns as f64),
                ("top_steps", first.top_steps as f64),
            ]),
        },
        cause: "one rank reaches the collectives late in most steps; everyone else waits in them",
        suggestions: &[
            "compare the rank's own work with its peers (the breakdown part named in the evidence)",
            "check its node: thermal throttling, clocks, a noisy neighbour, a slower device (isolate or replace the node)",
            "check data/work balance: uneven sequence lengths or shards on that rank",
        ],
    })
}

/// Slow steps and their culprits.
pub fn slow_step(f: &Facts, _: &Thresholds) -> Option<Draft> {
    if f.slow_steps.is_empty() {
        return None;
    }
    let first = &f.slow_steps[0];
    let mut ranks: Vec<u32> = f.slow_steps.iter().filter_map(|s| s.culprit_rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    Some(Draft {
        rule: "slow_step",
        category: Category::Parallel,
        impact_ns: f.slow_steps.iter().map(|s| s.time_ns - s.median_ns).sum(),
        title: format!(
            "step {} took {} ({} over the median); {}",
            first.step,
            human(first.time_ns),
            human(first.time_ns - first.median_ns),
            first.reason
        ),
        evidence: Evidence {
            ranks,
            steps: f.slow_steps.iter().map(|s| s.step).collect(),
            ops: first.part.iter().map(|p| p.to_string()).collect(),
            numbers: numbers([
                ("time_ns", first.time_ns as f64),
                ("median_ns", first.median_ns as f64),
                ("growth_ns", first.growth_ns as f64),
            ]),
        },
        cause: "one rank's own work grew in these steps (a pause, a data stall, a recompilation) and the others waited for it",
        suggestions: &[
            "look at the culprit rank's timeline in that step (the part that grew is in the evidence)",
            "data loader pauses: more workers, prefetching, faster storage; recompilations: static shapes",
            "a periodic stall (checkpointing, evaluation, logging) belongs outside the training step or asynchronous",
        ],
    })
}

/// Pipeline stages with unequal compute.
pub fn stage_imbalance(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let stages = f.stages?;
    let bad: Vec<_> = stages.iter().filter(|s| s.flagged).collect();
    if bad.is_empty() {
        return None;
    }
    let mean = stages.iter().map(|s| s.compute_ns).sum::<Ns>() / stages.len() as Ns;
    let steps = f.steps.len().max(1) as Ns;
    let worst = bad.iter().max_by_key(|s| s.compute_ns)?;
    Some(Draft {
        rule: "stage_imbalance",
        category: Category::Parallel,
        impact_ns: (worst.compute_ns - mean) * steps,
        title: format!(
            "pipeline stage {} computes {:+.0}% more than the stage mean",
            worst.stage,
            worst.excess * 100.0
        ),
        evidence: Evidence {
            ranks: bad.iter().flat_map(|s| s.ranks.iter().copied()).collect(),
            steps: f.steps.iter().map(|s| s.step).collect(),
            ops: Vec::new(),
            numbers: numbers([
                ("compute_ns", worst.compute_ns as f64),
                ("mean_ns", mean as f64),
                ("recv_wait_ns", worst.recv_wait_ns as f64),
            ]),
        },
        cause: "layers are split unevenly across pipeline stages: the other stages wait in receives (bubbles)",
        suggestions: &[
            "rebalance layers across stages (fewer on the heavy stage; embedding and loss layers count)",
            "use interleaved / virtual pipeline stages to shrink bubbles",
        ],
    })
}

/// A breakdown part unequal across a group (the msprof-analyze slow-rank rule), when no
/// persistent straggler already explains it.
pub fn rank_imbalance(f: &Facts, _: &Thresholds) -> Option<Draft> {
    if f.stragglers.iter().any(|s| s.flagged) {
        return None;
    }
    let worst = f
        .imbalance
        .iter()
        .filter(|i| i.flagged)
        .max_by(|a, b| a.spread.total_cmp(&b.spread))?;
    let steps = f.steps.len().max(1) as Ns;
    Some(Draft {
        rule: "rank_imbalance",
        category: Category::Parallel,
        impact_ns: (worst.max_ns - worst.min_ns) / steps,
        title: format!(
            "{} differs across group {}: rank {} {} vs rank {} {} ({:.0}% of the step)",
            worst.part,
            worst.group,
            worst.max_rank,
            human(worst.max_ns),
            worst.min_rank,
            human(worst.min_ns),
            worst.spread * 100.0
        ),
        evidence: Evidence {
            ranks: vec![worst.max_rank, worst.min_rank],
            steps: f.steps.iter().map(|s| s.step).collect(),
            ops: vec![worst.part.to_string()],
            numbers: numbers([
                ("spread", worst.spread),
                ("max_ns", worst.max_ns as f64),
                ("min_ns", worst.min_ns as f64),
            ]),
        },
        cause: "ranks do unequal work or run at unequal speed, though no single rank is late every step",
        suggestions: &[
            "balance the data (sequence lengths, packing) across ranks",
            "check for shared or oversubscribed hosts (CPU cores, NICs)",
        ],
    })
}

/// Communication not hidden behind compute.
pub fn poor_overlap(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let (hidden, exposed): (Ns, Ns) = f
        .rows
        .iter()
        .fold((0, 0), |a, b| (a.0 + b.overlap_ns, a.1 + b.comm_ns));
    let ratio = share(hidden, hidden + exposed);
    let exposed_share = share(exposed, rows_span(f));
    if hidden + exposed == 0 || ratio >= t.overlap_ratio || exposed_share < t.exposed_comm_share {
        return None;
    }
    // Waiting for a late rank is not an overlap problem: count transfer only.
    let waiting = f
        .comm
        .iter()
        .map(|c| c.wait_ratio.unwrap_or(0.0))
        .fold(0.0, f64::max);
    let impact = per_rank((exposed as f64 * (1.0 - waiting)) as Ns, f);
    Some(Draft {
        rule: "poor_overlap",
        category: Category::Communication,
        impact_ns: impact,
        title: format!(
            "only {:.0}% of communication is hidden behind compute; {} exposed ({:.0}% of the step)",
            ratio * 100.0,
            human(per_rank(exposed, f)),
            exposed_share * 100.0
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: f.steps.iter().map(|s| s.step).collect(),
            ops: f.comm.iter().map(|c| c.op.as_str().to_string()).collect(),
            numbers: numbers([("overlap_ratio", ratio), ("exposed_share", exposed_share)]),
        },
        cause: "collectives run while no compute is available to overlap them (bucket order, late launches, blocking waits)",
        suggestions: &[
            "DDP: smaller first bucket / bucket_cap_mb so all-reduce starts during backward; FSDP: enable forward/backward prefetch",
            "avoid host syncs between backward and the optimizer (they serialize communication)",
            "use a separate communication stream and do not wait on it before it is needed",
        ],
    })
}

/// Collectives dominated by waiting for a late rank — when no straggler or slow-step finding
/// already names that rank (one finding per cause).
pub fn comm_wait_dominated(f: &Facts, t: &Thresholds) -> Option<Draft> {
    if f.stragglers.iter().any(|s| s.flagged) || !f.slow_steps.is_empty() {
        return None;
    }
    let w: Vec<_> = f.comm.iter().filter(|c| c.wait_dominated).collect();
    let worst = w.iter().max_by_key(|c| c.exposed_ns)?;
    let impact: Ns = w
        .iter()
        .map(|c| (c.exposed_ns as f64 * c.wait_ratio.unwrap_or(0.0)) as Ns)
        .sum();
    if share(impact, rows_span(f)) < t.exposed_comm_share / 5.0 {
        return None;
    }
    Some(Draft {
        rule: "comm_wait_dominated",
        category: Category::Communication,
        impact_ns: per_rank(impact, f),
        title: format!(
            "{} in group {} is {:.0}% waiting: fix the late rank, not the network",
            worst.op.as_str(),
            worst.group,
            worst.wait_ratio.unwrap_or(0.0) * 100.0
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: Vec::new(),
            ops: w.iter().map(|c| describe(c.op, &c.group)).collect(),
            numbers: numbers([
                ("wait_ratio", worst.wait_ratio.unwrap_or(0.0)),
                ("exposed_ns", worst.exposed_ns as f64),
            ]),
        },
        cause: "collective time is spent waiting for the last rank to arrive (wait / (wait + transit) > 0.2)",
        suggestions: &[
            "find the rank that arrives last (stragglers, slow steps) and fix its own work first",
            "faster links or NCCL tuning will not help while ranks arrive late",
        ],
    })
}

/// Transfers far below the link's peak.
pub fn low_bandwidth(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let low: Vec<_> = f
        .comm
        .iter()
        .filter(|c| !c.wait_dominated && c.busbw_of_peak.is_some_and(|b| b < t.busbw_of_peak))
        .filter(|c| c.bytes.as_ref().is_some_and(|b| b.median >= 1 << 20))
        .collect();
    let worst = low.iter().max_by_key(|c| c.exposed_ns)?;
    let impact: Ns = low
        .iter()
        .map(|c| {
            (c.exposed_ns as f64
                * (1.0 - c.busbw_of_peak.unwrap_or(1.0) / t.busbw_of_peak).max(0.0))
                as Ns
        })
        .sum();
    Some(Draft {
        rule: "low_bandwidth",
        category: Category::Communication,
        impact_ns: per_rank(impact, f),
        title: format!(
            "{} in group {} reaches {:.0} GB/s bus bandwidth, {:.0}% of the {} peak",
            worst.op.as_str(),
            worst.group,
            worst.busbw_gbps.unwrap_or(0.0),
            worst.busbw_of_peak.unwrap_or(0.0) * 100.0,
            worst.link.as_deref().unwrap_or("link")
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: Vec::new(),
            ops: low.iter().map(|c| describe(c.op, &c.group)).collect(),
            numbers: numbers([
                ("busbw_gbps", worst.busbw_gbps.unwrap_or(0.0)),
                ("peak_gbps", worst.peak_gbps.unwrap_or(0.0)),
            ]),
        },
        cause: "transfers are slow though ranks arrive together: topology, NCCL algorithm/protocol, or contention",
        suggestions: &[
            "check the topology NCCL sees (NCCL_DEBUG=INFO; nvidia-smi topo -m); GPUDirect RDMA and NIC affinity",
            "try NCCL_ALGO / NCCL_PROTO, more channels (NCCL_MIN_NCHANNELS), SHARP/NVLS where available",
            "avoid overlapping heavy memory traffic with communication on the same links",
        ],
    })
}

/// Many small messages.
pub fn small_messages(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let small: Vec<_> = f.comm.iter().filter(|c| c.small_flag).collect();
    let worst = small.iter().max_by_key(|c| c.exposed_ns)?;
    let impact: Ns = small
        .iter()
        .map(|c| (c.exposed_ns as f64 * share(c.small_calls as Ns, c.calls as Ns)) as Ns)
        .sum();
    Some(Draft {
        rule: "small_messages",
        category: Category::Communication,
        impact_ns: per_rank(impact, f) / 2,
        title: format!(
            "{} of {} {} calls in group {} are under {} MiB (small messages)",
            worst.small_calls,
            worst.calls,
            worst.op.as_str(),
            worst.group,
            worst.small_threshold >> 20
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: Vec::new(),
            ops: small.iter().map(|c| describe(c.op, &c.group)).collect(),
            numbers: numbers([
                ("small_calls", worst.small_calls as f64),
                ("calls", worst.calls as f64),
            ]),
        },
        cause: "small collectives are latency-bound: per-call overhead dominates their transfer",
        suggestions: &[
            "fuse gradients into larger buckets (DDP bucket_cap_mb, FSDP larger wrap units)",
            "use gradient accumulation or a larger micro-batch; ZeRO-3 → ZeRO-2/1 where memory allows",
            "fused optimizers instead of per-parameter collectives",
        ],
    })
}

/// Message sizes not a multiple of 512 B.
pub fn misaligned_sizes(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let m: Vec<_> = f.comm.iter().filter(|c| c.misaligned_calls > 0).collect();
    let worst = m.iter().max_by_key(|c| c.misaligned_calls)?;
    Some(Draft {
        rule: "misaligned_sizes",
        category: Category::Communication,
        impact_ns: 0,
        title: format!(
            "{} {} call(s) in group {} move a size that is not a multiple of 512 B",
            worst.misaligned_calls,
            worst.op.as_str(),
            worst.group
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: Vec::new(),
            ops: m.iter().map(|c| describe(c.op, &c.group)).collect(),
            numbers: numbers([("misaligned_calls", worst.misaligned_calls as f64)]),
        },
        cause: "unaligned buffers take slower copy paths in the collective implementation",
        suggestions: &["pad fused buffers / bucket sizes to multiples of 512 B (or 128 elements)"],
    })
}

/// A rank whose transfers are consistently slower.
pub fn slow_link(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let worst = f
        .slow_links
        .iter()
        .max_by_key(|s| s.transit_ns - s.group_median_ns)?;
    let per_step_instances = f
        .comm
        .iter()
        .find(|c| c.group == worst.group)
        .map_or(1, |c| c.instances.max(1) as Ns);
    Some(Draft {
        rule: "slow_link",
        category: Category::Communication,
        impact_ns: (worst.transit_ns - worst.group_median_ns) * per_step_instances,
        title: format!(
            "rank {}'s transfers in group {} take {} vs the group median {}",
            worst.rank,
            worst.group,
            human(worst.transit_ns),
            human(worst.group_median_ns)
        ),
        evidence: Evidence {
            ranks: f.slow_links.iter().map(|s| s.rank).collect(),
            steps: Vec::new(),
            ops: vec![worst.group.clone()],
            numbers: numbers([("z", worst.z), ("transit_ns", worst.transit_ns as f64)]),
        },
        cause: "one rank's link (NIC, cable, switch port, PCIe) is slower than its peers'",
        suggestions: &[
            "check the rank's NIC and port counters (errors, retransmissions), link speed and PCIe width",
            "run nccl-tests between that node and its peers",
        ],
    })
}

/// Device idle while the data loader runs.
pub fn dataloader(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let d = &f.host?.data_loading;
    if d.count == 0 || d.share_of_step < t.dataloader_share {
        return None;
    }
    Some(Draft {
        rule: "dataloader",
        category: Category::Io,
        impact_ns: per_rank(d.device_idle_ns, f),
        title: format!(
            "the device idles {:.1}% of the step while the data loader runs (longest {})",
            d.share_of_step * 100.0,
            human(d.max_ns)
        ),
        evidence: Evidence {
            ranks: d.max_at.map(|x| vec![x.0]).unwrap_or_default(),
            steps: d.max_at.map(|x| vec![x.1]).unwrap_or_default(),
            ops: vec!["enumerate(DataLoader)".to_string()],
            numbers: numbers([
                ("device_idle_ns", d.device_idle_ns as f64),
                ("count", d.count as f64),
            ]),
        },
        cause: "batches are not ready when the step starts: loading/augmentation is slower than compute",
        suggestions: &[
            "DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2+, persistent_workers=True)",
            "move decoding/augmentation to the GPU or preprocess offline; faster storage or caching",
        ],
    })
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
    Some(Draft {
        rule: "launch_bound",
        category: Category::Cpu,
        impact_ns: per_rank(dispatch, f),
        title: format!(
            "host-bound {:.1}% of the step: the device idles while the host dispatches work",
            s * 100.0
        ),
        evidence: Evidence {
            ranks: Vec::new(),
            steps: f.steps.iter().map(|s| s.step).collect(),
            ops: Vec::new(),
            numbers: numbers([
                ("host_bound_ns", dispatch as f64),
                ("launch_idle_ns", l.launch_idle_ns as f64),
                ("launched", l.launched as f64),
            ]),
        },
        cause: "Python and framework dispatch, plus kernel launches, are slower than the kernels they issue",
        suggestions: &[
            "capture the step in CUDA graphs, or torch.compile (mode=\"reduce-overhead\")",
            "fuse small ops; larger batches per launch",
        ],
    })
}

/// Kernels shorter than their launch.
pub fn tiny_kernels(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let l = &f.host?.launch;
    if l.launched < t.tiny_kernel_min_launches || l.shorter_share < t.tiny_kernel_share {
        return None;
    }
    Some(Draft {
        rule: "tiny_kernels",
        category: Category::Cpu,
        impact_ns: per_rank(l.launch_idle_ns, f),
        title: format!(
            "{:.0}% of {} kernels run shorter than their launch call",
            l.shorter_share * 100.0,
            l.launched
        ),
        evidence: Evidence {
            numbers: numbers([
                ("shorter_than_launch", l.shorter_than_launch as f64),
                ("launched", l.launched as f64),
            ]),
            ..Default::default()
        },
        cause: "many tiny kernels: launch overhead, not the device, sets the pace",
        suggestions: &[
            "fuse elementwise chains (torch.compile, fused optimizers, fused norms)",
            "CUDA graphs for the static part of the step",
        ],
    })
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
    let mut ranks: Vec<u32> = s.iter().flat_map(|x| x.ranks.iter().copied()).collect();
    ranks.sort_unstable();
    ranks.dedup();
    Some(Draft {
        rule: "sync_points",
        category: Category::Cpu,
        impact_ns: per_rank(s.iter().map(|x| x.device_idle_after_ns).sum(), f),
        title: format!(
            "{} × {} from {}: the device then idles {} until the host catches up",
            worst.count,
            worst.call,
            worst.caused_by,
            human(worst.device_idle_after_ns)
        ),
        evidence: Evidence {
            ranks,
            steps: Vec::new(),
            ops: s
                .iter()
                .map(|x| format!("{} in {}", x.call, x.caused_by))
                .collect(),
            numbers: numbers([
                ("count", worst.count as f64),
                ("blocked_ns", worst.blocked_ns as f64),
                ("device_idle_after_ns", worst.device_idle_after_ns as f64),
            ]),
        },
        cause: "the host waits for the device (.item(), .cpu(), printing a tensor), so it cannot queue the next work ahead",
        suggestions: &[
            "remove .item()/.cpu()/print of device tensors from the step; log asynchronously every N steps",
            "use non_blocking copies and check results after the next step is queued",
        ],
    })
}

/// Garbage-collection pauses.
pub fn gc(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let g = &f.host?.gc;
    let first = g.first()?;
    let recorded = first.recorded;
    let mut ranks: Vec<u32> = g.iter().map(|x| x.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    Some(Draft {
        rule: "gc",
        category: Category::Cpu,
        impact_ns: per_rank(g.iter().map(|x| x.dur_ns).sum(), f),
        title: format!(
            "{} {} pause(s), longest {} (rank {}, step {})",
            g.len(),
            if recorded {
                "garbage-collection"
            } else {
                "likely garbage-collection"
            },
            human(first.dur_ns),
            first.rank,
            first.step
        ),
        evidence: Evidence {
            ranks,
            steps: g.iter().map(|x| x.step).collect(),
            ops: Vec::new(),
            numbers: numbers([
                ("pauses", g.len() as f64),
                ("longest_ns", first.dur_ns as f64),
            ]),
        },
        cause: if recorded {
            "Python's garbage collector stops the training loop"
        } else {
            "nothing runs for ≥ 200 ms inside a step — the signature of a GC pause (or another stop the profiler does not record)"
        },
        suggestions: &[
            "gc.freeze() after model setup; raise thresholds (gc.set_threshold) or gc.disable() and collect every N steps",
            "avoid creating many short-lived Python objects per step",
        ],
    })
}

/// Neither device nor host busy.
pub fn free_time(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let free: Ns = f.rows.iter().map(|b| b.free_ns).sum();
    let s = share(free, rows_span(f));
    if s < t.free_share {
        return None;
    }
    let worst = f.rows.iter().max_by_key(|b| b.free_ns)?;
    Some(Draft {
        rule: "free_time",
        category: Category::Cpu,
        impact_ns: per_rank(free, f),
        title: format!(
            "{:.1}% of the step is free: neither the device nor the launching threads work",
            s * 100.0
        ),
        evidence: Evidence {
            ranks: vec![worst.rank],
            steps: vec![worst.step],
            ops: Vec::new(),
            numbers: numbers([("free_share", s), ("worst_free_ns", worst.free_ns as f64)]),
        },
        cause: "time outside recorded work: Python between ops, other threads, I/O, or waits the profiler does not see",
        suggestions: &[
            "profile with with_stack=True to see the Python between ops",
            "move logging, checkpointing and metrics out of the step or make them asynchronous",
        ],
    })
}

/// Host operators on the critical path of a job with device work (data loading has its own
/// rule; a CPU-only job's path is all host by nature).
pub fn critical_path_host(f: &Facts, t: &Thresholds) -> Option<Draft> {
    use crate::analysis::critical_path::Category as Cp;
    let c = f.critical?;
    let device = c.by_category.get("gpu_compute").copied().unwrap_or(0)
        + c.by_category.get("communication").copied().unwrap_or(0);
    let host_ops = c
        .top_ops
        .iter()
        .filter(|o| o.category == Cp::Cpu && !o.name.contains("DataLoader"));
    let cpu: Ns = host_ops.clone().map(|o| o.total_ns).sum();
    let s = share(cpu, c.total_ns);
    if device == 0 || s < t.critical_cpu_share {
        return None;
    }
    let ops: Vec<String> = host_ops.take(5).map(|o| o.name.clone()).collect();
    Some(Draft {
        rule: "critical_path_host",
        category: Category::Cpu,
        impact_ns: cpu,
        title: format!(
            "{:.0}% of the critical path of {} is host work, led by {}",
            s * 100.0,
            c.window,
            ops.first().map_or("-", String::as_str)
        ),
        evidence: Evidence {
            ranks: c.ranks.clone(),
            steps: Vec::new(),
            ops,
            numbers: numbers([("cpu_ns", cpu as f64), ("path_ns", c.total_ns as f64)]),
        },
        cause: "the step waits on host operators: the device is starved, not slow",
        suggestions: &[
            "speed up or remove the host operators named (allocation: warm the caching allocator; data: prefetch)",
            "overlap host work with device work (asynchronous copies, CUDA graphs)",
        ],
    })
}

/// Allocator calls in steady-state steps.
pub fn allocator_churn(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let a = &f.host?.allocator;
    if a.count == 0 {
        return None;
    }
    Some(Draft {
        rule: "allocator_churn",
        category: Category::Memory,
        impact_ns: per_rank(a.total_ns, f),
        title: format!(
            "{} cudaMalloc/cudaFree calls ({}) after the first step",
            a.count,
            human(a.total_ns)
        ),
        evidence: Evidence {
            ranks: a.ranks.clone(),
            numbers: numbers([("calls", a.count as f64), ("total_ns", a.total_ns as f64)]),
            ..Default::default()
        },
        cause: "the caching allocator keeps returning and requesting memory: fragmentation or varying shapes",
        suggestions: &[
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; avoid torch.cuda.empty_cache() in the loop",
            "keep shapes static (pad to buckets) so blocks are reused",
        ],
    })
}

/// Pageable host → device copies.
pub fn pageable_memcpy(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let p = &f.host?.pageable_h2d;
    if p.count == 0 {
        return None;
    }
    Some(Draft {
        rule: "pageable_memcpy",
        category: Category::Memory,
        impact_ns: per_rank(p.total_ns, f),
        title: format!(
            "{} host→device copies from pageable memory ({})",
            p.count,
            human(p.total_ns)
        ),
        evidence: Evidence {
            ranks: p.ranks.clone(),
            ops: vec!["Memcpy HtoD (Pageable -> Device)".to_string()],
            numbers: numbers([("copies", p.count as f64), ("total_ns", p.total_ns as f64)]),
            ..Default::default()
        },
        cause: "pageable copies are staged through a bounce buffer and block the host",
        suggestions: &[
            "pin host memory (DataLoader pin_memory=True, tensor.pin_memory()) and copy with non_blocking=True",
        ],
    })
}

fn kernel_time(f: &Facts) -> Ns {
    f.roofline
        .map_or(0, |r| r.classes.values().map(|c| c.time_ns).sum())
}

/// Memory-bound elementwise and normalization kernels.
pub fn memory_bound_elementwise(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let ops: Vec<_> = r
        .ops
        .iter()
        .filter(|o| {
            matches!(o.family, Family::Elementwise | Family::Norm) && o.class != Class::ComputeBound
        })
        .collect();
    let time: Ns = ops.iter().map(|o| o.time_ns).sum();
    if ops.is_empty() || share(time, kernel_time(f)) < t.elementwise_share {
        return None;
    }
    Some(Draft {
        rule: "memory_bound_elementwise",
        category: Category::Compute,
        // Fusing a chain reads and writes each tensor once instead of per op: about half.
        impact_ns: per_rank(time / 2, f),
        title: format!(
            "{:.0}% of kernel time is elementwise/normalization traffic ({} op types), led by {}",
            share(time, kernel_time(f)) * 100.0,
            ops.len(),
            ops[0].op
        ),
        evidence: Evidence {
            ops: ops.iter().map(|o| o.op.clone()).collect(),
            numbers: numbers([("time_ns", time as f64), ("gbps", ops[0].gbps)]),
            ..Default::default()
        },
        cause: "each elementwise op reads and writes whole tensors: bound by memory bandwidth, not math",
        suggestions: &[
            "fuse chains with torch.compile or fused kernels (fused LayerNorm/RMSNorm, fused bias+GeLU, fused Adam)",
            "keep activations in bf16",
        ],
    })
}

/// GEMMs far from the compute roof.
pub fn under_utilized_gemms(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let g: Vec<_> = r
        .ops
        .iter()
        .filter(|o| o.family == Family::Gemm && o.class == Class::UnderUtilized)
        .filter(|o| o.flops_of_peak.is_some_and(|p| p < t.gemm_of_peak))
        .collect();
    let worst = g.first()?;
    let impact: Ns = g
        .iter()
        .map(|o| (o.time_ns as f64 * (1.0 - o.flops_of_peak.unwrap_or(0.0) / r.u).max(0.0)) as Ns)
        .sum();
    Some(Draft {
        rule: "under_utilized_gemms",
        category: Category::Compute,
        impact_ns: per_rank(impact, f),
        title: format!(
            "{} runs at {:.0}% of the device's FLOP/s peak",
            worst.op,
            worst.flops_of_peak.unwrap_or(0.0) * 100.0
        ),
        evidence: Evidence {
            ops: g.iter().map(|o| o.op.clone()).collect(),
            numbers: numbers([
                ("tflops", worst.tflops.unwrap_or(0.0)),
                ("ai", worst.ai.unwrap_or(0.0)),
                ("time_ns", worst.time_ns as f64),
            ]),
            ..Default::default()
        },
        cause: "small or skinny matrix shapes, poor tile fit, or low precision use leave tensor cores idle",
        suggestions: &[
            "larger per-GPU batch or micro-batch; fewer, larger GEMMs (fused QKV projections)",
            "dimensions multiple of 8/16 (tensor cores) or 256 (Ascend cube); bf16 instead of fp32",
        ],
    })
}

/// GEMMs with dimensions tensor cores cannot tile well.
pub fn gemm_shape_alignment(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let g: Vec<_> = r.ops.iter().filter(|o| o.unaligned_gemms > 0).collect();
    let worst = g.iter().max_by_key(|o| o.time_ns)?;
    let impact: Ns = g
        .iter()
        .map(|o| {
            let unaligned = o.time_ns as f64 * o.unaligned_gemms as f64 / o.kernels.max(1) as f64;
            (unaligned * (1.0 - o.flops_of_peak.unwrap_or(0.0) / r.u).max(0.0)) as Ns
        })
        .sum();
    Some(Draft {
        rule: "gemm_shape_alignment",
        category: Category::Compute,
        impact_ns: per_rank(impact, f),
        title: format!(
            "{} of {} {} kernels have M, N or K not a multiple of 8",
            worst.unaligned_gemms, worst.kernels, worst.op
        ),
        evidence: Evidence {
            ops: g.iter().map(|o| o.op.clone()).collect(),
            numbers: numbers([("unaligned", worst.unaligned_gemms as f64)]),
            ..Default::default()
        },
        cause: "tensor cores need dimensions in multiples of 8 (fp16/bf16) or 16 (int8/fp8); others pad or fall back",
        suggestions: &[
            "pad vocabulary, hidden and batch×sequence sizes to multiples of 64 (256 on Ascend)",
        ],
    })
}

/// fp32 GEMMs on a device with tensor cores.
pub fn fp32_gemms(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let dev = r.device.as_ref()?;
    let tf32 = dev.tf32_tflops?;
    let fp32 = dev.fp32_tflops?;
    let g: Vec<_> = r
        .ops
        .iter()
        .filter(|o| {
            o.family == Family::Gemm && matches!(o.dtype.as_deref(), Some("float" | "float32"))
        })
        .collect();
    let time: Ns = g.iter().map(|o| o.time_ns).sum();
    if g.is_empty() {
        return None;
    }
    Some(Draft {
        rule: "fp32_gemms",
        category: Category::Compute,
        impact_ns: per_rank((time as f64 * (1.0 - fp32 / tf32)) as Ns, f),
        title: format!(
            "{} fp32 GEMM op type(s) take {} on a tensor-core device",
            g.len(),
            human(per_rank(time, f))
        ),
        evidence: Evidence {
            ops: g.iter().map(|o| o.op.clone()).collect(),
            numbers: numbers([
                ("time_ns", time as f64),
                ("fp32_tflops", fp32),
                ("tf32_tflops", tf32),
            ]),
            ..Default::default()
        },
        cause: "fp32 matrix math runs on the slow fp32 path, not tensor cores",
        suggestions: &[
            "torch.backends.cuda.matmul.allow_tf32 = True (or torch.set_float32_matmul_precision('high'))",
            "train in bf16 autocast (torch.autocast('cuda', dtype=torch.bfloat16))",
        ],
    })
}

/// Most kernel time has no roofline class.
pub fn roofline_unknown(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let total = kernel_time(f);
    let unknown = r.classes.get("unknown").map_or(0, |c| c.time_ns);
    if total == 0 || share(unknown, total) < t.unknown_share {
        return None;
    }
    Some(Draft {
        rule: "roofline_unknown",
        category: Category::Compute,
        impact_ns: 0,
        title: format!(
            "{:.0}% of kernel time cannot be placed on the roofline{}",
            share(unknown, total) * 100.0,
            if r.device.is_none() {
                " (unknown device)"
            } else {
                ""
            }
        ),
        evidence: Evidence {
            numbers: numbers([("unknown_share", share(unknown, total))]),
            ..Default::default()
        },
        cause: if r.device.is_none() {
            "the device has no entry in the peak table"
        } else {
            "kernels lack shapes: the profile was recorded without record_shapes"
        },
        suggestions: &[
            "profile with record_shapes=True (and with_flops=True)",
            "pass --device NAME for devices the table does not recognise",
        ],
    })
}

/// A collective type in a group, for evidence lists (`all_reduce (0)`).
fn describe(op: CollOp, group: &str) -> String {
    format!("{} ({group})", op.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::breakdown::Breakdown;
    use crate::analysis::cluster::{Imbalance, SlowStep, Stage, Straggler};
    use crate::analysis::comm::stats::{Sizes, SlowLink, TypeStats};
    use crate::analysis::critical_path::{Category as Cp, CriticalOp, CriticalPath};
    use crate::analysis::host::{CallStat, GcPause, Host, SyncPoint};
    use crate::analysis::roofline::peaks::Device;
    use crate::analysis::roofline::{OpRoof, Roofline};
    use crate::analysis::step_times::StepTime;

    /// Owned results for a `Facts`: 2 ranks, 2 steps of 100 ms.
    #[derive(Default)]
    struct World {
        steps: Vec<StepTime>,
        rows: Vec<Breakdown>,
        comm: Vec<TypeStats>,
        slow_links: Vec<SlowLink>,
        slow_steps: Vec<SlowStep>,
        stragglers: Vec<Straggler>,
        imbalance: Vec<Imbalance>,
        stages: Option<Vec<Stage>>,
        host: Host,
        roofline: Roofline,
        critical: Option<CriticalPath>,
    }

    const MS: Ns = 1_000_000;

    impl World {
        fn new() -> World {
            let row = |rank, step| Breakdown {
                rank,
                step,
                span_ns: 100 * MS,
                compute_ns: 100 * MS,
                ..Default::default()
            };
            World {
                steps: (1..=2)
                    .map(|step| StepTime {
                        step,
                        ranks: 2,
                        max_ns: 100 * MS,
                        ..Default::default()
                    })
                    .collect(),
                rows: vec![row(0, 1), row(1, 1), row(0, 2), row(1, 2)],
                ..Default::default()
            }
        }
        fn facts(&self) -> Facts<'_> {
            Facts {
                ranks: 2,
                steps: &self.steps,
                rows: &self.rows,
                comm: &self.comm,
                slow_links: &self.slow_links,
                slow_steps: &self.slow_steps,
                stragglers: &self.stragglers,
                imbalance: &self.imbalance,
                stages: self.stages.as_deref(),
                host: Some(&self.host),
                roofline: Some(&self.roofline),
                critical: self.critical.as_ref(),
            }
        }
        fn run(&self, rule: Rule) -> Option<Draft> {
            rule(&self.facts(), &Thresholds::default())
        }
    }

    fn h100() -> Device {
        super::super::super::roofline::peaks::by_name(
            &super::super::super::roofline::peaks::parse(
                super::super::super::roofline::peaks::EMBEDDED,
            )
            .unwrap(),
            "H100-SXM",
        )
        .unwrap()
        .clone()
    }

    fn comm(f: impl FnOnce(&mut TypeStats)) -> TypeStats {
        let mut t = TypeStats {
            op: CollOp::AllReduce,
            group: "0".into(),
            calls: 10,
            instances: 5,
            exposed_ns: 20 * MS,
            ..Default::default()
        };
        f(&mut t);
        t
    }

    /// Every rule stays silent on a healthy world (the "must not" half of each test pair).
    #[test]
    fn a_healthy_job_has_no_findings() {
        let w = World::new();
        for (k, rule) in ALL.iter().enumerate() {
            assert!(w.run(*rule).is_none(), "rule #{k} fired on a healthy job");
        }
    }

    #[test]
    fn straggler_fires_only_when_flagged() {
        let mut w = World::new();
        let s = Straggler {
            group: "0".into(),
            rank: 1,
            imposed_wait_ns: 30 * MS,
            share: 0.9,
            ..Default::default()
        };
        w.stragglers = vec![s.clone()];
        assert!(w.run(straggler).is_none());
        w.stragglers = vec![Straggler { flagged: true, ..s }];
        let d = w.run(straggler).unwrap();
        assert_eq!((d.impact_ns, d.evidence.ranks.clone()), (30 * MS, vec![1]));
    }

    #[test]
    fn slow_step_and_stage_imbalance() {
        let mut w = World::new();
        w.slow_steps = vec![SlowStep {
            step: 2,
            time_ns: 150 * MS,
            median_ns: 100 * MS,
            culprit_rank: Some(1),
            ..Default::default()
        }];
        let d = w.run(slow_step).unwrap();
        assert_eq!(
            (
                d.impact_ns,
                d.evidence.ranks.clone(),
                d.evidence.steps.clone()
            ),
            (50 * MS, vec![1], vec![2])
        );
        let stage = |stage, compute, flagged| Stage {
            stage,
            ranks: vec![stage],
            compute_ns: compute,
            flagged,
            ..Default::default()
        };
        w.stages = Some(vec![stage(0, 60 * MS, false), stage(1, 60 * MS, false)]);
        assert!(w.run(stage_imbalance).is_none());
        w.stages = Some(vec![stage(0, 90 * MS, true), stage(1, 30 * MS, false)]);
        // (90 − mean 60) × 2 steps.
        assert_eq!(w.run(stage_imbalance).unwrap().impact_ns, 60 * MS);
    }

    #[test]
    fn rank_imbalance_defers_to_a_straggler() {
        let mut w = World::new();
        w.imbalance = vec![Imbalance {
            group: "0".into(),
            part: "compute",
            max_rank: 1,
            max_ns: 220 * MS,
            min_rank: 0,
            min_ns: 200 * MS,
            spread: 0.1,
            flagged: true,
        }];
        assert_eq!(w.run(rank_imbalance).unwrap().impact_ns, 10 * MS);
        w.stragglers = vec![Straggler {
            flagged: true,
            ..Default::default()
        }];
        assert!(w.run(rank_imbalance).is_none());
        w.stragglers.clear();
        w.imbalance[0].flagged = false;
        assert!(w.run(rank_imbalance).is_none());
    }

    #[test]
    fn overlap_wait_bandwidth_small_misaligned() {
        let mut w = World::new();
        // 20% of the span exposed, nothing hidden.
        for r in &mut w.rows {
            r.comm_ns = 20 * MS;
            r.compute_ns = 80 * MS;
        }
        w.comm = vec![comm(|_| {})];
        assert_eq!(w.run(poor_overlap).unwrap().impact_ns, 40 * MS);
        for r in &mut w.rows {
            r.overlap_ns = 30 * MS;
            r.compute_ns = 50 * MS;
        }
        assert!(w.run(poor_overlap).is_none());

        w.comm = vec![comm(|c| {
            c.wait_dominated = true;
            c.wait_ratio = Some(0.5);
        })];
        assert_eq!(w.run(comm_wait_dominated).unwrap().impact_ns, 5 * MS);
        w.slow_steps = vec![SlowStep::default()];
        assert!(
            w.run(comm_wait_dominated).is_none(),
            "the slow step names the cause"
        );
        w.slow_steps.clear();

        let sizes = Some(Sizes {
            median: 64 << 20,
            ..Default::default()
        });
        w.comm = vec![comm(|c| {
            c.busbw_of_peak = Some(0.25);
            c.bytes = sizes.clone();
        })];
        assert_eq!(w.run(low_bandwidth).unwrap().impact_ns, 5 * MS);
        w.comm[0].busbw_of_peak = Some(0.6);
        assert!(w.run(low_bandwidth).is_none());

        w.comm = vec![comm(|c| {
            c.small_flag = true;
            c.small_calls = 5;
        })];
        assert_eq!(w.run(small_messages).unwrap().impact_ns, 10 * MS / 2 / 2);
        w.comm[0].small_flag = false;
        assert!(w.run(small_messages).is_none());

        w.comm = vec![comm(|c| c.misaligned_calls = 3)];
        assert_eq!(w.run(misaligned_sizes).unwrap().impact_ns, 0);
        w.comm[0].misaligned_calls = 0;
        assert!(w.run(misaligned_sizes).is_none());
    }

    #[test]
    fn slow_link_fires_on_outliers() {
        let mut w = World::new();
        w.comm = vec![comm(|_| {})];
        assert!(w.run(slow_link).is_none());
        w.slow_links = vec![SlowLink {
            group: "0".into(),
            rank: 1,
            transit_ns: 3 * MS,
            group_median_ns: MS,
            z: 4.0,
            busbw_gbps: None,
        }];
        // 2 ms more per instance × 5 instances.
        assert_eq!(w.run(slow_link).unwrap().impact_ns, 10 * MS);
    }

    #[test]
    fn host_rules() {
        let mut w = World::new();
        w.host.data_loading.count = 4;
        w.host.data_loading.device_idle_ns = 10 * MS;
        w.host.data_loading.share_of_step = 0.025;
        assert_eq!(w.run(dataloader).unwrap().impact_ns, 5 * MS);
        w.host.data_loading.share_of_step = 0.01;
        assert!(w.run(dataloader).is_none());

        w.host.launch.launched = 1000;
        w.host.launch.span_ns = 400 * MS;
        w.host.launch.host_bound_ns = 40 * MS;
        // 40 ms host-bound minus 10 ms of data loading = 30 ms (7.5%).
        assert_eq!(w.run(launch_bound).unwrap().impact_ns, 15 * MS);
        w.host.launch.host_bound_ns = 20 * MS;
        assert!(w.run(launch_bound).is_none());

        w.host.launch.shorter_share = 0.5;
        w.host.launch.launch_idle_ns = 8 * MS;
        assert_eq!(w.run(tiny_kernels).unwrap().impact_ns, 4 * MS);
        w.host.launch.launched = 50;
        assert!(w.run(tiny_kernels).is_none());

        w.host.syncs = vec![SyncPoint {
            call: "cudaStreamSynchronize".into(),
            caused_by: "aten::item".into(),
            count: 2,
            blocked_ns: MS,
            device_idle_after_ns: 0,
            ranks: vec![0],
        }];
        assert!(w.run(sync_points).is_none());
        w.host.syncs[0].device_idle_after_ns = 6 * MS;
        assert_eq!(w.run(sync_points).unwrap().impact_ns, 3 * MS);

        w.host.gc = vec![GcPause {
            rank: 1,
            step: 2,
            start_ns: 0,
            dur_ns: 250 * MS,
            recorded: false,
        }];
        assert_eq!(w.run(gc).unwrap().impact_ns, 125 * MS);

        w.host.allocator = CallStat {
            count: 3,
            total_ns: 2 * MS,
            ranks: vec![0],
        };
        assert_eq!(w.run(allocator_churn).unwrap().impact_ns, MS);
        w.host.pageable_h2d = CallStat {
            count: 1,
            total_ns: 4 * MS,
            ranks: vec![1],
        };
        assert_eq!(w.run(pageable_memcpy).unwrap().impact_ns, 2 * MS);
    }

    #[test]
    fn free_time_and_critical_path() {
        let mut w = World::new();
        for r in &mut w.rows {
            r.free_ns = 15 * MS;
            r.compute_ns = 85 * MS;
        }
        assert_eq!(w.run(free_time).unwrap().impact_ns, 30 * MS);
        for r in &mut w.rows {
            r.free_ns = 5 * MS;
        }
        assert!(w.run(free_time).is_none());

        let op = |name: &str, category, total_ns| CriticalOp {
            name: name.into(),
            category,
            count: 1,
            total_ns,
        };
        let mut c = CriticalPath {
            total_ns: 100 * MS,
            top_ops: vec![
                op("cudaMalloc", Cp::Cpu, 70 * MS),
                op("gemm", Cp::GpuCompute, 30 * MS),
            ],
            ..Default::default()
        };
        c.by_category.insert("cpu", 70 * MS);
        c.by_category.insert("gpu_compute", 30 * MS);
        w.critical = Some(c.clone());
        let d = w.run(critical_path_host).unwrap();
        assert_eq!(
            (d.impact_ns, d.evidence.ops.clone()),
            (70 * MS, vec!["cudaMalloc".to_string()])
        );
        // Data loading on the path belongs to the dataloader rule.
        c.top_ops[0].name = "enumerate(DataLoader)#x".into();
        w.critical = Some(c);
        assert!(w.run(critical_path_host).is_none());
    }

    #[test]
    fn roofline_rules() {
        let mut w = World::new();
        w.roofline.device = Some(h100());
        w.roofline.u = 0.8;
        w.roofline.classes.insert(
            "under_utilized",
            crate::analysis::roofline::ClassShare {
                kernels: 2,
                time_ns: 100 * MS,
                share: 1.0,
            },
        );
        let gemm = OpRoof {
            op: "aten::mm".into(),
            family: Family::Gemm,
            dtype: Some("c10::BFloat16".into()),
            class: Class::UnderUtilized,
            kernels: 2,
            time_ns: 40 * MS,
            flops_of_peak: Some(0.2),
            ..Default::default()
        };
        w.roofline.ops = vec![gemm.clone()];
        // 40 ms × (1 − 0.2/0.8) over 2 ranks.
        assert_eq!(w.run(under_utilized_gemms).unwrap().impact_ns, 15 * MS);
        assert!(w.run(gemm_shape_alignment).is_none());
        assert!(w.run(fp32_gemms).is_none());
        w.roofline.ops = vec![OpRoof {
            unaligned_gemms: 1,
            dtype: Some("float".into()),
            ..gemm.clone()
        }];
        assert_eq!(w.run(gemm_shape_alignment).unwrap().impact_ns, 15 * MS / 2);
        // 40 ms × (1 − 66.9/494.7) / 2 ranks.
        let fp32 = w.run(fp32_gemms).unwrap().impact_ns;
        assert_eq!(fp32, (40.0 * MS as f64 * (1.0 - 66.9 / 494.7)) as Ns / 2);
        w.roofline.ops = vec![OpRoof {
            flops_of_peak: Some(0.7),
            ..gemm.clone()
        }];
        assert!(w.run(under_utilized_gemms).is_none());

        let ew = OpRoof {
            op: "aten::add".into(),
            family: Family::Elementwise,
            class: Class::MemoryBound,
            time_ns: 20 * MS,
            ..Default::default()
        };
        w.roofline.ops = vec![ew.clone()];
        assert_eq!(w.run(memory_bound_elementwise).unwrap().impact_ns, 5 * MS);
        w.roofline.ops = vec![OpRoof {
            time_ns: 2 * MS,
            ..ew
        }];
        assert!(w.run(memory_bound_elementwise).is_none());

        w.roofline.classes.insert(
            "unknown",
            crate::analysis::roofline::ClassShare {
                kernels: 9,
                time_ns: 300 * MS,
                share: 0.75,
            },
        );
        assert_eq!(w.run(roofline_unknown).unwrap().impact_ns, 0);
    }

    #[test]
    fn severity_follows_impact() {
        let mut w = World::new();
        w.slow_steps = vec![SlowStep {
            step: 2,
            time_ns: 110 * MS,
            median_ns: 100 * MS,
            ..Default::default()
        }];
        let t = Thresholds::default();
        // 10 ms of 200 ms = 5%: high.
        let f = super::super::advise(&w.facts(), &t);
        assert_eq!(
            (f[0].rule, f[0].severity),
            ("slow_step", super::super::Severity::High)
        );
        w.slow_steps[0].time_ns = 107 * MS;
        assert_eq!(
            super::super::advise(&w.facts(), &t)[0].severity,
            super::super::Severity::Medium
        );
        w.slow_steps[0].time_ns = 101 * MS;
        assert_eq!(
            super::super::advise(&w.facts(), &t)[0].severity,
            super::super::Severity::Low
        );
    }
}
