//! Pure analyses over the model: every reported number is defined in exactly one file here
//! (docs/metrics.md says which).
//!
//! - [`steps`]: rank step spans
//! - [`breakdown`]: compute / overlap / comm / memory / host-bound / free per (rank, step)
//! - [`step_times`]: per-step span distribution across ranks and the slowest rank
//! - [`ops`]: top operators
//! - [`comm`]: collective matching, clock alignment, wait vs transit, bandwidth
//! - [`cluster`]: slow steps and their culprits, stragglers, pipeline stages
//! - [`critical_path`]: the longest dependency chain of a step or window, across ranks
//! - [`host`]: launch, synchronization, data loading, GC, allocator and pageable copies
//! - [`roofline`]: compute-bound / memory-bound / under-utilized kernels
//! - [`tasks`]: the accelerator's kernel table: dynamic-shape and AI CPU operators
//! - [`advisor`]: rules that turn the results into findings with evidence and impact
//! - [`timeline`]: a step's operator bands per rank or lane (the Marey view)
//! - [`operator`]: one operator across ranks (the drill-down target)
//! - [`intervals`], [`stats`]: the interval-union arithmetic and medians they share

pub mod advisor;
pub mod affinity;
pub mod breakdown;
pub mod clocks;
pub mod cluster;
pub mod comm;
pub mod critical_path;
pub mod deviation;
pub mod diff;
pub mod hang;
pub mod host;
pub mod inspect;
pub mod intervals;
pub mod layout;
pub mod live;
pub mod operator;
pub mod ops;
pub mod profiler_check;
pub mod roofline;
pub mod ser;
pub mod stats;
pub mod step_times;
pub mod steps;
pub mod tasks;
pub mod timeline;
pub mod whatif;

use crate::model::{Job, Kind, RankId, StepNo, Sym};
use crate::time::Ns;
use breakdown::Breakdown;
use cluster::{Imbalance, SlowStep, Stage, Straggler};
use comm::{Comm, CommOptions};
use intervals::IntervalSet;
use ops::{OpBasis, OpStat, Scope};
use rayon::prelude::*;
use std::time::Instant;
use step_times::StepTime;
use steps::StepSpan;

/// The critical path of a window and, for a step, its graph (kept for the what-if, so that
/// one build serves both).
fn path_and_graph(
    job: &Job,
    comm: &Comm,
    w: critical_path::Window,
) -> (
    Option<critical_path::CriticalPath>,
    Option<(StepNo, critical_path::graph::Graph)>,
) {
    let Some((g, ranks)) = critical_path::build_graph(job, comm, &w) else {
        return (None, None);
    };
    let path = critical_path::of_graph(job, &g, ranks, &w);
    match w {
        critical_path::Window::Step(s) => (path, Some((s, g))),
        critical_path::Window::Annotation { .. } => (path, None),
    }
}

/// The what-if over the steps in scope with every finding's fix; the findings take their
/// savings as impacts and fold under their causes, and the first ones' fixes are replayed
/// together (docs/metrics.md, "Replay").
fn what_if(
    a: &mut Analysis,
    job: &Job,
    rows: &[Breakdown],
    graph: Option<(StepNo, critical_path::graph::Graph)>,
    t: &advisor::Thresholds,
) -> whatif::WhatIf {
    // Every rank's rows, not the scope's: a fix of another rank's slow step needs its rows
    // under `--rank` too.
    let extras: Vec<whatif::Fix> = a
        .findings
        .iter()
        .filter_map(whatif::savings::fix_for)
        .collect();
    let cx = whatif::Context::new(job, &a.comm, rows, a.stages.as_deref(), &a.host.gc)
        .with_extras(extras);
    let mut fixes: Vec<Vec<whatif::Fix>> = Vec::new();
    let index: Vec<Option<usize>> = a
        .findings
        .iter()
        .map(|f| {
            let fix = whatif::savings::fix_for(f)?;
            fixes.push(vec![fix]);
            Some(fixes.len() - 1)
        })
        .collect();
    let pairable = fixes.len();
    let together = together(&a.findings, &index, &mut fixes);
    let mut w = whatif::run(job, &a.comm, &cx, &a.step_times, graph, &fixes, pairable);
    let step_ns = a.facts().step_ns();
    whatif::savings::apply(&mut a.findings, &index, &w, step_ns, t, together.as_ref());
    let first: Vec<whatif::joint::First> = a
        .findings
        .iter()
        .filter(|f| f.saves_ns.is_some() && f.impact_pct >= t.lead_min_pct)
        .filter_map(|f| {
            let fix = whatif::savings::fix_for(f)?;
            let col = fixes.iter().position(|x| x.len() == 1 && x[0] == fix)?;
            Some((f.rule, fix, f.impact_ns, col))
        })
        .take(whatif::joint::JOINT)
        .collect();
    w.joint = whatif::joint::joint(job, &a.comm, &cx, &w, &first);
    w
}

