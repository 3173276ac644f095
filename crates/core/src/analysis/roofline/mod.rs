//! Roofline classification (docs/metrics.md, "Roofline"; Hermes Appendix B). For each compute
//! kernel whose launching operator has shapes (or `flops`): FLOPs and bytes from [`shapes`],
//! shared among the operator's kernels by duration; achieved P = FLOPs / duration,
//! B = bytes / duration; with the device's peaks ([`peaks`]) and threshold U (`--roofline-u`,
//! default 0.8): **memory-bound** if AI ≤ ridge and B ≥ U·B_peak; **compute-bound** if
//! AI > ridge and P ≥ U·P_peak; else **under-utilized**. Bytes-only operators (norms,
//! elementwise) have AI ≈ 0: memory-bound or under-utilized by bandwidth alone. Kernels
//! without shapes, on an unknown device, or fp32 on a device with no fp32 peak, are
//! **unknown** (counted, with their time). Which
//! operators have a FLOP rule is a role (`op_family`, from the role tables). Tasks with the
//! accelerator's own counters (Ascend PMU ratios) are classified by them instead ([`pmu`]),
//! on any device.

pub mod peaks;
pub mod pmu;
mod rank;
pub mod shapes;
pub mod speedup;

use crate::model::{Family, Job, RankId, StepNo, Sym};
use crate::time::Ns;
use peaks::Device;
use rank::{OpAcc, Partial};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Default utilization threshold U.
pub const DEFAULT_U: f64 = 0.8;
/// Operators listed per class.
pub const TOP_PER_CLASS: usize = 10;

/// A roofline class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// AI above the ridge, FLOP/s near the peak.
    ComputeBound,
    /// AI at or below the ridge, bandwidth near the peak.
    MemoryBound,
    /// Neither near its roof.
    UnderUtilized,
    /// No FLOP/byte information or no device peaks.
    #[default]
    Unknown,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 4] = [
        Class::ComputeBound,
        Class::MemoryBound,
        Class::UnderUtilized,
        Class::Unknown,
    ];

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::ComputeBound => "compute_bound",
            Class::MemoryBound => "memory_bound",
            Class::UnderUtilized => "under_utilized",
            Class::Unknown => "unknown",
        }
    }
}

/// Time in one class.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassShare {
    /// Compute kernels in the class.
    pub kernels: u64,
    /// Σ kernel time.
    pub time_ns: Ns,
    /// time / Σ compute-kernel time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share: f64,
}

/// One operator type (the launching op's name and element type) on the roofline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpRoof {
    /// Operator (`aten::mm`).
    pub op: String,
    /// The family its FLOPs and bytes are estimated by.
    pub family: Family,
    /// Element type of its first input.
    pub dtype: Option<String>,
    /// Class of the aggregate.
    pub class: Class,
    /// Kernels it launched.
    pub kernels: u64,
    /// Σ kernel time.
    pub time_ns: Ns,
    /// Σ FLOPs (`None`: bytes-only).
    pub flops: Option<f64>,
    /// Σ bytes.
    pub bytes: f64,
    /// FLOPs / bytes.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub ai: Option<f64>,
    /// Achieved TFLOP/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub tflops: Option<f64>,
    /// Achieved GB/s.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub gbps: f64,
    /// tflops / peak.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub flops_of_peak: Option<f64>,
    /// gbps / peak.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub bw_of_peak: Option<f64>,
    /// GEMM kernels whose M, N or K is not a multiple of 8 (tensor cores want 8/16).
    pub unaligned_gemms: u64,
}

/// The roofline of the job.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Roofline {
    /// The device name the traces report.
    pub device_name: Option<String>,
    /// The peaks used (`None`: unknown device; pass `--device`).
    pub device: Option<Device>,
    /// Threshold U.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub u: f64,
    /// Per class (all present).
    pub classes: BTreeMap<Class, ClassShare>,
    /// Operator types by time.
    pub ops: Vec<OpRoof>,
    /// Operator types classified by the accelerator's counters (Ascend PMU ratios), by
    /// time; their kernels are in `classes` too, never in `ops`.
    pub pmu_ops: Vec<pmu::PmuOp>,
    /// Why kernels are unknown, when they are.
    #[serde(skip)]
    pub note: Option<RooflineNote>,
    /// What the unknown kernels are (not in the JSON).
    #[serde(skip)]
    pub unknowns: Unknowns,
}

