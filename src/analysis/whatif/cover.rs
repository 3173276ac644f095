//! Host stalls a fix removes (docs/metrics.md, "Replay"): where on each host thread a kind
//! of stall holds the thread — the stall's own calls with everything nested under them, and
//! for a graph re-capture the whole region from `cudaStreamBeginCapture` to the end of its
//! `cudaStreamEndCapture`.

use crate::model::{GraphCall, Job, Kind, RankIx, Role};
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

    /// Whether `[s, e]` on rank `rank`'s lane `lane` lies within one of the intervals.
    pub fn holds(&self, rank: RankIx, lane: u16, s: Ns, e: Ns) -> bool {
        let Some(v) = self.per_rank.get(rank.get()).and_then(|m| m.get(&lane)) else {
            return false;
        };
        let k = v.partition_point(|&(a, _)| a <= s);
        k > 0 && v[k - 1].1 >= e
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
        assert!(c.holds(r, 2, 12, 30));
        assert!(c.holds(r, 2, 10, 10));
        assert!(!c.holds(r, 2, 25, 41));
        assert!(!c.holds(r, 2, 6, 8));
        assert!(!c.holds(r, 1, 12, 13));
        assert!(!c.is_empty());
    }
}
