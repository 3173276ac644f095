//! The dependency graph of a window and its longest path. A value of its own, so that a
//! what-if analysis can re-weight edges (a faster kernel, a rank that no longer waits) and
//! ask for the longest path again.

use super::Category;
use crate::model::{EventIx, RankIx};
use crate::time::Ns;
use std::collections::BTreeMap;

/// One weighted dependency.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    /// Source node.
    pub from: u32,
    /// Target node.
    pub to: u32,
    /// Weight (never negative).
    pub w: Ns,
    /// What the time is spent on; `None` for pure ordering edges.
    pub cat: Option<Category>,
    /// The rank of the event that spends it.
    pub rank: RankIx,
    /// The event that spends it.
    pub event: EventIx,
}

/// Event → its (start, end) nodes in one rank's graph: dense over the rank's events (the
/// build looks one up per edge; a hash map was most of its time). A big rank's slots are
/// pages fresh from the kernel, not the allocator's (which may reuse and clear a whole freed
/// block), so only the pages of the window's events are ever touched; a small rank's come
/// from the heap, since a mapping per build costs page faults and, when it is unmapped, a
/// TLB flush on every core (most of the graph builds' time on a 1 024-rank job). The events
/// set are kept in order.
#[derive(Debug, Default)]
pub struct EventNodes {
    /// Per event: `(start + 1) << 32 | end`, 0 where unset.
    at: Slots,
    /// The events set, in the order they were.
    set: Vec<u32>,
}

/// The most slots taken from the heap (256 KiB): below glibc's smallest mapping threshold,
/// so the allocator hands them out of its arenas, where clearing them is cheaper than mapping.
const HEAP_SLOTS: usize = 32 << 10;

/// Zeroed slots: mapped pages, or the heap's for a small rank or where the kernel refuses a
/// mapping.
#[derive(Debug, Default)]
enum Slots {
    #[default]
    None,
    Mapped(memmap2::MmapMut),
    Heap(Vec<u64>),
}

impl EventNodes {
    /// Room for a rank of `events` events, none set.
    pub fn new(events: usize) -> EventNodes {
        let at = match events {
            0 => Slots::None,
            n if n <= HEAP_SLOTS => Slots::Heap(vec![0; n]),
            n => match memmap2::MmapMut::map_anon(n.saturating_mul(8)) {
                Ok(m) => Slots::Mapped(m),
                Err(_) => Slots::Heap(vec![0; n]),
            },
        };
        EventNodes {
            at,
            set: Vec::new(),
        }
    }

    fn slots(&self) -> &[u64] {
        match &self.at {
            Slots::None => &[],
            Slots::Mapped(m) => bytemuck::cast_slice(m),
            Slots::Heap(v) => v,
        }
    }

    /// Sets event `i`'s nodes (the last set wins).
    pub fn insert(&mut self, i: u32, (start, end): (u32, u32)) {
        let slots: &mut [u64] = match &mut self.at {
            Slots::None => &mut [],
            Slots::Mapped(m) => bytemuck::cast_slice_mut(m),
            Slots::Heap(v) => v,
        };
        let Some(slot) = slots.get_mut(i as usize) else {
            return;
        };
        if *slot == 0 {
            self.set.push(i);
        }
        *slot = ((u64::from(start) + 1) << 32) | u64::from(end);
    }

    /// Event `i`'s nodes, when set.
    pub fn get(&self, i: u32) -> Option<(u32, u32)> {
        let x = *self.slots().get(i as usize)?;
        (x != 0).then(|| (((x >> 32) - 1) as u32, x as u32))
    }

    /// Event `i`'s nodes, which the build set before asking.
    pub fn of(&self, i: usize) -> (u32, u32) {
        self.get(i as u32).expect("nodes of an event of the graph")
    }

    /// The events set, with their nodes, in the order they were set.
    pub fn iter(&self) -> impl Iterator<Item = (u32, (u32, u32))> + '_ {
        self.set.iter().map(|&i| (i, self.of(i as usize)))
    }
}

/// Nodes (a rank and a time each) and edges of one window, over every rank.
#[derive(Debug, Default)]
pub struct Graph {
    /// (rank, time) per node.
    pub nodes: Vec<(RankIx, Ns)>,
    /// The edges.
    pub edges: Vec<Edge>,
    /// The wait stretch of a collective kernel, by (rank, event): zeroed when its instance
    /// joins the ranks (the last arriver's path then carries that time).
    pub waits: BTreeMap<(RankIx, EventIx), usize>,
}

impl Graph {
    /// Adds a node at time `t` of a rank.
    pub fn node(&mut self, rank: RankIx, t: Ns) -> u32 {
        self.nodes.push((rank, t));
        self.nodes.len() as u32 - 1
    }