/// Why the roofline could not place kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RooflineNote {
    /// `--device NAME` names no table entry.
    NoSuchDevice(String),
    /// The traces' device has no peaks in the table.
    NoPeaks(String),
    /// The traces name no device.
    NoDevice,
    /// Some kernels lack shapes or a FLOP rule.
    KernelsWithoutShapes,
}

/// Why the roofline's unknown kernels are unknown, when the device is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unknowns {
    /// The trace records operator shapes (some roofline operator carries `Input Dims`).
    pub shapes_seen: bool,
    /// Unknown kernel time with no launching operator (graph replays, launches outside any
    /// framework operator).
    pub no_operator_ns: Ns,
    /// Launching operators without a FLOP rule, most unknown kernel time first (at most 5).
    pub no_rule: Vec<(String, Ns)>,
    /// Σ unknown kernel time of operators without a FLOP rule.
    pub no_rule_ns: Ns,
    /// Operators with a FLOP rule whose shapes are missing or fit no rule, most first (at
    /// most 5).
    pub no_shapes: Vec<(String, Ns)>,
    /// Σ unknown kernel time of those.
    pub no_shapes_ns: Ns,
}

/// The reason most unknown kernel time is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownCause {
    /// Kernels with no launching operator: graph replays, launches outside operators.
    NoOperator,
    /// The trace records no shapes at all.
    NoShapesRecorded,
    /// These operators have no FLOP rule.
    NoRule(Vec<String>),
    /// These operators have a rule, but their shapes are missing or fit none.
    ShapesUnfit(Vec<String>),
}

impl Unknowns {
    /// The cause behind the most unknown kernel time.
    pub fn cause(&self) -> UnknownCause {
        let names = |v: &[(String, Ns)]| v.iter().map(|o| o.0.clone()).collect();
        let ops_ns = self.no_rule_ns + self.no_shapes_ns;
        if self.no_operator_ns >= ops_ns {
            UnknownCause::NoOperator
        } else if !self.shapes_seen {
            UnknownCause::NoShapesRecorded
        } else if self.no_rule_ns >= self.no_shapes_ns {
            UnknownCause::NoRule(names(&self.no_rule))
        } else {
            UnknownCause::ShapesUnfit(names(&self.no_shapes))
        }
    }
}

impl Roofline {
    /// Σ kernel time over every class.
    pub fn kernel_time(&self) -> Ns {
        self.classes.values().map(|c| c.time_ns).sum()
    }

    /// The time in one class.
    pub fn time_in(&self, c: Class) -> Ns {
        self.classes.get(&c).map_or(0, |s| s.time_ns)
    }
}

/// Roofline options: `--device`, `--roofline-u`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RooflineOptions {
    /// A device table name overriding the traces' device.
    pub device: Option<String>,
    /// Threshold U (default 0.8).
    pub u: Option<f64>,
}

/// Classifies one kernel or aggregate.
pub fn classify(
    dev: &Device,
    dtype: Option<&str>,
    flops: Option<f64>,
    bytes: f64,
    dur_ns: Ns,
    u: f64,
) -> Class {
    if dur_ns <= 0 || bytes <= 0.0 {
        return Class::Unknown;
    }
    let secs = dur_ns as f64 * 1e-9;
    let bw = bytes / secs / 1e9; // GB/s
    let b_peak = dev.hbm_gbps;
    match flops {
        None => {
            if bw >= u * b_peak {
                Class::MemoryBound
            } else {
                Class::UnderUtilized
            }
        }
        Some(f) => {
            let (Some(peak), Some(ridge)) = (dev.peak_tflops(dtype), dev.ridge(dtype)) else {
                return Class::Unknown;
            };
            let ai = f / bytes;
            let p = f / secs / 1e12; // TFLOP/s
            if ai <= ridge {
                if bw >= u * b_peak {
                    Class::MemoryBound
                } else {
                    Class::UnderUtilized
                }
            } else if p >= u * peak {
                Class::ComputeBound
            } else {
                Class::UnderUtilized
            }
        }
    }
}

