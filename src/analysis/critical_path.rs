//! Critical path (DESIGN §4; HTA's graph model, reference/methods.md §9), across ranks.
//!
//! Per rank, over a window (a step, or a user annotation's instance): a start and an end
//! node per CPU op, runtime call and data-loader annotation (`…DataLoader…`; other user
//! annotations and the step marker are windows, not work), and per device event launched
//! from the window. Edges:
//! - **op segments**: nested ops chained per thread, parent.start → child.start → child.end →
//!   next child … → parent.end, each segment weighted by its length and attributed to the op
//!   that runs it (`cpu`); blocking calls (device/stream/event synchronize, synchronous
//!   `cudaMemcpy`) are `wait` with weight 0 — the time they block is paid on the device path;
//! - **dependency**: consecutive top-level ops of a thread, weight 0;
//! - **launch**: runtime call start → kernel start, weighted by the launch delay
//!   (`launch_overhead`) only when no device work ended between the launch call's return
//!   and the kernel start (the device was waiting for the host); otherwise the kernel waited for that work
//!   (a stream or event wait the trace does not spell out): an edge from its end
//!   (`kernel_gap`) and a zero-weight launch edge;
//! - **kernel**: start → end (`gpu_compute`, or `communication` for collectives);
//! - **kernel gap**: previous kernel end → kernel start on a stream, when under
//!   [`KERNEL_GAP_MAX_NS`] (`kernel_gap`);
//! - **sync**: the last device event of the synchronized stream (all streams for a device
//!   sync) → the end of the blocking call, weight 0.
//!
//! Across ranks, each collective instance joins the ranks' graphs: the last arriver's kernel
//! start → every member's kernel end, weighted by the transfer (`communication`); a member that
//! arrived early has its kernel split into its wait (weight 0 once joined: the last arriver's
//! path carries that time) and the transfer. A path through a collective therefore runs on
//! the rank that arrived last — the rank that made everyone wait. `wait` on the path is
//! waiting whose cause is not in the graph (a member rank not loaded).
//! The path is the longest in the DAG (ties: the one with less `wait`).

use super::comm::Comm;
use crate::model::{Job, Kind, LaneSide, NONE, Rank, Sym};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Same-stream gaps up to this are a dependency (HTA: 1500 µs).
pub const KERNEL_GAP_MAX_NS: Ns = 1_500_000;

/// What a stretch of the critical path is spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Host ops and runtime calls running.
    Cpu,
    /// Device kernels, copies and sets.
    GpuCompute,
    /// Collective transfers.
    Communication,
    /// Launch delay on an idle stream.
    LaunchOverhead,
    /// Idle gap between kernels of a stream.
    KernelGap,
    /// Waiting: blocked in a synchronize, or in a collective for a late rank.
    Wait,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 6] = [
        Category::Cpu,
        Category::GpuCompute,
        Category::Communication,
        Category::LaunchOverhead,
        Category::KernelGap,
        Category::Wait,
    ];

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Cpu => "cpu",
            Category::GpuCompute => "gpu_compute",
            Category::Communication => "communication",
            Category::LaunchOverhead => "launch_overhead",
            Category::KernelGap => "kernel_gap",
            Category::Wait => "wait",
        }
    }
}

/// The window analysed on each rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Window {
    /// A step number (`ProfilerStep#N`).
    Step(u32),
    /// The `instance`-th (0-based) user annotation whose name is `name` (or contains it).
    Annotation {
        /// Annotation name.
        name: String,
        /// Which occurrence.
        instance: u32,
    },
}

impl Window {
    /// `NAME[:INSTANCE]` (instance 0 when absent; a name may itself contain `:`).
    pub fn parse(s: &str) -> Result<Window, String> {
        let (name, instance) = match s.rsplit_once(':') {
            Some((n, i)) if !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()) => {
                (n, i.parse().map_err(|_| format!("bad instance in `{s}`"))?)
            }
            _ => (s, 0),
        };
        if name.is_empty() {
            return Err("empty window name".to_string());
        }
        Ok(Window::Annotation {
            name: name.to_string(),
            instance,
        })
    }
}

