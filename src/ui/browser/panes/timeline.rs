//! Timeline (a banded Marey graph, docs/architecture.md#sources): one time axis per rank (or per lane at device
//! level), operators as bands coloured by kind at half-cell resolution; the selected operator
//! is highlighted on every row and, when rows have room between them, joined from row to row
//! by its start and end edges, so arrival skew shows as slant. Too many rows are aggregated
//! into groups (their bands summed, the operator's min/mean/max start and end), expandable.

use super::PaneView;
use super::raster::{Raster, band_spans, mono_glyph};
use super::timeline_cursor as cursor;
use super::timeline_nav::{self as tlnav, CHROME, window};
use crate::analysis::timeline::{BandKind, Envelope, Timeline, envelope_of};
use crate::format::{fit, human, pad};
use crate::time::Ns;
use crate::ui::UiMsg;
use crate::ui::browser::work::Task;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::keymap::Action;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::block;
use crate::ui::shell::{Ctx, HitTarget};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::ops::Range;

pub use super::timeline_cursor::{next_hit, point_at};
pub use super::timeline_nav::{display_rows, select_row};

/// Label column of rank rows (`rank 1023`); lane rows get up to [`LANE_LABEL`].
const LABEL: usize = 11;
const LANE_LABEL: usize = 26;
/// Columns the selected operator's name keeps on the info line before its facts give way.
const NAME_ROOM: usize = 24;
/// The Marey timeline of the selected step.
pub struct TimelinePane;

/// Its footer hints.
const HINTS: &[Action] = &[
    Action::NextBand,
    Action::MarkRange,
    Action::ZoomIn,
    Action::ZoomOut,
    Action::PanLeft,
    Action::NextOfKind,
    Action::WidenSteps,
    Action::Enter,
];

/// Its own commands.
const COMMANDS: &[Action] = &[
    Action::PanLeft,
    Action::PanRight,
    Action::ZoomIn,
    Action::ZoomOut,
    Action::ZoomReset,
    Action::NextOfKind,
    Action::PrevOfKind,
    Action::NextBand,
    Action::PrevBand,
    Action::MarkRange,
    Action::Inspector,
    Action::WidenSteps,
    Action::NarrowSteps,
    Action::ReadArgs,
];

impl PaneView for TimelinePane {
    fn list_len(&self, b: &Browser, ctx: &Ctx<UiMsg>) -> usize {
        b.timeline()
            .map_or(0, |t| display_rows(b, t, ctx.size).len())
    }

    fn enter(&self, b: &mut Browser, row: usize, ctx: &mut Ctx<UiMsg>) {
        let Some(t) = b.timeline() else { return };
        let rows = display_rows(b, t, ctx.size);
        let Some(range) = rows.get(row).cloned() else {
            return;
        };
        if range.len() > 1 {
            b.panes.timeline.view.expanded = Some((range.start, range.end));
            b.panes.timeline.view.row = 0;
            return;
        }
        let r = &t.rows[range.start];
        match b.device() {
            None => {
                let (idx, rank) = (r.rank_index, r.rank);
                b.push(Level::Device(idx), Pane::Timeline);
                b.panes.timeline.view.focus_rank = Some(rank);
            }
            Some(_) => {
                if let Some((op, _)) = b.panes.timeline.view.op {
                    b.push(Level::Operator(op), Pane::Operator);
                }
            }
        }
    }

    fn selected(&self, b: &Browser) -> usize {
        b.panes.timeline.view.row
    }

