//! Critical path (docs/metrics.md, "Critical path"; HTA's graph model), across ranks.
//!
//! Per rank, over a window (a step, or a user annotation's instance): a start and an end
//! node per CPU op, runtime call and data-loader annotation (`…DataLoader…`; other user
//! annotations and the step marker are windows, not work), and per device event launched
//! from the window. Edges:
//! - **op segments**: nested ops chained per thread, parent.start → child.start → child.end →
//!   next child … → parent.end, each segment weighted by its length and attributed to the op
//!   that runs it (`cpu`); blocking calls (the `sync` role: device/stream/event synchronize,
//!   synchronous copies, event polls) are `wait` with weight 0 — the time they block is paid
//!   on the device path; one recorded on a sibling row of its OS thread (same tid: Ascend's
//!   `CANN` row) joins the chain of the op on the thread's other row that holds it;
//! - **dependency**: consecutive top-level ops of a thread, weight 0;
//! - **launch**: runtime call start → kernel start, weighted by the launch delay
//!   (`launch_overhead`) only when no device work ended between the launch call's return
//!   and the kernel start (the device was waiting for the host); otherwise the kernel waited for that work
//!   (a stream or event wait the trace does not spell out; its own stream's previous event
//!   after a long gap too): an edge from its end (`kernel_gap`) and a zero-weight launch edge;
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
//!
//! Stages: [`rank`] builds each rank's graph, [`join`] joins them at collectives, [`graph`]
//! holds the graph and its longest path, [`path`] turns the path into stretches.

pub mod graph;
mod join;
mod path;
mod rank;

use super::comm::Comm;
use crate::error::Error;
use crate::model::{Job, Kind, LaneSide, Rank, RankId, RankIx, StepNo};
use crate::time::Ns;
use graph::Graph;
use rank::{DeviceNodes, RankGraph, RankWindow};
use rayon::prelude::*;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// Same-stream gaps up to this are a dependency (HTA: 1500 µs).
pub const KERNEL_GAP_MAX_NS: Ns = 1_500_000;

/// What a stretch of the critical path is spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
    /// A thread running no recorded op between two of its ops (Python, a stall, the thread
    /// descheduled).
    HostGap,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 7] = [
        Category::Cpu,
        Category::HostGap,
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
            Category::HostGap => "host_gap",
        }
    }
}

/// The window analysed on each rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Window {
    /// A step number (`ProfilerStep#N`).
    Step(StepNo),
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
    pub fn parse(s: &str) -> Result<Window, Error> {
        let (name, instance) = match s.rsplit_once(':') {
            Some((n, i)) if !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()) => (
                n,
                i.parse()
                    .map_err(|_| Error::usage("", format!("bad instance in `{s}`")))?,
            ),
            _ => (s, 0),
        };
        if name.is_empty() {
            return Err(Error::usage("", "empty window name"));
        }
        Ok(Window::Annotation {
            name: name.to_string(),
            instance,
        })
    }
}

impl Default for Window {
    fn default() -> Self {
        Window::Step(StepNo::default())
    }
}

impl fmt::Display for Window {
    /// `step N`, or `NAME:INSTANCE`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::Step(n) => write!(f, "step {n}"),
            Window::Annotation { name, instance } => write!(f, "{name}:{instance}"),
        }
    }
}

impl Serialize for Window {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One stretch of the path on one event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathOp {
    /// Rank id.
    pub rank: RankId,
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
    /// The event is a data-loader annotation (its own finding explains it).
    #[serde(skip)]
    pub data_loader: bool,
}

/// An operator ranked by its time on the path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CriticalOp {
    /// Event name.
    pub name: String,
    /// What its time on the path is (the category of its stretches).
    pub category: Category,
    /// Stretches on the path.
    pub count: u64,
    /// Σ time on the path.
    pub total_ns: Ns,
    /// The operator is a data-loader annotation.
    #[serde(skip)]
    pub data_loader: bool,
}

/// Nodes and edges of a graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphSize {
    /// Nodes of the dependency graph.
    pub nodes: u64,
    /// Edges of the dependency graph.
    pub edges: u64,
}

impl Serialize for GraphSize {
    /// As `[nodes, edges]` (the report's schema).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.nodes, self.edges).serialize(s)
    }
}

/// The critical path of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CriticalPath {
    /// What was analysed: a step or an annotation's instance.
    pub window: Window,
    /// Ranks whose window was found.
    pub ranks: Vec<RankId>,
    /// Σ edge weights on the path.
    pub total_ns: Ns,
    /// Per category (all present; written by name, alphabetically).
    #[serde(serialize_with = "by_name")]
    pub by_category: BTreeMap<Category, Ns>,
    /// The path in order, consecutive stretches of one event merged (the JSON report keeps
    /// the longest ones, see `ops_total`).
    pub ops: Vec<PathOp>,
    /// Stretches on the whole path.
    pub ops_total: u64,
    /// Ranks the whole path goes through, ascending (not in the JSON: `ops` there is cut).
    #[serde(skip)]
    pub through: Vec<RankId>,
    /// Operators by time on the path.
    pub top_ops: Vec<CriticalOp>,
    /// Nodes and edges of the graph.
    pub graph: GraphSize,
}

impl CriticalPath {
    /// Time on the path in one category.
    pub fn time_in(&self, c: Category) -> Ns {
        self.by_category.get(&c).copied().unwrap_or(0)
    }

    /// The share of the path's length that `ns` of it is (a category's time, an operator's
    /// stretch): what the report's table and the critical pane show as a percentage.
    pub fn share(&self, ns: Ns) -> f64 {
        ns as f64 / self.total_ns.max(1) as f64
    }
}

