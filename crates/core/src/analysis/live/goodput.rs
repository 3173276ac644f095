//! Goodput of a live series (docs/metrics.md "Live: goodput"): of the step time the stream
//! reports, the share that ran at the baseline's pace, and where the rest went — slow steps
//! next to an event (checkpoint, evaluation, GC, skipped steps …) or slow steps with none.
//! Window averages count for every step they cover, so a Megatron line every 10 iterations
//! weighs 10 steps.

use crate::model::live::EventKind;
use crate::time::Ns;
use serde::Serialize;
use std::collections::VecDeque;

/// One series' time accounts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Goodput {
    /// Σ step time × steps covered, over the judged steps.
    pub step_ns: Ns,
    /// Σ (step time − baseline median) × covered over slow steps next to an event.
    pub lost_events_ns: Ns,
    /// The same over slow steps with no event near.
    pub lost_other_ns: Ns,
}

impl Goodput {
    /// The share of step time at the baseline pace (1.0 with nothing lost), once any step
    /// was judged.
    pub fn share(&self) -> Option<f64> {
        (self.step_ns > 0).then(|| {
            1.0 - (self.lost_events_ns as f64 + self.lost_other_ns as f64) / self.step_ns as f64
        })
    }

    /// Accounts a run of slow steps `(step time, steps covered)` against `median`, with the
    /// events near it.
    pub fn lose(&mut self, run: impl Iterator<Item = (Ns, u64)>, median: Ns, near_event: bool) {
        // Saturating: step numbers and times come from logs, which can print anything.
        let excess = run.fold(0, |a: Ns, (ns, covers)| {
            let over = ns.saturating_sub(median).max(0);
            a.saturating_add(over.saturating_mul(Ns::try_from(covers).unwrap_or(Ns::MAX)))
        });
        let lost = if near_event {
            &mut self.lost_events_ns
        } else {
            &mut self.lost_other_ns
        };
        *lost = lost.saturating_add(excess);
    }
}

/// The events at steps `lo - 1 ..= hi` (an event line printed just before or inside a run
/// of slow steps), each kind once.
pub fn near(events: &VecDeque<(EventKind, Option<u64>)>, lo: u64, hi: u64) -> Vec<EventKind> {
    let mut out: Vec<EventKind> = events
        .iter()
        .filter(|(_, at)| at.is_some_and(|a| a.saturating_add(1) >= lo && a <= hi))
        .map(|e| e.0)
        .collect();
    out.dedup();
    out
}
