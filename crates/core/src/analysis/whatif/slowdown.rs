//! The slowdown decomposition (OSDI'25, docs/metrics.md "Slowdown"): S = actual / ideal
//! step time; S_t = actual / actual with only op type t ideal; S_w = actual / actual with
//! only worker w fixed; and the verdict telling one slow worker from unbalanced stages.

use super::cover::Stall;
use super::fix::{CommKind, DEFAULT_BUCKET_BYTES, Fix};
use super::step::StepReplay;
use crate::model::{CollOp, RankId};
use crate::time::Ns;
use serde::Serialize;

/// Workers S_w is computed for: the ranks with the most own work above the mean.
pub const WORKERS: usize = 8;

/// A worker's own work above the mean, as a share of the step time, below which S_w is
/// not computed for it.
pub const MIN_EXCESS: f64 = 0.005;

/// An op type of the decomposition and the fixes that make it ideal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpType {
    /// `compute`, `host`, `p2p` or a collective type (`all_reduce`).
    pub name: &'static str,
    /// Its ideal.
    pub fixes: Vec<Fix>,
}

/// The op types present in a step: compute, host, each collective type, p2p.
pub fn op_types(s: &StepReplay) -> Vec<OpType> {
    let mut out = vec![
        OpType {
            name: "compute",
            fixes: vec![Fix::Balance],
        },
        OpType {
            name: "host",
            fixes: Stall::ALL
                .iter()
                .map(|&x| Fix::Stall(x))
                .chain([Fix::Syncs, Fix::Pinned, Fix::LaunchDelays])
                .collect(),
        },
    ];
    let mut ops: Vec<(CollOp, bool)> = s
        .instance_of
        .values()
        .filter_map(|&k| s.comm.instance(k))
        .map(|(i, _)| {
            (
                i.op,
                i.p2p.is_some() || matches!(i.op, CollOp::Send | CollOp::Recv | CollOp::SendRecv),
            )
        })
        .collect();
    ops.sort_unstable();
    ops.dedup();
    if ops.iter().any(|o| o.1) {
        out.push(OpType {
            name: "p2p",
            fixes: vec![Fix::MedianComm(CommKind::P2p)],
        });
    }
    for (op, _) in ops.into_iter().filter(|o| !o.1) {
        out.push(OpType {
            name: op.as_str(),
            fixes: vec![
                Fix::Fuse(DEFAULT_BUCKET_BYTES),
                Fix::MedianComm(CommKind::Op(op)),
            ],
        });
    }
    out
}

/// A part of the decomposition: its slowdown and the time it would give back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part<K> {
    /// The op type or the worker.
    pub of: K,
    /// actual / actual with it made ideal (≥ 1 when making it ideal helps).
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub s: f64,
    /// actual − actual with it made ideal, over the steps.
    pub saves_ns: Ns,
}

/// Who the step waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Verdict {
    /// Within 2% of its ideal: nothing to balance.
    Balanced,
    /// Fixing one worker gives back most of the gap.
    Worker {
        /// The worker.
        rank: RankId,
    },
    /// Balancing the pipeline stages gives back more than fixing any one worker.
    Stages,
    /// The gap is spread: no single worker or stage split explains most of it.
    Spread,
}

/// The decomposition over the steps replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Slowdown {
    /// Σ replayed step time as measured.
    pub actual_ns: Ns,
    /// Σ replayed step time with every fix ([`Fix::Ideal`]).
    pub ideal_ns: Ns,
    /// actual / ideal.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub s: f64,
    /// Per op type, largest first.
    pub by_type: Vec<Part<&'static str>>,
    /// Per worker (the [`WORKERS`] with the most own work above the mean), largest first.
    pub by_worker: Vec<Part<RankId>>,
    /// What balancing the pipeline stages gives back (`None`: no stages).
    pub stages_saves_ns: Option<Ns>,
    /// One worker, the stages, spread, or balanced.
    pub verdict: Verdict,
}

/// Ratio a / b (1 when b is 0).
pub fn ratio(a: Ns, b: Ns) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 1.0 }
}

/// The workers S_w is computed for in a step: those whose own work is above the mean by
/// more than [`MIN_EXCESS`] of the step time, the most first (a worker within noise of the
/// mean gives nothing back; on a 1024-rank job each one is a replay of ~2 M edges).
pub fn candidates(s: &StepReplay) -> Vec<RankId> {
    let work = s.base_work();
    let present = s.ranks();
    let total = |r: usize| work[r][0] + work[r][1];
    let n = Ns::try_from(present.len().max(1)).unwrap_or(1);
    let mean = present.iter().map(|r| total(r.get())).sum::<Ns>() / n;
    let mut v: Vec<(Ns, RankId)> = present
        .iter()
        .map(|r| (total(r.get()) - mean, s.job.rank(*r).id))
        .filter(|x| x.0 > 0 && x.0 as f64 > MIN_EXCESS * s.measured_ns as f64)
        .collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v.into_iter().take(WORKERS).map(|x| x.1).collect()
}

/// The verdict from the compute imbalance's saving (what balancing every rank's work gives
/// back), the best single worker's saving and the stages'. Below 2% of the step: balanced.
pub fn verdict(
    actual: Ns,
    balance: Ns,
    best: Option<&Part<RankId>>,
    stages: Option<Ns>,
) -> Verdict {
    if balance.saturating_mul(50) <= actual {
        return Verdict::Balanced;
    }
    let worker = best.map_or(0, |p| p.saves_ns);
    match stages {
        Some(st) if st >= worker && st.saturating_mul(2) >= balance => Verdict::Stages,
        _ if worker.saturating_mul(2) >= balance => {
            best.map_or(Verdict::Spread, |p| Verdict::Worker { rank: p.of })
        }
        _ => Verdict::Spread,
    }
}
