//! The accelerator's own kernel table (Ascend PMU counters and `OP State`): operators no
//! pipe bounds, and operators compiled for dynamic shapes — msprof-analyze's "operator no
//! bound" and "dynamic shape" rules, with stepscope's evidence and impact.

use super::compute::Claim;
use super::{Rule, per_rank, share};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Quantity, Thresholds, View};
use crate::analysis::roofline::Class;
use crate::time::Ns;

/// The kernel-table rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "unbound_operators",
        category: Category::Compute,
        detect: unbound_operators,
    },
    Rule {
        id: "dynamic_shapes",
        category: Category::Compute,
        detect: dynamic_shapes,
    },
];

/// An operator's mean task must last this long to be worth tuning (msprof-analyze: 20 µs).
pub const MIN_TASK_NS: Ns = 20_000;
/// Operators listed (msprof-analyze: top 10).
pub const TOP: usize = 10;

/// Operator types whose counters show no pipe busy at U: neither compute- nor memory-bound,
/// they wait on dependencies, synchronization or too few cores. Impact: the time each would
/// save if its busiest pipe reached U (its time × (1 − ratio / U)), per rank.
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
            crate::analysis::advisor::Claim::Compute(c),
        )
        .ops(ops.iter().map(|o| o.op.clone()))
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
        Draft::new(0, crate::analysis::advisor::Claim::Compute(c))
            .ops(k.dynamic_ops.iter().map(|o| o.op.clone()))
            .number("dynamic_tasks", Quantity::Count(k.dynamic)),
    )
}
