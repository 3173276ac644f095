//! Unaligned HCCL transfers (docs/metrics.md "Unaligned transfers"): msprof-analyze's
//! byte-alignment rule, measured. HCCL splits an op's buffer into the data-moving tasks of
//! its planes; a task over a link (SDMA, not `ON_CHIP`) of more than [`ALIGNMENT`] bytes whose
//! size is not a multiple of it is unaligned. msprof-analyze reports such ops; here each
//! unaligned task is also timed against the aligned tasks of the same op that ran beside it:
//! its **tail** is the time it kept running after every one of them had finished — the most
//! that aligning it could take off the op. Tasks belong to the op of the same rank whose span
//! contains their start.

use super::stats::ALIGNMENT;
use crate::model::{
    EventIx, Job, Kind, LaneSide, Link, PlaneTransfer, Rank, RankId, StepNo, Transport,
};
use crate::time::Ns;
use serde::Serialize;

/// Every op with unaligned transfers, and whether any rank recorded transfer sizes at all.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Unaligned {
    /// Some rank in scope recorded its plane tasks' sizes (Ascend Level1 and above): without
    /// them nothing can be said either way.
    pub recorded: bool,
    /// Ops with an unaligned transfer, most unaligned time first.
    pub ops: Vec<UnalignedOp>,
}

/// One op on one rank whose transfers include unaligned ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnalignedOp {
    /// The rank.
    pub rank: RankId,
    /// The op's step.
    pub step: Option<StepNo>,
    /// The op (`hcom_allReduce__586_0_1`).
    pub name: String,
    /// Its transfers over links of more than [`ALIGNMENT`] bytes: count, Σ bytes, Σ time.
    pub transfers: u64,
    /// Σ bytes of those.
    pub bytes: u64,
    /// Σ task time of those.
    pub time_ns: Ns,
    /// The unaligned ones among them.
    pub unaligned: u64,
    /// Σ bytes of the unaligned ones.
    pub unaligned_bytes: u64,
    /// Σ task time of the unaligned ones.
    pub unaligned_ns: Ns,
    /// Their distinct sizes, ascending.
    pub sizes: Vec<u64>,
    /// The time unaligned transfers ran on after every aligned transfer beside them had
    /// finished (a union: overlapping tails count once).
    pub tail_ns: Ns,
}

impl UnalignedOp {
    /// Bandwidth of the unaligned transfers, GB/s.
    pub fn unaligned_gbps(&self) -> Option<f64> {
        gbps(self.unaligned_bytes, self.unaligned_ns)
    }

    /// Bandwidth of the aligned transfers, GB/s.
    pub fn aligned_gbps(&self) -> Option<f64> {
        gbps(
            self.bytes - self.unaligned_bytes,
            self.time_ns - self.unaligned_ns,
        )
    }
}

fn gbps(bytes: u64, ns: Ns) -> Option<f64> {
    (ns > 0 && bytes > 0).then(|| bytes as f64 / ns as f64)
}

/// The ops with unaligned transfers among the ranks and steps in scope.
pub fn unaligned(job: &Job, in_scope: impl Fn(RankId, StepNo) -> bool) -> Unaligned {
    let mut out = Unaligned::default();
    for rank in &job.ranks {
        if rank.transfers.is_empty() {
            continue;
        }
        let mut any = false;
        for (op, tasks) in by_op(rank) {
            let step = rank.step_of(op.index());
            if !step.is_some_and(|s| in_scope(rank.id, s)) {
                continue;
            }
            any = true;
            let name = job
                .strings
                .resolve(rank.events.name[op.index()])
                .to_string();
            out.ops.extend(judge(rank, &tasks, name, step));
        }
        out.recorded |= any;
    }
    out.ops.sort_by(|a, b| {
        (b.tail_ns, b.unaligned_ns, a.rank, &a.name).cmp(&(
            a.tail_ns,
            a.unaligned_ns,
            b.rank,
            &b.name,
        ))
    });
    out
}

/// The rank's transfers grouped by the op whose span holds their start (the latest such op
/// when several do), ops in start order.
fn by_op(rank: &Rank) -> Vec<(EventIx, Vec<PlaneTransfer>)> {
    let ev = &rank.events;
    let mut ops: Vec<usize> = (0..ev.len())
        .filter(|&i| {
            ev.kind[i] == Kind::Comm && rank.lanes[ev.lane[i] as usize].side == LaneSide::Device
        })
        .collect();
    ops.sort_by_key(|&i| (ev.start[i], i));
    let mut out: Vec<(EventIx, Vec<PlaneTransfer>)> =
        ops.iter().map(|&i| (EventIx::of(i), Vec::new())).collect();
    for t in &rank.transfers {
        let at = ev.start[t.event.index()];
        let before = ops.partition_point(|&i| ev.start[i] <= at);
        // Ops rarely overlap (one per group at a time): a short look back finds the holder.
        let holder = (0..before).rev().take(8).find(|&k| ev.end(ops[k]) >= at);
        if let Some(k) = holder {
            out[k].1.push(*t);
        }
    }
    out.retain(|(_, t)| !t.is_empty());
    out
}

