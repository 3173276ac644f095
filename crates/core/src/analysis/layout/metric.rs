//! What the layout pane shades each rank's cell by (docs/metrics.md, "Layout metrics"): per
//! rank in a step, its own work, its wait in collectives, its exposed communication or its
//! step time, each against the median over the ranks; or what the what-if says fixing that
//! worker alone saves, over the step time replayed. Defined here so that a face only draws it.

use crate::analysis::Analysis;
use crate::analysis::stats::median_sorted;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// What each rank's cell is shaded by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LayoutMetric {
    /// Own work (span − exposed communication) against the step's median.
    #[default]
    OwnWork,
    /// Time waiting for the last arrival in the step's collectives, against the median.
    Wait,
    /// Communication not hidden behind compute, against the median.
    Exposed,
    /// Step span against the median.
    StepTime,
    /// What the what-if says fixing the worker alone saves, over the step time.
    Saving,
}

impl LayoutMetric {
    /// The next metric (the saving only where the what-if ran).
    pub fn next(self, whatif: bool) -> LayoutMetric {
        match self {
            LayoutMetric::OwnWork => LayoutMetric::Wait,
            LayoutMetric::Wait => LayoutMetric::Exposed,
            LayoutMetric::Exposed => LayoutMetric::StepTime,
            LayoutMetric::StepTime if whatif => LayoutMetric::Saving,
            LayoutMetric::StepTime | LayoutMetric::Saving => LayoutMetric::OwnWork,
        }
    }

    /// How a title names it.
    pub fn title(self) -> &'static str {
        match self {
            LayoutMetric::OwnWork => "own work vs median",
            LayoutMetric::Wait => "collective wait vs median",
            LayoutMetric::Exposed => "exposed comm vs median",
            LayoutMetric::StepTime => "step time vs median",
            LayoutMetric::Saving => "what-if saving per worker",
        }
    }
}

/// One rank's value of a metric: the raw figure and its shading deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    /// ns (or, for the saving, ns over all steps replayed).
    pub ns: Ns,
    /// The deviation from the median (the saving: over the step time), what shades the cell.
    pub dev: f64,
}

/// Each rank in scope's value of `metric` in `step`.
pub fn values(a: &Analysis, metric: LayoutMetric, step: StepNo) -> FxHashMap<RankId, Value> {
    let rows = a.breakdown.iter().filter(|b| b.step == step);
    let raw: Vec<(RankId, Ns)> = match metric {
        LayoutMetric::OwnWork => rows.map(|b| (b.rank, b.own_work_ns())).collect(),
        LayoutMetric::Exposed => rows.map(|b| (b.rank, b.comm_ns)).collect(),
        LayoutMetric::StepTime => rows.map(|b| (b.rank, b.span_ns)).collect(),
        LayoutMetric::Wait => waits(a, step, rows.map(|b| b.rank).collect()),
        LayoutMetric::Saving => return savings(a),
    };
    let mut sorted: Vec<Ns> = raw.iter().map(|r| r.1).collect();
    sorted.sort_unstable();
    let median = median_sorted(&sorted);
    raw.into_iter()
        .map(|(r, ns)| {
            (
                r,
                Value {
                    ns,
                    dev: deviation(ns, median),
                },
            )
        })
        .collect()
}

/// `ns` against the median as a fraction of it; against a zero median any time is a whole
/// median over (1.0), none is none.
fn deviation(ns: Ns, median: Ns) -> f64 {
    if median > 0 {
        ns.saturating_sub(median) as f64 / median as f64
    } else if ns > 0 {
        1.0
    } else {
        0.0
    }
}

/// Σ of each rank's waits in the step's matched instances (ranks with rows, 0 when none).
fn waits(a: &Analysis, step: StepNo, ranks: Vec<RankId>) -> Vec<(RankId, Ns)> {
    let mut w: FxHashMap<RankId, Ns> = ranks.into_iter().map(|r| (r, 0)).collect();
    for (inst, t) in a.comm.instances() {
        if inst.step != Some(step) {
            continue;
        }
        for m in &t.members {
            if let Some(x) = w.get_mut(&m.rank) {
                *x = x.saturating_add(m.wait_ns);
            }
        }
    }
    w.into_iter().collect()
}

/// The what-if's saving of fixing each worker it weighed (S_w), over the step time replayed.
fn savings(a: &Analysis) -> FxHashMap<RankId, Value> {
    let Some(sd) = a.whatif.slowdown.as_ref() else {
        return FxHashMap::default();
    };
    sd.by_worker
        .iter()
        .map(|p| {
            let dev = if sd.actual_ns > 0 {
                p.saves_ns as f64 / sd.actual_ns as f64
            } else {
                0.0
            };
            (
                p.of,
                Value {
                    ns: p.saves_ns,
                    dev,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_cycle_and_skip_the_saving_without_a_what_if() {
        let mut m = LayoutMetric::OwnWork;
        let mut seen = vec![m];
        for _ in 0..4 {
            m = m.next(false);
            seen.push(m);
        }
        assert_eq!(seen.last(), Some(&LayoutMetric::OwnWork));
        assert!(!seen.contains(&LayoutMetric::Saving));
        assert_eq!(LayoutMetric::StepTime.next(true), LayoutMetric::Saving);
        assert_eq!(LayoutMetric::Saving.next(true), LayoutMetric::OwnWork);
    }

    #[test]
    fn the_deviation_is_a_fraction_of_the_median() {
        // 150 against 100: half a median over; 50: half under; against 0, any time is 1.0.
        assert_eq!(deviation(150, 100), 0.5);
        assert_eq!(deviation(50, 100), -0.5);
        assert_eq!(deviation(7, 0), 1.0);
        assert_eq!(deviation(0, 0), 0.0);
        // No overflow at the extremes.
        assert!(deviation(Ns::MIN, Ns::MAX) < 0.0);
    }
}
