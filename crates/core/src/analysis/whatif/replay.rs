//! The replay: every node of the step's graph at its earliest time given its predecessors
//! (a node's time = the latest of its predecessors' times plus the edge weights), nodes
//! without a predecessor at their measured time (on the aligned clock). With measured
//! weights the schedule should land every rank's last node where it was measured.

use super::bounds::{self, Bounds};
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::Category;
use crate::analysis::critical_path::graph::Graph;
use crate::model::{EventIx, Job, RankId, RankIx, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashSet;

/// The replay of one step with its measured durations, against the measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayCheck {
    /// The step.
    pub step: StepNo,
    /// The step time measured on the graph: the latest node minus the earliest, over ranks.
    pub measured_ns: Ns,
    /// The same, replayed.
    pub replayed_ns: Ns,
    /// Per rank (in rank order): its measured and its replayed end (aligned clock).
    pub ranks: Vec<(RankId, Ns, Ns)>,
    /// The largest |replayed − measured| rank end over the step time: the replay error.
    pub error: f64,
}

/// Node times of `g` on the aligned clock: its own time plus its rank's offset.
pub fn measured(g: &Graph, offsets: &[Ns]) -> Vec<Ns> {
    g.nodes
        .iter()
        .map(|&(r, t)| t.saturating_add(offsets.get(r.get()).copied().unwrap_or(0)))
        .collect()
}

/// The measured weight of each edge (`None`: not a dependency in a replay): its own, but for
/// a cross-rank (collective) edge the member's own transfer — its end minus the last arrival
/// (`at`: measured node times), where the critical path puts the last arriver's duration,
/// which a member that ends sooner would be made to wait for. A point-to-point transfer
/// whose direction is known depends only on its send: the edge from a receive that arrived
/// last to the send's end is dropped (a send may complete before its receive is posted).
pub fn weights(g: &Graph, job: &Job, comm: &Comm, at: &[Ns]) -> Vec<Option<Ns>> {
    let receives = receive_calls(job, comm);
    let cross = |e: &crate::analysis::critical_path::graph::Edge| {
        g.nodes[e.from as usize].0 != g.nodes[e.to as usize].0
    };
    let mut w: Vec<Option<Ns>> = g
        .edges
        .iter()
        .map(|e| {
            let (from, to) = (e.from as usize, e.to as usize);
            if !cross(e) {
                Some(e.w)
            } else if receives.contains(&(e.rank, e.event)) {
                None
            } else {
                Some(at[to].saturating_sub(at[from]).max(0))
            }
        })
        .collect();
    // A stream gap after which the kernel was launched (its launch began after the
    // previous kernel ended) is the launch's lateness, not the device's: the launch edge
    // carries it, and the gap weighs 0, so that an earlier launch starts the kernel sooner.
    let mut launched_at: Vec<Option<Ns>> = vec![None; g.nodes.len()];
    for e in &g.edges {
        if e.cat == Some(Category::LaunchOverhead) {
            let t = &mut launched_at[e.to as usize];
            *t = Some(t.map_or(at[e.from as usize], |x| x.max(at[e.from as usize])));
        }
    }
    for (k, e) in g.edges.iter().enumerate() {
        let late = launched_at[e.to as usize].is_some_and(|l| l >= at[e.from as usize]);
        if e.cat == Some(Category::KernelGap) && late {
            w[k] = Some(0);
        }
    }
    // A joined member's wait for the last arriver is the join's to carry: its own wait
    // stretch weighs 0, so that an earlier last arrival ends it sooner. (The stretch is
    // followed by its transfer edge, whose end the join reaches.)
    let mut joined = vec![false; g.nodes.len()];
    for (k, e) in g.edges.iter().enumerate() {
        if cross(e) && w[k].is_some() {
            joined[e.to as usize] = true;
        }
    }
    for &k in g.waits.values() {
        if g.edges.get(k + 1).is_some_and(|t| joined[t.to as usize]) {
            w[k] = Some(0);
        }
    }
    w
}

