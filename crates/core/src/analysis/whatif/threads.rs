//! Host threads that hand the step to each other (docs/metrics.md, "Replay"): the main
//! thread blocked in `backward()` while the autograd thread runs it, the autograd thread idle
//! while the main thread runs the next micro-batch's forward. A thread's gap that another
//! thread of the rank filled with its work is a wait for that thread, not time of its own:
//! the replay keeps only the part of the gap before the other thread began, and ties the
//! gap's end to the other thread's last node in it — so that a faster backward ends the
//! main thread's wait sooner.

use crate::analysis::critical_path::Category;
use crate::analysis::critical_path::graph::Graph;
use crate::model::Job;
use crate::time::Ns;

/// A host thread's busy interval (overlapping ops merged), with its first and last node.
#[derive(Debug, Clone, Copy)]
struct Busy {
    start: Ns,
    end: Ns,
    last: u32,
}

/// Ties of gaps to the threads that filled them, `(from, to, weight)`; each such gap edge's
/// weight in `w` becomes the part before the other thread began. A gap counts as filled by
/// a thread that is idle at the gap's start and end and busy at least half of the gap in
/// between (a thread of short periodic ops is not a hand-off). `at`: measured node times.
pub(super) fn tie_threads(
    g: &Graph,
    job: &Job,
    w: &mut [Option<Ns>],
    at: &[Ns],
) -> Vec<(u32, u32, Ns)> {
    let lane_of = |k: usize| {
        let e = &g.edges[k];
        (e.rank.get(), job.rank(e.rank).events.lane[e.event.index()])
    };
    let busy = busy_lanes(g, at, &lane_of);
    let mut ties = Vec::new();
    for (k, e) in g.edges.iter().enumerate() {
        if e.cat != Some(Category::HostGap) || w[k].is_none() {
            continue;
        }
        let (r, x) = lane_of(k);
        let Some(lanes) = busy.get(r).filter(|l| l.len() > 1) else {
            continue;
        };
        let (u, v) = (at[e.from as usize], at[e.to as usize]);
        let best = lanes
            .iter()
            .filter(|(y, _)| *y != x)
            .filter_map(|(_, b)| filled(b, u, v))
            .max_by_key(|f| f.0);
        if let Some((_, first, last)) = best {
            w[k] = Some(first.start - u);
            ties.push((last.last, e.to, v - last.end));
        }
    }
    ties
}

/// Per rank (by position): each host lane's busy intervals in time order, from its op edges.
type Lanes = Vec<(u16, Vec<Busy>)>;

/// [`Lanes`] of every rank of the graph.
fn busy_lanes(g: &Graph, at: &[Ns], lane_of: &dyn Fn(usize) -> (usize, u16)) -> Vec<Lanes> {
    let mut spans: Vec<Lanes> = Vec::new();
    for (k, e) in g.edges.iter().enumerate() {
        if e.cat != Some(Category::Cpu) {
            continue;
        }
        let b = Busy {
            start: at[e.from as usize],
            end: at[e.to as usize],
            last: e.to,
        };
        let (r, lane) = lane_of(k);
        if spans.len() <= r {
            spans.resize_with(r + 1, Vec::new);
        }
        // A rank has a few host threads: a scan finds its lane.
        match spans[r].iter_mut().find(|(l, _)| *l == lane) {
            Some((_, v)) => v.push(b),
            None => spans[r].push((lane, vec![b])),
        }
    }
    for (_, v) in spans.iter_mut().flatten() {
        if !v.is_sorted_by_key(|b| (b.start, b.end)) {
            v.sort_unstable_by_key(|b| (b.start, b.end));
        }
        let mut merged: Vec<Busy> = Vec::with_capacity(v.len());
        for &b in v.iter() {
            match merged.last_mut() {
                Some(m) if b.start <= m.end => {
                    if b.end > m.end {
                        m.end = b.end;
                        m.last = b.last;
                    }
                }
                _ => merged.push(b),
            }
        }
        *v = merged;
    }
    spans
}

/// Whether `lane` filled the gap `(u, v)`: idle at both ends, busy at least half of it in
/// between; its busy time there, first and last interval.
fn filled(lane: &[Busy], u: Ns, v: Ns) -> Option<(Ns, Busy, Busy)> {
    let inside = |t: Ns| {
        let j = lane.partition_point(|b| b.start < t);
        j > 0 && lane[j - 1].end > t
    };
    if v <= u || inside(u) || inside(v) {
        return None;
    }
    let lo = lane.partition_point(|b| b.start < u);
    let hi = lane.partition_point(|b| b.start < v);
    let within = lane.get(lo..hi).filter(|s| !s.is_empty())?;
    let busy: Ns = within.iter().map(|b| b.end - b.start).sum();
    (busy.saturating_mul(2) >= v - u).then(|| (busy, within[0], within[within.len() - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(s: Ns, e: Ns) -> Busy {
        Busy {
            start: s,
            end: e,
            last: e as u32,
        }
    }

    #[test]
    fn a_thread_that_ran_inside_the_gap_filled_it() {
        // The autograd thread ran 30..90 and 92..100 inside main's gap 20..105.
        let lane = [busy(0, 10), busy(30, 90), busy(92, 100), busy(200, 210)];
        let (b, first, last) = filled(&lane, 20, 105).unwrap();
        assert_eq!((b, first.start, last.end), (68, 30, 100));
        // Busy at the gap's start: not a hand-off.
        assert!(filled(&lane, 5, 105).is_none());
        // Busy under half the gap: a side thread's short ops.
        assert!(filled(&[busy(30, 40), busy(60, 70)], 20, 105).is_none());
        assert!(filled(&lane, 105, 105).is_none());
    }
}
