//! Where the step begins and ends for each rank (docs/metrics.md, "Replay"): the graph's
//! nodes are its recorded work, but a rank's step window also holds time before its first
//! node (it entered late, or paused) and after its last (Python after the last operator, a
//! stall the profiler does not see). Two nodes after the graph's — the step's start and its
//! end — are tied to each rank's first and last node, weighted by that time, so that the
//! replay measures the report's step and a fix can cut what the window holds.
//!
//! A third node, at the step's start, holds the device queue: a kernel that waited on its
//! stream behind work launched before the step (the device a step behind the host) is tied
//! to it at its measured start, so that no host fix starts it sooner than that work ends.

use crate::analysis::critical_path::Category;
use crate::analysis::critical_path::graph::Graph;
use crate::model::{Job, RankIx, StepNo};
use crate::time::Ns;

/// The step's bound nodes and their ties, as [`add`] made them.
#[derive(Debug, Default)]
pub struct Bounds {
    /// Per rank whose first node is a source: its entry tie's index in the baseline's ties
    /// (from the step's start).
    pub entries: Vec<(RankIx, usize)>,
    /// Per rank: its exit tie's index (from its last node to the step's end).
    pub exits: Vec<(RankIx, usize)>,
}

/// Pushes the step's start and end after the nodes' times `at` and their ties after
/// `ties`: the start at the earliest step window start of the ranks in `g` (host time,
/// aligned by `offsets`), the end at the latest window end; never inside the nodes. Then
/// the device queue's node, at the start, with its [`queue_ties`].
/// `w`: the live edges (a node with a predecessor has no entry tie).
pub fn add(
    g: &Graph,
    job: &Job,
    (offsets, step): (&[Ns], StepNo),
    w: &[Option<Ns>],
    ties: &mut Vec<(u32, u32, Ns)>,
    at: &mut Vec<Ns>,
) -> Option<()> {
    let v = u32::try_from(at.len()).ok()?;
    let ends = first_and_last(g, at);
    let windows = windows(&ends, job, offsets, step);
    let lo = windows.iter().flatten().map(|x| x.0).min();
    let hi = windows.iter().flatten().map(|x| x.1).max();
    let (first, last) = (at.iter().copied().min()?, at.iter().copied().max()?);
    // Exactly: the step's start, end and queue; a doubling of millions of nodes is peak.
    at.reserve_exact(3);
    at.push(lo.map_or(first, |s| s.min(first)));
    at.push(hi.map_or(last, |e| e.max(last)));
    let entries = entry_ties(g, w, ties, at, (v, &ends));
    ties.extend(entries);
    ties.extend(exit_ties(&ends, &windows, v + 1));
    at.push(at[v as usize]);
    ties.push((v, v + 2, 0));
    ties.extend(queue_ties(g, (job, step), w, at, v + 2));
    Some(())
}

/// Ties from the device queue's node `q` (at the step's start) to each kernel that its
/// stream held back behind work from before the step: a device event without a stream
/// predecessor in the graph whose stream's previous event was launched before the step
/// (the device a step behind the host) and ended after its launch returned. Weighted by
/// its measured start, which no fix of this step's host can bring forward (the launch edge
/// carried that wait as launch delay, which a launch fix would have removed).
fn queue_ties(
    g: &Graph,
    (job, step): (&Job, StepNo),
    w: &[Option<Ns>],
    at: &[Ns],
    q: u32,
) -> Vec<(u32, u32, Ns)> {
    let mut streamed = vec![false; g.nodes.len()];
    for (e, x) in g.edges.iter().zip(w) {
        if e.cat == Some(Category::KernelGap) && x.is_some() {
            streamed[e.to as usize] = true;
        }
    }
    let t0 = at[q as usize];
    // Each rank's step start (rank clock), found once rather than per launch.
    let begins: Vec<Option<Ns>> = job
        .ranks
        .iter()
        .map(|r| r.steps.iter().find(|s| s.number == step).map(|s| s.start))
        .collect();
    g.edges
        .iter()
        .zip(w)
        .filter(|(e, x)| e.cat == Some(Category::LaunchOverhead) && x.is_some())
        .filter(|(e, _)| !streamed[e.to as usize])
        .filter(|(e, _)| {
            begins[e.rank.get()].is_some_and(|b| queued(job, (e.rank, b), e.event.index()))
        })
        .map(|(e, _)| (q, e.to, (at[e.to as usize] - t0).max(0)))
        .collect()
}

