//! Pauses a framework leaves out of its own step timer (docs/metrics.md "Wall-clock
//! pauses"): evaluation, checkpointing, GC or a profiler window still take wall-clock time.
//! When a series' lines print a per-step time and carry timestamps, a record whose wall
//! interval since the series' last record exceeds the printed time of the steps between by
//! [`PAUSE_SHARE`] (and by [`MIN_PAUSE_NS`]) hides a pause: one alert, with the events that
//! fell inside it; pauses at one spacing are one periodic pattern (an eval every 12 steps).

use super::periods::{Episode, Periods};
use super::{Alert, Pattern, goodput};
use crate::model::live::EventKind;
use crate::time::Ns;
use std::collections::VecDeque;

/// The wall interval must exceed the printed time by this share of it …
pub(super) const PAUSE_SHARE: f64 = 0.5;
/// … and by at least this much.
pub(super) const MIN_PAUSE_NS: Ns = 1_000_000_000;

/// One series' pauses.
#[derive(Debug, Default)]
pub(super) struct Pauses {
    periods: Periods,
}

impl Pauses {
    /// A record at step `n` (after `from`, `steps` steps on) whose printed time per step is
    /// `per_step_ns` and whose wall interval since the last record is `wall_ns`; the alert
    /// of the pause it hides, unless it is one more of a known period.
    pub(super) fn check(
        &mut self,
        (from, n, steps): (u64, u64, u64),
        per_step_ns: Ns,
        wall_ns: Ns,
        events: &VecDeque<(EventKind, Option<u64>)>,
    ) -> Option<Alert> {
        let printed = per_step_ns.saturating_mul(Ns::try_from(steps).unwrap_or(Ns::MAX));
        let extra = wall_ns.saturating_sub(printed);
        if extra < MIN_PAUSE_NS || (extra as f64) < PAUSE_SHARE * printed as f64 {
            return None;
        }
        let pattern = match self.periods.observe(n, extra, steps) {
            Episode::Known => return None,
            Episode::New(period) => Pattern::Periodic { period },
            Episode::Other => Pattern::OneOff,
        };
        let mut a = Alert::about_ranks("wall_pause", pattern, Vec::new());
        a.steps = vec![n];
        a.max_ns = wall_ns;
        a.median_ns = printed;
        a.threshold_ns =
            printed.saturating_add(MIN_PAUSE_NS.max((PAUSE_SHARE * printed as f64) as Ns));
        a.events = goodput::near(events, from.saturating_add(1), n);
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_interval_past_the_printed_time_is_a_pause_and_a_spacing_is_a_period() {
        let mut p = Pauses::default();
        let mut ev = VecDeque::new();
        let s = 1_000_000_000;
        // 11 s printed, 11.1 s on the wall: no pause.
        assert!(p.check((0, 1, 1), 11 * s, 11 * s + s / 10, &ev).is_none());
        // 11 s printed, 31 s on the wall with an eval between: a pause, naming the eval.
        ev.push_back((EventKind::Eval, Some(12)));
        let a = p.check((11, 12, 1), 11 * s, 31 * s, &ev).unwrap();
        assert_eq!(
            (a.rule, a.pattern.clone(), a.events.clone()),
            ("wall_pause", Pattern::OneOff, vec![EventKind::Eval])
        );
        assert_eq!((a.max_ns, a.median_ns), (31 * s, 11 * s));
        // Every 12 steps: the third is the period, the fourth nothing.
        assert!(p.check((23, 24, 1), 11 * s, 31 * s, &ev).is_some());
        let a = p.check((35, 36, 1), 11 * s, 31 * s, &ev).unwrap();
        assert_eq!(a.pattern, Pattern::Periodic { period: 12 });
        assert!(p.check((47, 48, 1), 11 * s, 31 * s, &ev).is_none());
    }
}
