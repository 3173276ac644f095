//! One operator across the job (the drill-down target): occurrences, total, mean and
//! nearest-rank percentiles of its durations, per rank (who is slow at this operator), the
//! shapes it ran with, its roofline point and its time on the critical path, and what the
//! accelerator's kernel table says of its tasks (unit, type, PMU ratios).
//!
//! Durations are event durations (inclusive for host operators). Percentiles are nearest-rank:
//! p = the ⌈p/100 · n⌉-th smallest duration. The roofline point is the row of the operator
//! itself or, for a kernel, of the operator that launched most of its occurrences.

use super::critical_path::CriticalPath;
use super::roofline::pmu::{self, PmuAcc, PmuOp};
use super::roofline::{OpRoof, Roofline};
use super::stats::median_sorted;
use crate::model::{
    Core, EventIx, EventRef, Job, Kind, Rank, RankId, RankIx, StepNo, Sym, TaskDetail,
};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Duration statistics of a set of occurrences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Durations {
    /// Occurrences in scope.
    pub count: u64,
    /// Σ durations.
    pub total_ns: Ns,
    /// Total / count (floor).
    pub mean_ns: Ns,
    /// Nearest-rank median.
    pub p50_ns: Ns,
    /// Nearest-rank 99th percentile.
    pub p99_ns: Ns,
    /// The longest occurrence.
    pub max_ns: Ns,
}

/// The operator on one rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankOp {
    /// Rank id.
    pub rank: RankId,
    /// Its durations there.
    pub stats: Durations,
}

/// Shapes the operator (or its launching operator) ran with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeCount {
    /// `Input Dims` text.
    pub dims: Option<Sym>,
    /// `Input type` text.
    pub types: Option<Sym>,
    /// Occurrences with these shapes.
    pub count: u64,
}

/// Everything the operator view shows.
#[derive(Debug, Clone)]
pub struct OpDetail {
    /// The name.
    pub name: Sym,
    /// The kind most of its occurrences have.
    pub kind: Kind,
    /// Over every rank.
    pub all: Durations,
    /// Per rank that runs it, in rank order.
    pub per_rank: Vec<RankOp>,
    /// Who is slow at this operator: the rank with the largest total when it exceeds the
    /// median rank total by more than [`SLOW_RANK_EXCESS`] — for a collective, the rank with
    /// the smallest total that far below the median (the late arriver waits least; the
    /// others' long totals are their wait for it); `None` when ranks are even.
    pub slowest_rank: Option<RankId>,
    /// Shapes, most frequent first.
    pub shapes: Vec<ShapeCount>,
    /// Its roofline row.
    pub roofline: Option<OpRoof>,
    /// Time on the critical path.
    pub critical_ns: Ns,
    /// Critical time / the path's total.
    pub critical_share: Option<f64>,
    /// The longest occurrence, for its args.
    pub longest: Option<EventRef>,
    /// What the accelerator's kernel table says of its tasks (Ascend), when it has them.
    pub task: Option<OpTask>,
    /// The operator that launched most of its occurrences (a kernel's shapes are its).
    pub launcher: Option<Sym>,
    /// Some operator of the job has shapes (`record_shapes=True` was on).
    pub job_has_shapes: bool,
}

/// The kernel table's view of an operator's device tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct OpTask {
    /// Operator type (`MatMulV2`).
    pub op_type: Option<Sym>,
    /// The unit.
    pub core: Option<Core>,
    /// `Block Dim` of the first task.
    pub block_dim: Option<u32>,
    /// Tasks with details.
    pub tasks: u64,
    /// Of those, compiled for dynamic shapes.
    pub dynamic: u64,
    /// Tasks whose compile state was recorded.
    pub with_state: u64,
    /// The most common `Input Shapes` and `Input Data Types`.
    pub input: Option<(Option<Sym>, Option<Sym>)>,
    /// Duration-weighted PMU ratios and their class, when counted.
    pub pmu: Option<PmuOp>,
}