/// Edges that tie each node without a predecessor (a thread's first op in the window, a
/// stream's first kernel) to the latest earlier node of its rank, weighted by the measured
/// gap: a thread starts after what its rank did just before (the backward thread after the
/// main thread's `backward()` call), so a fix upstream moves it too. The rank's first node
/// stays a source. `w`: the weights in use (a `None` edge is no predecessor).
pub fn tie_sources(g: &Graph, w: &[Option<Ns>], at: &[Ns]) -> Vec<(u32, u32, Ns)> {
    let mut has_pred = vec![false; g.nodes.len()];
    for (k, e) in g.edges.iter().enumerate() {
        if w[k].is_some() {
            has_pred[e.to as usize] = true;
        }
    }
    // Sources by (rank, time, node). Each node is a candidate for the sources of its rank
    // after it: kept at the first of them, then carried forward (a running max).
    let key = |v: u32| (g.nodes[v as usize].0, at[v as usize], v);
    let mut sources: Vec<u32> = (0..g.nodes.len() as u32)
        .filter(|&v| !has_pred[v as usize])
        .collect();
    sources.sort_by_key(|&v| key(v));
    // Per rank (position): its sources' range in `sources`.
    let ranks = g.nodes.iter().map(|n| n.0.get() + 1).max().unwrap_or(0);
    let mut range = vec![(0usize, 0usize); ranks];
    for (j, &v) in sources.iter().enumerate() {
        let r = &mut range[g.nodes[v as usize].0.get()];
        *r = if r.1 == 0 { (j, j + 1) } else { (r.0, j + 1) };
    }
    let mut best: Vec<Option<u32>> = vec![None; sources.len()];
    for (u, &(r, _)) in g.nodes.iter().enumerate() {
        let (lo, hi) = range[r.get()];
        let j = lo + sources[lo..hi].partition_point(|&s| (at[s as usize], s) <= (at[u], u as u32));
        if j < hi && best[j].is_none_or(|b| key(b) < key(u as u32)) {
            best[j] = Some(u as u32);
        }
    }
    let mut out = Vec::new();
    for j in 0..sources.len() {
        let v = sources[j];
        if j > 0 && key(sources[j - 1]).0 == key(v).0 {
            // The latest earlier node may precede an earlier source of the rank.
            let prev = best[j - 1];
            if prev.is_some_and(|p| best[j].is_none_or(|b| key(b) < key(p))) {
                best[j] = prev;
            }
        }
        if let Some(u) = best[j] {
            let gap = at[v as usize] - at[u as usize];
            if gap > 0 {
                out.push((u, v, gap));
            }
        }
    }
    out
}

/// The receiving members' calls of directed point-to-point instances.
fn receive_calls(job: &Job, comm: &Comm) -> FxHashSet<(RankIx, EventIx)> {
    let mut out = FxHashSet::default();
    for (inst, _) in comm.instances() {
        let Some(p) = inst.p2p else { continue };
        for m in &inst.members {
            let call = &comm.calls.per_rank[m.rank.get()][m.call as usize];
            if job.rank(m.rank).id == p.dst {
                out.insert((m.rank, call.event));
            }
        }
    }
    out
}

/// A topological order of `n` nodes whose incoming sources are `source[first[v]..first[v +
/// 1]]` (Kahn's, successors as one array); `None` with a cycle.
/// Incoming edges per node, compressed: (first index per node, n + 1 of them; each edge's
/// index `k`; each edge's source), from `(k, (from, to))`.
fn csr(
    n: usize,
    edges: impl Iterator<Item = (usize, (u32, u32))> + Clone,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut first = vec![0u32; n + 1];
    for (_, (_, to)) in edges.clone() {
        first[to as usize + 1] += 1;
    }
    for v in 0..n {
        first[v + 1] += first[v];
    }
    let mut fill = first.clone();
    let mut incoming = vec![0u32; first[n] as usize];
    let mut source = vec![0u32; first[n] as usize];
    for (k, (from, to)) in edges {
        incoming[fill[to as usize] as usize] = k as u32;
        source[fill[to as usize] as usize] = from;
        fill[to as usize] += 1;
    }
    (first, incoming, source)
}

