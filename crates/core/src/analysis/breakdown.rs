//! Step breakdown (docs/metrics.md, "Breakdown"; Hermes multi-component parallel analysis). Over a rank's step
//! span, with C, M, Y, H the unions of compute, communication, memory and host intervals:
//! `compute = C\M`, `overlap = C∩M`, `comm = M\C`, `memory = Y\(C∪M)`,
//! `host_bound = H\(C∪M∪Y)`, `free = span\(C∪M∪Y∪H)`. They partition the span exactly.
//!
//! H is the host work of the stepping thread **and of every thread that launches device work**
//! (cpu ops, runtime calls, annotations other than the step marker). The definition names the
//! stepping thread; real traces launch the backward pass from `pt_autograd_N` threads, and device idle
//! time while those threads launch work is host-bound, not free (see docs/metrics.md).
//!
//! CPU-only ranks (no device work): lanes are CPU threads; host-side collective calls (the
//! `host_collective` role: `c10d::*`, `gloo:*`, `nccl:*`, `record_param_comms`) are M, every
//! other `cpu_op` is C, Y is empty.

use super::intervals::IntervalSet;
use super::stats::median_sorted;
use super::steps::StepSpan;
use crate::model::{Kind, LaneSide, Rank, RankId, Role, StepNo};
use crate::time::Ns;
use rayon::prelude::*;
use serde::Serialize;

/// The six parts a step span is partitioned into, in bar and report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Compute not overlapped by communication.
    Compute,
    /// Compute overlapped by communication.
    Overlap,
    /// Communication not hidden behind compute.
    Comm,
    /// Memory copies/sets while no compute or communication runs.
    Memory,
    /// Device idle while the host works.
    HostBound,
    /// Neither device nor host busy.
    Free,
}

impl Part {
    /// Every part, in partition order.
    pub const ALL: [Part; 6] = [
        Part::Compute,
        Part::Overlap,
        Part::Comm,
        Part::Memory,
        Part::HostBound,
        Part::Free,
    ];

    /// The parts of a rank's own work (everything but exposed communication): compared
    /// across ranks to find what grew or differs; compute there includes the overlapped part.
    pub const OWN_WORK: [Part; 4] = [Part::Compute, Part::Memory, Part::HostBound, Part::Free];

    /// Stable lower-case name used in reports (`host_bound`).
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Compute => "compute",
            Part::Overlap => "overlap",
            Part::Comm => "comm",
            Part::Memory => "memory",
            Part::HostBound => "host_bound",
            Part::Free => "free",
        }
    }
}

/// The breakdown of one (rank, step). Serialized as is into the JSON report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Breakdown {
    /// Step number.
    pub step: StepNo,
    /// Rank id.
    pub rank: RankId,
    /// Span length (the sum of the six parts).
    pub span_ns: Ns,
    /// Compute not overlapped by communication.
    pub compute_ns: Ns,
    /// Compute overlapped by communication.
    pub overlap_ns: Ns,
    /// Communication not hidden behind compute.
    pub comm_ns: Ns,
    /// Memory copies/sets while no compute or communication runs.
    pub memory_ns: Ns,
    /// Device idle while the host works (launch, dispatch, data loading).
    pub host_bound_ns: Ns,
    /// Neither device nor host busy.
    pub free_ns: Ns,
}

impl Breakdown {
    /// One part of the partition.
    pub fn part(&self, p: Part) -> Ns {
        match p {
            Part::Compute => self.compute_ns,
            Part::Overlap => self.overlap_ns,
            Part::Comm => self.comm_ns,
            Part::Memory => self.memory_ns,
            Part::HostBound => self.host_bound_ns,
            Part::Free => self.free_ns,
        }
    }

    /// One part of the rank's own work ([`Part::OWN_WORK`]): compute includes overlap.
    pub fn own_part(&self, p: Part) -> Ns {
        match p {
            Part::Compute => self.compute_ns + self.overlap_ns,
            _ => self.part(p),
        }
    }

    /// The step's own work: everything but exposed communication (which, in a synchronous
    /// job, mostly waits for the slowest rank).
    pub fn own_work_ns(&self) -> Ns {
        self.span_ns - self.comm_ns
    }
}

/// The cluster's typical row of a step: each part's median across the ranks that have the
/// step (the step-time median rule of `step_times`), so one rank can be compared part by part.
/// `span_ns` is the median span; the parts need not add up to it.
pub fn median_row(rows: &[Breakdown], step: StepNo) -> Option<Breakdown> {
    let of: Vec<&Breakdown> = rows.iter().filter(|b| b.step == step).collect();
    if of.is_empty() {
        return None;
    }
    let med = |f: fn(&Breakdown) -> Ns| {
        let mut v: Vec<Ns> = of.iter().map(|b| f(b)).collect();
        v.sort_unstable();
        median_sorted(&v)
    };
    Some(Breakdown {
        step,
        rank: RankId(u32::MAX),
        span_ns: med(|b| b.span_ns),
        compute_ns: med(|b| b.compute_ns),
        overlap_ns: med(|b| b.overlap_ns),
        comm_ns: med(|b| b.comm_ns),
        memory_ns: med(|b| b.memory_ns),
        host_bound_ns: med(|b| b.host_bound_ns),
        free_ns: med(|b| b.free_ns),
    })
}