    /// Adds an edge (negative weights count as 0).
    pub fn edge(
        &mut self,
        from: u32,
        to: u32,
        w: Ns,
        cat: Option<Category>,
        rank: RankIx,
        event: EventIx,
    ) {
        self.edges.push(Edge {
            from,
            to,
            w: w.max(0),
            cat,
            rank,
            event,
        });
    }

    /// Appends another graph (one rank's), shifting its node and edge indices; returns the
    /// node offset.
    pub fn append(&mut self, other: Graph) -> u32 {
        let (off, eoff) = (self.nodes.len() as u32, self.edges.len());
        self.nodes.extend(other.nodes);
        self.edges.extend(other.edges.into_iter().map(|mut e| {
            e.from += off;
            e.to += off;
            e
        }));
        self.waits
            .extend(other.waits.into_iter().map(|(k, v)| (k, v + eoff)));
        off
    }

    /// The longest path (weight, then least wait, then the earliest-created edge) by dynamic
    /// programming over a topological order: its weight and its edges in order. `None` for a
    /// graph with a cycle or no edges. Out-edges are laid out contiguously per node and the
    /// order is depth-first (Kahn's algorithm with a stack), which follows each rank's chains
    /// and keeps memory access local.
    pub fn longest_path(&self) -> Option<(Ns, Vec<u32>)> {
        let n = self.nodes.len();
        if self.edges.is_empty() {
            return None;
        }
        let (first, by_from, mut indeg) = self.csr();
        let mut stack: Vec<u32> = (0..n as u32)
            .rev()
            .filter(|&v| indeg[v as usize] == 0)
            .collect();
        // best[v] = ((total, −wait), predecessor edge)
        let mut best: Vec<((Ns, Ns), u32)> = vec![((0, 0), u32::MAX); n];
        let mut seen = 0;
        while let Some(v) = stack.pop() {
            seen += 1;
            let (score, _) = best[v as usize];
            for &k in &by_from[first[v as usize] as usize..first[v as usize + 1] as usize] {
                let e = &self.edges[k as usize];
                let wait = if e.cat == Some(Category::Wait) {
                    e.w
                } else {
                    0
                };
                let cand = (score.0 + e.w, score.1 - wait);
                let to = e.to as usize;
                let (old, pk) = best[to];
                if pk == u32::MAX || cand > old || (cand == old && k < pk) {
                    best[to] = (cand, k);
                }
                indeg[to] -= 1;
                if indeg[to] == 0 {
                    stack.push(e.to);
                }
            }
        }
        if seen != n {
            return None;
        }
        let end = (0..n).max_by_key(|&v| (best[v].0, std::cmp::Reverse(v)))?;
        let mut path = Vec::new();
        let mut v = end;
        while best[v].1 != u32::MAX {
            let k = best[v].1;
            path.push(k);
            v = self.edges[k as usize].from as usize;
        }
        path.reverse();
        Some((best[end].0.0, path))
    }

    /// Out-edges by source (CSR): `first[v]..first[v + 1]` index `by_from`; and in-degrees.
    fn csr(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let n = self.nodes.len();
        let mut first = vec![0u32; n + 1];
        let mut indeg = vec![0u32; n];
        for e in &self.edges {
            first[e.from as usize + 1] += 1;
            indeg[e.to as usize] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let mut by_from = vec![0u32; self.edges.len()];
        for (k, e) in self.edges.iter().enumerate() {
            by_from[fill[e.from as usize] as usize] = k as u32;
            fill[e.from as usize] += 1;
        }
        (first, by_from, indeg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_path_prefers_weight_then_less_wait() {
        // 0 → 1 (5 cpu) → 3 (5 cpu), 0 → 2 (5 wait) → 3 (5 cpu): equal weight, less wait
        // wins; 3 → 4 (1) ends both.
        let mut g = Graph::default();
        let r = RankIx(0);
        let n: Vec<u32> = (0..5).map(|t| g.node(r, t)).collect();
        let e = EventIx(0);
        g.edge(n[0], n[2], 5, Some(Category::Wait), r, e);
        g.edge(n[2], n[3], 5, Some(Category::Cpu), r, e);
        g.edge(n[0], n[1], 5, Some(Category::Cpu), r, e);
        g.edge(n[1], n[3], 5, Some(Category::Cpu), r, e);
        g.edge(n[3], n[4], 1, None, r, e);
        let (w, path) = g.longest_path().unwrap();
        assert_eq!((w, path), (11, vec![2, 3, 4]));
        // A cycle has no longest path.
        g.edge(n[4], n[0], 1, None, r, e);
        assert!(g.longest_path().is_none());
    }
}
