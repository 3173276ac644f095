//! The accelerator's own kernel table (Ascend PMU counters and `OP State`): operators no
//! pipe bounds, operators compiled for dynamic shapes, and framework operators one fused API
//! replaces — msprof-analyze's "operator no bound", "dynamic shape" and "affinity API" rules,
//! with stepscope's evidence and impact.

use super::{Bound, Rule, distinct, per_rank, share};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Kind, Quantity, Thresholds, View};
use crate::analysis::roofline::Class;
use crate::analysis::roofline::speedup::Speedup;
use crate::model::{RankId, StepNo};
use crate::time::Ns;

/// The kernel-table rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "unbound_operators",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: unbound_operators,
    },
    Rule {
        id: "dynamic_shapes",
        category: Category::Compute,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: dynamic_shapes,
    },
    Rule {
        id: "clock_drop",
        category: Category::Compute,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: clock_drop,
    },
    Rule {
        id: "ai_cpu_operators",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: ai_cpu_operators,
    },
    Rule {
        id: "affinity_apis",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: affinity_apis,
    },
];

/// What a kernel-table finding claims.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Operator types whose PMU counters show no pipe busy at U (the one with the most
    /// time first).
    UnboundOperators {
        /// The operator type.
        op: String,
        /// Its unit.
        core: Option<&'static str>,
        /// Its busiest pipe.
        pipe: &'static str,
        /// That pipe's mean ratio.
        ratio: f64,
        /// Operator types listed.
        ops: usize,
        /// Their share of kernel time.
        share: f64,
    },
    /// Every recorded task ran compiled for dynamic shapes.
    DynamicShapes {
        /// Dynamic tasks.
        tasks: u64,
        /// The operator type with the most dynamic time.
        led_by: Option<String>,
    },
    /// A rank whose device clock ran below the job's top clock (the worst (rank, step)).
    ClockDrop {
        /// The rank.
        rank: RankId,
        /// The step.
        step: StepNo,
        /// Its mean clock there, MHz.
        mean_mhz: f64,
        /// The job's top clock, MHz.
        top_mhz: u32,
        /// (rank, step)s with a drop.
        drops: usize,
    },
    /// Operators that ran on the AI CPU, with a task of at least 20 µs.
    AiCpu {
        /// The operator type with the most time.
        op: String,
        /// Its tasks and longest task.
        tasks: u64,
        /// Its longest task.
        max_ns: Ns,
        /// Operator types listed.
        ops: usize,
        /// Σ their time.
        time_ns: Ns,
        /// Some of their tasks take a 64-bit float input.
        double: bool,
    },
    /// Runs of framework operators that one fused torch_npu API replaces.
    AffinityApis {
        /// The API with the most host time in what it replaces.
        api: String,
        /// Its first matched run (`Optimizer.step#SGD.step`, `permute-contiguous-view`).
        replaces: String,
        /// Its runs.
        count: u64,
        /// APIs with a match.
        apis: usize,
    },
}

/// An operator's mean task must last this long to be worth tuning (msprof-analyze: 20 µs).
pub const MIN_TASK_NS: Ns = 20_000;
/// Operators listed (msprof-analyze: top 10).
pub const TOP: usize = 10;

/// Operator types whose counters show no pipe busy at U: neither compute- nor memory-bound,
/// they wait on dependencies, synchronization or too few cores. Impact: the time each would
/// save if its busiest pipe reached U (its time × (1 − ratio / U)), per rank; the replay
/// runs their tasks at that share (`Kernels` by task type).
pub fn unbound_operators(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let ops: Vec<_> = r
        .pmu_ops
        .iter()
        .filter(|o| o.class == Class::UnderUtilized)
        .filter(|o| o.time_ns >= MIN_TASK_NS * o.kernels.max(1) as Ns)
        .take(TOP)
        .collect();
    let time: Ns = ops.iter().map(|o| o.time_ns).sum();
    let worst = ops.first()?;
    if share(time, r.kernel_time()) < t.unbound_share {
        return None;
    }
    let impact: Ns = ops
        .iter()
        .map(|o| (o.time_ns as f64 * (1.0 - o.bound_ratio / r.u).max(0.0)) as Ns)
        .sum();
    let c = Claim::UnboundOperators {
        op: worst.op.clone(),
        core: worst.core.map(crate::model::Core::as_str),
        pipe: worst.bound_pipe,
        ratio: worst.bound_ratio,
        ops: ops.len(),
        share: share(time, r.kernel_time()),
    };
    Some(
        Draft::new(
            per_rank(impact, f),
            crate::analysis::advisor::Claim::Accelerator(c),
        )
        .ops(ops.iter().map(|o| o.op.clone()))
        .speedups(
            ops.iter()
                .map(|o| Speedup::task(&o.op, o.bound_ratio / r.u)),
        )
        .number("time_ns", Quantity::Ns(time))
        .number("bound_ratio", Quantity::Ratio(worst.bound_ratio))
        .focus(Focus::Evidence(View::Roofline)),
    )
}

