//! Timeline (Marey bands, seed 002 §5.2.3): one time axis per rank (or per lane at device
//! level), operators as bands coloured by kind at half-cell resolution; the selected operator
//! is highlighted on every row and, when rows have room between them, joined from row to row
//! by its start and end edges, so arrival skew shows as slant. Too many rows are aggregated
//! into groups (their bands summed, the operator's min/mean/max start and end), expandable.

use super::PaneView;
use super::timeline_nav::{self as tlnav, window};
use crate::analysis::timeline::{Band, BandKind, Envelope, Timeline, envelope_of};
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
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub use super::timeline_nav::display_rows;

/// Label column of rank rows (`rank 1023`); lane rows get up to [`LANE_LABEL`].
const LABEL: usize = 11;
const LANE_LABEL: usize = 26;
/// Lines above the rows (info, ruler) and below (legend), inside the block.
const CHROME: u16 = 3;

/// Rows available for axes at a terminal size.
pub fn capacity(size: (u16, u16)) -> usize {
    // header + tabs + footer + block borders + chrome.
    size.1.saturating_sub(3 + 2 + CHROME).max(1) as usize
}

/// The Marey timeline of the selected step.
pub struct TimelinePane;

/// Its footer hints.
const HINTS: &[Action] = &[
    Action::ZoomIn,
    Action::ZoomOut,
    Action::PanLeft,
    Action::NextOfKind,
    Action::PrevStep,
    Action::NextStep,
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
            b.tl.expanded = Some((range.start, range.end));
            b.tl.row = 0;
            return;
        }
        let r = &t.rows[range.start];
        match b.device() {
            None => {
                let (idx, rank) = (r.rank_index, r.rank);
                b.push(Level::Device(idx), Pane::Timeline);
                b.tl.focus_rank = Some(rank);
            }
            Some(_) => {
                if let Some((op, _)) = b.tl.op {
                    b.push(Level::Operator(op), Pane::Operator);
                }
            }
        }
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
            _ => tlnav::zoom(b, a, ctx.size),
        }
    }

    fn prepare(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if let Some(step) = b.step_number() {
            tlnav::prepare(b, step, ctx);
        }
    }

    /// Builds the previous and next steps' bands in the background, so `[` and `]` find
    /// them ready; after the frame, so the work does not compete with the frame a key awaits.
    fn after_frame(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if ctx.spawner.is_none() {
            return;
        }
        let rank = b.device();
        let near: Vec<_> = [b.step.checked_sub(1), Some(b.step + 1)]
            .into_iter()
            .flatten()
            .filter_map(|i| b.steps().get(i).copied())
            .collect();
        for s in near {
            b.need(Task::Timeline(rank, s), ctx);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

/// Glyph of a kind without colour (mono themes) — kinds stay apart by shape.
fn mono_glyph(k: BandKind) -> char {
    match k {
        BandKind::Compute => '█',
        BandKind::Collective => '▓',
        BandKind::Send => '▶',
        BandKind::Recv => '◀',
        BandKind::Memory => '░',
        BandKind::Host => '▒',
    }
}

/// Coverage of half-cells by kind, summed over rows.
struct Raster {
    a: Ns,
    w: Ns,
    halves: usize,
    cover: Vec<[Ns; 6]>,
}

impl Raster {
    fn new(a: Ns, b: Ns, cells: usize) -> Raster {
        Raster {
            a,
            w: (b - a).max(1),
            halves: cells * 2,
            cover: vec![[0; 6]; cells * 2],
        }
    }

    // i64 is enough: (t − a) ≤ w and halves ≤ a few thousand, so the product stays far below
    // 2⁶³ for windows up to weeks; i128 division would cost a library call per band.
    fn half_of(&self, t: Ns) -> i64 {
        ((t - self.a) * self.halves as i64).div_euclid(self.w)
    }

    /// Adds a row's bands (sorted by start; none longer than `max_len`).
    fn add(&mut self, bands: &[Band], max_len: Ns) {
        let b_end = self.a + self.w;
        let first = bands.partition_point(|b| b.start < self.a - max_len);
        for b in &bands[first..] {
            if b.start >= b_end {
                break;
            }
            if b.end <= self.a {
                continue;
            }
            let (s, e) = (b.start.max(self.a), b.end.min(b_end));
            let (h0, h1) = (
                self.half_of(s).max(0) as usize,
                (self.half_of(e - 1).max(0) as usize).min(self.halves - 1),
            );
            let k = BandKind::ALL.iter().position(|x| *x == b.kind).unwrap_or(0);
            for h in h0..=h1 {
                let (ha, hb) = (self.time_of(h), self.time_of(h + 1));
                self.cover[h][k] += e.min(hb) - s.max(ha);
            }
        }
    }

    fn time_of(&self, h: usize) -> Ns {
        self.a + self.w * h as i64 / self.halves as i64
    }

    /// The dominant kind of half `h` when it is at least a quarter covered per row.
    fn kind(&self, h: usize, rows: usize) -> (Option<BandKind>, bool) {
        let c = &self.cover[h];
        let (i, best) = c
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| (**v, std::cmp::Reverse(*i)))
            .expect("6 kinds");
        let span = (self.time_of(h + 1) - self.time_of(h)).max(1) * rows as Ns;
        let any = c.iter().any(|v| *v > 0);
        (
            (*best * 4 >= span && *best > 0).then_some(BandKind::ALL[i]),
            any,
        )
    }
}

/// Where a row's selected operator lies, in cells: its earliest and latest start, its
/// earliest and latest end.
type SelCells = (i128, i128, i128, i128);

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
    let title = format!("step {}: {level} (Marey bands, aligned clocks)", t.step);
    let inner = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    f.render_widget(block(th, title), area);
    if t.rows.is_empty() || inner.height < CHROME + 1 {
        f.render_widget(Paragraph::new(" no operators in this step"), inner);
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
    let x_of = |tm: Ns| ((tm - a) as i128 * cells as i128).div_euclid((e - a).max(1) as i128);
    let mut prev: Option<(i128, i128)> = None;
    for (ri, range) in rows.iter().enumerate() {
        let env =
            b.tl.op
                .and_then(|_| envelope_of(b.cache.selected_bands.get(range.clone())?));
        if gaps && ri > 0 {
            let cur = env.map(|e| (x_of(e.mean_start), x_of(e.mean_end)));
            lines.push(connector(th, prev, cur, cells, label_w));
        }
        prev = env.map(|e| (x_of(e.mean_start), x_of(e.mean_end)));
        let sel = env.map(|e: Envelope| {
            let (s0, s1) = (x_of(e.min_start), x_of(e.max_start));
            (
                s0,
                s1,
                x_of(e.min_end - 1).max(s0),
                x_of(e.max_end - 1).max(s1),
            )
        });
        let mut r = Raster::new(a, e, cells);
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
        let lstyle = if ri == b.tl.row {
            th.selected()
        } else {
            th.text()
        };
        let mut spans = vec![
            Span::styled(pad(&label, label_w - 1), lstyle),
            Span::raw(" "),
        ];
        spans.extend(band_spans(th, &r, range.len(), cells, sel));
        lines.push(Line::from(spans));
    }
    let shown = (lines.len() - 2) as u16;
    let target = if gaps {
        HitTarget::SpacedRows(0)
    } else {
        HitTarget::Rows(0)
    };
    ctx.hit(Rect::new(inner.x, inner.y + 2, inner.width, shown), target);
    while lines.len() < inner.height as usize - 1 {
        lines.push(Line::default());
    }
    lines.push(legend(th, label_w));
    f.render_widget(Paragraph::new(lines), inner);
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
        .map(|r| r.label.chars().count() + 1)
        .max()
        .unwrap_or(LABEL);
    longest.clamp(LABEL, LANE_LABEL.min(width / 3).max(LABEL))
}

/// One axis's cells: each the dominant kind of its two halves, the selected operator's
/// common span highlighted and its ragged edges underlined. Cells of one style are merged
/// into one span: a frame is hundreds of spans, not tens of thousands.
fn band_spans(
    th: &Theme,
    r: &Raster,
    rows: usize,
    cells: usize,
    sel: Option<SelCells>,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut run_style = Style::default();
    for c in 0..cells {
        let (l, la) = r.kind(2 * c, rows);
        let (rr, ra) = r.kind(2 * c + 1, rows);
        let (glyph, kind) = match (l, rr) {
            (Some(k), Some(_)) => (if th.mono { mono_glyph(k) } else { '█' }, Some(k)),
            (Some(k), None) => (if th.mono { mono_glyph(k) } else { '▌' }, Some(k)),
            (None, Some(k)) => (if th.mono { mono_glyph(k) } else { '▐' }, Some(k)),
            (None, None) if la || ra => ('▁', None),
            _ => ('─', None),
        };
        let mut style = match kind {
            Some(k) => Style::default().fg(th.band(k)),
            None if la || ra => th.dim(),
            None => Style::default().fg(th.c.idle),
        };
        if let Some((s0, s1, e0, e1)) = sel {
            let x = c as i128;
            if x >= s1 && x <= e0 {
                style = style.patch(th.selected());
            } else if x >= s0 && x <= e1 {
                style = style
                    .add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
                    .fg(th.c.accent);
            }
        }
        if style != run_style && !run.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut run), run_style));
        }
        run_style = style;
        run.push(glyph);
    }
    spans.push(Span::styled(run, run_style));
    spans
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