/// The fixes of every finding that names a cause, together, and of each other finding's on
/// top (`whatif::attribution::Together`), appended to `fixes`; `None` without both kinds.
fn together(
    findings: &[advisor::Finding],
    index: &[Option<usize>],
    fixes: &mut Vec<Vec<whatif::Fix>>,
) -> Option<whatif::attribution::Together> {
    use whatif::attribution::is_cause;
    let of = |i: usize| index[i].map(|k| fixes[k][0].clone());
    let causes: Vec<whatif::Fix> = (0..findings.len())
        .filter(|&i| is_cause(&findings[i]))
        .filter_map(of)
        .collect();
    let symptoms: Vec<(usize, whatif::Fix)> = (0..findings.len())
        .filter(|&i| !is_cause(&findings[i]))
        .filter_map(|i| Some((i, of(i)?)))
        .collect();
    if causes.is_empty() || symptoms.is_empty() {
        return None;
    }
    fixes.push(causes.clone());
    let mut t = whatif::attribution::Together {
        causes: fixes.len() - 1,
        with: Vec::new(),
    };
    for (i, fix) in symptoms {
        let mut v = causes.clone();
        v.push(fix);
        fixes.push(v);
        t.with.push((i, fixes.len() - 1));
    }
    Some(t)
}

/// Everything the report shows, computed once.
#[derive(Debug)]
pub struct Analysis {
    /// Step spans per rank, in `job.ranks` order.
    pub spans: Vec<Vec<StepSpan>>,
    /// Breakdown rows in scope, ordered by (step, rank).
    pub breakdown: Vec<Breakdown>,
    /// Per-step times over the ranks in scope.
    pub step_times: Vec<StepTime>,
    /// The slowest step in scope (the longest cluster step time): what views open on.
    pub slowest_step: Option<StepNo>,
    /// What `top_ops` totals.
    pub op_basis: OpBasis,
    /// Operators by total time (all of them; renderers cut).
    pub top_ops: Vec<OpStat>,
    /// Timed events of the whole job per kind, in `Kind::ALL` order.
    pub events_per_kind: [u64; Kind::ALL.len()],
    /// Communication kernels carrying collective metadata, per `Collective name`.
    pub collectives: Vec<NameCount>,
    /// Collective matching, clock offsets, wait vs transit, bandwidth (whole job).
    pub comm: Comm,
    /// Slow steps over all steps and ranks, with culprits.
    pub slow_steps: Vec<SlowStep>,
    /// Stragglers per domain (steps in scope).
    pub stragglers: Vec<Straggler>,
    /// Breakdown-part spread per domain (steps in scope).
    pub imbalance: Vec<Imbalance>,
    /// Pipeline stages, when send/recv traffic shows them.
    pub stages: Option<Vec<Stage>>,
    /// The job's parallel layout (TP × CP × EP × DP × PP), declared or inferred.
    pub layout: Option<layout::Layout>,
    /// Each communication group's health, by the layout dimension it runs along.
    pub group_health: Vec<layout::health::GroupHealth>,
    /// Nodes and the traffic per link type, with the slow links.
    pub topology: layout::topology::LinkTraffic,
    /// The critical path of the window (`None`: no such window, or no events in it).
    pub critical_path: Option<critical_path::CriticalPath>,
    /// The steps in scope replayed: self-check, ideal, each finding's fix, the slowdown.
    pub whatif: whatif::WhatIf,
    /// Host-side causes over the scope.
    pub host: host::Host,
    /// Roofline classes over the scope.
    pub roofline: roofline::Roofline,
    /// The accelerator's kernel table (Ascend): dynamic shapes, AI CPU fallbacks.
    pub tasks: tasks::Tasks,
    /// The profiler's own step summary against the same columns from the events (Ascend).
    pub profiler_checks: Vec<profiler_check::StepCheck>,
    /// HCCL's traffic per rank and transport over the scope (Ascend `communication.json`).
    pub transports: Vec<comm::transports::TransportStat>,
    /// HCCL's traffic per link (Ascend `communication_matrix.json`), with slow links.
    pub link_matrix: Vec<comm::link_matrix::LinkStat>,
    /// HCCL transfers whose size is not a multiple of 512 B, with their measured cost.
    pub unaligned: comm::unaligned::Unaligned,
    /// Fused torch_npu APIs that replace runs of the job's operators (Ascend).
    pub affinity: Vec<affinity::AffinityMatch>,
    /// Steps a rank's device clock ran below the job's top clock.
    pub clocks: clocks::Clocks,
    /// The kernel table's sums against the profiler's own (`op_statistic.csv`).
    pub op_stat_checks: Vec<tasks::OpStatCheck>,
    /// Findings, largest impact first.
    pub findings: Vec<advisor::Finding>,
    /// Wall time of the analysis, ns.
    pub analysis_ns: u64,
}