/// Sums of the tasks' details over a scan.
#[derive(Default)]
struct TaskScan {
    acc: PmuAcc,
    tasks: u64,
    dynamic: u64,
    with_state: u64,
    first: Option<(Option<Sym>, Option<Core>, Option<u32>)>,
    inputs: FxHashMap<(Option<Sym>, Option<Sym>), u64>,
}

impl TaskScan {
    fn add(&mut self, t: &TaskDetail, name: Sym, dur: Ns) {
        self.tasks += 1;
        self.with_state += u64::from(t.dynamic.is_some());
        self.dynamic += u64::from(t.dynamic == Some(true));
        self.first.get_or_insert((t.op_type, t.core, t.block_dim));
        *self
            .inputs
            .entry((t.input_shapes, t.input_types))
            .or_default() += 1;
        if t.cube.is_some() || t.vector.is_some() {
            self.acc.add_task(t, name, dur);
        }
    }

    fn merge(&mut self, o: TaskScan) {
        self.acc.add(&o.acc);
        self.tasks += o.tasks;
        self.dynamic += o.dynamic;
        self.with_state += o.with_state;
        self.first = self.first.or(o.first);
        for (k, n) in o.inputs {
            *self.inputs.entry(k).or_default() += n;
        }
    }

    /// The operator's task facts, when any task had details.
    fn finish(self, job: &Job, u: f64) -> Option<OpTask> {
        let (op_type, core, block_dim) = self.first?;
        let pmu = (self.acc.kernels > 0).then(|| {
            let name =
                |s: Option<Sym>| s.map_or(String::new(), |t| job.strings.resolve(t).to_string());
            pmu::op_row(name(op_type), name(self.acc.task_name), &self.acc, u)
        });
        Some(OpTask {
            op_type,
            core,
            block_dim,
            tasks: self.tasks,
            dynamic: self.dynamic,
            with_state: self.with_state,
            input: most(&self.inputs),
            pmu,
        })
    }
}

/// How far above the median per-rank total the largest must be to name a slow rank (5%).
pub const SLOW_RANK_EXCESS: f64 = 0.05;

/// Nearest-rank statistics of durations (sorted in place).
pub fn durations(d: &mut [Ns]) -> Durations {
    if d.is_empty() {
        return Durations::default();
    }
    d.par_sort_unstable();
    let n = d.len();
    let rank = |p: usize| d[(p * n).div_ceil(100).max(1) - 1];
    let total: Ns = d.iter().sum();
    Durations {
        count: n as u64,
        total_ns: total,
        mean_ns: total / n as Ns,
        p50_ns: rank(50),
        p99_ns: rank(99),
        max_ns: d[n - 1],
    }
}

/// What one chunk of one rank's events contributes.
#[derive(Default)]
struct Scan {
    durs: Vec<Ns>,
    kinds: FxHashMap<Kind, u64>,
    launchers: FxHashMap<Sym, u64>,
    shapes: FxHashMap<(Option<Sym>, Option<Sym>), u64>,
    longest: Option<(Ns, EventIx)>,
    task: TaskScan,
}

impl Scan {
    fn merge(mut self, o: Scan) -> Scan {
        self.durs.extend_from_slice(&o.durs);
        for (k, n) in o.kinds {
            *self.kinds.entry(k).or_default() += n;
        }
        for (k, n) in o.launchers {
            *self.launchers.entry(k).or_default() += n;
        }
        for (k, n) in o.shapes {
            *self.shapes.entry(k).or_default() += n;
        }
        self.task.merge(o.task);
        if o.longest
            .is_some_and(|(d, _)| self.longest.is_none_or(|(b, _)| d > b))
        {
            self.longest = o.longest;
        }
        self
    }
}

/// Events per parallel chunk: one huge rank is scanned by all cores.
const CHUNK: usize = 1 << 18;

