//! One step made ready for replays: its cross-rank graph, the measured baseline, and what
//! the transforms ask of each edge (whose work it is, which collective it carries). Built
//! once per step; each fix is then one pass over the graph.

use super::edges::EdgeFacts;
pub use super::edges::Work;
use super::replay::{Baseline, ReplayCheck};
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::graph::Graph;
use crate::analysis::critical_path::{Category, Window, build_graph};
use crate::model::{EventIx, Job, RankId, RankIx, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// Why a job's steps cannot be replayed: a summary-only rank has its HCCL ops but not the
/// work between them, so its ops would replay as rigid waits (`None`: they can be).
pub fn unreplayable(job: &Job) -> Option<String> {
    let summary: Vec<String> = job
        .ranks
        .iter()
        .filter(|r| r.summary_only)
        .map(|r| r.id.to_string())
        .collect();
    (!summary.is_empty()).then(|| {
        format!(
            "not replayed: rank(s) {} are summary only (their work between HCCL ops is not in \
             the input); findings keep their rules' estimates",
            summary.join(", ")
        )
    })
}

/// Replays step `step` of the job with its measured durations.
pub fn check(job: &Job, comm: &Comm, step: StepNo) -> Option<ReplayCheck> {
    Some(StepReplay::new(job, comm, step)?.check())
}

/// A step's graph with its measured baseline.
pub struct StepReplay<'a> {
    /// The job.
    pub job: &'a Job,
    /// Its communication analysis (matched instances, offsets).
    pub comm: &'a Comm,
    /// The step.
    pub step: StepNo,
    /// The cross-rank graph of the step.
    pub g: Graph,
    /// Measured times, weights and the replay order.
    pub base: Baseline,
    /// The earliest measured node (aligned clock): where the step's time counts from.
    pub start: Ns,
    /// The step time on the graph as measured (latest node − `start`).
    pub measured_ns: Ns,
    /// The same, replayed with the measured weights.
    pub replayed_ns: Ns,
    /// The matched instance each collective call of the step belongs to (by its rank and
    /// event), for the transforms that change transfers.
    pub instance_of: FxHashMap<(RankIx, EventIx), usize>,
    /// Node times replayed with the measured weights.
    base_times: Vec<Ns>,
    /// Ranks (by position) with nodes in the graph.
    present: Vec<RankIx>,
    /// Each rank's own work under the measured weights ([`Self::work`]).
    base_work: Vec<[Ns; 2]>,
    /// What the host transforms ask of each edge (found on first use, `fix.rs`).
    pub(super) facts: OnceLock<EdgeFacts>,
    /// Per rank (by position): the span of edge indices holding its own work (a rank's
    /// edges are appended together), so that a transform of one rank reads only those.
    rank_edges: Vec<std::ops::Range<usize>>,
    /// Transfer edges (`communication`) of matched calls, each with its instance.
    transfers: Vec<(usize, usize)>,
    /// The kernel edges each kernel fix's speedups name, with the share kept, found once
    /// per speedup list (a finding's column and the ideal step apply the same list).
    pub(super) keeps: KeepCache,
}

/// The (edge, kept ppm) pairs of one speedup list in one step.
pub(super) type Keeps = std::sync::Arc<Vec<(usize, u32)>>;

/// Speedup lists and the pairs they give in one step.
pub(super) type KeepCache =
    std::sync::Mutex<Vec<(Vec<crate::analysis::roofline::speedup::Speedup>, Keeps)>>;