    fn selection<'a>(&self, b: &'a mut Browser) -> &'a mut usize {
        &mut b.panes.timeline.view.row
    }

    /// Esc clears a marked range, then collapses an expanded group.
    fn back(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) -> bool {
        if b.panes.timeline.view.mark.take().is_some() {
            ctx.status = Some("range cleared".into());
            return true;
        }
        b.panes.timeline.view.expanded.take().is_some()
    }

    fn hints(&self) -> &'static [Action] {
        HINTS
    }

    fn commands(&self) -> &'static [Action] {
        COMMANDS
    }

    fn act(&self, b: &mut Browser, a: Action, ctx: &mut Ctx<UiMsg>) {
        match a {
            Action::NextOfKind | Action::PrevOfKind => {
                tlnav::next_of_kind(b, a == Action::NextOfKind, ctx)
            }
            Action::NextBand | Action::PrevBand => cursor::walk(b, a == Action::NextBand, ctx),
            Action::MarkRange => cursor::mark(b, ctx),
            Action::Inspector => {
                b.panes.timeline.view.inspector_off = !b.panes.timeline.view.inspector_off
            }
            Action::ReadArgs => super::inspector::read_args(b, ctx),
            Action::WidenSteps | Action::NarrowSteps => {
                tlnav::widen(b, a == Action::WidenSteps, ctx)
            }
            _ => tlnav::zoom(b, a, ctx.size),
        }
    }

    fn prepare(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if let Some(step) = b.step_number() {
            tlnav::prepare(b, step, ctx);
            cursor::keep_valid(b, ctx.size);
            super::inspector::prepare(b, ctx);
        }
    }

    /// Builds the previous and next steps' bands in the background, so `[` and `]` find
    /// them ready; after the frame, so the work does not compete with the frame a key awaits.
    fn after_frame(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if ctx.spawner.is_none() {
            return;
        }
        let rank = b.device();
        let near: Vec<_> = [b.nav.step.checked_sub(1), Some(b.nav.step + 1)]
            .into_iter()
            .flatten()
            .filter_map(|i| b.steps().get(i).copied())
            .collect();
        for s in near {
            b.need(Task::Timeline(rank, s), ctx);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        let h = super::inspector::height(b, ctx.size).min(area.height / 2);
        let [rows, insp] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(h)]).areas(area);
        draw(f, rows, b, ctx);
        if h > 0 {
            super::inspector::draw(f, insp, b, ctx);
        }
    }
}

/// Draws the timeline: the info line and ruler, one axis per displayed row (joined to the
/// next by the selected operator's edges when rows have room), the legend.
fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let Some(t) = b.timeline() else {
        f.render_widget(
            Paragraph::new(" no steps").block(block(th, "timeline")),
            area,
        );
        return;
    };
    let level = match b.device() {
        Some(r) => format!("rank {} lanes", b.data.loaded.job.rank(r).id),
        None => "ranks".into(),
    };
    let steps = if t.last == t.step {
        format!("step {}", t.step)
    } else {
        format!("steps {}–{}", t.step, t.last)
    };
    let title = format!("{steps}: {level} (Marey bands, aligned clocks)");
    let inner = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    f.render_widget(block(th, title), area);
    if t.rows.is_empty() {
        f.render_widget(Paragraph::new(" no operators in this step"), inner);
        return;
    }
    if inner.height < CHROME + 1 {
        let need = CHROME + 3;
        let msg = format!(
            " too small: the timeline pane needs {need} rows and has {}",
            area.height
        );
        f.render_widget(Paragraph::new(msg), inner);
        return;
    }
    let label_w = label_width(b, t, inner.width as usize);
    let cells = (inner.width as usize).saturating_sub(label_w).max(1);
    let (a, e) = window(b, t);
    let rows = display_rows(b, t, ctx.size);
    let gaps = rows.len() * 2 - 1 <= (inner.height - CHROME) as usize;
    let mut lines = vec![
        info_line(b, th, t, inner.width as usize),
        ruler(th, t, a, e, cells, label_w),
    ];
    let axes = Axes {
        a,
        e,
        cells,
        label_w,
    };
    lines.extend(axis_lines(b, th, t, &rows, &axes, gaps));
    let shown = (lines.len() - 2) as u16;
    let target = HitTarget::Axis {
        spaced: gaps,
        x0: inner.x + label_w as u16,
        cols: cells as u16,
    };
    ctx.hit(Rect::new(inner.x, inner.y + 2, inner.width, shown), target);
    while lines.len() < inner.height as usize - 1 {
        lines.push(Line::default());
    }
    lines.push(legend(th, t, label_w));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The time axis of the rows: the visible window `[a, e)` over `cells` columns, after a