/// A transfer the rule judges: SDMA over a link, more than [`ALIGNMENT`] bytes.
fn counted(t: &PlaneTransfer) -> bool {
    t.transport == Transport::Sdma && t.link != Link::OnChip && t.bytes > ALIGNMENT
}

fn is_unaligned(t: &PlaneTransfer) -> bool {
    t.bytes % ALIGNMENT != 0
}

/// One op's verdict: `None` when none of its counted transfers is unaligned.
fn judge(
    rank: &Rank,
    tasks: &[PlaneTransfer],
    name: String,
    step: Option<StepNo>,
) -> Option<UnalignedOp> {
    let ev = &rank.events;
    let span = |t: &PlaneTransfer| (ev.start[t.event.index()], ev.end(t.event.index()));
    let counted: Vec<&PlaneTransfer> = tasks.iter().filter(|t| counted(t)).collect();
    let (bad, good): (Vec<&PlaneTransfer>, Vec<&PlaneTransfer>) =
        counted.iter().partition(|t| is_unaligned(t));
    if bad.is_empty() {
        return None;
    }
    let sum = |v: &[&PlaneTransfer]| -> (u64, Ns) {
        v.iter().fold((0, 0), |(b, n), t| {
            (b + t.bytes, n + (span(t).1 - span(t).0))
        })
    };
    let ((bytes, time_ns), (unaligned_bytes, unaligned_ns)) = (sum(&counted), sum(&bad));
    let good_spans: Vec<(Ns, Ns)> = good.iter().map(|t| span(t)).collect();
    let tails = bad
        .iter()
        .map(|t| tail(span(t), t.bytes, &good_spans, sum(&good)));
    let mut sizes: Vec<u64> = bad.iter().map(|t| t.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    Some(UnalignedOp {
        rank: rank.id,
        step,
        name,
        transfers: counted.len() as u64,
        bytes,
        time_ns,
        unaligned: bad.len() as u64,
        unaligned_bytes,
        unaligned_ns,
        sizes,
        tail_ns: union_len(tails.collect()),
    })
}

/// The part of an unaligned transfer `(start, end)` after every aligned transfer beside it
/// had finished. With none beside it, the part beyond what its bytes take at the op's
/// aligned rate; with no aligned transfer in the op at all, all of it (nothing to compare).
fn tail((start, end): (Ns, Ns), bytes: u64, aligned: &[(Ns, Ns)], (ab, an): (u64, Ns)) -> (Ns, Ns) {
    let beside = aligned
        .iter()
        .filter(|&&(s, e)| s < end && e > start)
        .map(|&(_, e)| e)
        .max();
    let from = match beside {
        Some(last) => last,
        None if ab > 0 && an > 0 => start + (bytes as f64 * an as f64 / ab as f64) as Ns,
        None => start,
    };
    (from.clamp(start, end), end)
}

/// Length of the union of intervals.
fn union_len(mut v: Vec<(Ns, Ns)>) -> Ns {
    v.sort_unstable();
    let (mut total, mut reach) = (0, Ns::MIN);
    for (s, e) in v {
        let s = s.max(reach);
        if e > s {
            total += e - s;
            reach = e;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_is_what_runs_after_the_aligned_neighbours() {
        // Beside aligned transfers ending at 130 and 150: it ran on from 150 to 160.
        assert_eq!(
            tail((100, 160), 1000, &[(90, 130), (100, 150)], (2, 2)),
            (150, 160)
        );
        // Finished first: no tail.
        assert_eq!(tail((100, 140), 1000, &[(100, 150)], (2, 2)), (140, 140));
        // Alone: beyond 1000 B at the op's aligned 2 B/ns (500 ns), from 100 + 500.
        assert_eq!(
            tail((100, 700), 1000, &[(800, 900)], (400, 200)),
            (600, 700)
        );
        // Nothing to compare with: all of it.
        assert_eq!(tail((100, 700), 1000, &[], (0, 0)), (100, 700));
    }

    #[test]
    fn tails_overlap_once() {
        assert_eq!(union_len(vec![(10, 20), (15, 30), (40, 41), (50, 50)]), 21);
        assert_eq!(union_len(vec![]), 0);
    }

    #[test]
    fn only_sdma_transfers_over_links_above_512_bytes_count() {
        let t = |transport, link, bytes| PlaneTransfer {
            event: EventIx(0),
            transport,
            link,
            bytes,
        };
        let hccs = Link::Over(Transport::Hccs);
        assert!(counted(&t(Transport::Sdma, hccs, 1_937_312)));
        assert!(is_unaligned(&t(Transport::Sdma, hccs, 1_937_312)));
        assert!(!is_unaligned(&t(Transport::Sdma, hccs, 2_064_384)));
        assert!(!counted(&t(Transport::Sdma, Link::OnChip, 1_937_312)));
        assert!(!counted(&t(
            Transport::Rdma,
            Link::Over(Transport::Rdma),
            1_937_312
        )));
        assert!(!counted(&t(Transport::Sdma, hccs, 512)));
    }
}
