//! Communication: poor overlap, waiting for late ranks, low bandwidth, small or misaligned
//! messages, slow links. Their evidence is seen in the communication view.

use super::{Bound, Rule, describe, distinct, per_rank, rows_span, share};
use crate::analysis::advisor::{Category, Draft, Facts, Focus, Kind, Quantity, Thresholds};
use crate::analysis::comm::stats::{BusTarget, TypeStats};
use crate::analysis::comm::unaligned::{Unaligned, UnalignedOp};
use crate::analysis::critical_path::{Category as Cp, Window};
use crate::model::{CollOp, RankId};
use crate::time::Ns;

/// The communication rules.
pub const RULES: &[Rule] = &[
    Rule {
        id: "poor_overlap",
        category: Category::Communication,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: poor_overlap,
    },
    Rule {
        id: "comm_wait_dominated",
        category: Category::Communication,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: comm_wait_dominated,
    },
    Rule {
        id: "stalled_transfer",
        category: Category::Communication,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: stalled_transfer,
    },
    Rule {
        id: "low_bandwidth",
        category: Category::Communication,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: low_bandwidth,
    },
    Rule {
        id: "small_messages",
        category: Category::Communication,
        kind: Kind::Opportunity,
        bound: Bound::None,
        detect: small_messages,
    },
    Rule {
        id: "misaligned_sizes",
        category: Category::Communication,
        kind: Kind::Opportunity,
        bound: Bound::PerRank,
        detect: misaligned_sizes,
    },
    Rule {
        id: "slow_link",
        category: Category::Communication,
        kind: Kind::Problem,
        bound: Bound::Total,
        detect: slow_link,
    },
    Rule {
        id: "slow_transport_link",
        category: Category::Communication,
        kind: Kind::Problem,
        bound: Bound::PerRank,
        detect: slow_transport_link,
    },
];

/// A collective type in a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInGroup {
    /// The operation.
    pub op: CollOp,
    /// The group.
    pub group: String,
}

/// What a communication finding claims.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Little communication is hidden behind compute.
    PoorOverlap {
        /// Hidden / all communication.
        ratio: f64,
        /// Exposed communication per rank.
        exposed_ns: Ns,
        /// Exposed / span.
        exposed_share: f64,
    },
    /// Collectives that mostly wait for a late rank (the worst type).
    WaitDominated {
        /// The type.
        of: TypeInGroup,
        /// wait / (wait + transit).
        wait_ratio: f64,
        /// The rank the group waited for most: (rank, instances it was last at, instances).
        late: Option<(RankId, u64, u64)>,
        /// Most of that wait was there before the step began: the rank entered it late.
        late_entry: bool,
        /// Set when HCCL's own split measured the waiting: the group's members that are not
        /// loaded, one of which the loaded ranks waited for alike.
        unloaded: Option<u32>,
    },
    /// Transfers that took many times what their size needs at the best bandwidth their
    /// type reached, every loaded rank present (the worst instance).
    StalledTransfer {
        /// The type.
        of: TypeInGroup,
        /// The worst instance's event name.
        name: Option<String>,
        /// Its transit.
        transit_ns: Ns,
        /// What its size needs at the reference busbw.
        expected_ns: Ns,
        /// The reference: the type's best busbw in the group, GB/s.
        reference_gbps: f64,
        /// Stalled instances.
        instances: u64,
        /// Ranks of the group that are not loaded.
        missing: Vec<RankId>,
    },
    /// Transfers far below the link's peak (the worst type).
    LowBandwidth {
        /// The type.
        of: TypeInGroup,
        /// Median busbw.
        busbw_gbps: f64,
        /// busbw / peak.
        of_peak: f64,
        /// The link judged against.
        link: Option<String>,
    },
    /// Many small messages (the worst type).
    SmallMessages {
        /// The type.
        of: TypeInGroup,
        /// Small calls.
        small: u64,
        /// All calls.
        calls: u64,
        /// The threshold, bytes.
        threshold: u64,
    },
    /// Sizes not a multiple of 512 B (the worst type).
    Misaligned {
        /// The type.
        of: TypeInGroup,
        /// Misaligned calls.
        calls: u64,
    },
    /// HCCL ops whose transfers over links include sizes not a multiple of 512 B, timed
    /// against the aligned transfers beside them (comm/unaligned.rs).
    UnalignedTransfers {
        /// Ops with an unaligned transfer (by name), and the ranks they ran on.
        ops: u64,
        /// The ranks.
        ranks: u64,
        /// Their unaligned transfers.
        unaligned: u64,
        /// The first op's smallest unaligned size.
        size: u64,
        /// Bandwidth of the unaligned transfers, and of the aligned ones of the same ops.
        gbps: (Option<f64>, Option<f64>),
        /// Σ time unaligned transfers ran on after their aligned neighbours had finished.
        tail_ns: Ns,
    },
    /// A link whose bandwidth in HCCL's matrix is far below its transport's median in the
    /// group (the one with the most excess time).
    SlowTransportLink {
        /// HCCL's group id.
        group: String,
        /// Sender and receiver, communicator ranks.
        src: u32,
        /// Receiver.
        dst: u32,
        /// The link type.
        transport: &'static str,
        /// Its bandwidth, GB/s.
        gbps: f64,
        /// The median of the group's links of that type.
        median_gbps: f64,
        /// Slow links in all.
        slow: u64,
    },
    /// A rank whose transfers are slower than its group's, or a point-to-point link (`peer`
    /// set) slower than the job's other pairs.
    SlowLink {
        /// The rank (of a pair: the lower).
        rank: RankId,
        /// The link's other end.
        peer: Option<RankId>,
        /// Its group.
        group: String,
        /// Its mean transit.
        transit_ns: Ns,
        /// The group's median.
        median_ns: Ns,
    },
}