/// The roofline over the ranks and steps in scope.
pub fn roofline(
    job: &Job,
    table: &[Device],
    opts: &RooflineOptions,
    in_scope: impl Fn(RankId, StepNo) -> bool + Sync,
) -> Roofline {
    let u = opts.u.unwrap_or(DEFAULT_U);
    let device_name = job
        .ranks
        .iter()
        .flat_map(|r| r.devices.first())
        .map(|d| job.strings.resolve(*d).to_string())
        .next();
    let (device, note) = select_device(table, opts, device_name.as_deref());
    let merged = job
        .ranks
        .par_iter()
        .map(|r| rank::rank_roofline(job, r, device.as_ref(), u, &in_scope))
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::default(), Partial::merge);
    let classes = class_shares(&merged);
    let ops = match &device {
        Some(dev) => op_rows(job, &merged, dev, u),
        None => Vec::new(),
    };
    let mut pmu_ops: Vec<pmu::PmuOp> = merged
        .pmu
        .iter()
        .map(|(k, a)| {
            let name = |s: Sym| job.strings.resolve(s).to_string();
            pmu::op_row(name(*k), a.task_name.map_or_else(String::new, name), a, u)
        })
        .collect();
    pmu_ops.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.op.cmp(&b.op)));
    let unknown = device.is_some() && classes[&Class::Unknown].time_ns > 0;
    // Counters placed every kernel: the device's missing peaks left nothing unknown.
    let note = if classes[&Class::Unknown].kernels == 0 && !pmu_ops.is_empty() {
        None
    } else {
        note.or(unknown.then_some(RooflineNote::KernelsWithoutShapes))
    };
    let unknowns = unknowns(job, &merged);
    Roofline {
        unknowns,
        device_name,
        device,
        u,
        classes,
        ops,
        pmu_ops,
        note,
    }
}

/// Why the unknown kernel time is unknown: no launching operator, an operator without a FLOP
/// rule, or an operator with a family (a rule) whose shapes are missing or fit none.
fn unknowns(job: &Job, merged: &Partial) -> Unknowns {
    let mut u = Unknowns {
        shapes_seen: merged.shapes_seen,
        ..Unknowns::default()
    };
    for (k, &ns) in &merged.unknown_by_op {
        match k {
            None => u.no_operator_ns += ns,
            Some(s) if job.role(*s).op_family.is_some() => {
                u.no_shapes_ns += ns;
                u.no_shapes.push((job.strings.resolve(*s).to_string(), ns));
            }
            Some(s) => {
                u.no_rule_ns += ns;
                u.no_rule.push((job.strings.resolve(*s).to_string(), ns));
            }
        }
    }
    for v in [&mut u.no_rule, &mut u.no_shapes] {
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(5);
    }
    u
}

/// The peaks to use: `--device`, else the traces' device; a note when there are none.
fn select_device(
    table: &[Device],
    opts: &RooflineOptions,
    traced: Option<&str>,
) -> (Option<Device>, Option<RooflineNote>) {
    match (&opts.device, traced) {
        (Some(n), _) => match peaks::by_name(table, n) {
            Some(d) => (Some(d.clone()), None),
            None => (None, Some(RooflineNote::NoSuchDevice(n.clone()))),
        },
        (None, Some(n)) => match peaks::by_trace_name(table, n) {
            Some(d) => (Some(d.clone()), None),
            None => (None, Some(RooflineNote::NoPeaks(n.to_string()))),
        },
        (None, None) => (None, Some(RooflineNote::NoDevice)),
    }
}

/// Kernels and time per class, and each class's share of all kernel time.
fn class_shares(merged: &Partial) -> BTreeMap<Class, ClassShare> {
    let mut classes: BTreeMap<Class, ClassShare> = Class::ALL
        .iter()
        .map(|c| (*c, ClassShare::default()))
        .collect();
    for (k, (n, t)) in Class::ALL.iter().zip(merged.classes) {
        let c = classes.get_mut(k).expect("all classes");
        c.kernels += n;
        c.time_ns += t;
    }
    for c in classes.values_mut() {
        c.share = if merged.total > 0 {
            c.time_ns as f64 / merged.total as f64
        } else {
            0.0
        };
    }
    classes
}

