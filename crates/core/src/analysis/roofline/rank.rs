//! One rank's share of the roofline: each compute kernel in scope classified with the work of
//! its launching operator (shared among that operator's kernels by duration), and summed per
//! operator type. A launching operator without a FLOP rule hands its kernels to the nearest
//! enclosing operator on its thread that has one: cuDNN's `cudnn_convolution_backward`
//! launches through `…_backward_input` and `…_backward_weight`, whose inputs lack the sizes a
//! rule needs, while the parent's `grad_output, input, weight` give both gradients.

use super::peaks::Device;
use super::pmu::{self, PmuAcc};
use super::shapes::{self, Work};
use super::{Class, classify};
use crate::model::{
    EventIx, Family, Job, Kind, LaneSide, OpFamily, Rank, RankId, StepNo, Sym, TaskDetail,
};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// The sums of one operator type (name and `Input type`).
#[derive(Debug, Clone, Copy)]
pub(super) struct OpAcc {
    /// Its family.
    pub family: Family,
    /// Kernels it launched.
    pub kernels: u64,
    /// Σ kernel time.
    pub time: Ns,
    /// Σ FLOPs (of kernels with a FLOP estimate).
    pub flops: f64,
    /// Σ bytes.
    pub bytes: f64,
    /// GEMM kernels with M, N or K not a multiple of 8.
    pub unaligned: u64,
    /// Some kernel had a FLOP estimate.
    pub has_flops: bool,
}

impl OpAcc {
    /// An empty sum.
    pub(super) fn new(family: Family) -> OpAcc {
        OpAcc {
            family,
            kernels: 0,
            time: 0,
            flops: 0.0,
            bytes: 0.0,
            unaligned: 0,
            has_flops: false,
        }
    }

    /// Adds another sum.
    pub(super) fn add(&mut self, x: &OpAcc) {
        self.kernels += x.kernels;
        self.time += x.time;
        self.flops += x.flops;
        self.bytes += x.bytes;
        self.unaligned += x.unaligned;
        self.has_flops |= x.has_flops;
    }
}

/// One rank's (or chunk's) share of the roofline.
#[derive(Default)]
pub(super) struct Partial {
    /// (kernels, time) per class, in [`Class::ALL`] order.
    pub classes: [(u64, Ns); 4],
    /// By (operator name, `Input type` text).
    pub per_op: FxHashMap<(Sym, Option<Sym>), OpAcc>,
    /// Σ compute-kernel time.
    pub total: Ns,
    /// Unknown kernel time by the launching operator's name (`None`: no launching op).
    pub unknown_by_op: FxHashMap<Option<Sym>, Ns>,
    /// Operators of a roofline family with shapes were seen (the trace records shapes).
    pub shapes_seen: bool,
    /// Tasks classified by their counters, by operator type (else task name).
    pub pmu: FxHashMap<Sym, PmuAcc>,
}

impl Partial {
    /// Adds another chunk's or rank's share.
    pub(super) fn merge(mut self, o: Partial) -> Partial {
        self.total += o.total;
        self.shapes_seen |= o.shapes_seen;
        for (k, v) in o.unknown_by_op {
            *self.unknown_by_op.entry(k).or_default() += v;
        }
        for (a, b) in self.classes.iter_mut().zip(o.classes) {
            a.0 += b.0;
            a.1 += b.1;
        }
        for (k, x) in o.pmu {
            self.pmu.entry(k).or_default().add(&x);
        }
        for (k, x) in o.per_op {
            self.per_op
                .entry(k)
                .or_insert_with(|| OpAcc::new(x.family))
                .add(&x);
        }
        self
    }
}

/// What an operator's shapes give, once per distinct (name, dims, types, flops): shapes
/// repeat every layer and every step.
type Estimate = Option<(Option<Rc<str>>, Work, Family)>;
type ShapeKey = (Sym, Sym, Option<Sym>, Option<u64>);

/// How far back on its thread an enclosing operator with a rule is looked for (events):
/// a parent's other children lie in between, and a parent far away is no parent to trust.
const PARENT_SCAN: usize = 48;

/// The compute kernels of a rank in scope, each with the operator its work is estimated
/// from (see the module), and each such operator's Σ kernel time.
fn kernels_in_scope(
    job: &Job,
    rank: &Rank,
    in_scope: &(impl Fn(RankId, StepNo) -> bool + Sync),
) -> (Vec<(usize, EventIx)>, FxHashMap<EventIx, Ns>) {
    let ev = &rank.events;
    let mut ruled: FxHashMap<EventIx, EventIx> = Default::default();
    let kernels: Vec<(usize, EventIx)> = (0..ev.len())
        .filter(|&i| {
            ev.kind[i] == Kind::Compute
                && rank.lanes[ev.lane[i] as usize].side == LaneSide::Device
                && rank.step_of(i).is_some_and(|n| in_scope(rank.id, n))
        })
        .map(|i| {
            let op = ev.op[i];
            let by = if op.is_none() {
                op
            } else {
                *ruled.entry(op).or_insert_with(|| rule_op(job, rank, op))
            };
            (i, by)
        })
        .collect();
    let mut op_time: FxHashMap<EventIx, Ns> = Default::default();
    for &(i, op) in &kernels {
        if !op.is_none() {
            *op_time.entry(op).or_default() += ev.dur[i];
        }
    }
    (kernels, op_time)
}

