//! Communication cause analysis (Hermes's and msprof-analyze's wait/transit split): per
//! collective type and group, how much time communication takes and hides, whether it waits
//! (a straggler upstream) or transfers slowly (the link), and the message sizes.
//!
//! - `total_ns`: Σ over ranks of call durations; `exposed_ns`: Σ over ranks of the union of
//!   the calls' intervals not covered by compute (C of the breakdown);
//!   `share_of_step` = exposed / Σ step spans of the calling ranks.
//! - `wait_ratio` = Σ wait / (Σ wait + Σ transit) over instance members; `waiting_ratio`
//!   the same, or HCCL's not-transfer share where members are not loaded
//!   ([`super::hccl_split`]); above [`WAIT_DOMINATED`] the cause is upstream (a straggler),
//!   not the network.
//! - `busbw_gbps`: median busbw over instances, against the peak of the link the group
//!   crosses.
//! - Sizes are over calls (every rank's), so a single-rank trace still shows them. Small
//!   messages: below [`SMALL_INTER_NODE`] (inter-node) or [`SMALL_INTRA_NODE`] (intra-node);
//!   flagged when more than [`SMALL_SHARE`] of the calls are small. At any scale: calls below
//!   a [`FUSION_BUCKET`] are small too when each rank makes at least [`FUSABLE_CALLS`] of
//!   them and fusing them into buckets would cut their count [`FUSION_GAIN`]-fold.
//! - Misaligned: sizes above [`ALIGNMENT`] bytes that are not a multiple of it.

use super::TimedInstance;
use super::calls::{Calls, CommGroup};
use super::hccl_split::{HcclSplit, OpTimes, waiting};
use super::links::Topology;
use super::matching::Instance;
use super::timing::{MemberTiming, Timing};
use super::waits::Unions;
use crate::analysis::intervals::IntervalSet;
use crate::analysis::stats::{median_f64, median_u64, ratio};
use crate::model::{CollOp, Job, RankId, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// Wait ratio above which communication is wait-dominated (msprof-analyze: 0.2).
pub const WAIT_DOMINATED: f64 = 0.2;
/// Small-message threshold between nodes (msprof-analyze RDMA: 1 MiB).
pub const SMALL_INTER_NODE: u64 = 1 << 20;
/// Small-message threshold inside a node (msprof-analyze SDMA: 16 MiB).
pub const SMALL_INTRA_NODE: u64 = 16 << 20;
/// Share of small instances that flags a group.
pub const SMALL_SHARE: f64 = 0.2;
/// The bucket small collectives fuse into (DDP's default, 25 MiB).
pub const FUSION_BUCKET: u64 = 25 << 20;
/// Calls below a bucket per rank (over the steps in scope) from which fusion is judged.
pub const FUSABLE_CALLS: u64 = 16;
/// How many times fewer calls fusing must make for calls of any size to count as small.
pub const FUSION_GAIN: u64 = 4;

/// Calls below a bucket that fusion would make `FUSION_GAIN` times fewer: `sizes` of every
/// rank's calls of a type, `ranks` the ranks calling it.
fn fusable(sizes: &[u64], ranks: u32) -> bool {
    let below: Vec<u64> = sizes
        .iter()
        .copied()
        .filter(|&b| b < FUSION_BUCKET)
        .collect();
    let ranks = u64::from(ranks.max(1));
    let per_rank = below.len() as u64 / ranks;
    let fused = (below.iter().sum::<u64>() / ranks)
        .div_ceil(FUSION_BUCKET)
        .max(1);
    per_rank >= FUSABLE_CALLS && per_rank >= FUSION_GAIN * fused
}
/// Sizes should be a multiple of this many bytes.
pub const ALIGNMENT: u64 = 512;
/// Worst instances kept.
pub const WORST: usize = 10;
/// A collective type of a group and the bus bandwidth its transfers reach on a healthy
/// link: what `low_bandwidth`'s replay runs its slower instances at (MB/s, an integer so
/// that fixes compare exactly).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusTarget {
    /// The collective type.
    pub op: CollOp,
    /// Its group's name.
    pub group: String,
    /// Bus bandwidth, 10⁶ B/s.
    pub mbps: u64,
}

