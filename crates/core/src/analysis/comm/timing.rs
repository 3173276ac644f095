//! Per-instance timing in aligned time (docs/metrics.md, "Collective instance"):
//! arrival skew = max start − min start; last arriver = the rank with the latest start;
//! per-rank wait = max start − own start, at most the rank's own call; transit = end − max start, with "end" the last
//! arriver's end (its whole duration is transfer: everyone else had arrived);
//! R_wait = 1 − T_avg/T_max over per-rank durations (Hermes eq. 2);
//! algbw = bytes / transit; busbw = algbw × the operation's factor for the group size.

use super::align::Offset;
use super::calls::Calls;
use super::matching::Instance;
use super::measured::{self, Outside};
use super::op::bus_factor;
use crate::model::{Job, RankId};
use crate::time::Ns;

/// One participant of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemberTiming {
    /// Rank id.
    pub rank: RankId,
    /// Aligned start.
    pub start_ns: Ns,
    /// Aligned end.
    pub end_ns: Ns,
    /// Time waiting for the last arriver: max start − own start.
    pub wait_ns: Ns,
    /// Own end − max start (≥ 0): the rank's share of the transfer.
    pub transit_ns: Ns,
}

/// The timing summary of one instance.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Timing {
    /// Last arrival − min start (the last arrival: the latest start, or a measured one).
    pub skew_ns: Ns,
    /// Rank with the latest start (ties: lowest id), or the rank outside the loaded
    /// members whose arrival their waits measured later still.
    pub last_arriver: RankId,
    /// The last arriver is not loaded: its arrival is measured by the members' waits for
    /// it (HCCL `Notify_Wait`, [`measured`]), and the transit is the members' longest.
    pub last_arriver_measured: bool,
    /// The last arriver's duration: the transfer with nobody left to wait for.
    pub transit_ns: Ns,
    /// Σ per-rank waits.
    pub wait_ns: Ns,
    /// Σ per-rank transits (own end − max start).
    pub member_transit_ns: Ns,
    /// Σ per-rank durations.
    pub busy_ns: Ns,
    /// 1 − mean duration / max duration.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub r_wait: f64,
    /// bytes / transit, GB/s (10⁹ B/s).
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub algbw_gbps: Option<f64>,
    /// algbw × bus factor, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub busbw_gbps: Option<f64>,
}

/// Members' aligned timing, in member order, and the latest arrival the members measured of
/// a rank that is not one of them ([`measured`]), when it came after every member's start.
pub fn members(
    job: &Job,
    calls: &Calls,
    inst: &Instance,
    offsets: &[Offset],
) -> (Vec<MemberTiming>, Option<Outside>) {
    let group = &calls.groups[inst.group as usize].members;
    let ids: Vec<RankId> = inst.members.iter().map(|m| job.rank(m.rank).id).collect();
    let mut outside: Option<Outside> = None;
    let spans: Vec<(RankId, Ns, Ns)> = inst
        .members
        .iter()
        .map(|m| {
            let rank = job.rank(m.rank);
            let e = calls.per_rank[m.rank.get()][m.call as usize].event.0 as usize;
            let off = offsets[m.rank.get()].offset_ns;
            let (start, end) = (rank.events.start[e], rank.events.end(e));
            let waits = measured::first_waits(rank, start, end);
            let o = measured::outside_arrival(&waits, start + off, group, |r| ids.contains(&r));
            if o.is_some_and(|o| outside.is_none_or(|b| o.at > b.at)) {
                outside = o;
            }
            (rank.id, start + off, end + off)
        })
        .collect();
    let last_start = spans.iter().map(|s| s.1).max().unwrap_or(0);
    let outside = outside.filter(|o| o.at > last_start);
    let last = outside.map_or(last_start, |o| o.at);
    let m = spans
        .into_iter()
        .map(|(rank, start, end)| MemberTiming {
            rank,
            start_ns: start,
            end_ns: end,
            // A rank waits inside its own call: with imperfect clock alignment the last
            // arrival can fall after a member's call ended, which is no wait beyond its end.
            wait_ns: (last - start).min(end - start),
            transit_ns: (end - last).max(0),
        })
        .collect();
    (m, outside)
}

