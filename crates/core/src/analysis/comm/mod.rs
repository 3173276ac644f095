//! Communication analysis (docs/metrics.md, "Clock alignment", "Collective instance"): find
//! each rank's collective calls, match them across ranks into instances, align the ranks'
//! clocks on them, time every instance (wait vs transit, bandwidth) and summarize per
//! collective type and group.
//!
//! - [`op`] — bus-bandwidth factors and element sizes
//! - [`calls`] — per-rank calls and their groups
//! - [`matching`] — instances
//! - [`align`] — clock offsets
//! - [`measured`] — arrivals measured by the library's waits for named peers
//! - [`timing`] — per-instance skew, wait, transit, R_wait, algbw/busbw
//! - [`links`] — link peaks and node placement
//! - [`link_matrix`] — HCCL's traffic per link (Ascend `communication_matrix.json`), slow links
//! - [`transports`] — HCCL's traffic per rank and transport (Ascend `communication.json`)
//! - [`waits`] — waits and transits as unions per (rank, step)
//! - [`per_rank`] — each rank's collectives: waits, transits, its own busbw
//! - [`stalls`] — transfers far slower than the type's best, every loaded rank present
//! - [`stats`] — per type/group stats, worst instances, point-to-point matrix, slow links
//! - [`unaligned`] — HCCL transfers whose size is not a multiple of 512 B, and what they cost

pub mod align;
pub mod calls;
pub mod hccl_split;
pub mod link_matrix;
pub mod links;
pub mod matching;
pub mod measured;
pub mod op;
pub mod per_rank;
pub mod slow_links;
pub mod stalls;
pub mod stats;
pub mod timing;
pub mod transports;
pub mod unaligned;
pub mod waits;

use crate::analysis::intervals::IntervalSet;
use crate::analysis::roofline::peaks::Device;
use crate::model::{Job, RankId, StepNo};
use crate::time::Ns;
use align::{Align, Offset};
use calls::Calls;
use links::{Topology, TopologyOptions};
use matching::{Instance, Matching};
use rayon::prelude::*;
use serde::Serialize;
use slow_links::SlowLink;
use stats::{P2pCell, TypeStats, WorstInstance};
use timing::{MemberTiming, Timing};

/// A count of calls of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RankCount {
    /// Rank id.
    pub rank: RankId,
    /// Calls it made (in the group and step).
    pub calls: u64,
}

/// An instance's timing summary and its members' timing (in member order).
#[derive(Debug, Clone, PartialEq)]
pub struct TimedInstance {
    /// The summary.
    pub timing: Timing,
    /// Per member.
    pub members: Vec<MemberTiming>,
}

/// Options of the communication analysis.
#[derive(Debug, Clone, Default)]
pub struct CommOptions {
    /// Clock alignment.
    pub align: Align,
    /// Topology overrides.
    pub topology: TopologyOptions,
}

/// Everything the communication analysis finds.
#[derive(Debug)]
pub struct Comm {
    /// Calls per rank and the groups.
    pub calls: Calls,
    /// Instances and what could not be matched.
    pub matching: Matching,
    /// How clocks were aligned.
    pub align: Align,
    /// Per-rank clock offsets (`job.ranks` order).
    pub offsets: Vec<Offset>,
    /// Each instance's timing and members, in `matching.instances` order.
    pub timed: Vec<TimedInstance>,
    /// Ranks per node and links.
    pub topology: Topology,
    /// Per type and group.
    pub types: Vec<TypeStats>,
    /// Instances with the most waiting.
    pub worst: Vec<WorstInstance>,
    /// Send/recv traffic.
    pub p2p: Vec<P2pCell>,
    /// Ranks with outlier transit.
    pub slow_links: Vec<SlowLink>,
    /// Stalled transfers.
    pub stalls: Vec<stalls::Stall>,
}

impl Comm {
    /// Every instance with its timing.
    pub fn instances(&self) -> impl Iterator<Item = (&Instance, &TimedInstance)> {
        self.matching.instances.iter().zip(&self.timed)
    }

    /// The `k`-th matched instance and its timing.
    pub fn instance(&self, k: usize) -> Option<(&Instance, &TimedInstance)> {
        Some((self.matching.instances.get(k)?, self.timed.get(k)?))
    }

    /// The number of ranks in group `g`.
    pub fn group_size(&self, g: u32) -> u32 {
        self.calls.groups[g as usize].members.len() as u32
    }
}

/// An instance's event name on its first member (a kernel's signature left out: it adds
/// nothing to the name): what a user finds in the trace.
pub fn instance_name(job: &Job, calls: &Calls, inst: &Instance) -> Option<String> {
    let m = inst.members.first()?;
    let e = calls.per_rank[m.rank.get()][m.call as usize].event;
    let name = job.strings.resolve(job.rank(m.rank).events.name[e.index()]);
    Some(name.split('(').next().unwrap_or(name).to_string())
}

/// Runs the communication analysis. `compute` is each rank's C set and `span_ns` each
/// rank's Σ step span over the steps in scope (`job.ranks` order); `step` limits the
/// summaries (not the matching or alignment) to one step; `devices` (the peak table) gives
/// the default link between a node's devices.
pub fn analyze(
    job: &Job,
    compute: &[IntervalSet],
    span_ns: &[Ns],
    opts: &CommOptions,
    step: Option<StepNo>,
    devices: &[Device],
) -> Comm {
    let calls = calls::find_calls(job);
    let matching = matching::match_calls(job, &calls);
    let offsets = align::offsets(job, &calls, &matching.instances, opts.align);
    let timed: Vec<TimedInstance> = matching
        .instances
        .par_iter()
        .map(|inst| {
            let (members, outside) = timing::members(job, &calls, inst, &offsets);
            let size = calls.groups[inst.group as usize].members.len() as u32;
            TimedInstance {
                timing: timing::summarize(inst, &members, size, outside),
                members,
            }
        })
        .collect();
    let topology = Topology::of(job, &opts.topology, devices);
    let m = stats::Matched {
        calls: &calls,
        instances: &matching.instances,
        timed: &timed,
        step,
    };
    let types = stats::type_stats(job, &m, compute, span_ns, &topology);
    let worst = stats::worst_instances(&m);
    let p2p = stats::p2p_matrix(&m);
    let slow_links = slow_links::slow_links(&m, &topology);
    let stalls = stalls::stalls(job, &m, compute, &topology);
    Comm {
        stalls,
        types,
        worst,
        p2p,
        slow_links,
        calls,
        matching,
        align: opts.align,
        offsets,
        timed,
        topology,
    }
}