/// One stretch of the path on one event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PathOp {
    /// Rank id.
    pub rank: u32,
    /// Lane (thread or stream) name.
    pub lane: String,
    /// Event name.
    pub name: String,
    /// Start of the stretch, ns on the rank's clock.
    pub start_ns: Ns,
    /// Time on the path.
    pub dur_ns: Ns,
    /// What it is.
    pub category: Category,
}

/// An operator ranked by its time on the path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CriticalOp {
    /// Event name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Stretches on the path.
    pub count: u64,
    /// Σ time on the path.
    pub total_ns: Ns,
}

/// The critical path of one window.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CriticalPath {
    /// What was analysed: `step N` or `NAME:INSTANCE`.
    pub window: String,
    /// Ranks whose window was found.
    pub ranks: Vec<u32>,
    /// Σ edge weights on the path.
    pub total_ns: Ns,
    /// Per category (all present).
    pub by_category: BTreeMap<&'static str, Ns>,
    /// The path in order, consecutive stretches of one event merged (the JSON report keeps
    /// the longest ones, see `ops_total`).
    pub ops: Vec<PathOp>,
    /// Stretches on the whole path.
    pub ops_total: u64,
    /// Operators by time on the path.
    pub top_ops: Vec<CriticalOp>,
    /// Nodes and edges of the graph.
    pub graph: (u64, u64),
}

/// Device event → (start node, end node).
type DeviceNodes = FxHashMap<u32, (u32, u32)>;

#[derive(Clone, Copy)]
struct Edge {
    from: u32,
    to: u32,
    w: Ns,
    cat: Option<Category>,
    rank: u32,
    event: u32,
}

#[derive(Default)]
struct Graph {
    /// (rank index, time) per node.
    nodes: Vec<(u32, Ns)>,
    edges: Vec<Edge>,
    /// The wait stretch of a collective kernel, by (rank index, event): zeroed when its
    /// instance joins the ranks (the last arriver's path then carries that time).
    waits: BTreeMap<(u32, u32), usize>,
}

impl Graph {
    fn node(&mut self, rank: u32, t: Ns) -> u32 {
        self.nodes.push((rank, t));
        self.nodes.len() as u32 - 1
    }
    fn edge(&mut self, from: u32, to: u32, w: Ns, cat: Option<Category>, rank: u32, event: u32) {
        self.edges.push(Edge {
            from,
            to,
            w: w.max(0),
            cat,
            rank,
            event,
        });
    }
}

/// Names that matter to the graph, evaluated once.
struct Names {
    marker: Vec<bool>,
    blocking: Vec<bool>,
    device_sync: Vec<bool>,
    data_loading: Vec<bool>,
}

impl Names {
    fn new(job: &Job) -> Names {
        let mut n = Names {
            marker: Vec::new(),
            blocking: Vec::new(),
            device_sync: Vec::new(),
            data_loading: Vec::new(),
        };
        for (_, s) in job.strings.iter() {
            n.marker
                .push(crate::model::profiler_step_number(s).is_some());
            // HTA also treats `cudaEventQuery` as blocking on the path.
            n.blocking
                .push(super::host::is_sync_call(s) || s == "cudaEventQuery");
            n.device_sync.push(matches!(
                s,
                "cudaDeviceSynchronize" | "hipDeviceSynchronize"
            ));
            n.data_loading.push(super::host::is_data_loader(s));
        }
        n
    }
    fn blocking(&self, s: Sym) -> bool {
        self.blocking[s as usize]
    }
}