fn scan(r: &Rank, name: Sym, step: Option<StepNo>, range: std::ops::Range<usize>) -> Scan {
    let ev = &r.events;
    let mut out = Scan::default();
    for i in range {
        if ev.name[i] != name || ev.kind[i] == Kind::Sync {
            continue;
        }
        if step.is_some_and(|n| r.step_of(i) != Some(n)) {
            continue;
        }
        out.durs.push(ev.dur[i]);
        *out.kinds.entry(ev.kind[i]).or_default() += 1;
        let op = if ev.kind[i] == Kind::HostOp {
            EventIx::of(i)
        } else {
            ev.op[i]
        };
        if let Some(o) = op.get() {
            *out.launchers.entry(ev.name[o]).or_default() += 1;
            if let Ok(s) = r.shapes.binary_search_by_key(&op, |s| s.event) {
                let s = &r.shapes[s];
                *out.shapes.entry((s.dims, s.types)).or_default() += 1;
            }
        }
        if let Ok(k) = r.tasks.binary_search_by_key(&EventIx::of(i), |t| t.event) {
            out.task.add(&r.tasks[k], name, ev.dur[i]);
        }
        if out.longest.is_none_or(|(d, _)| ev.dur[i] > d) {
            out.longest = Some((ev.dur[i], EventIx::of(i)));
        }
    }
    out
}

/// The operator `name` over the job; `step` limits it to one step number. `roofline` and
/// `critical` are the job's results (the operator's row and path time are looked up).
pub fn detail(
    job: &Job,
    name: Sym,
    step: Option<StepNo>,
    roofline: &Roofline,
    critical: Option<&CriticalPath>,
) -> OpDetail {
    let scans: Vec<Scan> = job
        .ranks
        .par_iter()
        .map(|r| {
            let n = r.events.len();
            (0..n.div_ceil(CHUNK))
                .into_par_iter()
                .map(|c| scan(r, name, step, c * CHUNK..((c + 1) * CHUNK).min(n)))
                .reduce(Scan::default, Scan::merge)
        })
        .collect();
    let mut all = Scan::default();
    let mut per_rank = Vec::new();
    let mut longest: Option<(Ns, EventRef)> = None;
    for (idx, mut sc) in scans.into_iter().enumerate() {
        if sc.durs.is_empty() {
            continue;
        }
        if let Some((d, event)) = sc.longest.take() {
            if longest.is_none_or(|(best, _)| d > best) {
                let rank = RankIx::of(idx);
                longest = Some((d, EventRef { rank, event }));
            }
        }
        per_rank.push(RankOp {
            rank: job.ranks[idx].id,
            stats: durations(&mut sc.durs),
        });
        all = all.merge(sc);
    }
    let Scan {
        durs: mut all_durs,
        kinds,
        launchers: launcher_names,
        shapes,
        task,
        ..
    } = all;
    let own = job.strings.resolve(name);
    let launcher = most(&launcher_names).map(|s| job.strings.resolve(s));
    let roof = roofline
        .ops
        .iter()
        .find(|o| o.op == own)
        .or_else(|| launcher.and_then(|l| roofline.ops.iter().find(|o| o.op == l)))
        .cloned();
    let critical_ns: Ns = critical.map_or(0, |c| {
        c.top_ops
            .iter()
            .filter(|o| o.name == own)
            .map(|o| o.total_ns)
            .sum()
    });
    let critical_share = critical
        .filter(|c| c.total_ns > 0)
        .map(|c| critical_ns as f64 / c.total_ns as f64);
    let kind = most(&kinds).unwrap_or(Kind::Other);
    OpDetail {
        name,
        kind,
        all: durations(&mut all_durs),
        slowest_rank: slowest_rank(&per_rank, kind),
        per_rank,
        shapes: shape_counts(shapes),
        roofline: roof,
        critical_ns,
        critical_share,
        longest: longest.map(|(_, e)| e),
        task: task.finish(job, roofline.u),
        launcher: most(&launcher_names).filter(|&l| l != name),
        job_has_shapes: job.ranks.iter().any(|r| !r.shapes.is_empty()),
    }
}