/// A tick step from 1-2-5 × 10ⁿ ns giving ticks at least `min_cells` apart.
fn tick_step(width_ns: Ns, cells: usize, min_cells: usize) -> Ns {
    let want = (width_ns as i128 * min_cells as i128 / cells.max(1) as i128).max(1) as Ns;
    let mut p: Ns = 1;
    loop {
        for m in [1, 2, 5] {
            if p * m >= want {
                return p * m;
            }
        }
        p *= 10;
    }
}

fn ruler(th: &Theme, t: &Timeline, a: Ns, b: Ns, cells: usize, label_w: usize) -> Line<'static> {
    let step = tick_step(b - a, cells, 14);
    let mut text: Vec<char> = vec![' '; cells];
    let first = (a - t.start).div_euclid(step) * step + step;
    let mut tick = if (a - t.start) % step == 0 {
        a - t.start
    } else {
        first
    };
    while t.start + tick < b {
        let x = ((t.start + tick - a) as i128 * cells as i128 / (b - a).max(1) as i128) as usize;
        let label = format!("┊{}", human(tick));
        for (i, ch) in label.chars().enumerate() {
            if x + i < cells {
                text[x + i] = ch;
            }
        }
        tick += step;
    }
    Line::from(vec![
        Span::styled(pad("+t", label_w), th.dim()),
        Span::styled(text.into_iter().collect::<String>(), th.dim()),
    ])
}