fn claim(c: Claim) -> crate::analysis::advisor::Claim {
    crate::analysis::advisor::Claim::Communication(c)
}

fn type_in(op: CollOp, group: &str) -> TypeInGroup {
    TypeInGroup {
        op,
        group: group.to_string(),
    }
}

/// A type's Σ-over-ranks time, per rank: over the ranks in scope (a rank that does not
/// call the type loses nothing to it), but at least over the calling ranks — the type's
/// statistics cover every rank that calls it, whatever ranks the report is scoped to
/// (`--rank`).
fn per_calling_rank(ns: Ns, c: &TypeStats, f: &Facts) -> Ns {
    ns / Ns::from(c.ranks.max(f.ranks).max(1))
}

/// Communication not hidden behind compute.
pub fn poor_overlap(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let (hidden, exposed, bare): (Ns, Ns, Ns) = f.rows.iter().fold((0, 0, 0), |a, b| {
        (a.0 + b.overlap_ns, a.1 + b.comm_ns, a.2 + b.compute_ns)
    });
    let ratio = share(hidden, hidden + exposed);
    let exposed_share = share(exposed, rows_span(f));
    // Overlap hides communication behind compute that runs beside it: with none left to
    // overlap (a rank that only communicates) there is nothing to gain.
    if bare == 0 || ratio >= t.overlap_ratio || exposed_share < t.exposed_comm_share {
        return None;
    }
    // Waiting for a late rank is not an overlap problem: count transfer only.
    let waiting = f
        .comm
        .iter()
        .map(|c| c.waiting_ratio.unwrap_or(0.0))
        .fold(0.0, f64::max);
    // DDP/FSDP buckets overlap collectives; a pipeline's exposed sends and receives are its
    // bubble (the stage findings'): only the collectives' share of the exposed time counts.
    let by_type = |p2p: bool| -> Ns {
        let of = f.comm.iter().filter(|c| c.op.is_p2p() == p2p);
        of.map(|c| c.exposed_ns).sum()
    };
    let (collective, p2p) = (by_type(false), by_type(true));
    if collective == 0 && p2p > 0 {
        return None;
    }
    let collective_share = if p2p == 0 {
        1.0
    } else {
        share(collective, collective + p2p)
    };
    let hideable = ((exposed as f64 * (1.0 - waiting) * collective_share) as Ns).min(bare);
    let impact = per_rank(hideable, f);
    let c = Claim::PoorOverlap {
        ratio,
        exposed_ns: per_rank(exposed, f),
        exposed_share,
    };
    Some(
        Draft::new(impact, claim(c))
            .steps(f.steps.iter().map(|s| s.step))
            .ops(
                f.comm
                    .iter()
                    .filter(|c| !c.op.is_p2p())
                    .map(|c| c.op.as_str()),
            )
            .number("overlap_ratio", Quantity::Ratio(ratio))
            .number("exposed_share", Quantity::Ratio(exposed_share))
            .focus(Focus::Comm),
    )
}

