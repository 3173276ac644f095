//! Kernel-table findings in words (Ascend's PMU counters, `OP State`, AI CPU tasks, device
//! clock and the framework operators a fused API replaces).

use super::Words;
use crate::analysis::advisor::rules::accelerator::Claim;
use crate::format::human;
use crate::time::Ns;

/// The words of a kernel-table finding.
pub(super) fn words(c: &Claim) -> Words {
    match c {
        Claim::UnboundOperators {
            op,
            core,
            pipe,
            ratio,
            ops,
            share,
        } => unbound(op, *core, pipe, *ratio, *ops, *share),
        Claim::DynamicShapes { tasks, led_by } => dynamic(*tasks, led_by.as_deref()),
        Claim::ClockDrop {
            rank,
            step,
            mean_mhz,
            top_mhz,
            drops,
        } => clock_drop((*rank, *step), *mean_mhz, *top_mhz, *drops),
        Claim::AiCpu {
            op,
            tasks,
            max_ns,
            ops,
            time_ns,
            double,
        } => ai_cpu(op, (*tasks, *max_ns), *ops, *time_ns, *double),
        Claim::AffinityApis {
            api,
            replaces,
            count,
            apis,
        } => affinity(api, replaces, *count, *apis),
    }
}

/// Operator types no PMU pipe bounds.
fn unbound(op: &str, core: Option<&str>, pipe: &str, ratio: f64, ops: usize, share: f64) -> Words {
    Words {
        title: format!(
            "{:.0}% of kernel time is in {ops} operator type(s) no pipe bounds, led by {op}{}: its busiest pipe ({pipe}) is busy {:.0}% of the time",
            share * 100.0,
            core.map_or(String::new(), |c| format!(" on {c}")),
            ratio * 100.0
        ),
        cause: "the PMU counters show neither the math units nor the data movers busy: the operator waits on dependencies between pipes, on synchronization, or uses too few cores (Block Dim)",
        suggestions: &[
            "tune these operators with AOE (Ascend's operator auto-tuner), or pick a fused/affine operator (npu_* APIs)",
            "check Block Dim against the device's core count: a block count that does not fill the cores leaves them idle",
            "shape them for the hardware: 16-aligned (fp16/bf16) inner axes, formats without TransData around them",
        ],
    }
}

/// Every recorded task compiled for dynamic shapes.
fn dynamic(tasks: u64, led_by: Option<&str>) -> Words {
    Words {
        title: format!(
            "every one of {tasks} device tasks ran compiled for dynamic shapes{}",
            led_by.map_or(String::new(), |o| format!(" (most time: {o})"))
        ),
        cause: "dynamically compiled operators select and sometimes compile kernels on the host at run time, and miss the static kernels' tuning",
        suggestions: &[
            "torch_npu.npu.set_compile_mode(jit_compile=False) to use the prebuilt binary operators",
            "torch_npu.npu.config.allow_internal_format=False to avoid format-conversion operators",
        ],
    }
}

fn ai_cpu(op: &str, (tasks, max_ns): (u64, Ns), ops: usize, time_ns: Ns, double: bool) -> Words {
    Words {
        title: format!(
            "{ops} operator type(s) ran on the AI CPU for {}, led by {op} ({tasks} task(s), the longest {})",
            human(time_ns),
            human(max_ns)
        ),
        cause: "operators without an AI Core kernel for their data type or shape fall back to the device's CPU cores, which run them far slower and hold up the stream",
        suggestions: if double {
            &[
                "cast float64 (DOUBLE) tensors to float32 before these operators: no AI Core kernel takes DOUBLE",
                "index, nonzero, unique and argmin/argmax-style operators: keep shapes static (masks instead of nonzero) or move them out of the step",
            ]
        } else {
            &[
                "check the operator's data types and shapes against its AI Core kernel (CANN operator list): int64 indices and odd formats fall back",
                "index, nonzero, unique and argmin/argmax-style operators: keep shapes static (masks instead of nonzero) or move them out of the step",
            ]
        },
    }
}

fn affinity(api: &str, replaces: &str, count: u64, apis: usize) -> Words {
    let more = match apis {
        1 => String::new(),
        n => format!(" (and {} more API(s))", n - 1),
    };
    Words {
        title: format!("{api} can replace {replaces} ({count} run(s) on the main thread){more}"),
        cause: "each framework operator is dispatched and run as its own kernels; torch_npu's fused (affinity) API does the same work in one",
        suggestions: &[
            "replace the operators with the fused API (torch_npu's API reference lists its constraints); record with_stack=True to find the calls",
            "optimizers: torch_npu.optim.NpuFused* take the same arguments as torch.optim's",
        ],
    }
}

fn clock_drop(
    (rank, step): (crate::model::RankId, crate::model::StepNo),
    mean_mhz: f64,
    top_mhz: u32,
    drops: usize,
) -> Words {
    let more = match drops {
        1 => String::new(),
        n => format!(" ({} more rank-step(s) below it)", n - 1),
    };
    Words {
        title: format!(
            "rank {rank}'s device clock averaged {mean_mhz:.0} MHz in step {step}, {:.0}% below the job's top {top_mhz} MHz: its kernels ran that much slower{more}",
            (1.0 - mean_mhz / f64::from(top_mhz)) * 100.0
        ),
        cause: "the device lowered its clock: temperature or power limits, a power cap, or a clock set below the others'",
        suggestions: &[
            "check the device's temperature, power and clock (npu-smi info -t temp/power/freq; nvidia-smi -q -d CLOCK,PERFORMANCE): throttle reasons, a failed fan, a cap",
            "compare with the node's other devices; move the job off a node that keeps throttling",
        ],
    }
}