/// How many times a name occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameCount {
    /// The name.
    pub name: Sym,
    /// How often the name occurs.
    pub count: u64,
}

/// What to analyse and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Ranks and steps the breakdown, step times and top operators cover.
    pub scope: Scope,
    /// Clock alignment and topology for the communication analysis.
    pub comm: CommOptions,
    /// The critical path's window (default: `scope.step`, else the slowest step).
    pub window: Option<critical_path::Window>,
    /// Roofline device and threshold.
    pub roofline: roofline::RooflineOptions,
    /// The device peak table (embedded + config dir; empty: the embedded one).
    pub devices: Vec<roofline::peaks::Device>,
    /// The advisor's thresholds.
    pub thresholds: advisor::Thresholds,
}

/// Each rank's interval sets the analyses share, built once.
struct RankSets {
    /// Breakdown rows of every rank and step, by (step, rank).
    rows: Vec<Breakdown>,
    /// C per rank.
    compute: Vec<IntervalSet>,
    /// Device and device-or-host busy sets per rank.
    busy: Vec<host::RankBusy>,
}

/// Breakdown rows and interval sets of every rank.
fn rank_sets(job: &Job, spans: &[Vec<StepSpan>]) -> RankSets {
    let per_rank: Vec<(Vec<Breakdown>, IntervalSet, host::RankBusy)> = job
        .ranks
        .par_iter()
        .zip(spans)
        .map(|(r, sp)| {
            let sets = breakdown::rank_sets(r, &job.roles);
            let device = sets.compute.union(&sets.comm).union(&sets.memory);
            let busy = host::RankBusy {
                busy: device.union(&sets.host),
                device,
            };
            let rows = if r.summary_only {
                breakdown::summary_breakdown(r, sp)
            } else {
                breakdown::rank_breakdown(&sets, r.id, sp)
            };
            (rows, sets.compute, busy)
        })
        .collect();
    let mut out = RankSets {
        rows: Vec::new(),
        compute: Vec::with_capacity(per_rank.len()),
        busy: Vec::with_capacity(per_rank.len()),
    };
    for (rows, c, b) in per_rank {
        out.rows.extend(rows);
        out.compute.push(c);
        out.busy.push(b);
    }
    out.rows.sort_by_key(|b| (b.step, b.rank));
    out
}

