//! Device clock drops (docs/metrics.md "Device clock"): msprof-analyze's AI Core frequency
//! rule, per rank and step. A clock sample holds until the next one; a step's mean clock is
//! the time-weighted mean over the part of its span the samples cover. The reference is the
//! job's top clock (the highest sample of any rank). A step whose mean is more than
//! [`DROP`] below it ran its kernels slower — thermal or power limits, or a capped clock —
//! and its compute time at the top clock would have been `compute × mean / top`.

use crate::analysis::breakdown::Breakdown;
use crate::analysis::steps::StepSpan;
use crate::model::{ClockSample, Job, RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;

/// The shortfall from the top clock that counts as a drop (msprof-analyze: 5%).
pub const DROP: f64 = 0.05;

/// Clock drops over the scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Clocks {
    /// The job's top clock, MHz (`None`: no rank recorded its clock).
    pub top_mhz: Option<u32>,
    /// (rank, step)s whose mean clock fell more than [`DROP`] below the top, most lost first.
    pub drops: Vec<ClockDrop>,
}

/// One rank's slow clock in one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClockDrop {
    /// The rank.
    pub rank: RankId,
    /// The step.
    pub step: StepNo,
    /// Its time-weighted mean clock over the step, MHz.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub mean_mhz: f64,
    /// Its lowest clock in the step, MHz.
    pub min_mhz: u32,
    /// Its compute time in the step (the union of compute kernels).
    pub compute_ns: Ns,
    /// What that compute would not have taken at the top clock: compute × (1 − mean / top).
    pub lost_ns: Ns,
}

/// A rank's compute in one step at the share of its time the top clock gives: what the
/// replay's clock fix runs its kernels at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtTopClock {
    /// The rank.
    pub rank: RankId,
    /// The step.
    pub step: StepNo,
    /// mean / top, in parts per million (at most 1 000 000).
    pub keep_ppm: u32,
}

impl ClockDrop {
    /// Its compute at the job's top clock `top_mhz`.
    pub fn at_top(&self, top_mhz: u32) -> AtTopClock {
        let keep = (self.mean_mhz / f64::from(top_mhz.max(1))).clamp(0.0, 1.0);
        AtTopClock {
            rank: self.rank,
            step: self.step,
            keep_ppm: (keep * 1e6).round() as u32,
        }
    }
}

/// The drops of the breakdown's (rank, step)s (`rows`, in scope), with each rank's spans.
pub fn clocks(job: &Job, spans: &[Vec<StepSpan>], rows: &[Breakdown]) -> Clocks {
    let top = job
        .ranks
        .iter()
        .flat_map(|r| r.clocks.iter().map(|s| s.mhz))
        .max();
    let Some(top_mhz) = top else {
        return Clocks::default();
    };
    let by_step: rustc_hash::FxHashMap<(RankId, StepNo), &Breakdown> =
        rows.iter().map(|b| ((b.rank, b.step), b)).collect();
    let mut drops = Vec::new();
    for (r, rank) in job.ranks.iter().enumerate() {
        for span in &spans[r] {
            let Some((mean, min)) = mean_clock(&rank.clocks, span.start, span.end) else {
                continue;
            };
            if mean >= f64::from(top_mhz) * (1.0 - DROP) {
                continue;
            }
            let Some(row) = by_step.get(&(rank.id, span.number)) else {
                continue;
            };
            let compute_ns = row.compute_ns + row.overlap_ns;
            drops.push(ClockDrop {
                rank: rank.id,
                step: span.number,
                mean_mhz: mean,
                min_mhz: min,
                compute_ns,
                lost_ns: (compute_ns as f64 * (1.0 - mean / f64::from(top_mhz))) as Ns,
            });
        }
    }
    drops.sort_by(|a, b| {
        b.lost_ns
            .cmp(&a.lost_ns)
            .then((a.rank, a.step).cmp(&(b.rank, b.step)))
    });
    Clocks {
        top_mhz: Some(top_mhz),
        drops,
    }
}

/// The time-weighted mean clock over `[start, end)` and its lowest value there, from the
/// samples that cover it (each holds until the next; the last until `end`); `None` when no
/// sample starts before `end`.
fn mean_clock(samples: &[ClockSample], start: Ns, end: Ns) -> Option<(f64, u32)> {
    let (mut weighted, mut covered, mut min) = (0f64, 0 as Ns, u32::MAX);
    for (k, s) in samples.iter().enumerate() {
        let until = samples.get(k + 1).map_or(end, |n| n.at.min(end));
        let (from, to) = (s.at.max(start), until);
        if to > from {
            weighted += f64::from(s.mhz) * (to - from) as f64;
            covered += to - from;
            min = min.min(s.mhz);
        }
    }
    (covered > 0).then(|| (weighted / covered as f64, min))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at: Ns, mhz: u32) -> ClockSample {
        ClockSample { at, mhz }
    }

    #[test]
    fn a_sample_holds_until_the_next() {
        // 1800 MHz over [0, 50), 1200 over [50, 100): 1500 on average, 1200 at the lowest.
        let v = [s(0, 1800), s(50, 1200)];
        assert_eq!(mean_clock(&v, 0, 100), Some((1500.0, 1200)));
        // Only the covered part counts: from 50 on, 1200.
        assert_eq!(mean_clock(&v, 60, 100), Some((1200.0, 1200)));
        // A sample before the span covers it.
        assert_eq!(mean_clock(&[s(-10, 1800)], 0, 100), Some((1800.0, 1800)));
        assert_eq!(mean_clock(&[s(200, 1800)], 0, 100), None);
        assert_eq!(mean_clock(&[], 0, 100), None);
    }
}
