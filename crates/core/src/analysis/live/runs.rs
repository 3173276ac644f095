//! Runs of slow steps (docs/metrics.md "Live (watch)"): each step time judged against its
//! series' baseline, consecutive slow steps gathered into a run, and a closed run told as one
//! alert — a one-off, a burst, a periodic stall or a regime change — with the time it lost.
//! A closed run's alert is held [`HOLD_STEPS`] steps: a level shift of the recent median
//! within them (a schedule boundary, a step time that starts alternating) is one regime
//! change that absorbs it, not a stream of one-offs.

use super::{
    Alert, MIN_BASELINE, Pattern, Point, REGIME_STEPS, Series, baseline, goodput, periods,
};
use crate::model::live::EventKind;
use crate::time::Ns;
use std::collections::VecDeque;

/// Points enough to judge the early ones at the end of a short stream.
pub const MIN_SETTLE: usize = 3;
/// Judged step times the level shift's median is taken over.
pub(super) const SHIFT_WINDOW: usize = 2 * REGIME_STEPS;
/// Steps a closed run's alert waits for a level shift to absorb it.
pub(super) const HOLD_STEPS: u64 = SHIFT_WINDOW as u64;
/// A level shift: the median of the last [`SHIFT_WINDOW`] step times exceeds the baseline's
/// median by this share and by one MAD (its spread: an alternating series has a wide one).
pub(super) const SHIFT_PCT: i64 = 20;

