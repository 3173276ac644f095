//! Roofline classification (DESIGN §4, Hermes Appendix B). For each compute kernel whose
//! launching operator has shapes (or `flops`): FLOPs and bytes from [`shapes`], shared among
//! the operator's kernels by duration; achieved P = FLOPs / duration, B = bytes / duration;
//! with the device's peaks ([`peaks`]) and threshold U (`--roofline-u`, default 0.8):
//! **memory-bound** if AI ≤ ridge and B ≥ U·B_peak; **compute-bound** if AI > ridge and
//! P ≥ U·P_peak; else **under-utilized**. Bytes-only operators (norms, elementwise) have
//! AI ≈ 0: memory-bound or under-utilized by bandwidth alone. Kernels without shapes, or on
//! an unknown device, are **unknown** (counted, with their time).

pub mod peaks;
pub mod shapes;

use crate::model::{Job, Kind, LaneSide, NONE};
use crate::time::Ns;
use peaks::Device;
use rayon::prelude::*;
use shapes::Family;
use std::collections::BTreeMap;

/// Default utilization threshold U.
pub const DEFAULT_U: f64 = 0.8;
/// Operators listed per class.
pub const TOP_PER_CLASS: usize = 10;

/// A roofline class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ClassShare {
    /// Kernels.
    pub kernels: u64,
    /// Σ kernel time.
    pub time_ns: Ns,
    /// time / Σ compute-kernel time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share: f64,
}

/// One operator type (the launching op's name and element type) on the roofline.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OpRoof {
    /// Operator (`aten::mm`).
    pub op: String,
    /// Family.
    pub family: Family,
    /// Element type of its first input.
    pub dtype: Option<String>,
    /// Class of the aggregate.
    pub class: Class,
    /// Kernels.
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Roofline {
    /// The device name the traces report.
    pub device_name: Option<String>,
    /// The peaks used (`None`: unknown device; pass `--device`).
    pub device: Option<Device>,
    /// Threshold U.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub u: f64,
    /// Per class (all present).
    pub classes: BTreeMap<&'static str, ClassShare>,
    /// Operator types by time.
    pub ops: Vec<OpRoof>,
    /// Why classes are unknown, when the device is.
    pub note: Option<String>,
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
            let ai = f / bytes;
            let p = f / secs / 1e12; // TFLOP/s
            if ai <= dev.ridge(dtype) {
                if bw >= u * b_peak {
                    Class::MemoryBound
                } else {
                    Class::UnderUtilized
                }
            } else if p >= u * dev.peak_tflops(dtype) {
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
    in_scope: impl Fn(u32, u32) -> bool + Sync,
) -> Roofline {
    let u = opts.u.unwrap_or(DEFAULT_U);
    let device_name = job
        .ranks
        .iter()
        .flat_map(|r| r.devices.first())
        .map(|d| job.strings.resolve(*d).to_string())
        .next();
    let (device, note) = match (&opts.device, &device_name) {
        (Some(n), _) => match peaks::by_name(table, n) {
            Some(d) => (Some(d.clone()), None),
            None => (None, Some(format!("no device `{n}` in the table"))),
        },
        (None, Some(n)) => match peaks::by_trace_name(table, n) {
            Some(d) => (Some(d.clone()), None),
            None => (
                None,
                Some(format!("no peaks for `{n}`: pass --device NAME")),
            ),
        },
        (None, None) => (
            None,
            Some("the traces name no device: pass --device NAME".to_string()),
        ),
    };
    let parts: Vec<Partial> = job
        .ranks
        .par_iter()
        .map(|rank| rank_roofline(job, rank, device.as_ref(), u, &in_scope))
        .collect();
    let mut classes: BTreeMap<&'static str, ClassShare> = Class::ALL
        .iter()
        .map(|c| (c.as_str(), ClassShare::default()))
        .collect();
    let merged = parts.into_iter().fold(Partial::default(), Partial::merge);
    let total = merged.total;
    for (k, (n, t)) in Class::ALL.iter().zip(merged.classes) {
        let c = classes.get_mut(k.as_str()).expect("all classes");
        c.kernels += n;
        c.time_ns += t;
    }
    // Operator types by name and element type (several `Input type` texts can share one).
    let mut per_op: BTreeMap<(String, Option<String>), Acc> = BTreeMap::new();
    for ((name, types), x) in merged.per_op {
        let dtype = types.and_then(|t| shapes::first_type(job.strings.resolve(t)));
        let key = (job.strings.resolve(name).to_string(), dtype);
        add_acc(
            per_op.entry(key).or_insert((x.0, 0, 0, 0.0, 0.0, 0, false)),
            &x,
        );
    }
    for c in classes.values_mut() {
        c.share = if total > 0 {
            c.time_ns as f64 / total as f64
        } else {
            0.0
        };
    }
    let mut ops: Vec<OpRoof> = per_op
        .into_iter()
        .map(
            |((op, dtype), (family, kernels, time, flops, bytes, unaligned, has_flops))| {
                let dev = device
                    .as_ref()
                    .expect("ops are only estimated with a device");
                let secs = time.max(1) as f64 * 1e-9;
                let flops = has_flops.then_some(flops);
                let tflops = flops.map(|f| f / secs / 1e12);
                let gbps = bytes / secs / 1e9;
                OpRoof {
                    class: classify(dev, dtype.as_deref(), flops, bytes, time, u),
                    flops_of_peak: tflops.map(|t| t / dev.peak_tflops(dtype.as_deref())),
                    bw_of_peak: Some(gbps / dev.hbm_gbps),
                    ai: flops.map(|f| f / bytes),
                    op,
                    family,
                    dtype,
                    kernels,
                    time_ns: time,
                    flops,
                    bytes,
                    tflops,
                    gbps,
                    unaligned_gemms: unaligned,
                }
            },
        )
        .collect();
    ops.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.op.cmp(&b.op)));
    let unknown_note = (device.is_some() && classes["unknown"].time_ns > 0).then(|| {
        "kernels without shapes (record_shapes=True) or of operators without a FLOP rule are unknown".to_string()
    });
    Roofline {
        device_name,
        device,
        u,
        classes,
        ops,
        note: note.or(unknown_note),
    }
}