/// Collectives dominated by waiting for a late rank — when no straggler or slow-step finding
/// already names that rank (one finding per cause).
pub fn comm_wait_dominated(f: &Facts, t: &Thresholds) -> Option<Draft> {
    if f.stragglers.iter().any(|s| s.flagged) || !f.slow_steps.is_empty() {
        return None;
    }
    // Receives of a pipeline wait for the stage before them, and a group across stages for
    // the pipeline's drain: that is its bubble and its stage imbalance (stage_imbalance),
    // not a late rank.
    let pipeline = f.stages.is_some();
    let w: Vec<_> = f
        .comm
        .iter()
        .filter(|c| c.wait_dominated && !(pipeline && (c.op.is_p2p() || f.across_stages(&c.group))))
        .collect();
    let worst = w.iter().max_by_key(|c| c.exposed_ns)?;
    let average: Ns = w
        .iter()
        .map(|c| {
            per_calling_rank(
                (c.exposed_ns as f64 * c.waiting_ratio.unwrap_or(0.0)) as Ns,
                c,
                f,
            )
        })
        .sum();
    // The step waits on the path for what no rank's recorded work explains: collective
    // waits there are step time the late rank cost, however few ranks waited. The path is
    // one step's: it measures the scope only when the scope is that step.
    let on_path = match (f.critical, f.steps) {
        (Some(c), [one]) if c.window == Window::Step(one.step) => c.time_in(Cp::Wait),
        _ => 0,
    };
    let impact = average.max(on_path);
    // Both per rank: the impact is per calling rank, the span Σ over the rows in scope.
    if share(impact, per_rank(rows_span(f), f)) < t.exposed_comm_share / 5.0 {
        return None;
    }
    let wait_ratio = worst.waiting_ratio.unwrap_or(0.0);
    // HCCL's split set the ratio: the loaded ranks could not see who was late, and the last
    // of them to arrive is not who they waited for.
    let by_hccl = worst.waiting().1;
    // Stragglers are sorted by imposed wait within a group: the first is who it waited for.
    let late = (!by_hccl)
        .then(|| f.stragglers.iter().find(|s| s.group == worst.group))
        .flatten();
    let c = Claim::WaitDominated {
        of: type_in(worst.op, &worst.group),
        wait_ratio,
        late: late.map(|s| (s.rank, s.last_arrivals, s.instances)),
        late_entry: late.is_some_and(|s| s.late_entry_wait_ns * 2 >= s.imposed_wait_ns),
        unloaded: by_hccl.then_some(worst.unloaded_members),
    };
    let mut d = Draft::new(impact, claim(c))
        .ranks(late.map(|s| s.rank))
        .ops(w.iter().map(|c| describe(c.op, &c.group)))
        .number("wait_ratio", Quantity::Ratio(wait_ratio))
        .number("exposed_ns", Quantity::Ns(worst.exposed_ns))
        .number("wait_ns", Quantity::Ns(worst.wait_ns))
        .number("transit_ns", Quantity::Ns(worst.transit_ns))
        .number("critical_wait_ns", Quantity::Ns(on_path))
        .focus(Focus::Comm);
    // What HCCL itself measured: the evidence of a ratio the skew could not show.
    if let Some(h) = worst.hccl {
        d = d
            .number("hccl_elapse_ns", Quantity::Ns(h.elapse_ns))
            .number("hccl_transit_ns", Quantity::Ns(h.transit_ns));
    }
    Some(d)
}

/// Transfers that stalled after every loaded rank arrived: the time went to a rank that is
/// not loaded or to a link (comm/stalls.rs). The impact is the stalls' exposed excess.
pub fn stalled_transfer(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let worst = f.stalls.first()?;
    let impact = per_rank(f.stalls.iter().map(|s| s.exposed_excess_ns).sum(), f);
    if share(impact, per_rank(rows_span(f), f)) < t.exposed_comm_share / 5.0 {
        return None;
    }
    let ops = distinct(f.stalls.iter().filter_map(|s| s.name.clone()));
    let c = Claim::StalledTransfer {
        of: type_in(worst.op, &worst.group),
        name: worst.name.clone(),
        transit_ns: worst.transit_ns,
        expected_ns: worst.expected_ns,
        reference_gbps: worst.reference_busbw_gbps,
        instances: f.stalls.len() as u64,
        missing: worst.missing_ranks.clone(),
    };
    Some(
        Draft::new(impact, claim(c))
            .ranks(distinct(
                f.stalls.iter().flat_map(|s| s.ranks.iter().copied()),
            ))
            .steps(distinct(f.stalls.iter().filter_map(|s| s.step)))
            .ops(ops.into_iter().chain([describe(worst.op, &worst.group)]))
            .number("transit_ns", Quantity::Ns(worst.transit_ns))
            .number("expected_ns", Quantity::Ns(worst.expected_ns))
            .number("reference_gbps", Quantity::Gbps(worst.reference_busbw_gbps))
            .focus(Focus::Comm),
    )
}