/// Who is slow at an operator of `kind` (see [`OpDetail::slowest_rank`]): the rank with the
/// most total time, more than [`SLOW_RANK_EXCESS`] above the median rank — for a collective,
/// the one with the least, that far below it (ties: the lower rank id).
fn slowest_rank(per_rank: &[RankOp], kind: Kind) -> Option<RankId> {
    let late = kind == Kind::Comm;
    let key = |r: &&RankOp| (r.stats.total_ns, std::cmp::Reverse(r.rank));
    let pick = if late {
        per_rank.iter().min_by_key(|r| (r.stats.total_ns, r.rank))?
    } else {
        per_rank.iter().max_by_key(key)?
    };
    let mut totals: Vec<Ns> = per_rank.iter().map(|r| r.stats.total_ns).collect();
    totals.sort_unstable();
    let median = median_sorted(&totals) as f64;
    let t = pick.stats.total_ns as f64;
    let apart = if late {
        t < median * (1.0 - SLOW_RANK_EXCESS)
    } else {
        t > median * (1.0 + SLOW_RANK_EXCESS)
    };
    apart.then_some(pick.rank)
}

/// Shapes by count, most common first (ties: by dims, then types).
fn shape_counts(shapes: FxHashMap<(Option<Sym>, Option<Sym>), u64>) -> Vec<ShapeCount> {
    let mut out: Vec<ShapeCount> = shapes
        .into_iter()
        .map(|((dims, types), count)| ShapeCount { dims, types, count })
        .collect();
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(a.dims.cmp(&b.dims))
            .then(a.types.cmp(&b.types))
    });
    out
}

/// The key with the largest count (ties: the smallest key, for determinism).
fn most<K: Copy + Ord + std::hash::Hash>(m: &FxHashMap<K, u64>) -> Option<K> {
    m.iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(k, _)| *k)
}

/// Distinct operator names (device work, host operators, runtime calls and annotations — a
/// data-loader range or a blocking `cudaStreamSynchronize` is as much a culprit as a kernel —
/// not step markers), sorted by name: what the search and `--op` match against.
pub fn names(job: &Job) -> Vec<Sym> {
    totals(job).into_iter().map(|n| n.name).collect()
}

/// A name's occurrences over the job: what a search result says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameTotal {
    /// The name.
    pub name: Sym,
    /// Its events over every rank and step.
    pub count: u64,
    /// Σ their durations (saturating).
    pub total_ns: Ns,
}

/// [`names`] with each name's count and total duration.
pub fn totals(job: &Job) -> Vec<NameTotal> {
    let mut acc: Vec<(u64, Ns)> = vec![(0, 0); job.strings.len()];
    for r in &job.ranks {
        let e = &r.events;
        for i in 0..e.len() {
            let k = e.kind[i];
            if k.is_device_work() || matches!(k, Kind::HostOp | Kind::Launch | Kind::Annotation) {
                let a = &mut acc[e.name[i] as usize];
                a.0 += 1;
                a.1 = a.1.saturating_add(e.dur[i]);
            }
        }
    }
    let mut out: Vec<NameTotal> = job
        .strings
        .iter()
        .filter(|(s, _)| acc[*s as usize].0 > 0 && !job.role(*s).is_step_marker())
        .map(|(s, _)| NameTotal {
            name: s,
            count: acc[s as usize].0,
            total_ns: acc[s as usize].1,
        })
        .collect();
    out.sort_by(|a, b| job.strings.resolve(a.name).cmp(job.strings.resolve(b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut d: Vec<Ns> = (1..=200).rev().collect();
        let s = durations(&mut d);
        assert_eq!(
            (s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p99_ns, s.max_ns),
            (200, 20100, 100, 100, 198, 200)
        );
        let s = durations(&mut [7]);
        assert_eq!((s.p50_ns, s.p99_ns, s.max_ns), (7, 7, 7));
        assert_eq!(durations(&mut []), Durations::default());
    }
}