/// label column of `label_w`.
struct Axes {
    a: Ns,
    e: Ns,
    cells: usize,
    label_w: usize,
}

impl Axes {
    /// The column (half-open, may fall outside) of time `tm`.
    fn x_of(&self, tm: Ns) -> i128 {
        ((tm - self.a) as i128 * self.cells as i128).div_euclid((self.e - self.a).max(1) as i128)
    }
}

/// One line per displayed row — its label and bands, the selected operator's envelope
/// marked — with a connector line between rows when there is room (`gaps`).
fn axis_lines(
    b: &Browser,
    th: &Theme,
    t: &Timeline,
    rows: &[Range<usize>],
    ax: &Axes,
    gaps: bool,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut prev: Option<(i128, i128)> = None;
    for (ri, range) in rows.iter().enumerate() {
        let env = b
            .panes
            .timeline
            .view
            .op
            .and_then(|_| envelope_of(b.panes.timeline.bands.get(range.clone())?));
        let edges = env.map(|e| (ax.x_of(e.mean_start), ax.x_of(e.mean_end)));
        if gaps && ri > 0 {
            lines.push(connector(th, prev, edges, ax.cells, ax.label_w));
        }
        prev = edges;
        let sel = env.map(|e: Envelope| {
            let (s0, s1) = (ax.x_of(e.min_start), ax.x_of(e.max_start));
            (
                s0,
                s1,
                ax.x_of(e.min_end - 1).max(s0),
                ax.x_of(e.max_end - 1).max(s1),
            )
        });
        let mut r = Raster::new(ax.a, ax.e, ax.cells);
        for row in &t.rows[range.clone()] {
            r.add(&row.bands, row.max_len);
        }
        let label = if range.len() == 1 {
            t.rows[range.start].label.clone()
        } else {
            format!(
                "{}…{}",
                t.rows[range.start].rank,
                t.rows[range.end - 1].rank
            )
        };
        let lstyle = if ri == b.panes.timeline.view.row {
            th.selected()
        } else {
            th.text()
        };
        let mut spans = vec![
            Span::styled(pad(&label, ax.label_w - 1), lstyle),
            Span::raw(" "),
        ];
        spans.extend(band_spans(th, &r, range.len(), ax.cells, sel));
        lines.push(Line::from(spans));
    }
    lines
}

/// The label column: rank rows get [`LABEL`]; lane rows room for their names, up to
/// [`LANE_LABEL`] and a third of the width.
fn label_width(b: &Browser, t: &Timeline, width: usize) -> usize {
    if b.device().is_none() {
        return LABEL;
    }
    let longest = t
        .rows
        .iter()
        .map(|r| crate::format::width(&r.label) + 1)
        .max()
        .unwrap_or(LABEL);
    longest.clamp(LABEL, LANE_LABEL.min(width / 3).max(LABEL))
}

/// The Marey join between two rows: the start and end edges as slanted strokes with the band
/// between them shaded.
fn connector(
    th: &Theme,
    prev: Option<(i128, i128)>,
    cur: Option<(i128, i128)>,
    cells: usize,
    label_w: usize,
) -> Line<'static> {
    let mut spans = vec![Span::raw(" ".repeat(label_w))];
    let (Some((ps, pe)), Some((cs, ce))) = (prev, cur) else {
        spans.push(Span::raw(" ".repeat(cells)));
        return Line::from(spans);
    };
    let stroke = |from: i128, to: i128| match to.cmp(&from) {
        std::cmp::Ordering::Greater => '╲',
        std::cmp::Ordering::Less => '╱',
        std::cmp::Ordering::Equal => '│',
    };
    let (sx, ex) = ((ps + cs) / 2, ((pe + ce) / 2).max((ps + cs) / 2));
    let mut text = String::new();
    let mut styles = Vec::new();
    for c in 0..cells as i128 {
        let (ch, st) = if c == sx {
            (
                stroke(ps, cs),
                th.fg(th.c.accent).add_modifier(Modifier::BOLD),
            )
        } else if c == ex {
            (
                stroke(pe, ce),
                th.fg(th.c.accent).add_modifier(Modifier::BOLD),
            )
        } else if c > sx && c < ex {
            ('░', th.fg(th.c.selection_bg))
        } else {
            (' ', th.text())
        };
        text.push(ch);
        styles.push(st);
    }
    for (ch, st) in text.chars().zip(styles) {
        spans.push(Span::styled(ch.to_string(), st));
    }
    Line::from(spans)
}