/// Transfers far below the link's peak.
pub fn low_bandwidth(f: &Facts, t: &Thresholds) -> Option<Draft> {
    let low: Vec<_> = f
        .comm
        .iter()
        .filter(|c| !c.wait_dominated && c.busbw_of_peak.is_some_and(|b| b < t.busbw_of_peak))
        .filter(|c| c.bytes.as_ref().is_some_and(|b| b.median >= 1 << 20))
        .collect();
    let worst = low.iter().max_by_key(|c| c.exposed_ns)?;
    let impact: Ns = low
        .iter()
        .map(|c| {
            let ns = c.exposed_ns as f64
                * (1.0 - c.busbw_of_peak.unwrap_or(1.0) / t.busbw_of_peak).max(0.0);
            per_calling_rank(ns as Ns, c, f)
        })
        .sum();
    let c = Claim::LowBandwidth {
        of: type_in(worst.op, &worst.group),
        busbw_gbps: worst.busbw_gbps.unwrap_or(0.0),
        of_peak: worst.busbw_of_peak.unwrap_or(0.0),
        link: worst.link.clone(),
    };
    Some(
        Draft::new(impact, claim(c))
            .ops(low.iter().map(|c| describe(c.op, &c.group)))
            .number(
                "busbw_gbps",
                Quantity::Gbps(worst.busbw_gbps.unwrap_or(0.0)),
            )
            .number("peak_gbps", Quantity::Gbps(worst.peak_gbps.unwrap_or(0.0)))
            .bandwidth(low.iter().filter_map(|c| {
                // What the threshold calls healthy on its link.
                let gbps = c.peak_gbps? * t.busbw_of_peak;
                Some(BusTarget {
                    op: c.op,
                    group: c.group.clone(),
                    mbps: (gbps * 1000.0) as u64,
                })
            }))
            .focus(Focus::Comm),
    )
}

/// Many small messages.
pub fn small_messages(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let small: Vec<_> = f.comm.iter().filter(|c| c.small_flag).collect();
    let worst = small.iter().max_by_key(|c| c.exposed_ns)?;
    let impact: Ns = small
        .iter()
        .map(|c| {
            let ns = c.exposed_ns as f64 * share(c.small_calls as Ns, c.calls as Ns);
            per_calling_rank((ns as Ns).min(c.small_bound_ns), c, f)
        })
        .sum();
    let c = Claim::SmallMessages {
        of: type_in(worst.op, &worst.group),
        small: worst.small_calls,
        calls: worst.calls,
        threshold: worst.small_threshold,
    };
    Some(
        Draft::new(impact / 2, claim(c))
            .ops(small.iter().map(|c| describe(c.op, &c.group)))
            .number("small_calls", Quantity::Count(worst.small_calls))
            .number("calls", Quantity::Count(worst.calls))
            .focus(Focus::SmallCalls(worst.small_threshold)),
    )
}

/// Message sizes not a multiple of 512 B: measured on HCCL's own transfers where it recorded
/// their sizes (then silent when all are aligned), else from the collectives' sizes.
pub fn misaligned_sizes(f: &Facts, _: &Thresholds) -> Option<Draft> {
    if let Some(u) = f.unaligned.filter(|u| u.recorded) {
        return unaligned_transfers(f, u);
    }
    let m: Vec<_> = f.comm.iter().filter(|c| c.misaligned_calls > 0).collect();
    let worst = m.iter().max_by_key(|c| c.misaligned_calls)?;
    let c = Claim::Misaligned {
        of: type_in(worst.op, &worst.group),
        calls: worst.misaligned_calls,
    };
    Some(
        Draft::new(0, claim(c))
            .ops(m.iter().map(|c| describe(c.op, &c.group)))
            .number("misaligned_calls", Quantity::Count(worst.misaligned_calls))
            .focus(Focus::Comm),
    )
}