/// Every task whose state was recorded ran compiled for dynamic shapes (msprof-analyze's
/// condition): each new shape compiles an operator on the host. Impact 0: the compile time
/// is not in the device tasks.
pub fn dynamic_shapes(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let k = f.tasks?;
    if k.with_state == 0 || k.dynamic < k.with_state {
        return None;
    }
    let c = Claim::DynamicShapes {
        tasks: k.dynamic,
        led_by: k.dynamic_ops.first().map(|o| o.op.clone()),
    };
    Some(
        Draft::new(0, crate::analysis::advisor::Claim::Accelerator(c))
            .ops(k.dynamic_ops.iter().map(|o| o.op.clone()))
            .number("dynamic_tasks", Quantity::Count(k.dynamic)),
    )
}

/// Ranks whose device clock ran more than 5% below the job's top clock in a step
/// (analysis/clocks.rs; msprof-analyze's AI Core frequency rule). Impact: the compute time
/// the slower clock added, Σ over the drops, per rank; the replay runs those rank-steps'
/// kernels at mean / top of their time (`Fix::Clocks`).
pub fn clock_drop(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let worst = f.clock_drops.first()?;
    let top = f.top_mhz?;
    let lost: Ns = f.clock_drops.iter().map(|d| d.lost_ns).sum();
    let c = Claim::ClockDrop {
        rank: worst.rank,
        step: worst.step,
        mean_mhz: worst.mean_mhz,
        top_mhz: top,
        drops: f.clock_drops.len(),
    };
    Some(
        Draft::new(
            per_rank(lost, f),
            crate::analysis::advisor::Claim::Accelerator(c),
        )
        .ranks(distinct(f.clock_drops.iter().map(|d| d.rank)))
        .steps(distinct(f.clock_drops.iter().map(|d| d.step)))
        .clocks(f.clock_drops.iter().map(|d| d.at_top(top)))
        .number("lost_ns", Quantity::Ns(lost))
        .number(
            "clock_ratio",
            Quantity::Ratio(worst.mean_mhz / f64::from(top)),
        ),
    )
}

/// Operators that fell back to the AI CPU with a task of at least [`MIN_TASK_NS`]
/// (msprof-analyze's AI CPU rule): the device's CPU cores run them far slower than an AI Core
/// kernel would. Impact: their time per rank — at most what moving them off the AI CPU saves.
pub fn ai_cpu_operators(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let k = f.tasks?;
    let ops: Vec<_> = k
        .ai_cpu_ops
        .iter()
        .filter(|o| o.max_ns >= MIN_TASK_NS)
        .collect();
    let worst = ops.first()?;
    let time_ns: Ns = ops.iter().map(|o| o.time_ns).sum();
    let c = Claim::AiCpu {
        op: worst.op.clone(),
        tasks: worst.tasks,
        max_ns: worst.max_ns,
        ops: ops.len(),
        time_ns,
        double: ops.iter().any(|o| o.double_tasks > 0),
    };
    Some(
        Draft::new(
            per_rank(time_ns, f),
            crate::analysis::advisor::Claim::Accelerator(c),
        )
        .ops(ops.iter().map(|o| o.op.clone()))
        .number("time_ns", Quantity::Ns(time_ns))
        .number("max_ns", Quantity::Ns(worst.max_ns)),
    )
}

/// Framework operators that a fused torch_npu API replaces (analysis/affinity.rs). Impact 0:
/// what a fused API saves (dispatch, kernels, memory passes) is not in the trace; the host
/// time of the replaced operators is the evidence.
pub fn affinity_apis(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let first = f.affinity.first()?;
    let c = Claim::AffinityApis {
        api: first.api.clone(),
        replaces: first.replaces.clone(),
        count: first.count,
        apis: f.affinity.len(),
    };
    Some(
        Draft::new(0, crate::analysis::advisor::Claim::Accelerator(c))
            .ranks(first.ranks.iter().copied())
            .steps(first.steps.iter().copied())
            .ops(f.affinity.iter().map(|a| a.api.clone()))
            .number("host_ns", Quantity::Ns(first.host_ns))
            .number("count", Quantity::Count(first.count)),
    )
}
