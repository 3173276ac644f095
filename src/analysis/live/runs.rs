//! Runs of slow steps (docs/metrics.md "Live (watch)"): each step time judged against its
//! series' baseline, consecutive slow steps gathered into a run, and a closed run told as one
//! alert — a one-off, a burst, a periodic stall or a regime change — with the time it lost.

use super::{
    Alert, MIN_BASELINE, PERIODIC_EPISODES, Pattern, Point, REGIME_STEPS, Series, goodput,
};
use crate::ingest::logs::EventKind;
use crate::time::Ns;
use std::collections::VecDeque;

/// Points enough to judge the early ones at the end of a short stream.
pub const MIN_SETTLE: usize = 3;

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
    s.baseline.retain(|ns| ns <= limit);
    out.extend(close_run(s, rank, events));
    out
}

/// Judges one step time against the series' baseline; returns the alerts it closes.
pub(super) fn judge(
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
    account(s, limits.0, events);
    let first = s.run[0].step;
    s.episodes.push(first);
    if s.episodes.len() > PERIODIC_EPISODES {
        s.episodes.remove(0);
    }
    let k = s.episodes.len();
    if s.period
        .is_some_and(|p| k >= 2 && first - s.episodes[k - 2] == p)
    {
        // One more episode of a known period: no new alert.
        s.run.clear();
        return Vec::new();
    }
    let pattern = if k >= PERIODIC_EPISODES && periodic(&s.episodes[k - PERIODIC_EPISODES..]) {
        let period = first - s.episodes[k - 2];
        s.period = Some(period);
        Pattern::Periodic { period }
    } else if s.run.len() == 1 {
        Pattern::OneOff
    } else {
        Pattern::Burst
    };
    let a = alert(s, rank, pattern, limits, events);
    s.run.clear();
    vec![a]
}

/// Equal gaps between consecutive episode starts.
fn periodic(starts: &[u64]) -> bool {
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.iter().all(|&g| g > 1 && g == gaps[0])
}

/// Books the open run's excess over `median` as lost time.
fn account(s: &mut Series, median: Ns, events: &VecDeque<(EventKind, Option<u64>)>) {
    let (lo, hi) = (s.run[0].step, s.run[s.run.len() - 1].step);
    let near_event = !goodput::near(events, lo, hi).is_empty();
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
    let near = goodput::near(events, steps[0], *steps.last().expect("a run"));
    Alert {
        rule: "slow_steps",
        pattern,
        steps,
        ranks: rank.into_iter().collect(),
        devices: Vec::new(),
        max_ns: s.run.iter().map(|x| x.ns).max().unwrap_or(0),
        median_ns: median,
        threshold_ns: limit,
        events: near,
        phases: Vec::new(),
    }
}