/// Message sizes of a type/group.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Sizes {
    /// Smallest call, bytes.
    pub min: u64,
    /// Median call (floor of the mean of the middle two).
    pub median: u64,
    /// Largest call.
    pub max: u64,
    /// Σ over calls.
    pub total: u64,
    /// Calls per size class, one entry per [`SIZE_CLASSES`] bound and a last one above all.
    pub histogram: Vec<SizeClass>,
}

/// Upper bounds (exclusive) of the size classes: 64 KiB, 1 MiB, 16 MiB, 256 MiB.
pub const SIZE_CLASSES: [u64; 4] = [64 << 10, 1 << 20, 16 << 20, 256 << 20];

/// Calls in one size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SizeClass {
    /// Exclusive upper bound, bytes (`null`: the class above every bound).
    pub below: Option<u64>,
    /// Calls whose size falls in the class.
    pub calls: u64,
}

/// Sizes of sorted call sizes; `None` when there are none.
fn sizes(sorted: &[u64]) -> Option<Sizes> {
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    let mut histogram: Vec<SizeClass> = SIZE_CLASSES
        .iter()
        .map(|&b| Some(b))
        .chain([None])
        .map(|below| SizeClass { below, calls: 0 })
        .collect();
    for &b in sorted {
        let k = SIZE_CLASSES.partition_point(|&edge| edge <= b);
        histogram[k].calls += 1;
    }
    Some(Sizes {
        min,
        median: median_u64(sorted),
        max,
        total: sorted.iter().sum(),
        histogram,
    })
}

/// One collective type in one group.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TypeStats {
    /// The collective operation (point-to-point traffic is one type: `send_recv`).
    pub op: CollOp,
    /// Group name.
    pub group: String,
    /// Ranks in the group.
    pub group_size: u32,
    /// `intra_node`, `inter_node` or `host` (CPU-only).
    pub placement: &'static str,
    /// Ranks with calls of this type in scope: what the Σs below are over, so a per-rank
    /// figure divides by this, whatever ranks a report is scoped to (not in the JSON).
    #[serde(skip)]
    pub ranks: u32,
    /// Calls over all ranks.
    pub calls: u64,
    /// Matched instances.
    pub instances: u64,
    /// Σ call durations over ranks.
    pub total_ns: Ns,
    /// Σ over ranks of call time not hidden behind compute.
    pub exposed_ns: Ns,
    /// exposed / Σ step spans of the calling ranks.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share_of_step: f64,
    /// Call sizes (over every rank's calls), when known.
    pub bytes: Option<Sizes>,
    /// Σ over (rank, step) of the union of the members' waiting intervals.
    pub wait_ns: Ns,
    /// Σ over (rank, step) of the union of the members' transit intervals.
    pub transit_ns: Ns,
    /// wait / (wait + transit).
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub wait_ratio: Option<f64>,
    /// HCCL's own split of the calls' time, where it recorded one (Ascend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hccl: Option<HcclSplit>,
    /// Members of the group that are not loaded.
    pub unloaded_members: u32,
    /// The waiting share the verdicts use ([`super::hccl_split::waiting`]): `wait_ratio`,
    /// or HCCL's not-transfer share where unloaded members hide their lateness.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub waiting_ratio: Option<f64>,
    /// waiting_ratio > [`WAIT_DOMINATED`].
    pub wait_dominated: bool,
    /// Median instance busbw, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub busbw_gbps: Option<f64>,
    /// The link judged against.
    pub link: Option<String>,
    /// Its peak, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub peak_gbps: Option<f64>,
    /// busbw / peak.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub busbw_of_peak: Option<f64>,
    /// Calls below the small-message threshold.
    pub small_calls: u64,
    /// The most time the small calls can lose to being small: Σ over them of the smaller of
    /// their duration and the type's fastest call (a call's fixed per-call cost is below
    /// the whole of the fastest call; time beyond it is waiting or transfer, which
    /// fusing does not save). Not in the JSON report.
    #[serde(skip)]
    pub small_bound_ns: Ns,
    /// The threshold, bytes.
    pub small_threshold: u64,
    /// More than [`SMALL_SHARE`] of the calls of known size are small (never for send/recv:
    /// each carries one tensor to one peer, and there is nothing to bucket).
    pub small_flag: bool,
    /// Calls whose size is above and not a multiple of [`ALIGNMENT`].
    pub misaligned_calls: u64,
}