/// Runs the analyses. Breakdown, step times and top operators cover `opts.scope`; slow
/// steps, matching and alignment always cover the whole job (a slow step is slow against the
/// others; a collective needs all its ranks); communication and straggler summaries cover
/// the scope's step.
pub fn analyze(job: &Job, opts: &Options) -> Analysis {
    let began = Instant::now();
    let scope = opts.scope;
    let devices = opts.peaks();
    let spans: Vec<Vec<StepSpan>> = job.ranks.par_iter().map(steps::rank_spans).collect();
    let RankSets {
        rows: all_rows,
        compute,
        busy,
    } = rank_sets(job, &spans);
    let breakdown: Vec<Breakdown> = all_rows
        .iter()
        .filter(|b| scope.has(b.rank, b.step))
        .copied()
        .collect();
    let step_times = step_times::step_times(&breakdown);
    let span_ns = spans_in_step(&spans, scope.step);
    let comm = comm::analyze(job, &compute, &span_ns, &opts.comm, scope.step, &devices);
    drop(compute);
    let slow_steps = cluster::slow_steps(&step_times::step_times(&all_rows), &all_rows, &comm);
    let Split {
        layout,
        stages,
        group_health,
        link_matrix,
        topology,
    } = split(job, &comm, &all_rows, scope.step);
    let (stragglers, imbalance) =
        cluster::stragglers(job, &comm, &all_rows, &spans, scope.step, stages.as_deref());
    let slowest_step = step_times::slowest(&step_times);
    let window = opts
        .window
        .clone()
        .or_else(|| scope.step.or(slowest_step).map(critical_path::Window::Step));
    let sets = (&busy[..], &spans[..], &all_rows[..]);
    let ind = independent(job, opts, &comm, window, sets, &devices);
    let in_scope = |rank: RankId, step: StepNo| scope.has(rank, step);
    drop(busy);
    let mut a = Analysis {
        collectives: collectives_by_name(job),
        events_per_kind: events_per_kind(job),
        comm,
        slow_steps,
        stragglers,
        imbalance,
        stages,
        group_health,
        topology,
        layout,
        profiler_checks: profiler_check::step_checks(job),
        transports: comm::transports::transports(job, scope.step),
        link_matrix,
        unaligned: comm::unaligned::unaligned(job, in_scope),
        affinity: affinity::affinity(job, in_scope),
        clocks: clocks::clocks(job, &spans, &breakdown),
        op_stat_checks: tasks::op_stat_checks(job),
        findings: Vec::new(),
        critical_path: ind.critical_path,
        whatif: whatif::WhatIf::default(),
        host: ind.host,
        roofline: ind.roofline,
        tasks: ind.tasks,
        spans,
        breakdown,
        step_times,
        slowest_step,
        op_basis: ind.op_basis,
        top_ops: ind.top_ops,
        analysis_ns: 0,
    };
    a.findings = advisor::detect(&a.facts(), &opts.thresholds);
    a.whatif = what_if(&mut a, job, &all_rows, ind.graph, &opts.thresholds);
    a.analysis_ns = began.elapsed().as_nanos() as u64;
    a
}

/// The analyses that read only the job, its communication and the rank sets.
struct Independent {
    critical_path: Option<critical_path::CriticalPath>,
    graph: Option<(StepNo, critical_path::graph::Graph)>,
    host: host::Host,
    roofline: roofline::Roofline,
    tasks: tasks::Tasks,
    op_basis: OpBasis,
    top_ops: Vec<OpStat>,
}

/// The critical path of `window`, the host analysis, the roofline, the kernel table and the
/// top operators. Independent of each other and each mostly one thread's work on a job of
/// few ranks (their parallelism is over ranks): run side by side, so that a single big rank
/// keeps both cores busy.
fn independent(
    job: &Job,
    opts: &Options,
    comm: &Comm,
    window: Option<critical_path::Window>,
    (busy, spans, rows): (&[host::RankBusy], &[Vec<StepSpan>], &[Breakdown]),
    devices: &[roofline::peaks::Device],
) -> Independent {
    let scope = opts.scope;
    let in_scope = |rank: RankId, step: StepNo| scope.has(rank, step);
    let path = || window.map_or((None, None), |w| path_and_graph(job, comm, w));
    let host = || {
        let mut h = host::host(job, busy, spans, rows, in_scope);
        h.env = host::env::settings(job);
        h
    };
    let roofline = || roofline::roofline(job, devices, &opts.roofline, in_scope);
    let table = || rayon::join(|| tasks::tasks(job, in_scope), || ops::top_ops(job, scope));
    let ((path, host), (roofline, (tasks, (op_basis, top_ops)))) =
        rayon::join(|| rayon::join(path, host), || rayon::join(roofline, table));
    Independent {
        critical_path: path.0,
        graph: path.1,
        host,
        roofline,
        tasks,
        op_basis,
        top_ops,
    }
}

