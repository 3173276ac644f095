//! A step's time from the best evidence its line (and the series' line before it) gives,
//! in the order of docs/metrics.md "Step time evidence": a per-step figure or the mean over
//! exactly the steps since the last line; the delta of a cumulative timer; the delta of the
//! lines' timestamps; a running or smoothed average only when nothing else exists (it hides
//! the periodic and one-off slow steps a user looks for).

use crate::model::live::{Provenance, Step};
use crate::time::Ns;

/// What a series keeps of its last step line to read the next one's deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Last {
    /// Its step number (printed, or counted).
    pub step: u64,
    /// Its timestamp.
    pub at_ns: Option<Ns>,
    /// Its cumulative timer.
    pub cumulative_ns: Option<Ns>,
}

/// The step time of `s`, numbered `n`, after `last`, with the evidence it came from.
pub fn step_time(last: Option<Last>, n: u64, s: &Step) -> Option<(Ns, Provenance)> {
    let printed = s.time_ns.map(|t| (t, s.provenance));
    let per_step = printed.filter(|p| p.1 <= Provenance::WindowAverage);
    per_step
        .or_else(|| {
            let l = last?;
            Some((
                per_step_delta(l.cumulative_ns, s.cumulative_ns, l.step, n)?,
                Provenance::Cumulative,
            ))
        })
        .or_else(|| {
            let l = last?;
            Some((
                per_step_delta(l.at_ns, s.at_ns, l.step, n)?,
                Provenance::FromTimestamps,
            ))
        })
        .or(printed)
}

/// (to − from) / (steps between them), when both exist and time and steps advanced.
fn per_step_delta(from: Option<Ns>, to: Option<Ns>, m: u64, n: u64) -> Option<Ns> {
    let dt = to?.checked_sub(from?)?;
    let steps = Ns::try_from(n.checked_sub(m)?).ok()?;
    (steps > 0 && dt > 0).then(|| dt / steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(time: Option<(Ns, Provenance)>, cumulative: Option<Ns>, at: Option<Ns>) -> Step {
        Step {
            step: None,
            epoch: None,
            printed_step: None,
            of: None,
            time_ns: time.map(|t| t.0),
            provenance: time.map_or(Provenance::FromTimestamps, |t| t.1),
            cumulative_ns: cumulative,
            at_ns: at,
            metrics: Vec::new(),
        }
    }

    #[test]
    fn evidence_is_taken_best_first() {
        let last = Some(Last {
            step: 10,
            at_ns: Some(1_000),
            cumulative_ns: Some(500),
        });
        // A per-step figure wins over everything.
        let s = step(Some((7, Provenance::PerStep)), Some(900), Some(3_000));
        assert_eq!(step_time(last, 12, &s), Some((7, Provenance::PerStep)));
        // A running average loses to the cumulative timer: (900 − 500) / 2 steps.
        let s = step(
            Some((7, Provenance::RunningAverage)),
            Some(900),
            Some(3_000),
        );
        assert_eq!(step_time(last, 12, &s), Some((200, Provenance::Cumulative)));
        // … and to the timestamps: (3000 − 1000) / 2.
        let s = step(Some((7, Provenance::RunningAverage)), None, Some(3_000));
        assert_eq!(
            step_time(last, 12, &s),
            Some((1_000, Provenance::FromTimestamps))
        );
        // Alone, it is read (and says so); the first line has no deltas.
        assert_eq!(
            step_time(None, 12, &s),
            Some((7, Provenance::RunningAverage))
        );
        // A timer that went back (a restart) or steps that did not advance give no delta.
        let s = step(None, Some(100), None);
        assert_eq!(step_time(last, 12, &s), None);
        let s = step(None, Some(900), None);
        assert_eq!(step_time(last, 10, &s), None);
    }
}