/// Event index range of a rank's window: CPU events starting in `[lo, hi)`, device events
/// whose launching call does (or, for a step, launched in that step).
fn in_window(rank: &Rank, win: &Window, job: &Job) -> Option<(Ns, Ns, Option<u32>)> {
    match win {
        Window::Step(n) => {
            let (k, s) = rank
                .steps
                .iter()
                .enumerate()
                .find(|(_, s)| s.number == *n)?;
            Some((s.start, s.end, Some(k as u32)))
        }
        Window::Annotation { name, instance } => {
            let ev = &rank.events;
            let mut hits: Vec<usize> = (0..ev.len())
                .filter(|&i| {
                    ev.kind[i] == Kind::Annotation
                        && rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu
                })
                .filter(|&i| job.strings.resolve(ev.name[i]) == name)
                .collect();
            if hits.is_empty() {
                hits = (0..ev.len())
                    .filter(|&i| {
                        ev.kind[i] == Kind::Annotation
                            && rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu
                    })
                    .filter(|&i| job.strings.resolve(ev.name[i]).contains(name.as_str()))
                    .collect();
            }
            hits.sort_by_key(|&i| (ev.start[i], i));
            let i = *hits.get(*instance as usize)?;
            Some((ev.start[i], ev.end(i), None))
        }
    }
}

/// Computes the critical path of `win` over every rank that has it.
pub fn critical_path(job: &Job, comm: &Comm, win: &Window) -> Option<CriticalPath> {
    let names = Names::new(job);
    let waits = comm_waits(job, comm, win);
    // Each rank's graph is built on its own (in parallel), then the graphs are concatenated.
    let parts: Vec<Option<(Graph, DeviceNodes)>> = job
        .ranks
        .par_iter()
        .enumerate()
        .map(|(ri, rank)| {
            let window = in_window(rank, win, job)?;
            let mut g = Graph::default();
            let mut device = FxHashMap::default();
            rank_graph(
                &mut g,
                &names,
                ri as u32,
                rank,
                window,
                &mut device,
                &waits[ri],
            );
            Some((g, device))
        })
        .collect();
    drop(waits);
    let mut g = Graph::default();
    // Per rank index: device event → (start node, end node) in the rank's own graph, and the
    // offset of that graph's nodes in the joined one (for collective joins).
    let mut device_nodes: Vec<(DeviceNodes, u32)> = vec![Default::default(); job.ranks.len()];
    let mut ranks = Vec::new();
    for (ri, part) in parts.into_iter().enumerate() {
        let Some((pg, device)) = part else { continue };
        ranks.push(job.ranks[ri].id);
        let (off, eoff) = (g.nodes.len() as u32, g.edges.len());
        g.nodes.extend(pg.nodes);
        g.edges.extend(pg.edges.into_iter().map(|mut e| {
            e.from += off;
            e.to += off;
            e
        }));
        g.waits
            .extend(pg.waits.into_iter().map(|(k, v)| (k, v + eoff)));
        device_nodes[ri] = (device, off);
    }
    if ranks.is_empty() {
        return None;
    }
    join_collectives(&mut g, job, comm, &device_nodes);
    let (total, path) = longest_path(&g)?;
    let mut by_category: BTreeMap<&'static str, Ns> =
        Category::ALL.iter().map(|c| (c.as_str(), 0)).collect();
    let mut ops: Vec<PathOp> = Vec::new();
    let mut last: Option<(u32, u32, Category)> = None;
    for &e in &path {
        let e = g.edges[e as usize];
        let Some(cat) = e.cat else { continue };
        if e.w == 0 && cat != Category::Wait {
            continue;
        }
        *by_category.get_mut(cat.as_str()).expect("all categories") += e.w;
        let rank = &job.ranks[e.rank as usize];
        if last == Some((e.rank, e.event, cat)) {
            if let Some(op) = ops.last_mut() {
                op.dur_ns += e.w;
            }
            continue;
        }
        last = Some((e.rank, e.event, cat));
        let i = e.event as usize;
        ops.push(PathOp {
            rank: rank.id,
            lane: job
                .strings
                .resolve(rank.lanes[rank.events.lane[i] as usize].name)
                .to_string(),
            name: job.strings.resolve(rank.events.name[i]).to_string(),
            start_ns: g.nodes[e.from as usize].1,
            dur_ns: e.w,
            category: cat,
        });
    }
    let mut agg: BTreeMap<(&str, Category), (u64, Ns)> = BTreeMap::new();
    for o in &ops {
        let a = agg.entry((o.name.as_str(), o.category)).or_default();
        a.0 += 1;
        a.1 += o.dur_ns;
    }
    let mut top_ops: Vec<CriticalOp> = agg
        .into_iter()
        .map(|((name, category), (count, total_ns))| CriticalOp {
            name: name.to_string(),
            category,
            count,
            total_ns,
        })
        .collect();
    top_ops.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    Some(CriticalPath {
        window: match win {
            Window::Step(n) => format!("step {n}"),
            Window::Annotation { name, instance } => format!("{name}:{instance}"),
        },
        ranks,
        total_ns: total,
        by_category,
        ops_total: ops.len() as u64,
        ops,
        top_ops,
        graph: (g.nodes.len() as u64, g.edges.len() as u64),
    })
}