/// A tick step from 1-2-5 × 10ⁿ ns giving ticks at least `min_cells` apart (saturating: a
/// window wider than any such step gets the widest).
fn tick_step(width_ns: Ns, cells: usize, min_cells: usize) -> Ns {
    let want = (i128::from(width_ns.max(0)) * min_cells as i128 / cells.max(1) as i128).max(1);
    let mut p: i128 = 1;
    while p <= i128::from(Ns::MAX) {
        if let Some(m) = [1, 2, 5].into_iter().find(|m| p * m >= want) {
            return Ns::try_from(p * m).unwrap_or(Ns::MAX);
        }
        p *= 10;
    }
    Ns::MAX
}

fn ruler(th: &Theme, t: &Timeline, a: Ns, b: Ns, cells: usize, label_w: usize) -> Line<'static> {
    let width = b.saturating_sub(a).max(1);
    let step = tick_step(width, cells, 14);
    let mut text: Vec<char> = vec![' '; cells];
    let from = a.saturating_sub(t.start);
    let first = from
        .div_euclid(step)
        .saturating_mul(step)
        .saturating_add(step);
    let mut tick = if from % step == 0 { from } else { first };
    // At most one tick per cell: the loop ends even if the arithmetic saturates.
    for _ in 0..=cells {
        let at = t.start.saturating_add(tick);
        if at >= b {
            break;
        }
        let x = (i128::from(at) - i128::from(a)) * cells as i128 / i128::from(width);
        let x = usize::try_from(x).unwrap_or(0);
        let label = format!("┊{}", human(tick));
        for (i, ch) in label.chars().enumerate() {
            if x + i < cells {
                text[x + i] = ch;
            }
        }
        tick = tick.saturating_add(step);
    }
    // On several steps, where each later one begins: `┃14`, over the ticks.
    for &(s, at) in &t.steps_at {
        if at < a || at >= b {
            continue;
        }
        let x = (i128::from(at) - i128::from(a)) * cells as i128 / i128::from(width);
        let x = usize::try_from(x).unwrap_or(0);
        for (i, ch) in format!("┃{s}").chars().enumerate() {
            if x + i < cells {
                text[x + i] = ch;
            }
        }
    }
    Line::from(vec![
        Span::styled(pad("+t", label_w), th.dim()),
        Span::styled(text.into_iter().collect::<String>(), th.dim()),
    ])
}

