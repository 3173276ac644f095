//! The cluster schedule: what one rank's step needs from the others — when each all-reduce
//! ends (the last arriver's start plus the transfer) and, in a pipeline, when each
//! activation or gradient arrives — found by simulating every rank step by step.

use super::pipeline;
use super::sim::{Discard, RankSim, StepPlan};
use super::{DemoSpec, FIRST_STEP};
use crate::time::Ns;

/// GPUs per simulated node.
pub(super) const GPUS_PER_NODE: u32 = 8;
/// Start of the first step on every rank (true clock).
pub(super) const T_START: Ns = 1_000_000;
/// Host gap between steps (logging, scheduler).
pub(super) const STEP_GAP: Ns = 30_000;
/// Bus bandwidth the demo's all-reduces achieve, GB/s.
pub const BUSBW_GBPS: i128 = 360;

/// Every step's plan.
pub(super) type Schedule = Vec<StepPlan>;

/// Per rank: the correlation and External id counters, and when its next step starts.
struct Cursor {
    ids: (u64, u64),
    t0: Ns,
}

/// Simulates the cluster step by step.
pub(super) fn schedule(spec: DemoSpec) -> Schedule {
    let mut cursors: Vec<Cursor> = (0..spec.ranks)
        .map(|_| Cursor {
            ids: (0, 0),
            t0: T_START,
        })
        .collect();
    let mut out = Vec::new();
    for s in 0..spec.steps {
        let step = FIRST_STEP + s;
        let plan = if spec.knobs().pipeline {
            pipeline_plan(spec, step, &cursors)
        } else {
            allreduce_plan(spec, step, &cursors)
        };
        for (r, c) in cursors.iter_mut().enumerate() {
            let (end, ids, _) = time_step(spec, r as u32, step, c, &plan);
            *c = Cursor {
                ids,
                t0: end + STEP_GAP,
            };
        }
        out.push(plan);
    }
    out
}

/// Runs one rank's step without emitting: its host end, its id counters after it, and
/// what it sends out (all-reduce ready times, or when each pipeline send ended).
fn time_step(
    spec: DemoSpec,
    rank: u32,
    step: u32,
    c: &Cursor,
    plan: &StepPlan,
) -> (Ns, (u64, u64), Vec<Ns>) {
    let mut sink = Discard;
    let mut sim = RankSim::new(rank, step, spec, &mut sink, c.ids);
    let (end, out) = sim.run_step(c.t0, plan);
    (end, (sim.corr, sim.ext), out)
}

/// Data parallel: all-reduce `b` starts on each rank when it is ready and the previous
/// all-reduce on its stream has ended; it ends when the last rank has started plus the ring
/// transfer.
fn allreduce_plan(spec: DemoSpec, step: u32, cursors: &[Cursor]) -> StepPlan {
    let timing = StepPlan::default();
    let readies: Vec<Vec<Ns>> = cursors
        .iter()
        .enumerate()
        .map(|(r, c)| time_step(spec, r as u32, step, c, &timing).2)
        .collect();
    let streams = spec.knobs().comm_streams.max(1) as usize;
    let mut prev_end = vec![0; streams];
    let mut ends = Vec::with_capacity(spec.buckets() as usize);
    for b in 0..spec.buckets() as usize {
        let lane = b % streams;
        let last_start = readies
            .iter()
            .map(|rd| rd[b].max(prev_end[lane]))
            .max()
            .unwrap_or(0);
        let end = last_start + transfer_ns(spec);
        ends.push(end);
        prev_end[lane] = end;
    }
    StepPlan {
        allreduce_ends: ends,
        arrivals: Vec::new(),
    }
}

/// A pipeline: the first stage's activations do not depend on the second stage, so it is
/// timed first; the second stage's gradients follow from the activations' arrivals.
fn pipeline_plan(spec: DemoSpec, step: u32, cursors: &[Cursor]) -> StepPlan {
    let n = spec.ranks as usize;
    let mut arrivals = vec![Vec::new(); n];
    let empty = StepPlan::default();
    for first in pipeline::first_stage(spec) {
        let second = pipeline::partner(spec, first) as usize;
        let first = first as usize;
        let acts = time_step(spec, first as u32, step, &cursors[first], &empty).2;
        let mut given = StepPlan {
            allreduce_ends: Vec::new(),
            arrivals: vec![Vec::new(); n],
        };
        given.arrivals[second] = acts.clone();
        let grads = time_step(spec, second as u32, step, &cursors[second], &given).2;
        arrivals[second] = acts;
        arrivals[first] = grads;
    }
    // Each stage's gradient all-reduce: its last member's ready time plus the transfer.
    let timed = StepPlan {
        allreduce_ends: Vec::new(),
        arrivals,
    };
    let mut ends = vec![0 as Ns; 2];
    for (r, c) in cursors.iter().enumerate() {
        let ready = time_step(spec, r as u32, step, c, &timed).2.last().copied();
        let s = pipeline::stage_of(spec, r as u32);
        ends[s] = ends[s].max(ready.unwrap_or(0));
    }
    StepPlan {
        allreduce_ends: ends.into_iter().map(|e| e + transfer_ns(spec)).collect(),
        arrivals: timed.arrivals,
    }
}

/// One all-reduce of the spec's bucket: its fixed latency plus a ring all-reduce of the
/// bf16 elements at [`BUSBW_GBPS`] bus bandwidth: bytes / algbw, with
/// algbw = busbw / (2(n−1)/n).
pub(super) fn transfer_ns(spec: DemoSpec) -> Ns {
    let bytes = i128::from(spec.bucket_elems()) * 2;
    let n = i128::from(spec.ranks.max(1));
    let latency = spec.knobs().collective_latency_ns;
    if n == 1 {
        return latency + 20_000;
    }
    latency + (bytes * 2 * (n - 1) / (n * BUSBW_GBPS)) as Ns
}