/// Adds one rank's window to the graph.
#[allow(clippy::too_many_arguments)]
fn rank_graph(
    g: &mut Graph,
    names: &Names,
    ri: u32,
    rank: &Rank,
    (lo, hi, step_idx): (Ns, Ns, Option<u32>),
    device_nodes: &mut DeviceNodes,
    in_comm: &FxHashMap<u32, Ns>,
) {
    let ev = &rank.events;
    let marker = |i: usize| names.marker[ev.name[i] as usize];
    // Host side: ops and runtime calls of each CPU lane, nested chains.
    let mut call_nodes: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
    // Blocking calls in event order (sync edges are created in a deterministic order).
    let mut blocking_calls: Vec<u32> = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut stack: Vec<(usize, u32)> = Vec::new(); // (event, cursor node)
        let mut prev_top_end: Option<u32> = None;
        let close = |g: &mut Graph,
                     stack: &mut Vec<(usize, u32)>,
                     call_nodes: &FxHashMap<u32, (u32, u32)>| {
            let (i, cursor) = stack.pop().expect("non-empty");
            let end = call_nodes[&(i as u32)].1;
            let blocking = names.blocking(ev.name[i]);
            let w = if blocking {
                0
            } else {
                ev.end(i) - g.nodes[cursor as usize].1
            };
            let cat = if blocking {
                Category::Wait
            } else {
                Category::Cpu
            };
            g.edge(cursor, end, w, Some(cat), ri, i as u32);
            if let Some(top) = stack.last_mut() {
                top.1 = end;
            }
            end
        };
        // Events of a lane are sorted by start: only the window's slice is visited.
        let lane_range = rank.lane_events(l as u16);
        let from = lane_range.start + ev.start[lane_range.clone()].partition_point(|&t| t < lo);
        let to = lane_range.start + ev.start[lane_range.clone()].partition_point(|&t| t < hi);
        for i in from..to {
            let k = ev.kind[i];
            let work = matches!(k, Kind::HostOp | Kind::Launch)
                || (k == Kind::Annotation && names.data_loading[ev.name[i] as usize]);
            if !work || ev.dur[i] <= 0 || marker(i) {
                continue;
            }
            while let Some(&(p, _)) = stack.last() {
                if ev.end(p) <= ev.start[i] || ev.end(p) < ev.end(i) {
                    let end = close(g, &mut stack, &call_nodes);
                    if stack.is_empty() {
                        prev_top_end = Some(end);
                    }
                } else {
                    break;
                }
            }
            let s = g.node(ri, ev.start[i]);
            let e = g.node(ri, ev.end(i));
            call_nodes.insert(i as u32, (s, e));
            if names.blocking(ev.name[i]) {
                blocking_calls.push(i as u32);
            }
            match stack.last_mut() {
                Some((p, cursor)) => {
                    let w = ev.start[i] - g.nodes[*cursor as usize].1;
                    let (p, c) = (*p, *cursor);
                    let cat = if names.blocking(ev.name[p]) {
                        Category::Wait
                    } else {
                        Category::Cpu
                    };
                    let w = if cat == Category::Wait { 0 } else { w };
                    g.edge(c, s, w, Some(cat), ri, p as u32);
                }
                None => {
                    if let Some(pe) = prev_top_end {
                        g.edge(pe, s, 0, None, ri, i as u32);
                    }
                }
            }
            stack.push((i, s));
        }
        while !stack.is_empty() {
            close(g, &mut stack, &call_nodes);
        }
    }
    // Device side: events launched from the window, per stream in order.
    let mut device: Vec<usize> = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Device {
            continue;
        }
        for i in rank.lane_events(l as u16) {
            if !ev.kind[i].is_device_work() {
                continue;
            }
            let launch = ev.link[i];
            let inside = match step_idx {
                Some(k) => ev.step[i] == k,
                None => launch != NONE && (lo..hi).contains(&ev.start[launch as usize]),
            };
            if !inside {
                continue;
            }
            let s = g.node(ri, ev.start[i]);
            let e = g.node(ri, ev.end(i));
            device_nodes.insert(i as u32, (s, e));
            device.push(i);
            let cat = if ev.kind[i] == Kind::Comm {
                Category::Communication
            } else {
                Category::GpuCompute
            };
            match in_comm.get(&(i as u32)) {
                Some(&wait) if wait > 0 && wait < ev.dur[i] => {
                    let mid = g.node(ri, ev.start[i] + wait);
                    g.waits.insert((ri, i as u32), g.edges.len());
                    g.edge(s, mid, wait, Some(Category::Wait), ri, i as u32);
                    g.edge(mid, e, ev.dur[i] - wait, Some(cat), ri, i as u32);
                }
                _ => g.edge(s, e, ev.dur[i], Some(cat), ri, i as u32),
            }
        }
    }
    // Device events by end, to find what a kernel waited for.
    let mut by_end: Vec<(Ns, usize)> = device.iter().map(|&i| (ev.end(i), i)).collect();
    by_end.sort_unstable();
    let mut prev_on_lane: BTreeMap<u16, usize> = BTreeMap::new();
    for &i in &device {
        let (s, _) = device_nodes[&(i as u32)];
        let start = ev.start[i];
        // Same stream: the previous event's end, when the gap is short.
        let prev = prev_on_lane.insert(ev.lane[i], i);
        if let Some(p) = prev {
            let gap = start - ev.end(p);
            if (0..KERNEL_GAP_MAX_NS).contains(&gap) {
                g.edge(
                    device_nodes[&(p as u32)].1,
                    s,
                    gap,
                    Some(Category::KernelGap),
                    ri,
                    i as u32,
                );
            }
        }
        let launch = ev.link[i];
        let Some(&(ls, _)) = (launch != NONE).then(|| call_nodes.get(&launch)).flatten() else {
            continue;
        };
        let issued = ev.start[launch as usize];
        let returned = ev.end(launch as usize);
        // Device work that ended after the launch call returned and before the kernel started
        // (any stream): the kernel waited for it (a stream or event wait the trace does not
        // spell out), not for the launch.
        let k = by_end.partition_point(|&(e, _)| e <= start);
        let waited = by_end[..k]
            .iter()
            .rev()
            .find(|&&(_, d)| d != i)
            .filter(|&&(e, _)| e > returned);
        match waited {
            Some(&(e, d)) => {
                if Some(d) != prev {
                    g.edge(
                        device_nodes[&(d as u32)].1,
                        s,
                        start - e,
                        Some(Category::KernelGap),
                        ri,
                        i as u32,
                    );
                }
                g.edge(ls, s, 0, Some(Category::LaunchOverhead), ri, launch);
            }
            None => g.edge(
                ls,
                s,
                start - issued,
                Some(Category::LaunchOverhead),
                ri,
                launch,
            ),
        }
    }
    // Sync: the last device event of the synchronized stream(s) → end of the blocking call.
    let mut lane_ends: BTreeMap<u16, Vec<(Ns, u32)>> = BTreeMap::new();
    for (&d, &(_, de)) in device_nodes.iter() {
        lane_ends
            .entry(ev.lane[d as usize])
            .or_default()
            .push((ev.end(d as usize), de));
    }
    for v in lane_ends.values_mut() {
        v.sort_unstable();
    }
    for &call in &blocking_calls {
        let c = call as usize;
        let call_end = call_nodes[&call].1;
        let t = ev.end(c);
        let device_wide = names.device_sync[ev.name[c] as usize];
        // The stream a stream/event sync waited on: its `cuda_sync` record's lane.
        let lane = (!device_wide && ev.link[c] != NONE).then(|| ev.lane[ev.link[c] as usize]);
        for (l, ends) in &lane_ends {
            if lane.is_some_and(|x| x != *l) {
                continue;
            }
            let k = ends.partition_point(|&(e, _)| e <= t);
            if k > 0 {
                g.edge(ends[k - 1].1, call_end, 0, None, ri, call);
            }
        }
    }
}

