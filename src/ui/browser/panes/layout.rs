//! The layout pane: the ranks drawn as the job is split (analysis/layout.rs) — pipeline
//! stages as columns, one parallel dimension's ranks side by side in a cell (tensor parallel
//! unless `g` picks another), the other coordinates as rows — each rank shaded by the metric
//! `m` picks (analysis::layout::metric), with the health of the groups beside it when there is room.
//! `t` shows the other layout: the topology (topology.rs). The selection walks the ranks row
//! by row; Enter opens the selected rank's timeline.

use super::PaneView;
use super::layout_view::{next_cell, selected_line};
use crate::analysis::layout::health::GroupHealth;
use crate::analysis::layout::metric::{Value, values};
use crate::analysis::layout::{Dim, Layout};
use crate::format::{human, pad};
use crate::model::RankId;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use rustc_hash::FxHashMap;

/// The layout pane.
pub struct LayoutPane;

/// The grid of a layout: rows × pipeline columns × the cell dimension's members.
struct Grid {
    /// Per row: its label (`dp3`, `dp1·cp0`) and per column its cell's ranks, in order.
    rows: Vec<(String, Vec<Vec<RankId>>)>,
    /// Pipeline stages (columns).
    cols: u32,
}

impl Grid {
    /// The grid of `l` with `cell`'s ranks side by side: every rank of the world at its
    /// (row, column, member).
    fn of(l: &Layout, cell: Dim) -> Grid {
        let size = |d: Dim| l.axes.iter().find(|a| a.dim == d).map_or(1, |a| a.size);
        let cols = size(Dim::Pp);
        let n_rows = (l.world / cols.saturating_mul(size(cell)).max(1)).max(1);
        let row_dims: Vec<Dim> = [Dim::Dp, Dim::Cp, Dim::Ep, Dim::Tp]
            .into_iter()
            .filter(|&d| d != cell)
            .collect();
        let mut rows: Vec<(String, Vec<Vec<RankId>>)> =
            vec![(String::new(), vec![Vec::new(); cols as usize]); n_rows as usize];
        for r in (0..l.world).map(RankId) {
            // A row per combination of the other coordinates (the first dimension fastest).
            let mut row = 0usize;
            let mut scale = 1usize;
            for &d in &row_dims {
                row += l.coord(r, d).unwrap_or(0) as usize * scale;
                scale = scale.saturating_mul(size(d) as usize);
            }
            let Some((label, cells)) = rows.get_mut(row) else {
                continue;
            };
            if label.is_empty() {
                *label = row_label(l, r, &row_dims);
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

/// A row's label: the rank's coordinates along the row dimensions (`dp3`, `dp1·tp0`).
fn row_label(l: &Layout, r: RankId, dims: &[Dim]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .filter_map(|&d| Some(format!("{}{}", d.as_str(), l.coord(r, d)?)))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join("·")
    }
}

/// The dimension cells hold now.
fn cell(b: &Browser) -> Dim {
    b.panes.layout.cell.unwrap_or(Dim::Tp)
}

/// The ranks the selection walks: the layout's, in grid order (none without a layout).
fn order(b: &Browser) -> Vec<RankId> {
    b.data
        .analysis
        .layout
        .as_ref()
        .map_or_else(Vec::new, |l| Grid::of(l, cell(b)).order())
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

    fn hints(&self) -> &'static [Action] {
        &[
            Action::CycleMetric,
            Action::CycleGrouping,
            Action::Topology,
            Action::Enter,
        ]
    }

    fn commands(&self) -> &'static [Action] {
        &[Action::CycleMetric, Action::CycleGrouping, Action::Topology]
    }

    /// `m` the metric, `g` the cell grouping (the selection stays on its rank), `t` the view.
    fn act(&self, b: &mut Browser, a: Action, _: &mut Ctx<UiMsg>) {
        let selected = order(b).get(b.panes.rows[Pane::Layout.index()]).copied();
        match a {
            Action::CycleMetric => {
                let whatif = b.data.analysis.whatif.slowdown.is_some();
                b.panes.layout.metric = b.panes.layout.metric.next(whatif);
            }
            Action::CycleGrouping => {
                if let Some(l) = b.data.analysis.layout.as_ref() {
                    b.panes.layout.cell = next_cell(l, b.panes.layout.cell);
                }
            }
            Action::Topology => b.panes.layout.topology = !b.panes.layout.topology,
            _ => {}
        }
        if let Some(k) = selected.and_then(|s| order(b).iter().position(|&r| r == s)) {
            b.panes.rows[Pane::Layout.index()] = k;
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        let th = &ctx.theme;
        let Some(l) = b.data.analysis.layout.as_ref() else {
            let msg = widgets::empty(th, " one rank: no parallel layout");
            f.render_widget(Paragraph::new(msg).block(block(th, "layout")), area);
            return;
        };
        let sel = order(b).get(b.row_of(Pane::Layout)).copied();
        let vals = b
            .step_number()
            .map(|s| values(&b.data.analysis, b.panes.layout.metric, s))
            .unwrap_or_default();
        if b.panes.layout.topology {
            super::topology::draw(f, area, b, ctx, &vals, sel);
            return;
        }
        let groups = &b.data.analysis.group_health;
        if area.width >= 110 && !groups.is_empty() {
            let [left, right] =
                Split::horizontal([Constraint::Min(50), Constraint::Length(58)]).areas(area);
            grid(f, left, b, ctx, (l, &vals, sel));
            health(f, right, b, ctx, sel);
        } else {
            grid(f, area, b, ctx, (l, &vals, sel));
        }
    }
}

/// The split: header, a row per replica, the selected rank's line.
fn grid(
    f: &mut Frame,
    area: Rect,
    b: &Browser,
    ctx: &Ctx<UiMsg>,
    (l, vals, sel): (&Layout, &FxHashMap<RankId, Value>, Option<RankId>),
) {
    let th = &ctx.theme;
    let g = Grid::of(l, cell(b));
    let per = g
        .rows
        .iter()
        .flat_map(|r| r.1.iter().map(Vec::len))
        .max()
        .unwrap_or(1);
    // A cell: its first rank's id, then one shade per member.
    let id_w = l.world.saturating_sub(1).to_string().len() + 1;
    let cell_w = id_w + 1 + per;
    let label_w = g.rows.iter().map(|r| r.0.len()).max().unwrap_or(3).max(3);
    let sel_row = sel.and_then(|s| {
        g.rows
            .iter()
            .position(|r| r.1.iter().flatten().any(|&x| x == s))
    });
    // Header, column labels and the selected rank's line take three rows.
    let (rows, first) = widgets::page(area, 3, sel_row.unwrap_or(0));
    let cols: Vec<String> = (0..g.cols)
        .map(|c| pad(&format!("pp{c}"), cell_w))
        .collect();
    let mut lines = vec![widgets::head(
        th,
        format!("{} {}", pad("", label_w), cols.join(" ")),
    )];
    for (label, cells) in g.rows.iter().skip(first).take(rows) {
        let mut spans = vec![Span::styled(format!("{} ", pad(label, label_w)), th.dim())];
        for c in cells {
            let id = c.first().map_or(String::new(), |r| format!("r{r}"));
            spans.push(Span::styled(pad(&id, id_w + 1), th.text()));
            for &r in c {
                let (ch, color) = match vals.get(&r) {
                    Some(v) => widgets::heat(th, v.dev),
                    None => ('·', th.c.dim),
                };
                let style = if Some(r) == sel {
                    th.selected()
                } else {
                    th.fg(color)
                };
                spans.push(Span::styled(ch.to_string(), style));
            }
            spans.push(Span::raw(" ".repeat((per + 1).saturating_sub(c.len()))));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(Span::styled(
        selected_line(b, l, sel, vals),
        th.text(),
    )));
    lines.push(widgets::head(
        th,
        " ░ <2%  ▒ <10%  █ more  · not loaded".into(),
    ));
    let room = (area.height as usize).saturating_sub(lines.len() + 2);
    lines.extend(stage_lines(b, ctx, room));
    let title = format!(
        "layout: {} — {}, cells: {}",
        l.shape(),
        b.panes.layout.metric.title(),
        cell(b).as_str()
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// Under the grid, when there is room: each pipeline stage against the mean (M_S), its
/// slowest worker against its peers (M_W), the operators that make the flagged stage heavier.
fn stage_lines<'a>(b: &Browser, ctx: &Ctx<UiMsg>, room: usize) -> Vec<Line<'a>> {
    let th = &ctx.theme;
    let Some(stages) = b.data.analysis.stages.as_ref() else {
        return Vec::new();
    };
    let mut out = vec![
        Line::raw(""),
        widgets::head(
            th,
            " stage  compute/step  vs mean  recv wait/step Σ  slowest worker".into(),
        ),
    ];
    for s in stages {
        let w = s
            .workers
            .iter()
            .max_by_key(|w| (w.excess_ns, std::cmp::Reverse(w.rank)));
        let worker = w.map_or("-".into(), |w| {
            let sign = if w.excess_ns > 0 { "+" } else { "" };
            format!("r{} {sign}{} vs its peers", w.rank, human(w.excess_ns))
        });
        let flag = if s.flagged { "  ← sets the pace" } else { "" };
        let text = format!(
            " pp{:<4} {:>12}  {:>+6.0}%  {:>16}  {worker}{flag}",
            s.stage,
            human(s.compute_ns),
            s.excess * 100.0,
            human(s.recv_wait_ns)
        );
        out.push(Line::from(Span::styled(
            text,
            if s.flagged {
                th.fg(th.c.heat_high)
            } else {
                th.text()
            },
        )));
        for o in &s.heavier_ops {
            out.push(Line::from(Span::styled(
                format!(
                    "        {} {} vs {} elsewhere",
                    crate::format::fit_middle(&crate::format::printable(&o.name), 36),
                    human(o.stage_ns),
                    human(o.others_ns)
                ),
                th.dim(),
            )));
        }
    }
    out.truncate(room);
    out
}

/// The groups' health, busiest first; the selected rank's groups marked `>`.
fn health(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, sel: Option<RankId>) {
    let th = &ctx.theme;
    let groups: &[GroupHealth] = &b.data.analysis.group_health;
    let mut lines = vec![widgets::head(
        th,
        format!(
            "  {:<12} {:>3} {:>9} {:>9} {:>9} {:>6}",
            "group", "dim", "wait", "exposed", "skew", "last"
        ),
    )];
    let rows = area.height.saturating_sub(3) as usize;
    for h in groups.iter().take(rows) {
        let mine = sel.is_some_and(|s| h.ranks.contains(&s));
        let name = crate::format::printable(&h.group);
        let line = format!(
            "{} {:<12} {:>3} {:>9} {:>9} {:>9} {:>6}",
            if mine { ">" } else { " " },
            crate::format::fit_middle(&name, 12),
            h.dim.map_or("-", |d| d.as_str()),
            human(h.wait_ns),
            human(h.exposed_ns),
            human(h.skew_ns),
            h.slowest.map_or("-".into(), |(r, _)| format!("r{r}")),
        );
        lines.push(Line::from(Span::styled(
            line,
            if mine { th.text() } else { th.dim() },
        )));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(th, "group health (steps shown)")),
        area,
    );
}
