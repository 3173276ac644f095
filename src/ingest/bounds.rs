//! The time range every rank must keep (`crate::time`): each instant within [`MIN_NS`,
//! `MAX_NS`], each duration within [0, [`MAX_RANK_EXTENT_NS`]], and one rank's events within
//! [`MAX_RANK_EXTENT_NS`] of each other. Readers check what they parse where they can name
//! the position (a byte, a line, a row); this check runs on every rank any reader makes, so
//! that analyses, which subtract and add times freely, never see a value that overflows.

use super::RankDraft;
use crate::error::Error;
use crate::model::Rank;
use crate::time::{MAX_NS, MAX_RANK_EXTENT_NS, MIN_NS, Ns, event_end};

/// `Ok` when the rank keeps the range; else an input error naming the first value that does
/// not (the event's byte when the reader kept it).
pub fn check(d: &RankDraft) -> Result<(), Error> {
    let r = &d.rank;
    let fail = |what: String| Error::input(&r.source.path, what);
    events(r, &d.strings).map_err(|(at, what)| match at {
        Some(b) => Error::input_at(&r.source.path, b, what),
        None => fail(what),
    })?;
    side_tables(r).map_err(fail)
}

/// Every event in range, and all of them within the rank's extent.
fn events(r: &Rank, strings: &crate::model::Interner) -> Result<(), (Option<u64>, String)> {
    let e = &r.events;
    let at = |i: usize| e.raw.get(i).filter(|s| s.len > 0).map(|s| s.offset);
    let name = |i: usize| crate::format::fit(strings.resolve(e.name[i]), 60);
    let (mut lo, mut hi) = (MAX_NS, MIN_NS);
    for i in 0..e.len() {
        let end = event_end(e.start[i], e.dur[i]).map_err(|err| {
            let what = format!(
                "event `{}` (start {} ns, duration {} ns): {err}",
                name(i),
                e.start[i],
                e.dur[i]
            );
            (at(i), what)
        })?;
        lo = lo.min(e.start[i]);
        hi = hi.max(end);
    }
    if hi.saturating_sub(lo) <= MAX_RANK_EXTENT_NS {
        return Ok(());
    }
    let i = farthest_from_median(&e.start);
    let days = hi.saturating_sub(lo) / 86_400_000_000_000;
    Err((
        at(i),
        format!(
            "event `{}` at {} ns lies far from the rank's others: its events spread over {days} days, \
             more than the 13 (2^50 ns) a profile can cover (a corrupt timestamp, or one in another unit)",
            name(i),
            e.start[i]
        ),
    ))
}

/// The index of the start farthest from the median start: the likeliest corrupt one.
fn farthest_from_median(starts: &[Ns]) -> usize {
    let mut sorted = starts.to_vec();
    let mid = sorted.len() / 2;
    let (_, &mut median, _) = sorted.select_nth_unstable(mid);
    (0..starts.len())
        .max_by_key(|&i| starts[i].abs_diff(median))
        .unwrap_or(0)
}

/// Host steps, the profiler's own step summary, HCCL's split, link and transport times,
/// operator-type sums and clock samples in range.
fn side_tables(r: &Rank) -> Result<(), String> {
    let instant = |t: Ns| (MIN_NS..=MAX_NS).contains(&t);
    let duration = |t: Ns| (0..=MAX_RANK_EXTENT_NS).contains(&t);
    for s in &r.steps {
        if !instant(s.start) || !instant(s.end) || s.end < s.start {
            return Err(format!(
                "step {} runs from {} to {} ns: out of range",
                s.number, s.start, s.end
            ));
        }
    }
    for p in &r.profiler_steps {
        let parts = [
            p.computing,
            p.comm_not_overlapped,
            p.overlapped,
            p.communication,
            p.free,
            p.stage,
            p.bubble,
        ];
        let extra = [p.comm_not_overlapped_excl_receive, p.preparing];
        if !parts
            .into_iter()
            .chain(extra.into_iter().flatten())
            .all(duration)
        {
            return Err(format!(
                "the profiler's step summary (step {:?}) has a time out of range",
                p.step.map(|s| s.0)
            ));
        }
    }
    let timed = r
        .hccl_times
        .iter()
        .flat_map(|h| [h.elapse_ns, h.transit_ns])
        .chain(r.links.iter().map(|l| l.time_ns))
        .chain(r.transports.iter().map(|t| t.time_ns));
    if let Some(t) = timed.into_iter().find(|&t| !duration(t)) {
        return Err(format!("a communication time of {t} ns is out of range"));
    }
    if let Some(o) = r
        .op_stats
        .iter()
        .find(|o| !(0..=MAX_NS).contains(&o.total_ns))
    {
        return Err(format!(
            "op_statistic: `{}` totals {} ns: out of range",
            o.op_type, o.total_ns
        ));
    }
    if let Some(c) = r.clocks.iter().find(|c| !instant(c.at)) {
        return Err(format!("a clock sample at {} ns is out of range", c.at));
    }
    Ok(())
}