/// Per rank (index): each comm kernel in an instance of the window → its wait.
fn comm_waits(job: &Job, comm: &Comm, win: &Window) -> Vec<FxHashMap<u32, Ns>> {
    let mut out = vec![FxHashMap::default(); job.ranks.len()];
    for (inst, (_, m)) in comm.matching.instances.iter().zip(&comm.timed) {
        if let Window::Step(n) = win {
            if inst.step != Some(*n) {
                continue;
            }
        }
        for (k, &(r, c)) in inst.members.iter().enumerate() {
            let event = comm.calls.per_rank[r as usize][c as usize].event;
            out[r as usize].insert(event, m[k].wait_ns);
        }
    }
    out
}

/// Cross-rank edges: the last arriver's kernel start → every member's kernel end.
fn join_collectives(g: &mut Graph, job: &Job, comm: &Comm, device_nodes: &[(DeviceNodes, u32)]) {
    for (inst, (t, _)) in comm.matching.instances.iter().zip(&comm.timed) {
        let node = |&(r, c): &(u32, u32)| {
            let e = comm.calls.per_rank[r as usize][c as usize].event;
            let (nodes, off) = &device_nodes[r as usize];
            nodes.get(&e).map(|&(s, t)| (r, e, (s + off, t + off)))
        };
        let Some(members) = inst.members.iter().map(node).collect::<Option<Vec<_>>>() else {
            continue;
        };
        let Some(last) = inst
            .members
            .iter()
            .position(|&(r, _)| job.ranks[r as usize].id == t.last_arriver)
        else {
            continue;
        };
        let (lr, le, (ls, _)) = members[last];
        for (k, &(r, e, (_, end))) in members.iter().enumerate() {
            if k != last {
                g.edge(ls, end, t.transit_ns, Some(Category::Communication), lr, le);
                if let Some(&w) = g.waits.get(&(r, e)) {
                    g.edges[w].w = 0;
                }
            }
        }
    }
}