/// The median own work (span − exposed communication) of a step across the ranks that have
/// it: the heat map's reference, since in a synchronous job every span is about equal and only
/// own work tells the straggler apart.
pub fn median_own_work(rows: &[Breakdown], step: StepNo) -> Option<Ns> {
    let mut v: Vec<Ns> = rows
        .iter()
        .filter(|b| b.step == step)
        .map(Breakdown::own_work_ns)
        .collect();
    v.sort_unstable();
    (!v.is_empty()).then(|| median_sorted(&v))
}

/// The four interval unions of a rank over the whole trace.
#[derive(Debug, Default)]
pub struct Sets {
    /// C: compute kernels (CPU-only: non-collective cpu ops).
    pub compute: IntervalSet,
    /// M: communication kernels (CPU-only: collective host ops).
    pub comm: IntervalSet,
    /// Y: memcpy and memset.
    pub memory: IntervalSet,
    /// H: host work of the stepping and launching threads.
    pub host: IntervalSet,
}

/// Builds C, M, Y, H for a rank (`roles`: the job's, by name).
pub fn rank_sets(rank: &Rank, roles: &[Role]) -> Sets {
    let ev = &rank.events;
    let cpu_only = rank.is_cpu_only();
    let mut host_lanes = vec![false; rank.lanes.len()];
    if let Some(l) = rank.stepping_lane {
        host_lanes[l as usize] = true;
    }
    for i in 0..ev.len() {
        if ev.kind[i] == Kind::Launch && !ev.link[i].is_none() {
            host_lanes[ev.lane[i] as usize] = true;
        }
    }
    // Events of a lane are sorted by start, so each lane's part of each set is built in one
    // linear pass; lanes run in parallel and their sets are merged (also linear).
    let which = |i: usize| -> [bool; 4] {
        let lane = ev.lane[i] as usize;
        let name = ev.name[i] as usize;
        match (rank.lanes[lane].side, ev.kind[i]) {
            (LaneSide::Device, Kind::Compute) => [true, false, false, false],
            (LaneSide::Device, Kind::Comm) => [false, true, false, false],
            (LaneSide::Device, Kind::Memcpy | Kind::Memset) => [false, false, true, false],
            (LaneSide::Cpu, k @ (Kind::HostOp | Kind::Launch | Kind::Annotation))
                if !roles[name].is_step_marker() =>
            {
                let collective = cpu_only && roles[name].host_collective.is_some();
                [
                    cpu_only && !collective && k == Kind::HostOp,
                    collective,
                    false,
                    host_lanes[lane],
                ]
            }
            _ => [false; 4],
        }
    };
    let per_lane: Vec<[IntervalSet; 4]> = (0..rank.lanes.len() as u16)
        .into_par_iter()
        .map(|l| {
            let mut parts: [Vec<(Ns, Ns)>; 4] = Default::default();
            for i in rank.lane_events(l) {
                for (set, member) in which(i).into_iter().enumerate() {
                    if member {
                        parts[set].push((ev.start[i], ev.end(i)));
                    }
                }
            }
            parts.map(IntervalSet::from_sorted)
        })
        .collect();
    let merge = |set: usize| {
        per_lane.iter().fold(IntervalSet::default(), |acc, l| {
            if l[set].is_empty() {
                acc
            } else {
                acc.union(&l[set])
            }
        })
    };
    Sets {
        compute: merge(0),
        comm: merge(1),
        memory: merge(2),
        host: merge(3),
    }
}

/// Breakdown of every step span of a rank from its sets.
pub fn rank_breakdown(s: &Sets, rank: RankId, spans: &[StepSpan]) -> Vec<Breakdown> {
    let cm_and = s.compute.intersect(&s.comm);
    let cm = s.compute.union(&s.comm);
    let cmy = cm.union(&s.memory);
    let cmyh = cmy.union(&s.host);
    spans
        .iter()
        .map(|sp| {
            let w = |set: &IntervalSet| set.measure_within(sp.start, sp.end);
            let (c, m, both) = (w(&s.compute), w(&s.comm), w(&cm_and));
            let (cm_n, cmy_n, cmyh_n) = (w(&cm), w(&cmy), w(&cmyh));
            Breakdown {
                rank,
                step: sp.number,
                span_ns: sp.len(),
                compute_ns: c - both,
                overlap_ns: both,
                comm_ns: m - both,
                memory_ns: cmy_n - cm_n,
                host_bound_ns: cmyh_n - cmy_n,
                free_ns: sp.len() - cmyh_n,
            }
        })
        .collect()
}