/// Whether the device event launched by call `launch` of rank `r` waited behind its
/// stream's previous device event, one launched (else begun) before `begin` (the step's
/// start, rank clock): it ended after the call returned.
fn queued(job: &Job, (r, begin): (RankIx, Ns), launch: usize) -> bool {
    let rank = job.rank(r);
    let ev = &rank.events;
    let Some(k) = ev.link.get(launch).and_then(|l| l.get()) else {
        return false;
    };
    let lane = rank.lane_events(ev.lane[k]);
    (lane.start..k)
        .rev()
        .find(|&j| ev.kind[j].is_device_work())
        .is_some_and(|j| {
            let issued = ev.link[j].get().map_or(ev.start[j], |l| ev.start[l]);
            issued < begin && ev.end(j) > ev.end(launch)
        })
}

impl Bounds {
    /// The entry and exit ties among `ties` of the bound nodes `v` (start) and `v + 1`
    /// (the start's tie to the queue's node `v + 2` is neither).
    pub fn of(g: &Graph, ties: &[(u32, u32, Ns)], v: u32) -> Bounds {
        let rank = |u: u32| g.nodes[u as usize].0;
        let mut b = Bounds::default();
        for (j, t) in ties.iter().enumerate() {
            if t.0 == v && t.1 < v {
                b.entries.push((rank(t.1), j));
            } else if t.1 == v + 1 {
                b.exits.push((rank(t.0), j));
            }
        }
        b
    }
}

/// Per rank position: its step window on the aligned clock, when it has nodes (`ends`) and
/// a window.
fn windows(ends: &Ends, job: &Job, offsets: &[Ns], step: StepNo) -> Vec<Option<(Ns, Ns)>> {
    let seen = |i: usize| ends.get(i).is_some_and(|e| e.is_some());
    job.ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let s = r
                .steps
                .iter()
                .find(|s| s.number == step)
                .filter(|_| seen(i))?;
            let off = offsets.get(i).copied().unwrap_or(0);
            Some((s.start.saturating_add(off), s.end.saturating_add(off)))
        })
        .collect()
}

/// Per rank position: its earliest and its latest node (by time, then index).
type Ends = Vec<Option<[(Ns, u32); 2]>>;

/// [`Ends`] of `g`'s nodes at times `at` (one pass: it runs once per replayed step).
fn first_and_last(g: &Graph, at: &[Ns]) -> Ends {
    let ranks = g.nodes.iter().map(|n| n.0.get() + 1).max().unwrap_or(0);
    let mut lo = vec![(Ns::MAX, u32::MAX); ranks];
    let mut hi = vec![(Ns::MIN, 0u32); ranks];
    for (u, (&(r, _), &t)) in g.nodes.iter().zip(at).enumerate() {
        let x = (t, u as u32);
        let r = r.get();
        if x < lo[r] {
            lo[r] = x;
        }
        if x > hi[r] {
            hi[r] = x;
        }
    }
    lo.into_iter()
        .zip(hi)
        .map(|(f, l)| (f.1 != u32::MAX).then_some([f, l]))
        .collect()
}

