//! The layout pane: the ranks drawn as the job is split (analysis/layout.rs) — pipeline
//! stages as columns, data-parallel replicas (with context and expert coordinates) as rows, a
//! tensor-parallel group's ranks side by side in one cell — each rank shaded by its own work
//! in the selected step against the step's median (the overview's heat scale). The selection
//! walks the ranks row by row; Enter opens the selected rank's timeline.

use super::PaneView;
use crate::analysis::deviation;
use crate::analysis::layout::{Dim, Layout};
use crate::format::pad;
use crate::model::RankId;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The layout pane.
pub struct LayoutPane;

/// The grid of a layout: rows × pipeline columns × tensor-parallel members, each a rank id.
struct Grid {
    /// Per row: its label (`dp3`, `dp1·cp0`) and per column its cell's ranks, in tp order.
    rows: Vec<(String, Vec<Vec<RankId>>)>,
    /// Pipeline stages (columns).
    cols: u32,
}

impl Grid {
    /// The grid of `l`: every rank of the world at its (row, column, member).
    fn of(l: &Layout) -> Grid {
        let size = |d: Dim| l.axes.iter().find(|a| a.dim == d).map_or(1, |a| a.size);
        let (cols, tp) = (size(Dim::Pp), size(Dim::Tp));
        let n_rows = (l.world / cols.saturating_mul(tp).max(1)).max(1);
        let mut rows: Vec<(String, Vec<Vec<RankId>>)> =
            vec![(String::new(), vec![Vec::new(); cols as usize]); n_rows as usize];
        // A row per combination of the outer coordinates (dp fastest, then cp, then ep).
        for r in (0..l.world).map(RankId) {
            let mut row = 0usize;
            let mut scale = 1usize;
            for d in [Dim::Dp, Dim::Cp, Dim::Ep] {
                row += l.coord(r, d).unwrap_or(0) as usize * scale;
                scale = scale.saturating_mul(size(d) as usize);
            }
            let Some((label, cells)) = rows.get_mut(row) else {
                continue;
            };
            if label.is_empty() {
                *label = row_label(l, r);
            }
            let col = l.coord(r, Dim::Pp).unwrap_or(0) as usize;
            if let Some(c) = cells.get_mut(col) {
                c.push(r);
            }
        }
        Grid { rows, cols }
    }

    /// The ranks in selection order: row by row, column by column, member by member.
    fn order(&self) -> Vec<RankId> {
        self.rows
            .iter()
            .flat_map(|(_, cells)| cells.iter().flatten().copied())
            .collect()
    }
}

/// A row's label: the rank's coordinates but pipeline and tensor (`dp3`, `dp1·cp0`).
fn row_label(l: &Layout, r: RankId) -> String {
    let parts: Vec<String> = [Dim::Dp, Dim::Ep, Dim::Cp]
        .iter()
        .filter_map(|&d| Some(format!("{}{}", d.as_str(), l.coord(r, d)?)))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join("·")
    }
}

/// The ranks the selection walks: the layout's, in grid order (none without a layout).
fn order(b: &Browser) -> Vec<RankId> {
    b.data
        .analysis
        .layout
        .as_ref()
        .map_or_else(Vec::new, |l| Grid::of(l).order())
}