/// Operator types by name and element type (several `Input type` texts can share one), most
/// time first, classified as aggregates.
fn op_rows(job: &Job, merged: &Partial, dev: &Device, u: f64) -> Vec<OpRoof> {
    let mut per_op: BTreeMap<(String, Option<String>), OpAcc> = BTreeMap::new();
    for ((name, types), x) in &merged.per_op {
        let dtype = types.and_then(|t| shapes::first_type(job.strings.resolve(t)));
        let key = (job.strings.resolve(*name).to_string(), dtype);
        per_op
            .entry(key)
            .or_insert_with(|| OpAcc::new(x.family))
            .add(x);
    }
    let mut ops: Vec<OpRoof> = per_op
        .into_iter()
        .map(|((op, dtype), a)| {
            let time = a.time;
            let secs = time.max(1) as f64 * 1e-9;
            let flops = a.has_flops.then_some(a.flops);
            let tflops = flops.map(|f| f / secs / 1e12);
            let gbps = a.bytes / secs / 1e9;
            OpRoof {
                class: classify(dev, dtype.as_deref(), flops, a.bytes, time, u),
                flops_of_peak: tflops
                    .zip(dev.peak_tflops(dtype.as_deref()))
                    .map(|(t, p)| t / p),
                bw_of_peak: Some(gbps / dev.hbm_gbps),
                ai: flops.map(|f| f / a.bytes),
                op,
                family: a.family,
                dtype,
                kernels: a.kernels,
                time_ns: time,
                flops,
                bytes: a.bytes,
                tflops,
                gbps,
                unaligned_gemms: a.unaligned,
            }
        })
        .collect();
    ops.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.op.cmp(&b.op)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 TFLOP/s bf16, 50 fp32, 1000 GB/s: ridges at 100 and 50 FLOP/byte.
    fn device() -> Device {
        Device {
            name: "T".into(),
            matches: vec![],
            bf16_tflops: 100.0,
            tf32_tflops: None,
            fp32_tflops: Some(50.0),
            hbm_gbps: 1000.0,
            source: String::new(),
            intra_link: None,
        }
    }

    #[test]
    fn classes_at_each_threshold() {
        // Over one second (exact in binary): U = 0.8 → 800 GB/s and 80 TFLOP/s (bf16).
        let d = device();
        let c = |dtype, flops, bytes| classify(&d, dtype, flops, bytes, 1_000_000_000, 0.8);
        // Bytes only: at U × bandwidth memory-bound, just under it under-utilized.
        assert_eq!(c(None, None, 8e11), Class::MemoryBound);
        assert_eq!(c(None, None, 7.99e11), Class::UnderUtilized);
        // AI exactly at the ridge (8e13 / 8e11 = 100) is the memory side.
        assert_eq!(c(None, Some(8e13), 8e11), Class::MemoryBound);
        assert_eq!(c(None, Some(7.99e13), 7.99e11), Class::UnderUtilized);
        // Above the ridge: 80 TFLOP/s is compute-bound, 79.9 under-utilized.
        assert_eq!(c(None, Some(8e13), 1e9), Class::ComputeBound);
        assert_eq!(c(None, Some(7.99e13), 1e9), Class::UnderUtilized);
        // fp32 peaks at 50: 40 TFLOP/s is U of it (AI 40000 > ridge 50).
        assert_eq!(c(Some("float"), Some(4e13), 1e9), Class::ComputeBound);
        assert_eq!(
            c(Some("c10::BFloat16"), Some(4e13), 1e9),
            Class::UnderUtilized
        );
        // No time or no bytes: nothing to place.
        assert_eq!(classify(&d, None, Some(1e9), 1e9, 0, 0.8), Class::Unknown);
        assert_eq!(c(None, Some(1e9), 0.0), Class::Unknown);
        assert_eq!(
            (d.ridge(None), d.ridge(Some("float32"))),
            (Some(100.0), Some(50.0))
        );
        // No fp32 figure: an fp32 kernel with FLOPs is not placed against the bf16 peak.
        let no_fp32 = Device {
            fp32_tflops: None,
            ..device()
        };
        let c = |dtype, flops| classify(&no_fp32, dtype, flops, 1e9, 1_000_000_000, 0.8);
        assert_eq!(c(Some("FLOAT"), Some(1e12)), Class::Unknown);
        assert_eq!(c(Some("DT_BF16"), Some(1e12)), Class::UnderUtilized);
        assert_eq!(c(Some("FLOAT"), None), Class::UnderUtilized);
    }
}
