//! Top operators. With device work: device events (kernels, copies, sets) grouped by name and
//! kind, by total device time. CPU-only jobs: `cpu_op`s by **self** time (time not covered by
//! a nested `cpu_op` on the same thread), so nested operators are not counted twice.
//! `share` = the group's total / the sum over all groups (shares sum to 1).

use crate::model::{Job, Kind, LaneSide, Rank, RankId, Role, StepNo, Sym};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// What `top_ops` totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpBasis {
    /// Device time of kernels, copies and sets.
    Device,
    /// Self time of host operators (CPU-only jobs).
    HostSelf,
}

impl OpBasis {
    /// Stable name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            OpBasis::Device => "device",
            OpBasis::HostSelf => "host_self",
        }
    }
}

/// One operator name's totals.
#[derive(Debug, Clone, PartialEq)]
pub struct OpStat {
    /// Operator or kernel name.
    pub name: Sym,
    /// Event kind.
    pub kind: Kind,
    /// Its occurrences in scope.
    pub count: u64,
    /// Total time.
    pub total_ns: Ns,
    /// Mean time (floor).
    pub mean_ns: Ns,
    /// Total / sum over all operators.
    pub share: f64,
}

/// Which events count: a rank filter and a step-number filter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope {
    /// Only this rank.
    pub rank: Option<RankId>,
    /// Only this step number.
    pub step: Option<StepNo>,
}

impl Scope {
    /// True when the rank is in scope.
    pub fn has_rank(&self, r: RankId) -> bool {
        self.rank.is_none_or(|x| x == r)
    }

    /// True when the step is in scope.
    pub fn has_step(&self, s: StepNo) -> bool {
        self.step.is_none_or(|x| x == s)
    }

    /// True when both are.
    pub fn has(&self, r: RankId, s: StepNo) -> bool {
        self.has_rank(r) && self.has_step(s)
    }
}

/// The operators by total time, largest first (ties by name), all of them.
pub fn top_ops(job: &Job, scope: Scope) -> (OpBasis, Vec<OpStat>) {
    let device = job.ranks.iter().any(|r| !r.is_cpu_only());
    let basis = if device {
        OpBasis::Device
    } else {
        OpBasis::HostSelf
    };
    // Ranks in parallel, each into its own table, then merged.
    let acc: FxHashMap<(Sym, Kind), (u64, Ns)> = job
        .ranks
        .par_iter()
        .filter(|r| scope.has_rank(r.id))
        .map(|rank| rank_ops(rank, basis, scope, &job.roles))
        .reduce(FxHashMap::default, |mut a, b| {
            for (k, v) in b {
                let e = a.entry(k).or_default();
                e.0 += v.0;
                e.1 += v.1;
            }
            a
        });
    let grand: Ns = acc.values().map(|v| v.1).sum();
    let mut out: Vec<OpStat> = acc
        .into_iter()
        .map(|((name, kind), (count, total))| OpStat {
            name,
            kind,
            count,
            total_ns: total,
            mean_ns: total / count as Ns,
            share: if grand > 0 {
                total as f64 / grand as f64
            } else {
                0.0
            },
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| job.strings.resolve(a.name).cmp(job.strings.resolve(b.name)))
            .then(a.kind.cmp(&b.kind))
    });
    (basis, out)
}

/// One rank's (name, kind) → (count, total) table.
fn rank_ops(
    rank: &Rank,
    basis: OpBasis,
    scope: Scope,
    roles: &[Role],
) -> FxHashMap<(Sym, Kind), (u64, Ns)> {
    let mut acc: FxHashMap<(Sym, Kind), (u64, Ns)> = FxHashMap::default();
    let in_step = |i: usize| match scope.step {
        None => true,
        Some(n) => rank.step_of(i) == Some(n),
    };
    match basis {
        OpBasis::Device => {
            let ev = &rank.events;
            for i in 0..ev.len() {
                if ev.kind[i].is_device_work() && in_step(i) {
                    let e = acc.entry((ev.name[i], ev.kind[i])).or_default();
                    e.0 += 1;
                    e.1 += ev.dur[i];
                }
            }
        }
        OpBasis::HostSelf => {
            for (i, self_ns) in host_self_times(rank) {
                // Step markers (a cpu_op in some profilers) are windows, not operators.
                if in_step(i) && !roles[rank.events.name[i] as usize].is_step_marker() {
                    let e = acc.entry((rank.events.name[i], Kind::HostOp)).or_default();
                    e.0 += 1;
                    e.1 += self_ns;
                }
            }
        }
    }
    acc
}

/// Self time of every `cpu_op` on CPU lanes: its duration minus the parts covered by the
/// `cpu_op`s directly nested in it. Events are sorted by (start, longest first) per lane, so a
/// stack of open operators finds each one's parent.
pub fn host_self_times(rank: &Rank) -> Vec<(usize, Ns)> {
    let ev = &rank.events;
    let mut out: Vec<(usize, Ns)> = Vec::new();
    for (li, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (event, slot in out)
        for i in rank.lane_events(li as u16) {
            if ev.kind[i] != Kind::HostOp {
                continue;
            }
            let (s, e) = (ev.start[i], ev.end(i));
            while stack.last().is_some_and(|&(p, _)| ev.end(p) <= s) {
                stack.pop();
            }
            if let Some(&(p, slot)) = stack.last() {
                let covered = e.min(ev.end(p)) - s;
                out[slot].1 -= covered;
            }
            out.push((i, ev.dur[i]));
            stack.push((i, out.len() - 1));
        }
    }
    out
}