/// Judges the points that arrived before the baseline formed against the baseline they
/// formed (the median and MAD are robust to the slow ones among them), which then keeps only
/// the normal ones.
pub(super) fn settle(
    s: &mut Series,
    rank: Option<u32>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Vec<Alert> {
    let Some((_, limit)) = s.baseline.limits() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in std::mem::take(&mut s.pending) {
        if p.ns > limit {
            s.history.mark_slow(p.step);
            s.run.push(p);
        } else {
            out.extend(close_run(s, rank, events));
        }
    }
    out.extend(close_run(s, rank, events));
    // The limit now: an alternation found among these points has widened it.
    let limit = s.baseline.limits().map_or(limit, |l| l.1);
    s.baseline.retain(|ns| ns <= limit);
    out
}

/// Judges one step time against the series' baseline; returns the alerts that are due (a
/// regime change at once, a closed run's alert [`HOLD_STEPS`] steps later).
pub(super) fn judge(
    s: &mut Series,
    p: Point,
    rank: Option<u32>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Vec<Alert> {
    let pushes = s.baseline.pushes();
    let closed = judge_point(s, p, rank, events);
    s.recent.push_back((p, s.baseline.pushes() != pushes));
    if s.recent.len() > SHIFT_WINDOW {
        s.recent.pop_front();
    }
    let mut out = Vec::new();
    for a in closed {
        if matches!(a.pattern, Pattern::RegimeChange { .. }) {
            out.push(absorb(s, a));
        } else {
            s.held.push_back((p.step.saturating_add(HOLD_STEPS), a));
        }
    }
    if out.is_empty() {
        out.extend(level_shift(s, rank, events).map(|a| absorb(s, a)));
    }
    out.extend(release(s, Some(p.step)));
    out
}

/// The held alerts due at step `now` (all of them at `None`: a restart, the end).
pub(super) fn release(s: &mut Series, now: Option<u64>) -> Vec<Alert> {
    let mut out = Vec::new();
    while let Some((due, _)) = s.held.front() {
        if now.is_some_and(|n| n < *due) {
            break;
        }
        out.extend(s.held.pop_front().map(|h| h.1));
    }
    out
}

/// A regime change takes in the held alerts of the steps it spans.
fn absorb(s: &mut Series, mut regime: Alert) -> Alert {
    let from = s
        .recent
        .front()
        .map_or(0, |p| p.0.step)
        .min(regime.steps[0]);
    let mut kept = VecDeque::new();
    for (due, a) in std::mem::take(&mut s.held) {
        if a.steps.first().is_some_and(|&x| x >= from) {
            regime.steps.extend(&a.steps);
            regime.max_ns = regime.max_ns.max(a.max_ns);
        } else {
            kept.push_back((due, a));
        }
    }
    s.held = kept;
    regime.steps.sort_unstable();
    regime.steps.dedup();
    regime
}

/// A sustained shift of the recent level above the baseline's (see [`SHIFT_PCT`]), which a
/// run of consecutive slow steps misses when the new level alternates or stays under the
/// limit: a regime change over the recent window, after which the baseline is that window.
/// Levels are interquartile means, the baseline's taken without the window's own times.
fn level_shift(
    s: &mut Series,
    rank: Option<u32>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Option<Alert> {
    if s.recent.len() < SHIFT_WINDOW {
        return None;
    }
    let (median, limit) = s.baseline.limits()?;
    let own = s.recent.iter().filter(|r| r.1).count();
    let (from, mad) = s.baseline.before(own)?;
    // Both halves of the window shifted: the new level holds, it is not a burst in passing.
    let half = SHIFT_WINDOW / 2;
    let level_of = |points: &mut dyn Iterator<Item = &(Point, bool)>| {
        let mut v: Vec<Ns> = points.map(|p| p.0.ns).collect();
        v.sort_unstable();
        baseline::level(&v)
    };
    let shifted = |to: Ns| {
        let shift = to.saturating_sub(from);
        shift > from.saturating_mul(SHIFT_PCT) / 100 && shift > mad
    };
    let early = level_of(&mut s.recent.iter().take(half));
    let late = level_of(&mut s.recent.iter().skip(half));
    if !shifted(early) || !shifted(late) {
        return None;
    }
    if !s.run.is_empty() {
        account(s, median, events);
    }
    let recent: Vec<Ns> = s.recent.iter().map(|p| p.0.ns).collect();
    let steps: Vec<u64> = s.recent.iter().map(|p| p.0.step).collect();
    let near = goodput::near(events, steps[0], steps[steps.len() - 1]);
    let a = Alert {
        rule: "slow_steps",
        // The new level is the later half's: the window can start before the shift.
        pattern: Pattern::RegimeChange {
            from_ns: from,
            to_ns: late,
        },
        steps,
        ranks: rank.into_iter().collect(),
        devices: Vec::new(),
        hosts: Vec::new(),
        max_ns: recent.iter().copied().max().unwrap_or(0),
        median_ns: median,
        threshold_ns: limit,
        events: near,
        phases: Vec::new(),
    };
    s.baseline.reset(s.recent.iter().map(|p| p.0.ns));
    s.run.clear();
    s.recent.clear();
    Some(a)
}

/// The existing rules for one point: slow or not, a run's close, eight slow in a row.
fn judge_point(
    s: &mut Series,
    p: Point,
    rank: Option<u32>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Vec<Alert> {
    let covered =
        p.ns.saturating_mul(Ns::try_from(p.covers).unwrap_or(Ns::MAX));
    s.goodput.step_ns = s.goodput.step_ns.saturating_add(covered);
    if s.baseline.len() < MIN_BASELINE && s.run.is_empty() {
        s.history.push(p.step, p.ns, false);
        s.baseline.push(p.ns);
        s.pending.push(p);
        if s.baseline.len() == MIN_BASELINE {
            return settle(s, rank, events);
        }
        return Vec::new();
    }
    let limit = (s.baseline.len() >= MIN_BASELINE)
        .then(|| s.baseline.limits())
        .flatten();
    let slow = limit.is_some_and(|(_, lim)| p.ns > lim);
    s.history.push(p.step, p.ns, slow);
    let mut out = Vec::new();
    if slow {
        s.run.push(p);
        if s.run.len() >= REGIME_STEPS {
            let (median, lim) = limit.expect("slow has a limit");
            account(s, median, events);
            let mut run: Vec<Ns> = s.run.iter().map(|x| x.ns).collect();
            run.sort_unstable();
            let to = crate::analysis::stats::median_sorted(&run);
            out.push(alert(
                s,
                rank,
                Pattern::RegimeChange {
                    from_ns: median,
                    to_ns: to,
                },
                (median, lim),
                events,
            ));
            s.baseline.reset(s.run.iter().map(|x| x.ns));
            s.run.clear();
        }
        return out;
    }
    out.extend(close_run(s, rank, events));
    s.baseline.push(p.ns);
    out
}

/// Every other record slow is no slow step but the series' shape (an optimizer or
/// accumulation step every other step, caught before the baseline held both levels): the
/// baseline takes the recent times, both levels, and the alerts held for the alternation's
/// first episodes are dropped.
fn alternates(s: &mut Series) {
    let times: Vec<Ns> = s
        .recent
        .iter()
        .map(|p| p.0.ns)
        .chain(s.run.iter().map(|p| p.ns))
        .collect();
    s.baseline.reset_two_levels(times.into_iter());
    s.held.clear();
    s.run.clear();
}

/// Ends the open slow run, if any: a one-off, a burst, or one more episode of a period.
pub(super) fn close_run(
    s: &mut Series,
    rank: Option<u32>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Vec<Alert> {
    if s.run.is_empty() {
        return Vec::new();
    }
    let limits = s.baseline.limits().unwrap_or((0, 0));
    let first = s.run[0].step;
    let max = s.run.iter().map(|x| x.ns).max().unwrap_or(0);
    let covers = s.run[0].covers;
    let episode = s.periods.observe(first, max, covers);
    if matches!(episode, periods::Episode::New(p) if p <= 2 * covers) {
        alternates(s);
        return Vec::new();
    }
    account(s, limits.0, events);
    let pattern = match episode {
        // One more episode of a known period: no new alert.
        periods::Episode::Known => {
            s.run.clear();
            return Vec::new();
        }
        periods::Episode::New(period) => Pattern::Periodic { period },
        periods::Episode::Other if s.run.len() == 1 => Pattern::OneOff,
        periods::Episode::Other => Pattern::Burst,
    };
    let a = alert(s, rank, pattern, limits, events);
    s.run.clear();
    vec![a]
}

/// The events near the open run: from the record before its first (which a record covering N
/// steps puts N steps back) to its last.
fn run_events(s: &Series, events: &VecDeque<(EventKind, Option<u64>)>) -> Vec<EventKind> {
    let first = s.run[0];
    let lo = first.step.saturating_sub(first.covers.saturating_sub(1));
    goodput::near(events, lo, s.run[s.run.len() - 1].step)
}

/// Books the open run's excess over `median` as lost time.
fn account(s: &mut Series, median: Ns, events: &VecDeque<(EventKind, Option<u64>)>) {
    let near_event = !run_events(s, events).is_empty();
    let run = s.run.iter().map(|p| (p.ns, p.covers));
    s.goodput.lose(run, median, near_event);
}

fn alert(
    s: &Series,
    rank: Option<u32>,
    pattern: Pattern,
    (median, limit): (Ns, Ns),
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Alert {
    let steps: Vec<u64> = s.run.iter().map(|x| x.step).collect();
    let near = run_events(s, events);
    Alert {
        rule: "slow_steps",
        pattern,
        steps,
        ranks: rank.into_iter().collect(),
        devices: Vec::new(),
        hosts: Vec::new(),
        max_ns: s.run.iter().map(|x| x.ns).max().unwrap_or(0),
        median_ns: median,
        threshold_ns: limit,
        events: near,
        phases: Vec::new(),
    }
}