/// Breakdown of every step span of a summary-only rank ([`crate::model::Rank::summary_only`])
/// from the profiler's own step summary: compute = Computing − Overlapped, overlap =
/// Overlapped, comm = Communication(Not Overlapped), free = the rest of the span (the
/// profiler's Free when the span is its device span; memory and host-bound are not told
/// apart by the summary: they are in free). A step the summary has no row for has none.
pub fn summary_breakdown(rank: &Rank, spans: &[StepSpan]) -> Vec<Breakdown> {
    spans
        .iter()
        .filter_map(|sp| {
            let synthetic = rank
                .steps
                .get(sp.index as usize)
                .is_some_and(|s| s.synthetic);
            let row = rank.profiler_steps.iter().find(|p| match p.step {
                Some(n) => n == sp.number,
                None => synthetic,
            })?;
            let overlap = row.overlapped.clamp(0, row.computing.max(0));
            let busy = [row.computing.max(0), row.comm_not_overlapped.max(0)];
            let (compute, comm) = (busy[0] - overlap, busy[1]);
            // Parts are capped so they never exceed the span: each takes what is left.
            let compute = compute.min(sp.len());
            let overlap = overlap.min(sp.len() - compute);
            let comm = comm.min(sp.len() - compute - overlap);
            Some(Breakdown {
                rank: rank.id,
                step: sp.number,
                span_ns: sp.len(),
                compute_ns: compute,
                overlap_ns: overlap,
                comm_ns: comm,
                memory_ns: 0,
                host_bound_ns: 0,
                free_ns: sp.len() - compute - overlap - comm,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[(Ns, Ns)]) -> IntervalSet {
        IntervalSet::from_intervals(v.to_vec())
    }

    fn span(number: u32, start: Ns, end: Ns) -> StepSpan {
        StepSpan {
            index: number,
            number: StepNo(number),
            start,
            end,
            device_end: None,
        }
    }

    #[test]
    fn parts_partition_the_span_by_hand() {
        // Span [0, 100): C [10, 50), M [40, 70), Y [65, 80), H [0, 5) ∪ [85, 90).
        // C∩M = [40, 50) = 10 → overlap 10, compute 40 − 10 = 30, comm 30 − 10 = 20;
        // C∪M = [10, 70) = 60, ∪Y = [10, 80) = 70 → memory 10; ∪H = 80 → host-bound 10;
        // free 100 − 80 = 20.
        let s = Sets {
            compute: set(&[(10, 50)]),
            comm: set(&[(40, 70)]),
            memory: set(&[(65, 80)]),
            host: set(&[(0, 5), (85, 90)]),
        };
        let rows = rank_breakdown(&s, RankId(3), &[span(1, 0, 100), span(2, 100, 100)]);
        let b = rows[0];
        assert_eq!((b.rank, b.step, b.span_ns), (RankId(3), StepNo(1), 100));
        let parts: Vec<Ns> = Part::ALL.iter().map(|&p| b.part(p)).collect();
        assert_eq!(parts, [30, 10, 20, 10, 10, 20]);
        // Own work: span − exposed comm = 80; compute there includes the overlap.
        assert_eq!(b.own_work_ns(), 80);
        assert_eq!(b.own_part(Part::Compute), 40);
        assert_eq!(b.own_part(Part::Memory), 10);
        // An empty span has nothing in it.
        assert_eq!(
            rows[1],
            Breakdown {
                step: StepNo(2),
                rank: RankId(3),
                ..Default::default()
            }
        );
    }

    #[test]
    fn medians_of_a_step_across_ranks() {
        let row = |step, rank, compute, comm| Breakdown {
            step: StepNo(step),
            rank: RankId(rank),
            span_ns: compute + comm,
            compute_ns: compute,
            comm_ns: comm,
            ..Default::default()
        };
        // Step 7: spans 100, 130, 160; compute 90, 100, 150; comm 10, 30, 10 → medians 130,
        // 100, 10. Step 8's row is no part of it.
        let rows = [
            row(7, 0, 90, 10),
            row(7, 1, 100, 30),
            row(7, 2, 150, 10),
            row(8, 0, 1, 1),
        ];
        let m = median_row(&rows, StepNo(7)).unwrap();
        assert_eq!((m.span_ns, m.compute_ns, m.comm_ns), (130, 100, 10));
        // Own work 90, 100, 150 → 100.
        assert_eq!(median_own_work(&rows, StepNo(7)), Some(100));
        assert_eq!(median_row(&rows, StepNo(9)), None);
        assert_eq!(median_own_work(&rows, StepNo(9)), None);
    }

    #[test]
    fn part_names_are_stable() {
        let names: Vec<&str> = Part::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(
            names,
            ["compute", "overlap", "comm", "memory", "host_bound", "free"]
        );
    }
}
