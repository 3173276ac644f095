//! The layout pane's own state and the metric its cells show: per rank in the selected step,
//! its own work, its wait in collectives, its exposed communication or its step time, each
//! against the median over the ranks, or what the what-if says fixing that worker saves.

use crate::analysis::layout::{Dim, Layout};
use crate::analysis::stats::median_sorted;
use crate::format::human;
use crate::model::{RankId, StepNo};
use crate::session::Session;
use crate::time::Ns;
use crate::ui::browser::Browser;
use rustc_hash::FxHashMap;

/// What the layout pane shows and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayoutView {
    /// What each rank's cell is shaded by.
    pub metric: LayoutMetric,
    /// The dimension a cell holds side by side (`None`: tensor parallel, the default).
    pub cell: Option<Dim>,
    /// The topology (nodes and links) instead of the split.
    pub topology: bool,
}

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

    /// How the title names it.
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

/// Each loaded rank's value of `metric` in `step`.
pub fn values(s: &Session, metric: LayoutMetric, step: StepNo) -> FxHashMap<RankId, Value> {
    let a = &s.analysis;
    let rows = a.breakdown.iter().filter(|b| b.step == step);
    let raw: Vec<(RankId, Ns)> = match metric {
        LayoutMetric::OwnWork => rows.map(|b| (b.rank, b.own_work_ns())).collect(),
        LayoutMetric::Exposed => rows.map(|b| (b.rank, b.comm_ns)).collect(),
        LayoutMetric::StepTime => rows.map(|b| (b.rank, b.span_ns)).collect(),
        LayoutMetric::Wait => waits(s, step, rows.map(|b| b.rank).collect()),
        LayoutMetric::Saving => return savings(s),
    };
    let mut sorted: Vec<Ns> = raw.iter().map(|r| r.1).collect();
    sorted.sort_unstable();
    let median = median_sorted(&sorted);
    raw.into_iter()
        .map(|(r, ns)| {
            let dev = if median > 0 {
                (ns - median) as f64 / median as f64
            } else if ns > 0 {
                1.0
            } else {
                0.0
            };
            (r, Value { ns, dev })
        })
        .collect()
}

/// Σ of each rank's waits in the step's matched instances (ranks with rows, 0 when none).
fn waits(s: &Session, step: StepNo, ranks: Vec<RankId>) -> Vec<(RankId, Ns)> {
    let mut w: FxHashMap<RankId, Ns> = ranks.into_iter().map(|r| (r, 0)).collect();
    for (inst, t) in s.analysis.comm.instances() {
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
fn savings(s: &Session) -> FxHashMap<RankId, Value> {
    let Some(sd) = s.analysis.whatif.slowdown.as_ref() else {
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

/// The dimensions a cell can hold side by side: the layout's axes of size > 1 but the
/// pipeline (the columns), tensor parallel first.
pub fn cell_dims(l: &Layout) -> Vec<Dim> {
    [Dim::Tp, Dim::Cp, Dim::Ep, Dim::Dp]
        .into_iter()
        .filter(|&d| l.axes.iter().any(|a| a.dim == d && a.size > 1))
        .collect()
}

/// The cell dimension after `now` (`None`: tensor parallel, the default — a cell of one
/// rank when the job has none), over tensor parallel then [`cell_dims`].
pub fn next_cell(l: &Layout, now: Option<Dim>) -> Option<Dim> {
    let mut dims = vec![Dim::Tp];
    dims.extend(cell_dims(l).into_iter().filter(|&d| d != Dim::Tp));
    let k = dims
        .iter()
        .position(|&x| x == now.unwrap_or(Dim::Tp))
        .unwrap_or(0);
    let next = dims[(k + 1) % dims.len()];
    (next != Dim::Tp).then_some(next)
}

/// What the selection is: the rank, its position, its value, or that it is not loaded.
pub fn selected_line(
    b: &Browser,
    l: &Layout,
    sel: Option<RankId>,
    vals: &FxHashMap<RankId, Value>,
) -> String {
    let Some(r) = sel else {
        return String::new();
    };
    let step = b
        .step_number()
        .map_or(String::new(), |s| format!(" in step {s}"));
    let at = l.label(r);
    let job = &b.data.loaded.job;
    let summary = if job.is_summary_only(r) {
        " (summary only)"
    } else {
        ""
    };
    match (job.rank_ix(r), vals.get(&r)) {
        (Some(_), Some(v)) if b.layout.metric == LayoutMetric::Saving => format!(
            " rank {r}{summary} {at}: fixing it alone saves {} over the steps replayed — Enter: its timeline",
            human(v.ns)
        ),
        (Some(_), Some(v)) => format!(
            " rank {r}{summary} {at}: {} {:+.1}% vs the median{step} — Enter: its timeline",
            human(v.ns),
            v.dev * 100.0
        ),
        (Some(_), None) => format!(" rank {r}{summary} {at}: no value{step} — Enter: its timeline"),
        (None, _) => format!(" rank {r} {at}: not loaded"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::layout::{Axis, Source};

    fn layout(axes: &[(Dim, u32, u32)]) -> Layout {
        Layout {
            world: 8,
            axes: axes
                .iter()
                .map(|&(dim, size, stride)| Axis {
                    dim,
                    size,
                    stride,
                    source: Source::DeclaredSize,
                })
                .collect(),
            tiles: true,
        }
    }

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
    fn the_cell_cycles_over_the_split_dimensions() {
        // TP 2 × CP 2 × DP 2 (× PP 2 in columns): tp (the default, `None`) → cp → dp → tp.
        let l = layout(&[
            (Dim::Pp, 2, 8),
            (Dim::Dp, 2, 4),
            (Dim::Cp, 2, 2),
            (Dim::Tp, 2, 1),
        ]);
        assert_eq!(cell_dims(&l), [Dim::Tp, Dim::Cp, Dim::Dp]);
        assert_eq!(next_cell(&l, None), Some(Dim::Cp));
        assert_eq!(next_cell(&l, Some(Dim::Cp)), Some(Dim::Dp));
        assert_eq!(next_cell(&l, Some(Dim::Dp)), None);
        // DP 4 × PP 2, no tensor parallel: one-rank cells, then the replicas side by side.
        let l = layout(&[(Dim::Pp, 2, 4), (Dim::Dp, 4, 1)]);
        assert_eq!(next_cell(&l, None), Some(Dim::Dp));
        assert_eq!(next_cell(&l, Some(Dim::Dp)), None);
        // Pipeline alone: nothing to group.
        assert_eq!(next_cell(&layout(&[(Dim::Pp, 8, 1)]), None), None);
    }
}