/// `op` when it has a FLOP rule, else the nearest operator enclosing it on its thread that
/// has one (within [`PARENT_SCAN`] events), else `op`.
pub(super) fn rule_op(job: &Job, rank: &Rank, op: EventIx) -> EventIx {
    let ev = &rank.events;
    let o = op.0 as usize;
    if job.role(ev.name[o]).op_family.is_some() {
        return op;
    }
    let lane = rank.lane_events(ev.lane[o]);
    (lane.start..o)
        .rev()
        .take(PARENT_SCAN)
        .find(|&j| {
            ev.kind[j] == Kind::HostOp
                && ev.start[j] <= ev.start[o]
                && ev.end(j) >= ev.end(o)
                && job.role(ev.name[j]).op_family.is_some()
        })
        .map_or(op, EventIx::of)
}

/// One rank's share.
pub(super) fn rank_roofline(
    job: &Job,
    rank: &Rank,
    device: Option<&Device>,
    u: f64,
    in_scope: &(impl Fn(RankId, StepNo) -> bool + Sync),
) -> Partial {
    let (kernels, op_time) = kernels_in_scope(job, rank, in_scope);
    // Kernels in parallel chunks (one huge rank is one task otherwise), merged in chunk order
    // so that floating-point sums, and the report, do not depend on scheduling.
    kernels
        .par_chunks(1 << 15)
        .map(|chunk| {
            let mut p = Partial::default();
            let mut cache: FxHashMap<ShapeKey, Estimate> = Default::default();
            for &(i, op) in chunk {
                p.total += rank.events.dur[i];
                let counted = task_of(rank, i).and_then(|t| Some((t, pmu::classify(t, u)?.0)));
                let class = match (counted, device) {
                    (Some((t, class)), _) => {
                        let key = t.op_type.unwrap_or(rank.events.name[i]);
                        p.pmu.entry(key).or_default().add_task(
                            t,
                            rank.events.name[i],
                            rank.events.dur[i],
                        );
                        class
                    }
                    (None, Some(dev)) => {
                        kernel(job, rank, (i, op), &op_time, &mut cache, &mut p, dev, u)
                    }
                    (None, None) => Class::Unknown,
                };
                let c = &mut p.classes[class as usize];
                c.0 += 1;
                c.1 += rank.events.dur[i];
                if class == Class::Unknown {
                    let name = op.get().map(|o| rank.events.name[o]);
                    *p.unknown_by_op.entry(name).or_default() += rank.events.dur[i];
                }
            }
            p.shapes_seen = rank.shapes.iter().any(|s| s.dims.is_some());
            p
        })
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::default(), Partial::merge)
}

/// The accelerator's details of event `i`, when its kernel table has them.
pub(super) fn task_of(rank: &Rank, i: usize) -> Option<&TaskDetail> {
    let k = rank
        .tasks
        .binary_search_by_key(&EventIx::of(i), |t| t.event)
        .ok()?;
    Some(&rank.tasks[k])
}

/// Classifies kernel `i` by the work of `op` (its launching operator, or the enclosing one
/// with a rule) and adds it to that operator's type.
#[allow(clippy::too_many_arguments)]
fn kernel(
    job: &Job,
    rank: &Rank,
    (i, op): (usize, EventIx),
    op_time: &FxHashMap<EventIx, Ns>,
    cache: &mut FxHashMap<ShapeKey, Estimate>,
    p: &mut Partial,
    dev: &Device,
    u: f64,
) -> Class {
    let ev = &rank.events;
    let Some(shape) = op
        .get()
        .and_then(|_| rank.shapes.binary_search_by_key(&op, |s| s.event).ok())
        .map(|k| &rank.shapes[k])
    else {
        return Class::Unknown;
    };
    let name = ev.name[op.0 as usize];
    let Some(dims) = shape.dims else {
        return Class::Unknown;
    };
    let key = (name, dims, shape.types, shape.flops);
    let est = cache
        .entry(key)
        .or_insert_with(|| estimate(job, name, dims, shape.types, shape.flops))
        .clone();
    let Some((dtype, w, family)) = est else {
        return Class::Unknown;
    };
    let share = ev.dur[i] as f64 / op_time[&op].max(1) as f64;
    let (f, b) = (w.flops.map(|f| f * share), w.bytes * share);
    let unaligned = w
        .gemm
        .is_some_and(|(m, n, k)| m % 8 != 0 || n % 8 != 0 || k % 8 != 0);
    let a = p
        .per_op
        .entry((name, shape.types))
        .or_insert_with(|| OpAcc::new(family));
    a.kernels += 1;
    a.time += ev.dur[i];
    a.flops += f.unwrap_or(0.0);
    a.bytes += b;
    a.unaligned += u64::from(unaligned);
    a.has_flops |= f.is_some();
    classify(dev, dtype.as_deref(), f, b, ev.dur[i], u)
}

/// The work of an operator with these shapes, when its family has a rule that fits them.
fn estimate(job: &Job, name: Sym, dims: Sym, types: Option<Sym>, flops: Option<u64>) -> Estimate {
    let fam: OpFamily = job.role(name).op_family?;
    let dims = shapes::parse_dims(job.strings.resolve(dims))?;
    let dtype = types
        .and_then(|t| shapes::first_type(job.strings.resolve(t)))
        .map(Rc::<str>::from);
    let w = shapes::work(fam, &dims, dtype.as_deref(), flops)?;
    Some((dtype, w, fam.family))
}
