//! Host stalls a fix removes (docs/metrics.md, "Replay"): where on each host thread a kind
//! of stall holds the thread — the stall's own calls with everything nested under them, and
//! for a graph re-capture the whole region from `cudaStreamBeginCapture` to the end of its
//! `cudaStreamEndCapture`.

use crate::model::{GraphCall, Job, Kind, RankId, RankIx, Role, StepNo};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// A kind of host stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stall {
    /// Data-loader ranges (`enumerate(DataLoader)#…`): batches not ready.
    DataLoader,
    /// Garbage-collection pauses.
    Gc,
    /// Allocator calls (`cudaMalloc`, `cudaFree`): the caching allocator bypassed.
    Allocator,
    /// A CUDA graph re-captured: the capture region.
    GraphCapture,
    /// Operators compiled at run time (Ascend `aclopCompileAndExecute`).
    OnlineCompile,
}

impl Stall {
    /// Every kind.
    pub const ALL: [Stall; 5] = [
        Stall::DataLoader,
        Stall::Gc,
        Stall::Allocator,
        Stall::GraphCapture,
        Stall::OnlineCompile,
    ];

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Stall::DataLoader => "dataloader",
            Stall::Gc => "gc",
            Stall::Allocator => "allocator",
            Stall::GraphCapture => "graph_capture",
            Stall::OnlineCompile => "online_compile",
        }
    }

    /// Whether a call of this role is one of this stall's (a capture region's begin).
    fn opens(self, r: &Role) -> bool {
        match self {
            Stall::DataLoader => r.data_loader,
            Stall::Gc => r.gc,
            Stall::Allocator => r.allocator,
            Stall::GraphCapture => r.graph == Some(GraphCall::BeginCapture),
            Stall::OnlineCompile => r.online_compile,
        }
    }
}

/// Per rank (by position), per host lane: the stall's intervals, sorted and merged.
#[derive(Debug, Default)]
pub struct Cover {
    per_rank: Vec<FxHashMap<u16, Vec<(Ns, Ns)>>>,
}

impl Cover {
    /// Where `stall` holds each host thread of the job.
    pub fn of(job: &Job, stall: Stall) -> Cover {
        let per_rank = job
            .ranks
            .par_iter()
            .map(|r| {
                let ev = &r.events;
                let mut lanes: FxHashMap<u16, Vec<(Ns, Ns)>> = FxHashMap::default();
                for l in 0..r.lanes.len() as u16 {
                    let mut v: Vec<(Ns, Ns)> = Vec::new();
                    let mut open: Option<Ns> = None;
                    for i in r.lane_events(l) {
                        if !matches!(
                            ev.kind[i],
                            Kind::HostOp | Kind::Launch | Kind::Annotation | Kind::Other
                        ) {
                            continue;
                        }
                        let role = job.role(ev.name[i]);
                        if stall == Stall::GraphCapture {
                            match role.graph {
                                Some(GraphCall::BeginCapture) => open = open.or(Some(ev.start[i])),
                                Some(GraphCall::EndCapture) => {
                                    if let Some(s) = open.take() {
                                        v.push((s, ev.end(i)));
                                    }
                                }
                                _ => {}
                            }
                        } else if stall.opens(role) {
                            v.push((ev.start[i], ev.end(i)));
                        }
                    }
                    if !v.is_empty() {
                        lanes.insert(l, merge(v));
                    }
                }
                lanes
            })
            .collect();
        Cover { per_rank }
    }

    /// What an interval on `ranks` in `steps` takes once its stall is fixed: the median
    /// interval of the other rank-steps (the job's typical call) when the stalled ones'
    /// median is at least twice that — one rank's or step's loader is slow; else 0 — the
    /// calls are as slow everywhere, and the fix hides them. Intervals outside the steps
    /// (loading before the first) count for neither.
    pub fn floor(&self, job: &Job, ranks: &[RankId], steps: &[StepNo]) -> Ns {
        let (mut hit, mut other): (Vec<Ns>, Vec<Ns>) = (Vec::new(), Vec::new());
        for (r, lanes) in self.per_rank.iter().enumerate() {
            let rank = &job.ranks[r];
            for &(s, e) in lanes.values().flatten() {
                let Some(step) = rank.steps.iter().find(|x| x.start <= s && s < x.end) else {
                    continue;
                };
                let stalled = ranks.contains(&rank.id) && steps.contains(&step.number);
                if stalled { &mut hit } else { &mut other }.push(e - s);
            }
        }
        let median = |v: &mut Vec<Ns>| {
            v.sort_unstable();
            v.get(v.len() / 2).copied()
        };
        match (median(&mut hit), median(&mut other)) {
            (Some(h), Some(o)) if h >= o.saturating_mul(2) => o,
            _ => 0,
        }
    }