/// Kahn's order of the nodes; on a cycle, which nodes it could not order (those on a cycle
/// and after one).
fn topological(n: usize, first: &[u32], source: &[u32]) -> Result<Vec<u32>, Vec<bool>> {
    let mut out_first = vec![0u32; n + 1];
    for &u in source {
        out_first[u as usize + 1] += 1;
    }
    for v in 0..n {
        out_first[v + 1] += out_first[v];
    }
    let mut fill = out_first.clone();
    let mut succ = vec![0u32; source.len()];
    for v in 0..n {
        for &u in &source[first[v] as usize..first[v + 1] as usize] {
            succ[fill[u as usize] as usize] = v as u32;
            fill[u as usize] += 1;
        }
    }
    let mut indeg: Vec<u32> = (0..n).map(|v| first[v + 1] - first[v]).collect();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = stack.pop() {
        order.push(v);
        let v = v as usize;
        for &t in &succ[out_first[v] as usize..out_first[v + 1] as usize] {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                stack.push(t);
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err(indeg.iter().map(|&d| d > 0).collect())
    }
}

/// What every replay of a graph starts from: its nodes' measured aligned times, the measured
/// weights (a fix changes a copy of them), the ties of threads' first ops, and one
/// topological order with each node's incoming edges, so that a replay is one pass.
pub struct Baseline {
    /// Measured node times on the aligned clock.
    pub at: Vec<Ns>,
    /// Measured edge weights (`None`: no dependency in a replay).
    pub w: Vec<Option<Ns>>,
    /// Ties of gaps to the threads that filled them (`threads.rs`), of sources to their
    /// rank's earlier nodes ([`tie_sources`]), then the ranks' entries and exits
    /// ([`bounds`](super::bounds)).
    pub ties: Vec<(u32, u32, Ns)>,
    /// Which ties are the ranks' entries and exits (`at`'s last two nodes are the step's
    /// start and end), so that a fix can move when a rank enters or leaves the step.
    pub bounds: Bounds,
    /// Nodes in a topological order of the live edges and ties.
    order: Vec<u32>,
    /// Incoming edges per node (CSR: node v's are `incoming[first[v]..first[v + 1]]`; an
    /// index ≥ the graph's edge count is a tie), and each one's source node (beside it, so
    /// that a replay reads no edge).
    first: Vec<u32>,
    incoming: Vec<u32>,
    source: Vec<u32>,
}

impl Baseline {
    /// The baseline of `g`, the graph of `job`'s step `step`; `None` when its live edges
    /// have a cycle (no schedule exists). Its nodes' times are followed by the step's start
    /// and end.
    pub fn of(g: &Graph, job: &Job, comm: &Comm, step: StepNo) -> Option<Baseline> {
        let offsets: Vec<Ns> = (0..job.ranks.len())
            .map(|i| comm.offsets.get(i).map_or(0, |o| o.offset_ns))
            .collect();
        let mut at = measured(g, &offsets);
        let mut w = weights(g, job, comm, &at);
        let mut ties = super::threads::tie_threads(g, job, &mut w, &at);
        ties.extend(tie_sources(g, &w, &at));
        let v = u32::try_from(at.len()).ok()?;
        bounds::add(g, job, (&offsets, step), &w, &mut ties, &mut at)?;
        let mut b = Baseline::with(g, at, w, ties)?;
        b.bounds = Bounds::of(g, &b.ties, v);
        Some(b)
    }

    /// The baseline of `g` from its measured node times `at`, weights `w` and `ties`;
    /// `None` when the graph's own live edges have a cycle. Ties that close a cycle with
    /// the graph's edges (a launch recorded after its kernel started: host and device clocks
    /// apart) are dropped — those between nodes Kahn's algorithm could not order — and the
    /// order is taken again: a tie only carries what a rank did before.
    pub(super) fn with(
        g: &Graph,
        at: Vec<Ns>,
        w: Vec<Option<Ns>>,
        mut ties: Vec<(u32, u32, Ns)>,
    ) -> Option<Baseline> {
        let n = at.len();
        let ne = g.edges.len();
        loop {
            let edges = (0..ne)
                .filter_map(|k| Some((k, w[k].map(|_| (g.edges[k].from, g.edges[k].to))?)))
                .chain(
                    ties.iter()
                        .enumerate()
                        .map(|(j, &(a, b, _))| (ne + j, (a, b))),
                );
            let (first, incoming, source) = csr(n, edges);
            match topological(n, &first, &source) {
                Ok(order) => {
                    return Some(Baseline {
                        at,
                        w,
                        ties,
                        bounds: Bounds::default(),
                        order,
                        first,
                        incoming,
                        source,
                    });
                }
                Err(unordered) => {
                    let before = ties.len();
                    ties.retain(|&(a, b, _)| !(unordered[a as usize] && unordered[b as usize]));
                    if ties.len() == before {
                        return None;
                    }
                }
            }
        }
    }

    /// `g` replayed with weights `w` (the measured ones, or a fix's, which may only lower,
    /// raise or drop the measured edges): every node at the latest of its live predecessors
    /// plus the edge's weight, a node left without one at its measured time.
    pub fn replay(&self, g: &Graph, w: &[Option<Ns>]) -> Vec<Ns> {
        let mut t = Vec::new();
        self.replay_into(g, w, &mut t);
        t
    }

    /// [`Self::replay`] into `t`, reusing its memory.
    pub fn replay_into(&self, g: &Graph, w: &[Option<Ns>], t: &mut Vec<Ns>) {
        let ne = g.edges.len();
        t.clear();
        t.resize(self.at.len(), 0);
        for &v in &self.order {
            let v = v as usize;
            let (a, b) = (self.first[v] as usize, self.first[v + 1] as usize);
            let mut best: Option<Ns> = None;
            for (&k, &from) in self.incoming[a..b].iter().zip(&self.source[a..b]) {
                let k = k as usize;
                let x = match w.get(k) {
                    Some(&Some(x)) => x,
                    Some(None) => continue,
                    None => self.ties[k - ne].2,
                };
                let c = t[from as usize].saturating_add(x);
                best = Some(best.map_or(c, |b: Ns| b.max(c)));
            }
            t[v] = best.unwrap_or(self.at[v]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_source_is_tied_to_its_rank_s_latest_earlier_node() {
        // Rank 0: a(0) → b(10); sources c(5) and d(20). Rank 1: sources e(3) and f(3).
        let mut g = Graph::default();
        let (r0, r1, ev) = (RankIx(0), RankIx(1), EventIx(0));
        let a = g.node(r0, 0);
        let b = g.node(r0, 10);
        let c = g.node(r0, 5);
        let d = g.node(r0, 20);
        g.node(r1, 3);
        g.node(r1, 3);
        g.edge(a, b, 10, Some(Category::Cpu), r0, ev);
        let w: Vec<Option<Ns>> = vec![Some(10)];
        let at = [0, 10, 5, 20, 3, 3];
        // c after a (b is later), d after b; a and e open their ranks; f is at e's time.
        assert_eq!(tie_sources(&g, &w, &at), vec![(a, c, 5), (b, d, 10)]);
        // Without the edge, b is a source too: tied to c, the node just before it.
        assert_eq!(
            tie_sources(&g, &[None], &at),
            vec![(a, c, 5), (c, b, 5), (b, d, 10)]
        );
    }

    /// The replay of `g` with weights `w`, sources at `anchor` (no ties).
    fn schedule(g: &Graph, w: &[Option<Ns>], anchor: &[Ns]) -> Option<Vec<Ns>> {
        let b = Baseline::with(g, anchor.to_vec(), w.to_vec(), Vec::new())?;
        Some(b.replay(g, w))
    }

    #[test]
    fn nodes_start_at_their_latest_predecessor_plus_its_edge() {
        // Rank 0: a(0) → b (+10) → c (+5); rank 1: d(3) → e (+4); d → c (+1, cross).
        // c = max(10 + 5, 3 + 1) = 15; e = 7. With b's edge shortened to 2: c = max(7, 4).
        let mut g = Graph::default();
        let (r0, r1) = (RankIx(0), RankIx(1));
        let a = g.node(r0, 0);
        let b = g.node(r0, 10);
        let c = g.node(r0, 15);
        let d = g.node(r1, 3);
        let e = g.node(r1, 7);
        let ev = EventIx(0);
        g.edge(a, b, 10, Some(Category::Cpu), r0, ev);
        g.edge(b, c, 5, Some(Category::Cpu), r0, ev);
        g.edge(d, e, 4, Some(Category::Cpu), r1, ev);
        g.edge(d, c, 1, Some(Category::Communication), r1, ev);
        let anchor = [0, 10, 15, 3, 7];
        let w: Vec<Option<Ns>> = g.edges.iter().map(|x| Some(x.w)).collect();
        assert_eq!(schedule(&g, &w, &anchor), Some(vec![0, 10, 15, 3, 7]));
        let mut faster = w.clone();
        faster[0] = Some(2);
        assert_eq!(schedule(&g, &faster, &anchor), Some(vec![0, 2, 7, 3, 7]));
        // A dropped edge constrains nothing: d → c gone, and d's late start cannot hold c.
        let mut late = anchor;
        late[3] = 20;
        let mut dropped = faster.clone();
        assert_eq!(schedule(&g, &dropped, &late).unwrap()[2], 21);
        dropped[3] = None;
        assert_eq!(schedule(&g, &dropped, &late).unwrap()[2], 7);
        // A cycle has no schedule.
        g.edge(c, a, 0, None, r0, ev);
        let w: Vec<Option<Ns>> = g.edges.iter().map(|x| Some(x.w)).collect();
        assert_eq!(schedule(&g, &w, &[0, 10, 15, 3, 7]), None);
    }

    #[test]
    fn a_tie_against_the_graph_is_dropped_not_the_replay() {
        // Rank 0: a launch L recorded at 12 after its kernel K started at 10 (host and device
        // clocks apart): L → K weighs 0. K opened the stream, L the thread: tie_sources ties
        // L (a source, later) to K (the rank's latest earlier node) — a cycle with L → K.
        // The tie goes; the rest replays: K at L's 12, its end E at 12 + 5.
        let mut g = Graph::default();
        let (r0, ev) = (RankIx(0), EventIx(0));
        let k = g.node(r0, 10);
        let e = g.node(r0, 15);
        let l = g.node(r0, 12);
        g.edge(l, k, 0, Some(Category::LaunchOverhead), r0, ev);
        g.edge(k, e, 5, Some(Category::GpuCompute), r0, ev);
        let w: Vec<Option<Ns>> = vec![Some(0), Some(5)];
        let at = vec![10, 15, 12];
        let ties = vec![(k, l, 2)];
        let b = Baseline::with(&g, at, w.clone(), ties).expect("a schedule");
        assert!(b.ties.is_empty());
        assert_eq!(b.replay(&g, &w), vec![12, 17, 12]);
        // A cycle of the graph's own edges still has none.
        g.edge(e, l, 0, None, r0, ev);
        let w: Vec<Option<Ns>> = vec![Some(0), Some(5), Some(0)];
        assert!(Baseline::with(&g, vec![10, 15, 12], w, Vec::new()).is_none());
    }
}