impl<'a> StepReplay<'a> {
    /// Step `step` of the job; `None` without events in it or with a cyclic graph.
    pub fn new(job: &'a Job, comm: &'a Comm, step: StepNo) -> Option<StepReplay<'a>> {
        if unreplayable(job).is_some() {
            return None;
        }
        let (g, _) = build_graph(job, comm, &Window::Step(step))?;
        StepReplay::of_graph(job, comm, g, step)
    }

    /// Over the step's graph already built.
    pub fn of_graph(job: &'a Job, comm: &'a Comm, g: Graph, step: StepNo) -> Option<Self> {
        let base = Baseline::of(&g, job, comm, step)?;
        let start = base.at.iter().copied().min()?;
        let measured_ns = base.at.iter().copied().max()?.saturating_sub(start);
        let mut instance_of = FxHashMap::default();
        for (k, (inst, _)) in comm.instances().enumerate() {
            if inst.step != Some(step) {
                continue;
            }
            for m in &inst.members {
                let e = comm.calls.per_rank[m.rank.get()][m.call as usize].event;
                instance_of.insert((m.rank, e), k);
            }
        }
        let mut seen = vec![false; job.ranks.len()];
        for &(r, _) in &g.nodes {
            seen[r.get()] = true;
        }
        let present = (0..seen.len())
            .filter(|&i| seen[i])
            .map(RankIx::of)
            .collect();
        let base_times = base.replay(&g, &base.w);
        let replayed_ns = base_times.iter().copied().max()?.saturating_sub(start);
        let mut s = StepReplay {
            job,
            comm,
            step,
            g,
            base,
            start,
            measured_ns,
            replayed_ns,
            instance_of,
            base_times,
            present,
            base_work: Vec::new(),
            facts: OnceLock::new(),
            keeps: Default::default(),
            rank_edges: Vec::new(),
            transfers: Vec::new(),
        };
        s.index_edges();
        s.base_work = s.work(&s.base.w);
        Some(s)
    }

    /// Fills [`Self::rank_edges`] and [`Self::transfers`].
    fn index_edges(&mut self) {
        // (first, last + 1) per rank; (MAX, 0) while it has none.
        let mut spans = vec![(usize::MAX, 0); self.job.ranks.len()];
        for (k, e) in self.g.edges.iter().enumerate() {
            if Work::of(e.cat).is_some() {
                let r = &mut spans[e.rank.get()];
                *r = (r.0.min(k), r.1.max(k + 1));
            }
            if e.cat == Some(Category::Communication) {
                if let Some(&inst) = self.instance_of.get(&(e.rank, e.event)) {
                    self.transfers.push((k, inst));
                }
            }
        }
        self.rank_edges = spans
            .into_iter()
            .map(|(a, b)| if a > b { 0..0 } else { a..b })
            .collect();
    }

    /// The span of edge indices holding rank `r`'s (position) own work.
    pub fn rank_edges(&self, r: usize) -> std::ops::Range<usize> {
        self.rank_edges.get(r).cloned().unwrap_or(0..0)
    }

    /// Transfer edges of matched calls, each with its instance.
    pub fn transfers(&self) -> &[(usize, usize)] {
        &self.transfers
    }

    /// Each rank's own work under the measured weights ([`Self::work`], computed once).
    pub fn base_work(&self) -> &[[Ns; 2]] {
        &self.base_work
    }

    /// Node times replayed with weights `w`.
    pub fn replay(&self, w: &[Option<Ns>]) -> Vec<Ns> {
        self.base.replay(&self.g, w)
    }

    /// The step time replayed with weights `w` (latest node − the measured start).
    pub fn time_with(&self, w: &[Option<Ns>]) -> Ns {
        self.time_with_in(w, &mut Vec::new())
    }

    /// [`Self::time_with`] replaying into `t` (its memory reused).
    pub fn time_with_in(&self, w: &[Option<Ns>], t: &mut Vec<Ns>) -> Ns {
        self.base.replay_into(&self.g, w, t);
        t.iter()
            .copied()
            .max()
            .unwrap_or(self.start)
            .saturating_sub(self.start)
    }

    /// The clock offset of the rank at position `r` (rank clock + offset = aligned).
    pub fn offset(&self, r: RankIx) -> Ns {
        self.comm.offsets.get(r.get()).map_or(0, |o| o.offset_ns)
    }

    /// How many weights of `w` (edges', then ties') differ from the measured ones.
    pub fn changed(&self, w: &[Option<Ns>]) -> u64 {
        // Two slice passes, not one chained iterator: this runs once per replay over
        // millions of edges, and only the slices' loop is tight.
        let ne = self.base.w.len().min(w.len());
        let edges = w[..ne].iter().zip(&self.base.w).filter(|(a, b)| a != b);
        let ties = w[ne..].iter().zip(&self.base.ties);
        (edges.count() + ties.filter(|(a, t)| **a != Some(t.2)).count()) as u64
    }

    /// Each rank's own work in the step under weights `w`, by position: [device, host].
    pub fn work(&self, w: &[Option<Ns>]) -> Vec<[Ns; 2]> {
        let mut out = vec![[0; 2]; self.job.ranks.len()];
        for (k, e) in self.g.edges.iter().enumerate() {
            let (Some(class), Some(x)) = (Work::of(e.cat), w[k]) else {
                continue;
            };
            out[e.rank.get()][class as usize] += x;
        }
        out
    }

    /// The self-check: every rank's latest node replayed with the measured weights against
    /// its measured time.
    pub fn check(&self) -> ReplayCheck {
        let (at, replayed) = (&self.base.at, &self.base_times);
        // Per rank (by position): its latest measured and replayed node.
        let mut by_rank: Vec<Option<(Ns, Ns)>> = vec![None; self.job.ranks.len()];
        for (v, &(r, _)) in self.g.nodes.iter().enumerate() {
            let x = &mut by_rank[r.get()];
            *x = Some(x.map_or((at[v], replayed[v]), |(m, p)| {
                (m.max(at[v]), p.max(replayed[v]))
            }));
        }
        let ranks: Vec<(RankId, Ns, Ns)> = by_rank
            .into_iter()
            .enumerate()
            .filter_map(|(i, x)| x.map(|(m, p)| (self.job.ranks[i].id, m, p)))
            .collect();
        // Saturating: adversarial clocks never overflow (times are bounded, offsets too).
        let worst = ranks
            .iter()
            .map(|x| x.2.saturating_sub(x.1).saturating_abs())
            .max()
            .unwrap_or(0);
        ReplayCheck {
            step: self.step,
            measured_ns: self.measured_ns,
            replayed_ns: self.replayed_ns,
            ranks,
            error: worst as f64 / self.measured_ns.max(1) as f64,
        }
    }

    /// Ranks (by position) with nodes in the step's graph.
    pub fn ranks(&self) -> &[RankIx] {
        &self.present
    }
}
