//! Kernels: memory-bound elementwise traffic, GEMMs far from the compute roof, GEMM shapes
//! tensor cores cannot tile, fp32 GEMMs, kernels the roofline cannot place.

use super::{Bound, Rule, per_rank, share};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Kind, Quantity, Thresholds, View};
use crate::analysis::roofline::speedup::Speedup;
use crate::analysis::roofline::{Class, OpRoof, UnknownCause};
use crate::model::Family;
use crate::time::Ns;

/// The kernel rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "memory_bound_elementwise",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: memory_bound_elementwise,
    },
    Rule {
        id: "under_utilized_gemms",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: under_utilized_gemms,
    },
    Rule {
        id: "gemm_shape_alignment",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: gemm_shape_alignment,
    },
    Rule {
        id: "fp32_gemms",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: fp32_gemms,
    },
    Rule {
        id: "roofline_unknown",
        category: Category::Compute,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: roofline_unknown,
    },
];

/// What a kernel finding claims.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Elementwise and normalization kernels bound by memory traffic.
    ElementwiseTraffic {
        /// Their share of kernel time.
        share: f64,
        /// Operator types.
        op_types: usize,
        /// The one with the most time.
        led_by: String,
    },
    /// A GEMM far below the FLOP/s peak (the one with the most time).
    UnderUtilizedGemm {
        /// The operator.
        op: String,
        /// TFLOP/s / peak.
        of_peak: f64,
    },
    /// GEMM kernels with M, N or K not a multiple of 8 (the operator with the most time).
    UnalignedGemm {
        /// Unaligned kernels.
        unaligned: u64,
        /// All its kernels.
        kernels: u64,
        /// The operator.
        op: String,
    },
    /// fp32 GEMMs on a tensor-core device.
    Fp32Gemms {
        /// Operator types.
        op_types: usize,
        /// Their time, per rank.
        time_ns: Ns,
    },
    /// Kernel time the roofline cannot place.
    RooflineUnknown {
        /// Its share of kernel time.
        share: f64,
        /// Because the device has no peaks (then `cause` is moot).
        unknown_device: bool,
        /// Why most of the unknown kernel time is unknown.
        cause: UnknownCause,
    },
}

fn claim(c: Claim) -> crate::analysis::advisor::Claim {
    crate::analysis::advisor::Claim::Compute(c)
}

fn kernel_time(f: &Facts) -> Ns {
    f.roofline.map_or(0, |r| r.kernel_time())
}

/// Operator type `o`'s kernels keeping `share` of their time.
fn keep(o: &OpRoof, share: f64) -> Speedup {
    Speedup::new(&o.op, o.dtype.as_deref(), share)
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
    let c = Claim::ElementwiseTraffic {
        share: share(time, kernel_time(f)),
        op_types: ops.len(),
        led_by: ops[0].op.clone(),
    };
    // Fusing a chain reads and writes each tensor once instead of per op: about half.
    Some(
        Draft::new(per_rank(time / 2, f), claim(c))
            .ops(ops.iter().map(|o| o.op.clone()))
            .speedups(ops.iter().map(|o| keep(o, 0.5)))
            .number("time_ns", Quantity::Ns(time))
            .number("gbps", Quantity::Gbps(ops[0].gbps)),
    )
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
    let kept = |o: &OpRoof| (o.flops_of_peak.unwrap_or(0.0) / r.u).min(1.0);
    let impact: Ns = g
        .iter()
        .map(|o| (o.time_ns as f64 * (1.0 - kept(o))) as Ns)
        .sum();
    let c = Claim::UnderUtilizedGemm {
        op: worst.op.clone(),
        of_peak: worst.flops_of_peak.unwrap_or(0.0),
    };
    Some(
        Draft::new(per_rank(impact, f), claim(c))
            .ops(g.iter().map(|o| o.op.clone()))
            .speedups(g.iter().map(|o| keep(o, kept(o))))
            .number("tflops", Quantity::Tflops(worst.tflops.unwrap_or(0.0)))
            .number("ai", Quantity::FlopPerByte(worst.ai.unwrap_or(0.0)))
            .number("time_ns", Quantity::Ns(worst.time_ns))
            .focus(Focus::Evidence(View::Roofline)),
    )
}

/// GEMMs with dimensions tensor cores cannot tile well.
pub fn gemm_shape_alignment(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let g: Vec<_> = r.ops.iter().filter(|o| o.unaligned_gemms > 0).collect();
    let worst = g.iter().max_by_key(|o| o.time_ns)?;
    // The unaligned kernels at the attainable FLOP/s, the aligned ones as they are.
    let kept = |o: &OpRoof| {
        let unaligned = o.unaligned_gemms as f64 / o.kernels.max(1) as f64;
        1.0 - unaligned * (1.0 - o.flops_of_peak.unwrap_or(0.0) / r.u).max(0.0)
    };
    let impact: Ns = g
        .iter()
        .map(|o| (o.time_ns as f64 * (1.0 - kept(o))) as Ns)
        .sum();
    let c = Claim::UnalignedGemm {
        unaligned: worst.unaligned_gemms,
        kernels: worst.kernels,
        op: worst.op.clone(),
    };
    Some(
        Draft::new(per_rank(impact, f), claim(c))
            .ops(g.iter().map(|o| o.op.clone()))
            .speedups(g.iter().map(|o| keep(o, kept(o))))
            .number("unaligned", Quantity::Count(worst.unaligned_gemms))
            .focus(Focus::Evidence(View::Roofline)),
    )
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
    let c = Claim::Fp32Gemms {
        op_types: g.len(),
        time_ns: per_rank(time, f),
    };
    Some(
        Draft::new(
            per_rank((time as f64 * (1.0 - fp32 / tf32)) as Ns, f),
            claim(c),
        )
        .ops(g.iter().map(|o| o.op.clone()))
        .speedups(g.iter().map(|o| keep(o, fp32 / tf32)))
        .number("time_ns", Quantity::Ns(time))
        .number("fp32_tflops", Quantity::Tflops(fp32))
        .number("tf32_tflops", Quantity::Tflops(tf32))
        .focus(Focus::Evidence(View::Roofline)),
    )
}

/// Most kernel time has no roofline class.
pub fn roofline_unknown(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let r = f.roofline?;
    let total = kernel_time(f);
    let unknown = r.time_in(Class::Unknown);
    if total == 0 || share(unknown, total) < t.unknown_share {
        return None;
    }
    let cause = r.unknowns.cause();
    let ops = match &cause {
        UnknownCause::NoRule(ops) | UnknownCause::ShapesUnfit(ops) => ops.clone(),
        UnknownCause::NoOperator | UnknownCause::NoShapesRecorded => Vec::new(),
    };
    let c = Claim::RooflineUnknown {
        share: share(unknown, total),
        unknown_device: r.device.is_none(),
        cause,
    };
    Some(
        Draft::new(0, claim(c))
            .ops(ops)
            .number("unknown_share", Quantity::Ratio(share(unknown, total)))
            .focus(Focus::Evidence(View::Roofline)),
    )
}