/// The summary of an instance from its members' timing; `group_size` sets the bus factor.
pub fn summarize(
    inst: &Instance,
    m: &[MemberTiming],
    group_size: u32,
    outside: Option<Outside>,
) -> Timing {
    let first = m.iter().map(|x| x.start_ns).min().unwrap_or(0);
    // Latest start; among equal starts the lowest rank id (members are in rank order).
    let last = m.iter().fold(None::<&MemberTiming>, |best, x| match best {
        Some(b) if b.start_ns >= x.start_ns => Some(b),
        _ => Some(x),
    });
    let (last_arriver, arrived, transit) = match outside {
        // The late rank's own call is not loaded: the transfer is what the members spent
        // after it arrived.
        Some(o) => (
            o.rank,
            o.at,
            m.iter().map(|x| x.transit_ns).max().unwrap_or(0),
        ),
        None => last.map_or((RankId(0), first, 0), |l| {
            (l.rank, l.start_ns, l.end_ns - l.start_ns)
        }),
    };
    let durs = m.iter().map(|x| x.end_ns - x.start_ns);
    let busy: Ns = durs.clone().sum();
    let max_dur = durs.max().unwrap_or(0);
    let r_wait = if max_dur > 0 && !m.is_empty() {
        1.0 - (busy as f64 / m.len() as f64) / max_dur as f64
    } else {
        0.0
    };
    let algbw = match inst.bytes {
        Some(b) if transit > 0 => Some(b as f64 / transit as f64),
        _ => None,
    };
    let (num, den) = bus_factor(inst.op, group_size);
    Timing {
        skew_ns: arrived - first,
        last_arriver,
        last_arriver_measured: outside.is_some(),
        transit_ns: transit,
        wait_ns: m.iter().map(|x| x.wait_ns).sum(),
        member_transit_ns: m.iter().map(|x| x.transit_ns).sum(),
        busy_ns: busy,
        r_wait,
        algbw_gbps: algbw,
        busbw_gbps: algbw.map(|a| a * num as f64 / den as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CollOp;

    fn inst(op: CollOp, bytes: u64) -> Instance {
        Instance {
            group: 0,
            op,
            step: Some(crate::model::StepNo(1)),
            index: 0,
            bytes: Some(bytes),
            p2p: None,
            members: Vec::new(),
        }
    }

    fn member(rank: u32, start: Ns, end: Ns, last: Ns) -> MemberTiming {
        MemberTiming {
            rank: RankId(rank),
            start_ns: start,
            end_ns: end,
            wait_ns: last - start,
            transit_ns: (end - last).max(0),
        }
    }

    #[test]
    fn bus_bandwidth_per_collective_type() {
        // Four ranks arrive at 0, 10, 20, 40 µs; all end at 140 µs: transit 100 µs.
        let m: Vec<MemberTiming> = [0, 10_000, 20_000, 40_000]
            .iter()
            .enumerate()
            .map(|(r, &s)| member(r as u32, s, 140_000, 40_000))
            .collect();
        // 100 MB over 100 µs = 1000 GB/s algbw.
        for (op, busbw) in [
            (CollOp::AllReduce, 1500.0),
            (CollOp::AllGather, 750.0),
            (CollOp::ReduceScatter, 750.0),
            (CollOp::AllToAll, 750.0),
            (CollOp::Broadcast, 1000.0),
            (CollOp::Reduce, 1000.0),
        ] {
            let t = summarize(&inst(op, 100_000_000), &m, 4, None);
            assert_eq!(t.algbw_gbps, Some(1000.0), "{op:?}");
            assert_eq!(t.busbw_gbps, Some(busbw), "{op:?}");
            assert_eq!(t.skew_ns, 40_000);
            assert_eq!(t.last_arriver, RankId(3));
            assert_eq!(t.transit_ns, 100_000);
            assert_eq!(t.wait_ns, 40_000 + 30_000 + 20_000);
            // Durations 140, 130, 120, 100 µs: 1 − 122.5/140.
            assert!((t.r_wait - 0.125).abs() < 1e-12);
        }
    }

    #[test]
    fn a_measured_outside_arrival_is_the_last_one() {
        // Loaded ranks start at 0 and 10 µs; both waited for rank 7 until 50 µs and end at
        // 80 and 90 µs: skew 50 µs, rank 7 last, transit the members' longest (40 µs).
        let m = [
            member(0, 0, 80_000, 50_000),
            member(1, 10_000, 90_000, 50_000),
        ];
        let o = Outside {
            rank: RankId(7),
            at: 50_000,
        };
        let t = summarize(&inst(CollOp::AllReduce, 4_000_000), &m, 8, Some(o));
        assert_eq!((t.last_arriver, t.last_arriver_measured), (RankId(7), true));
        assert_eq!((t.skew_ns, t.transit_ns), (50_000, 40_000));
        assert_eq!(t.wait_ns, 50_000 + 40_000);
        // 4 MB over 40 µs = 100 GB/s algbw; 8 ranks: × 2·7/8.
        assert_eq!(t.busbw_gbps, Some(175.0));
    }

    #[test]
    fn ties_name_the_lowest_rank_and_unknown_size_has_no_bandwidth() {
        let m = [member(4, 0, 50, 0), member(7, 0, 50, 0)];
        let mut i = inst(CollOp::AllReduce, 0);
        i.bytes = None;
        let t = summarize(&i, &m, 2, None);
        assert_eq!((t.last_arriver, t.skew_ns, t.wait_ns), (RankId(4), 0, 0));
        assert_eq!((t.algbw_gbps, t.busbw_gbps), (None, None));
        assert_eq!(t.r_wait, 0.0);
        // Instant calls (zero durations, as some traces record them): no ratio, not NaN.
        let m = [member(4, 10, 10, 10), member(7, 10, 10, 10)];
        assert_eq!(summarize(&i, &m, 2, None).r_wait, 0.0);
        // … and no bandwidth: bytes over no transfer time is no figure, not infinity.
        i.bytes = Some(1000);
        assert_eq!(summarize(&i, &m, 2, None).algbw_gbps, None);
    }
}