/// How the job is split and connected.
struct Split {
    layout: Option<layout::Layout>,
    stages: Option<Vec<cluster::Stage>>,
    group_health: Vec<layout::health::GroupHealth>,
    link_matrix: Vec<comm::link_matrix::LinkStat>,
    topology: layout::topology::LinkTraffic,
}

/// The layout, the pipeline stages (from send/recv, else the layout's pipeline axis) with
/// the operators that make a heavier stage heavier, each group's health and the topology.
fn split(job: &Job, comm: &Comm, rows: &[Breakdown], step: Option<StepNo>) -> Split {
    let p2p_stages = cluster::stages(comm, rows, step);
    let layout = layout::layout(job, Some(comm), p2p_stages.as_deref());
    let mut stages = p2p_stages.or_else(|| {
        let ranks: Vec<RankId> = job.ranks.iter().map(|r| r.id).collect();
        cluster::stages_of_layout(layout.as_ref()?, &ranks, comm, rows, step)
    });
    if let Some(s) = stages.as_mut() {
        cluster::name_heavier_ops(job, s, step);
    }
    let link_matrix = comm::link_matrix::link_matrix(job, step);
    Split {
        group_health: layout::health::group_health(comm, layout.as_ref(), step),
        topology: layout::topology::topology(comm, &link_matrix),
        layout,
        stages,
        link_matrix,
    }
}

impl Options {
    /// The device peak table: the one given, else the embedded one.
    fn peaks(&self) -> Vec<roofline::peaks::Device> {
        if self.devices.is_empty() {
            roofline::peaks::embedded()
        } else {
            self.devices.clone()
        }
    }
}

/// Each rank's Σ step span over the steps of `step` (all steps: `None`).
fn spans_in_step(spans: &[Vec<StepSpan>], step: Option<StepNo>) -> Vec<Ns> {
    spans
        .iter()
        .map(|sp| {
            sp.iter()
                .filter(|s| step.is_none_or(|n| n == s.number))
                .map(|s| s.len())
                .sum()
        })
        .collect()
}

/// Timed events of the whole job per kind.
fn events_per_kind(job: &Job) -> [u64; Kind::ALL.len()] {
    job.ranks
        .par_iter()
        .map(|r| {
            let mut n = [0u64; Kind::ALL.len()];
            r.events.kind.iter().for_each(|&k| n[k as usize] += 1);
            n
        })
        .reduce(
            || [0; Kind::ALL.len()],
            |a, b| std::array::from_fn(|i| a[i] + b[i]),
        )
}

/// Communication kernels with collective metadata, per `Collective name` (by symbol).
fn collectives_by_name(job: &Job) -> Vec<NameCount> {
    let mut per_name: std::collections::BTreeMap<Sym, u64> = Default::default();
    for r in &job.ranks {
        for c in &r.collectives {
            if let (Some(name), Kind::Comm) = (c.name, r.events.kind[c.event.0 as usize]) {
                *per_name.entry(name).or_default() += 1;
            }
        }
    }
    per_name
        .into_iter()
        .map(|(name, count)| NameCount { name, count })
        .collect()
}

impl Analysis {
    /// The results the advisor's rules read.
    pub fn facts(&self) -> advisor::Facts<'_> {
        advisor::Facts::new(&self.step_times, &self.breakdown)
            .comm(&self.comm.types, &self.comm.slow_links)
            .stalls(&self.comm.stalls)
            .links(&self.link_matrix)
            .unaligned(&self.unaligned)
            .affinity(&self.affinity)
            .clocks(&self.clocks)
            .cluster(
                &self.slow_steps,
                &self.stragglers,
                &self.imbalance,
                self.stages.as_deref(),
            )
            .causes(&self.host, &self.roofline, self.critical_path.as_ref())
            .tasks(&self.tasks)
            .groups(&self.group_health)
    }
}