/// A category map as an object keyed by the categories' names, in name order.
fn by_name<S: Serializer>(m: &BTreeMap<Category, Ns>, s: S) -> Result<S::Ok, S::Error> {
    let named: BTreeMap<&str, Ns> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    named.serialize(s)
}

/// Why `win` names nothing on any rank of `job` (`None`: some rank has it): the
/// annotations there are, most frequent first, so that `--window` is never silently empty.
/// Steps are the faces' own to check (`--step`, the diff's `--steps` say it their way).
pub fn missing_window(job: &Job, win: &Window) -> Option<String> {
    if matches!(win, Window::Step(_))
        || job.ranks.iter().any(|r| rank_window(r, win, job).is_some())
    {
        return None;
    }
    let mut count: std::collections::BTreeMap<&str, u64> = Default::default();
    for r in &job.ranks {
        let ev = &r.events;
        for i in 0..ev.len() {
            let cpu = r.lanes[ev.lane[i] as usize].side == LaneSide::Cpu;
            if ev.kind[i] == Kind::Annotation && cpu && !job.role(ev.name[i]).is_step_marker() {
                *count.entry(job.strings.resolve(ev.name[i])).or_default() += 1;
            }
        }
    }
    let mut names: Vec<(&str, u64)> = count.into_iter().collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = names
        .iter()
        .take(8)
        .map(|(n, k)| format!("{} (×{k})", crate::format::fit_name(n, 60)))
        .collect();
    let more = names.len().saturating_sub(shown.len());
    Some(match (shown.is_empty(), win) {
        (true, _) => {
            format!("no annotation `{win}` on any rank, and the job records no user annotation")
        }
        (false, _) => format!(
            "no annotation `{win}` on any rank; annotations: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ),
    })
}

/// The window's bounds on one rank: host time `[lo, hi)` of its step or annotation
/// instance (CPU events starting in it belong to the window; device events by their launch).
fn rank_window(rank: &Rank, win: &Window, job: &Job) -> Option<RankWindow> {
    match win {
        Window::Step(n) => {
            let (k, s) = rank
                .steps
                .iter()
                .enumerate()
                .find(|(_, s)| s.number == *n)?;
            Some(RankWindow {
                lo: s.start,
                hi: s.end,
                step_idx: Some(k as u32),
            })
        }
        Window::Annotation { name, instance } => {
            let ev = &rank.events;
            let annotations = || {
                (0..ev.len()).filter(|&i| {
                    ev.kind[i] == Kind::Annotation
                        && rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu
                })
            };
            let mut hits: Vec<usize> = annotations()
                .filter(|&i| job.strings.resolve(ev.name[i]) == name)
                .collect();
            if hits.is_empty() {
                hits = annotations()
                    .filter(|&i| job.strings.resolve(ev.name[i]).contains(name.as_str()))
                    .collect();
            }
            hits.sort_by_key(|&i| (ev.start[i], i));
            let i = *hits.get(*instance as usize)?;
            Some(RankWindow {
                lo: ev.start[i],
                hi: ev.end(i),
                step_idx: None,
            })
        }
    }
}

/// The graph of `win` over every rank that has it, joined at collectives; and those ranks.
pub fn build_graph(job: &Job, comm: &Comm, win: &Window) -> Option<(Graph, Vec<RankId>)> {
    let waits = join::comm_waits(job, comm, win);
    // Each rank's graph is built on its own (in parallel), then the graphs are concatenated.
    let parts: Vec<Option<(Graph, DeviceNodes)>> = job
        .ranks
        .par_iter()
        .enumerate()
        .map(|(ri, rank)| {
            let window = rank_window(rank, win, job)?;
            let b = RankGraph::build(rank, &job.roles, RankIx::of(ri), window, &waits[ri]);
            Some((b.g, b.device_nodes))
        })
        .collect();
    drop(waits);
    let mut g = Graph::default();
    // Per rank index: device event → (start node, end node) in the rank's own graph, and the
    // offset of that graph's nodes in the joined one (for collective joins).
    let mut device_nodes: Vec<(DeviceNodes, u32)> =
        (0..job.ranks.len()).map(|_| Default::default()).collect();
    let mut ranks = Vec::new();
    for (ri, part) in parts.into_iter().enumerate() {
        let Some((pg, device)) = part else { continue };
        ranks.push(job.ranks[ri].id);
        let off = g.append(pg);
        device_nodes[ri] = (device, off);
    }
    if ranks.is_empty() {
        return None;
    }
    join::join_collectives(&mut g, job, comm, &device_nodes);
    Some((g, ranks))
}

/// Computes the critical path of `win` over every rank that has it.
pub fn critical_path(job: &Job, comm: &Comm, win: &Window) -> Option<CriticalPath> {
    let (g, ranks) = build_graph(job, comm, win)?;
    of_graph(job, &g, ranks, win)
}

/// The critical path of a graph already built for `win` (over `ranks`).
pub fn of_graph(job: &Job, g: &Graph, ranks: Vec<RankId>, win: &Window) -> Option<CriticalPath> {
    let (total, edges) = g.longest_path()?;
    let (ops, by_category) = path::stretches(g, job, &edges);
    let top_ops = path::top_ops(&ops);
    let mut through: Vec<RankId> = ops.iter().map(|o| o.rank).collect();
    through.sort_unstable();
    through.dedup();
    Some(CriticalPath {
        through,
        window: win.clone(),
        ranks,
        total_ns: total,
        by_category,
        ops_total: ops.len() as u64,
        ops,
        top_ops,
        graph: GraphSize {
            nodes: g.nodes.len() as u64,
            edges: g.edges.len() as u64,
        },
    })
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
        assert_eq!(Window::Step(StepNo(13)).to_string(), "step 13");
    }
}