fn info_line(b: &Browser, th: &Theme, t: &Timeline, width: usize) -> Line<'static> {
    let (w0, w1) = window(b, t);
    let zoom = if b.tl.zoom.is_some() {
        format!(
            "{} – {} of {}",
            human(w0 - t.start),
            human(w1 - t.start),
            human(t.end - t.start)
        )
    } else {
        format!("whole step, {}", human(t.end - t.start))
    };
    let mut spans = vec![Span::styled(format!(" {zoom}"), th.dim())];
    if let Some((s, k)) = b.tl.op {
        let occ = &b.cache.selected_bands;
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
            let mut text = format!(
                " │ {} #{}: on {} rows, start skew {}",
                b.name(s),
                k,
                e.rows,
                human(e.max_start - e.min_start)
            );
            if let (Some(l), Some((d, lr))) = (last, longest) {
                if b.device().is_none() {
                    text.push_str(&format!(
                        ", last to start rank {l}, longest {} on rank {lr}",
                        human(d)
                    ));
                } else {
                    text.push_str(&format!(", {}", human(d)));
                }
            }
            spans.push(Span::styled(
                fit(&text, width.saturating_sub(zoom.len() + 2)),
                th.fg(th.c.accent),
            ));
        }
    }
    Line::from(spans)
}

fn legend(th: &Theme, label_w: usize) -> Line<'static> {
    let mut spans = vec![Span::raw(" ".repeat(label_w))];
    for k in BandKind::ALL {
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
    }

    #[test]
    fn raster_halves_take_the_dominant_kind() {
        let band = |s, e, kind| Band {
            start: s,
            end: e,
            kind,
            name: 0,
            event: crate::model::EventIx(0),
        };
        let mut r = Raster::new(0, 100, 5); // 10 halves of 10 ns
        r.add(
            &[
                band(0, 15, BandKind::Compute),
                band(15, 40, BandKind::Collective),
                band(90, 91, BandKind::Memory),
            ],
            25,
        );
        assert_eq!(r.kind(0, 1).0, Some(BandKind::Compute));
        assert_eq!(r.kind(1, 1).0, Some(BandKind::Compute)); // 5 vs 5: the earlier kind
        assert_eq!(r.kind(2, 1).0, Some(BandKind::Collective));
        assert_eq!(r.kind(4, 1), (None, false));
        assert_eq!(r.kind(9, 1), (None, true)); // 1 ns of 10: under a quarter
    }
}
