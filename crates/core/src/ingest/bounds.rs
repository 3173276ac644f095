//! The time range every rank must keep (`crate::time`): each instant within [`MIN_NS`,
//! `MAX_NS`], each duration within [0, [`MAX_RANK_EXTENT_NS`]], and one rank's events within
//! [`MAX_RANK_EXTENT_NS`] of each other. Readers check what they parse where they can name
//! the position (a byte, a line, a row); this check runs on every rank any reader makes, so
//! that analyses, which subtract and add times freely, never see a value that overflows.
//! It also sums the rank's durations, which the job as a whole keeps below
//! [`MAX_JOB_SUM_NS`] (`consistency.rs`).

use super::RankDraft;
use crate::error::Error;
use crate::model::Rank;
use crate::time::{MAX_JOB_SUM_NS, MAX_NS, MAX_RANK_EXTENT_NS, MIN_NS, Ns, event_end};

/// Durations sampled for a rank's typical duration: copying every duration of a gigabyte
/// trace would cost more than its check.
pub(crate) const SAMPLES: usize = 1 << 16;

/// `Ok` when the rank keeps the range (its window and typical duration are then set: what
/// ranks are compared by, `consistency.rs`); else an input error naming the first value that
/// does not (the event's byte when the reader kept it).
pub(crate) fn check(d: &mut RankDraft) -> Result<(), Error> {
    let m = measure(d)?;
    d.busy_ns = m.busy;
    let cut = d.strings.cut_count();
    if cut > 0 {
        d.warnings.push(format!(
            "{}: {cut} name(s) longer than {} cut to their start (ending in `…`)",
            d.rank.source.path,
            crate::format::bytes(crate::model::MAX_NAME as u64)
        ));
    }
    d.typical_dur = typical(&d.rank.events.dur);
    d.rank.window = m.window;
    Ok(())
}

/// What the check finds of a rank in range.
pub(crate) struct Measured {
    /// The first start and the last end of its events.
    pub window: Option<(Ns, Ns)>,
    /// The sum of its durations.
    pub busy: Ns,
}

/// [`check`] without changing the rank: its window and busy time, or the first value out of
/// range.
pub(crate) fn measure(d: &RankDraft) -> Result<Measured, Error> {
    let r = &d.rank;
    let fail = |what: String| Error::input(&r.source.path, what);
    let window = events(r, &d.strings).map_err(|(at, what)| match at {
        Some(b) => Error::input_at(&r.source.path, b, what),
        None => fail(what),
    })?;
    side_tables(r).map_err(fail)?;
    let busy = r.events.dur.iter().fold(0, |a: Ns, &x| a.saturating_add(x));
    if busy > MAX_JOB_SUM_NS {
        return Err(fail(format!(
            "its events last {busy} ns in sum, more than 2^62 ns: out of range (durations this \
             long overlapping are corrupt)"
        )));
    }
    Ok(Measured { window, busy })
}

/// The median nonzero duration of an even sample of `durs` (at most [`SAMPLES`] of them:
/// a median within a few percent is plenty for a 300× test).
fn typical(durs: &[Ns]) -> Option<Ns> {
    let step = durs.len().div_ceil(SAMPLES).max(1);
    let mut sample: Vec<Ns> = durs
        .iter()
        .step_by(step)
        .copied()
        .filter(|&x| x > 0)
        .collect();
    if sample.is_empty() {
        return None;
    }
    let mid = sample.len() / 2;
    Some(*sample.select_nth_unstable(mid).1)
}

/// Why an event is out of range: its byte, when the reader kept it, and what is wrong.
type OutOfRange = (Option<u64>, String);

/// Every event in range, and all of them within the rank's extent: its window.
fn events(r: &Rank, strings: &crate::model::Interner) -> Result<Option<(Ns, Ns)>, OutOfRange> {
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
    if e.is_empty() {
        return Ok(None);
    }
    if hi.saturating_sub(lo) <= MAX_RANK_EXTENT_NS {
        return Ok(Some((lo, hi)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventIx, Interner, Kind, RawSpan};

    fn draft(events: &[(Ns, Ns, u64)]) -> RankDraft {
        let mut strings = Interner::default();
        let name = strings.intern("k");
        let mut r = Rank::default();
        r.source.path = "r.json".into();
        for &(s, d, at) in events {
            let e = &mut r.events;
            e.start.push(s);
            e.dur.push(d);
            e.name.push(name);
            e.lane.push(0);
            e.kind.push(Kind::Compute);
            e.step.push(0);
            e.link.push(EventIx::NONE);
            e.op.push(EventIx::NONE);
            e.raw.push(RawSpan {
                offset: at,
                len: 10,
            });
        }
        RankDraft::undeclared(r, strings, Vec::new())
    }

    #[test]
    fn a_rank_in_range_gets_its_window_and_typical_duration() {
        let mut d = draft(&[(100, 10, 0), (50, 30, 20), (200, 0, 40)]);
        check(&mut d).unwrap();
        // Ends 110, 80 and 200.
        assert_eq!(d.rank.window, Some((50, 200)));
        // Nonzero durations 10 and 30: the upper median.
        assert_eq!(d.typical_dur, Some(30));
        assert_eq!(typical(&vec![7; 3 * SAMPLES]), Some(7));
        assert_eq!(typical(&[0, 0]), None);
    }

    #[test]
    fn an_event_out_of_range_or_far_from_the_others_is_an_error_at_its_byte() {
        let e = check(&mut draft(&[(0, 1, 0), (MAX_NS, 1, 77)])).unwrap_err();
        assert!(
            e.to_string().starts_with("r.json: byte 77: event `k`"),
            "{e}"
        );
        let day = 86_400_000_000_000;
        let mut far = draft(&[(0, 1, 0), (5, 1, 20), (10, 1, 40), (20 * day, 1, 60)]);
        let e = check(&mut far).unwrap_err().to_string();
        assert!(
            e.starts_with("r.json: byte 60: event `k` at 1728000000000000 ns lies far from the rank's others: its events spread over 20 days"),
            "{e}"
        );
        let mut steps = draft(&[(0, 1, 0)]);
        steps.rank.steps.push(crate::model::HostStep {
            number: crate::model::StepNo(1),
            start: 5,
            end: 2,
            synthetic: false,
        });
        assert!(
            check(&mut steps)
                .unwrap_err()
                .to_string()
                .contains("step 1 runs from 5 to 2")
        );
        // 2^13 overlapping events of 2^50 ns: 2^63 in sum, past 2^62.
        let long: Vec<(Ns, Ns, u64)> = (0..1 << 13).map(|_| (0, MAX_RANK_EXTENT_NS, 0)).collect();
        let e = check(&mut draft(&long)).unwrap_err().to_string();
        assert!(
            e.starts_with("r.json: its events last 9223372036854775807 ns in sum"),
            "{e}"
        );
    }
}