impl TypeStats {
    /// The waiting share the verdicts use, and whether HCCL's own split set it (members not
    /// loaded hid their lateness from the measured one).
    pub fn waiting(&self) -> (Option<f64>, bool) {
        (self.waiting_ratio, self.waiting_ratio > self.wait_ratio)
    }
}

/// An instance in the worst list.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorstInstance {
    /// Group name.
    pub group: String,
    /// The collective operation.
    pub op: CollOp,
    /// The step it belongs to (`None`: matched by `Seq` outside steps).
    pub step: Option<StepNo>,
    /// Position in its (group, step), or `Seq`.
    pub index: u64,
    /// Its message size (the largest member's).
    pub bytes: Option<u64>,
    /// Timing summary.
    #[serde(flatten)]
    pub timing: Timing,
    /// Per-member timing.
    pub members: Vec<MemberTiming>,
}

/// Point-to-point traffic from one rank to another.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct P2pCell {
    /// The sending rank.
    pub src: RankId,
    /// The receiving rank.
    pub dst: RankId,
    /// Transfers from `src` to `dst`.
    pub transfers: u64,
    /// Σ bytes (transfers of unknown size add nothing).
    pub bytes: u64,
    /// Σ transit.
    pub time_ns: Ns,
    /// bytes / time, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub gbps: Option<f64>,
}

/// The matched calls the summaries read, and the step they are limited to.
pub struct Matched<'a> {
    /// Every rank's calls and the groups.
    pub calls: &'a Calls,
    /// Instances (every step).
    pub instances: &'a [Instance],
    /// Each instance's timing and members (same order as `instances`).
    pub timed: &'a [TimedInstance],
    /// Only this step, when set.
    pub step: Option<StepNo>,
}

impl Matched<'_> {
    fn in_scope(&self, step: Option<StepNo>) -> bool {
        // A call outside every step is in none of the steps shown, and its time in no span.
        step.is_some() && (self.step.is_none() || step == self.step)
    }

    /// Instances in scope with their timing.
    pub(super) fn each(&self) -> impl Iterator<Item = (&Instance, &TimedInstance)> {
        self.instances
            .iter()
            .zip(self.timed)
            .filter(|(i, _)| self.in_scope(i.step))
    }
}

/// What is summed per (group, type) before the summary.
#[derive(Default)]
struct Acc {
    /// Ranks with calls of the type in scope.
    ranks: u32,
    calls: u64,
    total: Ns,
    exposed: Ns,
    spans: Ns,
    sizes: Vec<u64>,
    instances: u64,
    wait: Ns,
    transit: Ns,
    busbw: Vec<f64>,
    /// Each call's (duration, bytes).
    durations: Vec<(Ns, Option<u64>)>,
    /// HCCL's split of the calls.
    hccl: HcclSplit,
}