/// (family, kernels, time, flops, bytes, unaligned GEMMs, has FLOPs) of an operator type.
type Acc = (Family, u64, Ns, f64, f64, u64, bool);

/// Adds one operator type's counts to another's.
fn add_acc(a: &mut Acc, x: &Acc) {
    a.1 += x.1;
    a.2 += x.2;
    a.3 += x.3;
    a.4 += x.4;
    a.5 += x.5;
    a.6 |= x.6;
}

/// One rank's share of the roofline.
#[derive(Default)]
struct Partial {
    /// (kernels, time) per class, in [`Class::ALL`] order.
    classes: [(u64, Ns); 4],
    /// By (operator name, `Input type` text).
    per_op: rustc_hash::FxHashMap<(crate::model::Sym, Option<crate::model::Sym>), Acc>,
    total: Ns,
}

impl Partial {
    /// Adds another chunk's or rank's share.
    fn merge(mut self, o: Partial) -> Partial {
        self.total += o.total;
        for (a, b) in self.classes.iter_mut().zip(o.classes) {
            a.0 += b.0;
            a.1 += b.1;
        }
        for (k, x) in o.per_op {
            add_acc(
                self.per_op
                    .entry(k)
                    .or_insert((x.0, 0, 0, 0.0, 0.0, 0, false)),
                &x,
            );
        }
        self
    }
}

fn rank_roofline(
    job: &Job,
    rank: &crate::model::Rank,
    device: Option<&Device>,
    u: f64,
    in_scope: &(impl Fn(u32, u32) -> bool + Sync),
) -> Partial {
    let ev = &rank.events;
    // Shapes repeat (every layer, every step): estimate each distinct one once.
    type Key = (
        crate::model::Sym,
        crate::model::Sym,
        Option<crate::model::Sym>,
        Option<u64>,
    );
    type Est = Option<(Option<std::rc::Rc<str>>, shapes::Work, Family)>;
    // Σ kernel time per launching op, to share its work among its kernels.
    let mut op_time: rustc_hash::FxHashMap<u32, Ns> = Default::default();
    let kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| {
            ev.kind[i] == Kind::Compute
                && rank.lanes[ev.lane[i] as usize].side == LaneSide::Device
                && ev.step[i] != NONE
                && in_scope(rank.id, rank.steps[ev.step[i] as usize].number)
        })
        .collect();
    for &i in &kernels {
        if ev.op[i] != NONE {
            *op_time.entry(ev.op[i]).or_default() += ev.dur[i];
        }
    }
    // Kernels in parallel chunks (one huge rank is one task otherwise), merged in chunk order
    // so that floating-point sums, and the report, do not depend on scheduling.
    kernels
        .par_chunks(1 << 15)
        .map(|chunk| {
            let mut p = Partial::default();
            let mut cache: rustc_hash::FxHashMap<Key, Est> = Default::default();
            for &i in chunk {
                p.total += ev.dur[i];
                let op = ev.op[i];
                let shape = (op != NONE)
                    .then(|| rank.shapes.binary_search_by_key(&op, |s| s.event).ok())
                    .flatten()
                    .map(|k| &rank.shapes[k]);
                let est = shape.and_then(|s| {
                    let name = ev.name[op as usize];
                    let key = (name, s.dims?, s.types, s.flops);
                    let (dtype, w, fam) = cache
                        .entry(key)
                        .or_insert_with(|| {
                            let op_name = job.strings.resolve(name);
                            let dims = shapes::parse_dims(job.strings.resolve(s.dims?))?;
                            let dtype = s
                                .types
                                .and_then(|t| shapes::first_type(job.strings.resolve(t)))
                                .map(std::rc::Rc::<str>::from);
                            let w = shapes::work(op_name, &dims, dtype.as_deref(), s.flops)?;
                            Some((dtype, w, shapes::family(op_name)?))
                        })
                        .clone()?;
                    Some((name, s.types, dtype, w, fam))
                });
                let class = match (device, &est) {
                    (Some(dev), Some((name, types, dtype, w, fam))) => {
                        let share = ev.dur[i] as f64 / op_time[&op].max(1) as f64;
                        let (f, b) = (w.flops.map(|f| f * share), w.bytes * share);
                        let unaligned = w
                            .gemm
                            .is_some_and(|(m, n, k)| m % 8 != 0 || n % 8 != 0 || k % 8 != 0);
                        let a = p
                            .per_op
                            .entry((*name, *types))
                            .or_insert((*fam, 0, 0, 0.0, 0.0, 0, false));
                        a.1 += 1;
                        a.2 += ev.dur[i];
                        a.3 += f.unwrap_or(0.0);
                        a.4 += b;
                        a.5 += u64::from(unaligned);
                        a.6 |= f.is_some();
                        classify(dev, dtype.as_deref(), f, b, ev.dur[i], u)
                    }
                    _ => Class::Unknown,
                };
                let c = &mut p.classes[class as usize];
                c.0 += 1;
                c.1 += ev.dur[i];
            }
            p
        })
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::default(), Partial::merge)
}