fn info_line(b: &Browser, th: &Theme, t: &Timeline, width: usize) -> Line<'static> {
    let (w0, w1) = window(b, t);
    let zoom = if b.panes.timeline.view.zoom.is_some() {
        format!(
            "{} – {} of {}",
            human(w0 - t.start),
            human(w1 - t.start),
            human(t.end - t.start)
        )
    } else if t.last != t.step {
        format!("steps {}–{}, {}", t.step, t.last, human(t.end - t.start))
    } else {
        format!("whole step, {}", human(t.end - t.start))
    };
    let mut spans = vec![Span::styled(format!(" {zoom}"), th.dim())];
    if let Some((s, k)) = b.panes.timeline.view.op {
        let occ = &b.panes.timeline.bands;
        if let Some(e) = envelope_of(occ) {
            let found = || {
                t.rows
                    .iter()
                    .zip(occ)
                    .filter_map(|(r, b)| b.map(|b| (b, r.rank)))
            };
            let last = found()
                .map(|(b, r)| (b.start, r))
                .max_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)))
                .map(|x| x.1);
            let longest = found()
                .map(|(b, r)| (b.end - b.start, r))
                .max_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
            // The name (a long kernel signature, cut in its middle) keeps room to be read:
            // the facts give way, least telling first.
            let mut facts = format!(
                " #{k}: on {} rows, start skew {}",
                e.rows,
                human(e.max_start - e.min_start)
            );
            let mut shorter = format!(" #{k}: on {} rows", e.rows);
            if let (Some(l), Some((d, lr))) = (last, longest) {
                let tail = if b.device().is_none() {
                    format!(", last to start rank {l}, longest {} (rank {lr})", human(d))
                } else {
                    format!(", {}", human(d))
                };
                facts.push_str(&tail);
                shorter.push_str(&tail);
            }
            let room_for =
                |f: &str| width.saturating_sub(zoom.len() + 2 + 3 + crate::format::width(f));
            let want = crate::format::width(b.name(s)).min(NAME_ROOM);
            let facts = [facts, shorter, format!(" #{k}")]
                .into_iter()
                .find(|f| room_for(f) >= want)
                .unwrap_or_else(|| format!(" #{k}"));
            let room = room_for(&facts);
            // Under 9 columns a name is only ellipses: the inspector names it.
            let name = if room >= 9 {
                crate::format::fit_name(b.name(s), room)
            } else {
                String::new()
            };
            spans.push(Span::styled(
                fit(
                    &format!(" │ {}", format!("{name}{facts}").trim_start()),
                    width.saturating_sub(zoom.len() + 2),
                ),
                th.fg(th.c.accent),
            ));
        }
    }
    Line::from(spans)
}

/// The legend of the kinds the timeline has (a narrow pane keeps its width for them).
fn legend(th: &Theme, t: &Timeline, label_w: usize) -> Line<'static> {
    let mut spans = vec![Span::raw(" ".repeat(label_w))];
    let present = |k: BandKind| t.rows.iter().any(|r| r.bands.iter().any(|b| b.kind == k));
    for k in BandKind::ALL.into_iter().filter(|&k| present(k)) {
        let g = if th.mono { mono_glyph(k) } else { '█' };
        spans.push(Span::styled(format!("{g} "), th.fg(th.band(k))));
        spans.push(Span::styled(format!("{}  ", k.as_str()), th.dim()));
    }
    spans.push(Span::styled("─ idle  ", th.fg(th.c.idle)));
    spans.push(Span::styled("▁ < ¼ busy", th.dim()));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_1_2_5() {
        assert_eq!(tick_step(1_000_000, 100, 10), 100_000);
        assert_eq!(tick_step(1_000_000, 100, 14), 200_000);
        assert_eq!(tick_step(3_000, 10, 5), 2_000);
        // The widest windows get the widest step instead of looping (the old loop
        // multiplied past i64 and never returned).
        assert_eq!(tick_step(Ns::MAX, 1, 14), Ns::MAX);
        assert_eq!(tick_step(0, 0, 14), 1);
    }

    use crate::time::strategies::instant;
    use proptest::prelude::*;

    proptest! {
        /// The ruler of any window in the time range ends, fits its cells, and every tick it
        /// labels lies in the window.
        #[test]
        fn any_window_gets_a_ruler(a in instant(), b in instant(), start in instant(), cells in 0usize..400) {
            let (a, b) = (a.min(b), a.max(b).max(a.min(b) + 1));
            let t = Timeline { step: crate::model::StepNo(1), last: crate::model::StepNo(1), steps_at: Vec::new(), start: start.min(a), end: b, rows: Vec::new() };
            let line = ruler(&Theme::builtin("dark"), &t, a, b, cells, 4);
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            prop_assert_eq!(text.chars().count(), 4 + cells);
            let step = tick_step(b - a, cells, 14);
            prop_assert!(step >= 1);
        }
    }
}