/// Per type/group stats, most exposed time first. `compute` is each rank's C set; `span_ns`
/// each rank's Σ span in scope (`job.ranks` order).
pub fn type_stats(
    job: &Job,
    m: &Matched,
    compute: &[IntervalSet],
    span_ns: &[Ns],
    topo: &Topology,
) -> Vec<TypeStats> {
    let mut acc = call_times(job, m, compute, span_ns);
    let (mut wait, mut transit) = (Unions::default(), Unions::default());
    for (inst, t) in m.each() {
        let key = (inst.group, key_op(inst.op));
        let a = acc.entry(key).or_default();
        a.instances += 1;
        a.busbw.extend(t.timing.busbw_gbps);
        for x in &t.members {
            let last = x.start_ns + x.wait_ns;
            wait.add(key, x.rank, inst.step, x.start_ns, last);
            transit.add(key, x.rank, inst.step, last, last + x.transit_ns);
        }
    }
    for (key, w) in wait.totals() {
        acc.entry(key).or_default().wait = w;
    }
    for (key, w) in transit.totals() {
        acc.entry(key).or_default().transit = w;
    }
    let loaded: std::collections::BTreeSet<RankId> = job.ranks.iter().map(|r| r.id).collect();
    let mut out: Vec<TypeStats> = acc
        .into_iter()
        .map(|((g, op), a)| {
            let group = &m.calls.groups[g as usize];
            let unloaded = group.members.iter().filter(|r| !loaded.contains(r)).count();
            summary(group, op, a, topo, unloaded as u32)
        })
        .collect();
    // Costliest first: what a reader should look at.
    out.sort_by_key(|t| std::cmp::Reverse(t.exposed_ns));
    out
}

/// Per rank: the union of its calls of each (group, type) in scope, minus compute — the
/// exposed time — with the calls' time, sizes and the rank's span.
fn call_times(
    job: &Job,
    m: &Matched,
    compute: &[IntervalSet],
    span_ns: &[Ns],
) -> BTreeMap<(u32, CollOp), Acc> {
    let mut acc: BTreeMap<(u32, CollOp), Acc> = BTreeMap::new();
    let times = OpTimes::of(job);
    for (r, rc) in m.calls.per_rank.iter().enumerate() {
        let ev = &job.ranks[r].events;
        let mut per: BTreeMap<(u32, CollOp), Vec<(Ns, Ns)>> = BTreeMap::new();
        for c in rc.iter().filter(|c| m.in_scope(c.step)) {
            let e = c.event.index();
            let key = (c.group, key_op(c.op));
            per.entry(key).or_default().push((ev.start[e], ev.end(e)));
            let a = acc.entry(key).or_default();
            a.sizes.extend(c.bytes);
            a.durations.push((ev.dur[e], c.bytes));
            if let Some(t) = times.get(r, job.strings.resolve(ev.name[e]), c.step) {
                a.hccl.add(t);
            }
        }
        for (key, iv) in per {
            let a = acc.entry(key).or_default();
            a.ranks += 1;
            a.calls += iv.len() as u64;
            a.total += iv.iter().map(|x| x.1 - x.0).sum::<Ns>();
            let set = IntervalSet::from_intervals(iv);
            a.exposed += set.total() - set.intersect(&compute[r]).total();
            a.spans += span_ns[r];
        }
    }
    acc
}