impl PaneView for LayoutPane {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        order(b).len()
    }

    /// Opens the selected rank's timeline (a rank that is not loaded has none).
    fn enter(&self, b: &mut Browser, row: usize, _: &mut Ctx<UiMsg>) {
        let Some(&id) = order(b).get(row) else { return };
        if let Some(r) = b.data.loaded.job.rank_ix(id) {
            b.push(Level::Device(r), Pane::Timeline);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        let th = &ctx.theme;
        let Some(l) = b.data.analysis.layout.as_ref() else {
            let msg = widgets::empty(th, " one rank: no parallel layout");
            f.render_widget(Paragraph::new(msg).block(block(th, "layout")), area);
            return;
        };
        let grid = Grid::of(l);
        let order = grid.order();
        let sel = order.get(b.row_of(Pane::Layout)).copied();
        let dev = deviations(b);
        let tp = grid
            .rows
            .iter()
            .flat_map(|r| r.1.iter().map(Vec::len))
            .max()
            .unwrap_or(1);
        // A cell: its first rank's id, then one shade per member.
        let id_w = l.world.saturating_sub(1).to_string().len() + 1;
        let cell_w = id_w + 1 + tp;
        let label_w = grid
            .rows
            .iter()
            .map(|r| r.0.len())
            .max()
            .unwrap_or(3)
            .max(3);
        let sel_row = sel.and_then(|s| {
            grid.rows
                .iter()
                .position(|r| r.1.iter().flatten().any(|&x| x == s))
        });
        // Header, column labels and the selected rank's line take three rows.
        let (rows, first) = widgets::page(area, 3, sel_row.unwrap_or(0));
        let mut lines = vec![widgets::head(
            th,
            format!(
                "{} {}",
                pad("", label_w),
                (0..grid.cols)
                    .map(|c| pad(&format!("pp{c}"), cell_w))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        )];
        for (label, cells) in grid.rows.iter().skip(first).take(rows) {
            let mut spans = vec![Span::styled(format!("{} ", pad(label, label_w)), th.dim())];
            for cell in cells {
                let id = cell.first().map_or(String::new(), |r| format!("r{r}"));
                spans.push(Span::styled(pad(&id, id_w + 1), th.text()));
                for &r in cell {
                    let (ch, color) = match dev.get(&r) {
                        Some(&d) => widgets::heat(th, d),
                        None => ('·', th.c.dim),
                    };
                    let style = if Some(r) == sel {
                        th.selected()
                    } else {
                        th.fg(color)
                    };
                    spans.push(Span::styled(ch.to_string(), style));
                }
                spans.push(Span::raw(" ".repeat((tp + 1).saturating_sub(cell.len()))));
            }
            lines.push(Line::from(spans));
        }
        lines.push(Line::from(Span::styled(
            selected_line(b, l, sel, &dev),
            th.text(),
        )));
        let title = format!(
            "layout: {} — own work vs the step's median (░ <2%, ▒ <10%, █ more; · not loaded)",
            l.shape()
        );
        f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
    }
}

/// Each loaded rank's own work in the selected step against the step's median.
fn deviations(b: &Browser) -> rustc_hash::FxHashMap<RankId, f64> {
    let job = &b.data.loaded.job;
    let Some(step) = b.step_number() else {
        return Default::default();
    };
    let ids: Vec<RankId> = job.ranks.iter().map(|r| r.id).collect();
    let groups: Vec<std::ops::Range<usize>> = (0..ids.len()).map(|i| i..i + 1).collect();
    let grid = deviation::grid(&b.data.analysis.breakdown, &ids, &[step], &groups);
    ids.into_iter()
        .zip(grid)
        .filter_map(|(r, row)| Some((r, row.first().copied().flatten()?)))
        .collect()
}

/// What the selection is: the rank, its position, its deviation, or that it is not loaded.
fn selected_line(
    b: &Browser,
    l: &Layout,
    sel: Option<RankId>,
    dev: &rustc_hash::FxHashMap<RankId, f64>,
) -> String {
    let Some(r) = sel else {
        return String::new();
    };
    let step = b
        .step_number()
        .map_or(String::new(), |s| format!(" in step {s}"));
    let at = l.label(r);
    match (b.data.loaded.job.rank_ix(r), dev.get(&r)) {
        (Some(_), Some(d)) => format!(
            " rank {r} {at}: own work {:+.1}% vs the median{step} — Enter: its timeline",
            d * 100.0
        ),
        (Some(_), None) => format!(" rank {r} {at}: no breakdown{step} — Enter: its timeline"),
        (None, _) => format!(" rank {r} {at}: not loaded"),
    }
}
