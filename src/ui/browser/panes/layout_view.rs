//! The layout pane's own state: the metric its cells show (defined in
//! `analysis::layout::metric`), how ranks group into a cell, and the line that says what the
//! selection is.

use crate::analysis::layout::metric::{LayoutMetric, Value};
use crate::analysis::layout::{Dim, Layout};
use crate::format::human;
use crate::model::RankId;
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
        (Some(_), Some(v)) if b.panes.layout.metric == LayoutMetric::Saving => format!(
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