/// The summary of one (group, type): its placement and link, sizes, wait vs transit, busbw.
fn summary(group: &CommGroup, op: CollOp, mut a: Acc, topo: &Topology, unloaded: u32) -> TypeStats {
    let link = topo.link(&group.members);
    let intra = topo.intra_node(&group.members);
    let placement = match (topo.host_only, intra) {
        (true, _) => "host",
        (false, true) => "intra_node",
        (false, false) => "inter_node",
    };
    let absolute = if intra {
        SMALL_INTRA_NODE
    } else {
        SMALL_INTER_NODE
    };
    a.sizes.sort_unstable();
    let below = |t: u64| a.sizes.iter().filter(|&&b| b < t).count() as u64;
    let many = |n: u64| !a.sizes.is_empty() && n as f64 > SMALL_SHARE * a.sizes.len() as f64;
    let small_threshold = if !many(below(absolute)) && fusable(&a.sizes, a.ranks) {
        FUSION_BUCKET
    } else {
        absolute
    };
    let small = below(small_threshold);
    let misaligned = a
        .sizes
        .iter()
        .filter(|&&b| b > ALIGNMENT && b % ALIGNMENT != 0)
        .count() as u64;
    a.busbw.sort_by(f64::total_cmp);
    let busbw = median_f64(&a.busbw);
    let fastest = a.durations.iter().map(|d| d.0).min().unwrap_or(0);
    let small_bound_ns = a
        .durations
        .iter()
        .filter(|d| d.1.is_some_and(|b| b < small_threshold))
        .map(|d| d.0.min(fastest))
        .sum();
    let wait_ratio = (a.wait + a.transit > 0).then(|| a.wait as f64 / (a.wait + a.transit) as f64);
    let hccl = a.hccl.finish();
    let waiting_ratio = waiting(wait_ratio, hccl, unloaded);
    TypeStats {
        op,
        group: group.name.clone(),
        group_size: group.members.len() as u32,
        placement,
        ranks: a.ranks,
        calls: a.calls,
        instances: a.instances,
        total_ns: a.total,
        exposed_ns: a.exposed,
        share_of_step: ratio(a.exposed, a.spans),
        bytes: sizes(&a.sizes),
        wait_ns: a.wait,
        transit_ns: a.transit,
        wait_ratio,
        hccl,
        unloaded_members: unloaded,
        waiting_ratio,
        wait_dominated: waiting_ratio.is_some_and(|w| w > WAIT_DOMINATED),
        busbw_gbps: busbw,
        link: link.map(|l| l.name.clone()),
        peak_gbps: link.map(|l| l.peak_gbps),
        busbw_of_peak: busbw.zip(link).map(|(b, l)| b / l.peak_gbps),
        small_calls: small,
        small_bound_ns,
        small_threshold,
        small_flag: !op.is_p2p() && many(small),
        misaligned_calls: misaligned,
    }
}

/// Point-to-point traffic (sends, receives, SendRecv kernels) is one type: `send_recv`.
fn key_op(op: CollOp) -> CollOp {
    if op.is_p2p() { CollOp::SendRecv } else { op }
}

/// The [`WORST`] instances by total wait (ties: earlier group/step/index first).
pub fn worst_instances(m: &Matched) -> Vec<WorstInstance> {
    let (calls, instances, timed) = (m.calls, m.instances, m.timed);
    let mut order: Vec<usize> = (0..instances.len())
        .filter(|&i| m.in_scope(instances[i].step) && timed[i].timing.wait_ns > 0)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(timed[i].timing.wait_ns));
    order.truncate(WORST);
    order
        .into_iter()
        .map(|i| {
            let inst = &instances[i];
            WorstInstance {
                group: calls.groups[inst.group as usize].name.clone(),
                op: inst.op,
                step: inst.step,
                index: inst.index,
                bytes: inst.bytes,
                timing: timed[i].timing,
                members: timed[i].members.clone(),
            }
        })
        .collect()
}

/// Send/recv traffic by (sender, receiver).
pub fn p2p_matrix(m: &Matched) -> Vec<P2pCell> {
    let mut cells: BTreeMap<(RankId, RankId), (u64, u64, Ns)> = BTreeMap::new();
    for (inst, t) in m.each() {
        let Some(pair) = inst.p2p else {
            continue;
        };
        let c = cells.entry((pair.src, pair.dst)).or_default();
        c.0 += 1;
        c.1 += inst.bytes.unwrap_or(0);
        c.2 += t.timing.transit_ns;
    }
    cells
        .into_iter()
        .map(|((src, dst), (n, bytes, time))| P2pCell {
            src,
            dst,
            transfers: n,
            bytes,
            time_ns: time,
            gbps: (time > 0 && bytes > 0).then(|| bytes as f64 / time as f64),
        })
        .collect()
}
