//! Pure analyses over the model: every reported number is defined in exactly one file here.
//!
//! - [`steps`]: rank step spans (DESIGN §4 step window)
//! - [`breakdown`]: compute / overlap / comm / memory / host-bound / free per (rank, step)
//! - [`step_times`]: per-step span distribution across ranks and the slowest rank
//! - [`ops`]: top operators
//! - [`intervals`]: the interval-union arithmetic they share

pub mod breakdown;
pub mod intervals;
pub mod ops;
pub mod step_times;
pub mod steps;

use crate::model::{Job, Kind, Sym};
use breakdown::{Breakdown, NameFlags};
use ops::{OpBasis, OpStat, Scope};
use rayon::prelude::*;
use std::time::Instant;
use step_times::StepTime;
use steps::StepSpan;

/// Everything the report shows, computed once.
#[derive(Debug)]
pub struct Analysis {
    /// Step spans per rank, in `job.ranks` order.
    pub spans: Vec<Vec<StepSpan>>,
    /// Breakdown rows in scope, ordered by (step, rank).
    pub breakdown: Vec<Breakdown>,
    /// Per-step times over the ranks in scope.
    pub step_times: Vec<StepTime>,
    /// What `top_ops` totals.
    pub op_basis: OpBasis,
    /// Operators by total time (all of them; renderers cut).
    pub top_ops: Vec<OpStat>,
    /// Timed events of the whole job per kind, in `Kind::ALL` order.
    pub events_per_kind: [u64; Kind::ALL.len()],
    /// Communication kernels carrying collective metadata, by `Collective name`.
    pub collectives: Vec<(Sym, u64)>,
    /// Wall time of the analysis, ns.
    pub analysis_ns: u64,
}

/// Runs the analyses over the ranks and steps in `scope`.
pub fn analyze(job: &Job, scope: Scope) -> Analysis {
    let began = Instant::now();
    let flags = NameFlags::new(&job.strings);
    let spans: Vec<Vec<StepSpan>> = job.ranks.par_iter().map(steps::rank_spans).collect();
    let mut breakdown: Vec<Breakdown> = job
        .ranks
        .par_iter()
        .zip(&spans)
        .filter(|(r, _)| scope.has_rank(r.id))
        .flat_map_iter(|(r, sp)| {
            let sp: Vec<StepSpan> = sp
                .iter()
                .filter(|s| scope.step.is_none_or(|n| n == s.number))
                .copied()
                .collect();
            breakdown::rank_breakdown(r, &sp, &flags)
        })
        .collect();
    breakdown.sort_by_key(|b| (b.step, b.rank));
    let step_times = step_times::step_times(&breakdown);
    let (op_basis, top_ops) = ops::top_ops(job, scope);
    let events_per_kind = job
        .ranks
        .par_iter()
        .map(|r| {
            let mut n = [0u64; Kind::ALL.len()];
            r.events.kind.iter().for_each(|&k| n[k as usize] += 1);
            n
        })
        .reduce(
            || [0; Kind::ALL.len()],
            |a, b| std::array::from_fn(|i| a[i] + b[i]),
        );
    let mut per_name: std::collections::BTreeMap<Sym, u64> = Default::default();
    for r in &job.ranks {
        for c in &r.collectives {
            if let (Some(name), Kind::Comm) = (c.name, r.events.kind[c.event as usize]) {
                *per_name.entry(name).or_default() += 1;
            }
        }
    }
    Analysis {
        collectives: per_name.into_iter().collect(),
        spans,
        breakdown,
        step_times,
        op_basis,
        top_ops,
        events_per_kind,
        analysis_ns: began.elapsed().as_nanos() as u64,
    }
}
