//! What the host transforms ask of each edge of a step's graph — which stalls hold it, whether
//! it is a sync's dependency or a dispatch — found in one pass per step and kept as a byte
//! per edge, so that a fix reads no event table (a 1024-rank step has ~2 M edges and is
//! replayed with ~20 fixes).

use super::cover::{Cover, Stall};
use crate::analysis::critical_path::Category;
use crate::analysis::critical_path::graph::Graph;
use crate::model::{Job, LaneSide};

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

/// Per edge: a bit per [`Stall`] (in `Stall::ALL` order) whose intervals hold it (host
/// edges only), [`SYNC`] and [`DISPATCH`].
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
        let stalls: u8 = (1 << Stall::ALL.len()) - 1;
        self.with(DISPATCH)
            .filter(move |&k| self.bits[k] & stalls == 0)
    }

    fn with(&self, bit: u8) -> impl Iterator<Item = usize> + '_ {
        self.bits
            .iter()
            .enumerate()
            .filter(move |(_, b)| *b & bit != 0)
            .map(|(k, _)| k)
    }
}