/// HCCL's unaligned transfers. Impact: Σ tails (the most aligning could save), per rank.
fn unaligned_transfers(f: &Facts, u: &Unaligned) -> Option<Draft> {
    let first = u.ops.first()?;
    let sum = |g: fn(&UnalignedOp) -> u64| u.ops.iter().map(g).sum::<u64>();
    let (bytes, unaligned_bytes) = (sum(|o| o.bytes), sum(|o| o.unaligned_bytes));
    let time = |g: fn(&UnalignedOp) -> Ns| u.ops.iter().map(g).sum::<Ns>();
    let (time_ns, unaligned_ns) = (time(|o| o.time_ns), time(|o| o.unaligned_ns));
    let tail_ns = time(|o| o.tail_ns);
    let rate = |b: u64, t: Ns| (b > 0 && t > 0).then(|| b as f64 / t as f64);
    let mut names: Vec<String> = u.ops.iter().map(|o| o.name.clone()).collect();
    names.sort_unstable();
    names.dedup();
    let ranks = distinct(u.ops.iter().map(|o| o.rank));
    let c = Claim::UnalignedTransfers {
        ops: names.len() as u64,
        ranks: ranks.len() as u64,
        unaligned: sum(|o| o.unaligned),
        size: first.sizes[0],
        gbps: (
            rate(unaligned_bytes, unaligned_ns),
            rate(bytes - unaligned_bytes, time_ns - unaligned_ns),
        ),
        tail_ns,
    };
    // The ops most affected first (`u.ops` is in that order).
    let mut shown: Vec<String> = Vec::new();
    for o in &u.ops {
        if !shown.contains(&o.name) && shown.len() < 5 {
            shown.push(o.name.clone());
        }
    }
    Some(
        Draft::new(per_rank(tail_ns, f), claim(c))
            .ranks(ranks)
            .steps(distinct(u.ops.iter().filter_map(|o| o.step)))
            .ops(shown)
            .number("unaligned_transfers", Quantity::Count(sum(|o| o.unaligned)))
            .number("tail_ns", Quantity::Ns(tail_ns))
            .focus(Focus::Comm),
    )
}

/// A rank whose transfers are consistently slower, or a slow point-to-point link. Its fix
/// (the replay's `Links`): the transfers of its ranks at their type's median speed.
pub fn slow_link(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let worst = f
        .slow_links
        .iter()
        .max_by_key(|s| s.transit_ns - s.group_median_ns)?;
    let per_step_instances = f
        .comm
        .iter()
        .find(|c| c.group == worst.group)
        .map_or(1, |c| c.instances.max(1) as Ns);
    let c = Claim::SlowLink {
        rank: worst.rank,
        peer: worst.peer,
        group: worst.group.clone(),
        transit_ns: worst.transit_ns,
        median_ns: worst.group_median_ns,
    };
    let impact = (worst.transit_ns - worst.group_median_ns) * per_step_instances;
    Some(
        Draft::new(impact, claim(c))
            .ranks(
                f.slow_links
                    .iter()
                    .flat_map(|s| std::iter::once(s.rank).chain(s.peer)),
            )
            .ops([worst.group.clone()])
            .number("z", Quantity::Z(worst.z))
            .number("transit_ns", Quantity::Ns(worst.transit_ns))
            .focus(Focus::Comm),
    )
}

/// A link of HCCL's matrix far slower than its transport's median in the group
/// (comm/link_matrix.rs). Impact: Σ over slow links of the time beyond what their bytes take
/// at the median, per rank.
pub fn slow_transport_link(f: &Facts, _: &Thresholds) -> Option<Draft> {
    let slow: Vec<_> = f.links.iter().filter(|l| l.slow).collect();
    let worst = slow.iter().max_by_key(|l| l.excess_ns())?;
    let impact = per_rank(slow.iter().map(|l| l.excess_ns()).sum(), f);
    let c = Claim::SlowTransportLink {
        group: worst.group.clone(),
        src: worst.src,
        dst: worst.dst,
        transport: worst.transport.as_str(),
        gbps: worst.gbps.unwrap_or(0.0),
        median_gbps: worst.median_gbps.unwrap_or(0.0),
        slow: slow.len() as u64,
    };
    Some(
        Draft::new(impact, claim(c))
            .ops(slow.iter().map(|l| {
                format!(
                    "{}->{} {} ({})",
                    l.src,
                    l.dst,
                    l.transport.as_str(),
                    l.group
                )
            }))
            .number("gbps", Quantity::Gbps(worst.gbps.unwrap_or(0.0)))
            .number(
                "median_gbps",
                Quantity::Gbps(worst.median_gbps.unwrap_or(0.0)),
            )
            .focus(Focus::Comm),
    )
}