/// Ties from the step's start `v` (at `at[v]`) to each rank's first node, when that node is
/// a source, weighted by when the rank entered after it: a rank's entry becomes a weight a
/// fix can lower (a rank made late by what it did before the step, a pause before its first
/// operator); with measured weights the replay is unchanged (`v` has no predecessor).
pub fn entry_ties(
    g: &Graph,
    w: &[Option<Ns>],
    ties: &[(u32, u32, Ns)],
    at: &[Ns],
    (v, ends): (u32, &Ends),
) -> Vec<(u32, u32, Ns)> {
    let mut has_pred = vec![false; g.nodes.len()];
    let live = g.edges.iter().zip(w).filter(|x| x.1.is_some());
    for u in live.map(|x| x.0.to).chain(ties.iter().map(|t| t.1)) {
        has_pred[u as usize] = true;
    }
    let t0 = at[v as usize];
    ends.iter()
        .flatten()
        .map(|[f, _]| *f)
        .filter(|&(_, u)| !has_pred[u as usize])
        .map(|(t, u)| (v, u, (t - t0).max(0)))
        .collect()
}

/// Ties from each rank's last node to the step's end `e`, weighted by what its window holds
/// after that node (0 without a window, or when its work ends after the window).
fn exit_ties(ends: &Ends, windows: &[Option<(Ns, Ns)>], e: u32) -> Vec<(u32, u32, Ns)> {
    ends.iter()
        .enumerate()
        .filter_map(|(r, x)| {
            let [_, (t, u)] = (*x)?;
            let end = windows.get(r).copied().flatten().map_or(t, |w| w.1);
            Some((u, e, (end - t).max(0)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::critical_path::Category;
    use crate::analysis::whatif::replay::Baseline;
    use crate::model::EventIx;

    #[test]
    fn each_rank_enters_after_the_step_s_start_and_leaves_before_its_end() {
        // Rank 0: a(0) → b(10); rank 1: c(4) → d(9); rank 2: e(2), reached from a (+2).
        let mut g = Graph::default();
        let (r0, r1, r2, ev) = (RankIx(0), RankIx(1), RankIx(2), EventIx(0));
        let a = g.node(r0, 0);
        let b = g.node(r0, 10);
        let c = g.node(r1, 4);
        let d = g.node(r1, 9);
        let e = g.node(r2, 2);
        g.edge(a, b, 10, Some(Category::Cpu), r0, ev);
        g.edge(c, d, 5, Some(Category::Cpu), r1, ev);
        g.edge(a, e, 2, Some(Category::Communication), r2, ev);
        let w: Vec<Option<Ns>> = g.edges.iter().map(|x| Some(x.w)).collect();
        // The step starts at v (-1): a enters 1 after it, c 5; e has a predecessor.
        let at = [0, 10, 4, 9, 2, -1, 12];
        let (v, end) = (5, 6);
        let ends = first_and_last(&g, &at[..5]);
        assert_eq!(
            entry_ties(&g, &w, &[], &at, (v, &ends)),
            vec![(v, a, 1), (v, c, 5)]
        );
        // Windows end at 12, 9 and (none): b leaves 2 before the end, d and e at it.
        let windows = [Some((-1, 12)), Some((3, 9)), None];
        let exits = exit_ties(&ends, &windows, end);
        assert_eq!(exits, vec![(b, end, 2), (d, end, 0), (e, end, 0)]);
        // With a's edge to e dropped, e enters 3 after v; replayed as measured.
        let mut w2 = w.clone();
        w2[2] = None;
        let mut ties = entry_ties(&g, &w2, &[], &at, (v, &ends));
        assert_eq!(ties, vec![(v, a, 1), (v, c, 5), (v, e, 3)]);
        ties.extend(exits);
        let b0 = Baseline::with(&g, at.to_vec(), w2.clone(), ties.clone()).unwrap();
        assert_eq!(b0.replay(&g, &w2), at.to_vec());
        let bounds = Bounds::of(&g, &ties, v);
        assert_eq!(bounds.entries, vec![(r0, 0), (r1, 1), (r2, 2)]);
        assert_eq!(bounds.exits, vec![(r0, 3), (r1, 4), (r2, 5)]);
        // c entering with a (its tie at 1) ends d at 5; b leaving at once ends the step at 10.
        let mut moved = w2.clone();
        moved.extend([Some(1), Some(1), Some(3), Some(0), Some(0), Some(0)]);
        assert_eq!(b0.replay(&g, &moved), vec![0, 10, 0, 5, 2, -1, 10]);
    }
}