    /// The length of the interval `[s, e]` on rank `rank`'s lane `lane` lies within.
    pub fn holds(&self, rank: RankIx, lane: u16, s: Ns, e: Ns) -> Option<Ns> {
        let v = self.per_rank.get(rank.get()).and_then(|m| m.get(&lane))?;
        let k = v.partition_point(|&(a, _)| a <= s);
        let (a, b) = *v.get(k.checked_sub(1)?)?;
        (b >= e).then_some(b - a)
    }

    /// Whether the stall occurs anywhere.
    pub fn is_empty(&self) -> bool {
        self.per_rank.iter().all(|m| m.is_empty())
    }
}

/// Sorted, overlapping intervals merged.
fn merge(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.sort_unstable();
    let mut out: Vec<(Ns, Ns)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_intervals_hold_what_lies_inside_one() {
        let v = merge(vec![(10, 20), (0, 5), (15, 30), (40, 50)]);
        assert_eq!(v, vec![(0, 5), (10, 30), (40, 50)]);
        let mut per_rank = vec![FxHashMap::default()];
        per_rank[0].insert(2, v);
        let c = Cover { per_rank };
        let r = RankIx::of(0);
        assert_eq!(c.holds(r, 2, 12, 30), Some(20));
        assert_eq!(c.holds(r, 2, 10, 10), Some(20));
        assert_eq!(c.holds(r, 2, 25, 41), None);
        assert_eq!(c.holds(r, 2, 6, 8), None);
        assert_eq!(c.holds(r, 1, 12, 13), None);
        assert!(!c.is_empty());
    }

    /// Two ranks, steps 1 and 2 of 100 ns each; loader calls (lane 0) of 40 ns on rank 1 in
    /// both steps and on rank 0 in step 2, 4 ns on rank 0 in step 1, and one of 90 ns before
    /// the first step (counts for neither side).
    #[test]
    fn a_slow_rank_s_loader_is_fixed_to_the_typical_call_elsewhere() {
        use crate::model::{HostStep, Rank};
        let rank = |id: u32| Rank {
            id: RankId(id),
            steps: [(1, 100), (2, 200)]
                .map(|(n, s)| HostStep {
                    number: StepNo(n),
                    start: s,
                    end: s + 100,
                    synthetic: false,
                })
                .to_vec(),
            ..Rank::default()
        };
        let job = Job {
            ranks: vec![rank(0), rank(1)],
            ..Job::default()
        };
        let lanes = |v: Vec<(Ns, Ns)>| FxHashMap::from_iter([(0u16, v)]);
        let c = Cover {
            per_rank: vec![
                lanes(vec![(0, 90), (100, 104), (200, 240)]),
                lanes(vec![(100, 140), (200, 240)]),
            ],
        };
        let (r1, both) = ([RankId(1)], [StepNo(1), StepNo(2)]);
        // Rank 1 stalls in both steps (median 40) against rank 0's calls (4, 40: median
        // 40): not twice as slow — the loader is as slow everywhere, and the fix hides it.
        assert_eq!(c.floor(&job, &r1, &both), 0);
        // Only step 1 stalls on rank 1 (40) against 4, 40, 40 elsewhere (median 40): same.
        assert_eq!(c.floor(&job, &r1, &[StepNo(1)]), 0);
        // With rank 1's step-2 call at 4 ns, the other calls of rank 1's step 1 are 4, 40
        // and 4 (median 4): its 40 is a stall, fixed to 4. Rank 0's step 2 (40) likewise.
        let mut c = c;
        c.per_rank[1] = lanes(vec![(100, 140), (200, 204)]);
        assert_eq!(c.floor(&job, &r1, &[StepNo(1)]), 4);
        assert_eq!(c.floor(&job, &[RankId(0)], &[StepNo(2)]), 4);
    }
}