/// Longest path (weight, then least wait, then the earliest-created edge) by dynamic
/// programming over a topological order; `None` for a graph with a cycle or no edges.
/// Out-edges are laid out contiguously per node and the order is depth-first (Kahn's
/// algorithm with a stack), which follows each rank's chains and keeps memory access local.
fn longest_path(g: &Graph) -> Option<(Ns, Vec<u32>)> {
    let n = g.nodes.len();
    if g.edges.is_empty() {
        return None;
    }
    // CSR: first[v]..first[v + 1] index `by_from`, edges sorted by source.
    let mut first = vec![0u32; n + 1];
    let mut indeg = vec![0u32; n];
    for e in &g.edges {
        first[e.from as usize + 1] += 1;
        indeg[e.to as usize] += 1;
    }
    for v in 0..n {
        first[v + 1] += first[v];
    }
    let mut fill = first.clone();
    let mut by_from = vec![0u32; g.edges.len()];
    for (k, e) in g.edges.iter().enumerate() {
        by_from[fill[e.from as usize] as usize] = k as u32;
        fill[e.from as usize] += 1;
    }
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
            let e = &g.edges[k as usize];
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
        v = g.edges[k as usize].from as usize;
    }
    path.reverse();
    Some((best[end].0.0, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse() {
        let w = |name: &str, instance| Window::Annotation {
            name: name.into(),
            instance,
        };
        assert_eq!(Window::parse("fwd"), Ok(w("fwd", 0)));
        assert_eq!(Window::parse("fwd:3"), Ok(w("fwd", 3)));
        assert_eq!(Window::parse("a:b:1"), Ok(w("a:b", 1)));
        assert_eq!(Window::parse("a:b"), Ok(w("a:b", 0)));
        assert!(Window::parse(":2").is_err());
        assert!(Window::parse("").is_err());
        assert!(Window::parse("x:99999999999").is_err());
    }
}
