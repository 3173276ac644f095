//! What the host transforms ask of each edge of a step's graph — which stalls hold it, whether
//! it is a sync's dependency or a dispatch — found in one pass per step and kept as a byte
//! per edge, so that a fix reads no event table (a 1024-rank step has ~2 M edges and is
//! replayed with ~20 fixes).

use super::cover::{Cover, Stall};
use crate::analysis::critical_path::Category;
use crate::analysis::critical_path::graph::{Edge, Graph};
use crate::model::{Job, Kind, LaneSide};

/// Whose time an edge is, for the transforms that scale a rank's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Device kernels, copies and sets.
    Device,
    /// Host ops, runtime calls and the host's time between them.
    Host,
}

impl Work {
    /// The class of an edge's category (`None`: not a rank's own work: waits, transfers,
    /// launch delays, stream gaps).
    pub fn of(cat: Option<Category>) -> Option<Work> {
        match cat? {
            Category::GpuCompute => Some(Work::Device),
            Category::Cpu | Category::HostGap => Some(Work::Host),
            _ => None,
        }
    }
}

/// A sync's edge from the device work it waited for (no category, blocking event).
const SYNC: u8 = 1 << 5;
/// A host dispatch: a launch call, or a framework op on a rank with a device.
const DISPATCH: u8 = 1 << 6;
/// What holds a collective kernel back besides the collective before it on its stream: its
/// stream's previous compute, the other device work it waited for, its launch delay.
const HELD_COLLECTIVE: u8 = 1 << 7;

/// Per edge: a bit per [`Stall`] (in `Stall::ALL` order) whose intervals hold it (host
/// edges only), [`SYNC`], [`DISPATCH`] and [`HELD_COLLECTIVE`].
#[derive(Debug, Default)]
pub struct EdgeFacts {
    bits: Vec<u8>,
}

impl EdgeFacts {
    /// The facts of the edges of `g`, a graph of `job`'s ranks, with the job's stalls from
    /// `cover`.
    pub fn of<'a>(job: &Job, g: &Graph, cover: &dyn Fn(Stall) -> &'a Cover) -> EdgeFacts {
        let device: Vec<bool> = job
            .ranks
            .iter()
            .map(|r| r.lanes.iter().any(|l| l.side == LaneSide::Device))
            .collect();
        let covers: Vec<_> = Stall::ALL
            .iter()
            .map(|&x| cover(x))
            .enumerate()
            .filter(|(_, c)| !c.is_empty())
            .collect();
        let bits = g
            .edges
            .iter()
            .map(|e| {
                let ev = &job.rank(e.rank).events;
                let i = e.event.index();
                let role = job.role(ev.name[i]);
                let mut b = 0u8;
                if e.cat.is_none() && role.is_blocking() {
                    b |= SYNC;
                }
                let dispatch = role.kernel_launch || (role.framework_op && device[e.rank.get()]);
                if e.cat == Some(Category::Cpu) && dispatch {
                    b |= DISPATCH;
                }
                if holds_collective(job, g, e) {
                    b |= HELD_COLLECTIVE;
                }
                let host = !matches!(
                    e.cat,
                    Some(Category::Communication | Category::LaunchOverhead)
                ) && Work::of(e.cat) != Some(Work::Device);
                if host {
                    for &(k, c) in &covers {
                        if c.holds(e.rank, ev.lane[i], ev.start[i], ev.end(i))
                            .is_some()
                        {
                            b |= 1 << k;
                        }
                    }
                }
                b
            })
            .collect();
        EdgeFacts { bits }
    }

    /// Edges some interval of `stall` holds.
    pub fn in_stall(&self, stall: Stall) -> impl Iterator<Item = usize> + '_ {
        let bit = 1u8 << Stall::ALL.iter().position(|&x| x == stall).unwrap_or(0);
        self.with(bit)
    }

    /// Syncs' edges from the device work they waited for.
    pub fn syncs(&self) -> impl Iterator<Item = usize> + '_ {
        self.with(SYNC)
    }

    /// Host dispatch edges (launch calls, framework ops on ranks with a device) that no
    /// stall holds: a framework op inside a data-loader, GC or allocator interval is that
    /// stall's time, not a launch gap (docs/metrics.md, "Replay": launch_bound).
    pub fn dispatches(&self) -> impl Iterator<Item = usize> + '_ {
        self.with(DISPATCH).filter(move |&k| self.unstalled(k))
    }

    /// Edges that hold a collective kernel back other than the collective before it on its
    /// stream (docs/metrics.md, "Replay": poor_overlap).
    pub fn held_collectives(&self) -> impl Iterator<Item = usize> + '_ {
        self.with(HELD_COLLECTIVE)
    }

    /// Whether no stall's interval holds edge `k`.
    pub fn unstalled(&self, k: usize) -> bool {
        let stalls: u8 = (1 << Stall::ALL.len()) - 1;
        self.bits.get(k).is_some_and(|b| b & stalls == 0)
    }

    fn with(&self, bit: u8) -> impl Iterator<Item = usize> + '_ {
        self.bits
            .iter()
            .enumerate()
            .filter(move |(_, b)| *b & bit != 0)
            .map(|(k, _)| k)
    }
}

/// Whether `e` delays a collective kernel for something other than the collective before it
/// on its stream: a stream gap edge from the previous compute or from other device work it
/// waited for (the edge's event is the collective), or its launch edge (the event is the
/// launch call, linked to the collective).
fn holds_collective(job: &Job, g: &Graph, e: &Edge) -> bool {
    let rank = job.rank(e.rank);
    let ev = &rank.events;
    let i = e.event.index();
    match e.cat {
        Some(Category::LaunchOverhead) => ev.link[i].get().is_some_and(|k| {
            ev.kind[k] == Kind::Comm && rank.lanes[ev.lane[k] as usize].side == LaneSide::Device
        }),
        Some(Category::KernelGap) if ev.kind[i] == Kind::Comm => {
            let lane = rank.lane_events(ev.lane[i]);
            let prev = (lane.start..i).rev().find(|&j| ev.kind[j].is_device_work());
            let from = g.nodes[e.from as usize].1;
            !prev.is_some_and(|p| ev.kind[p] == Kind::Comm && ev.end(p) == from)
        }
        _ => false,
    }
}
