//! Overview: step time over steps (max/median/min across ranks, slow steps marked), the
//! rank × step heat map of deviation from each step's median span, the selected step's
//! breakdown bar per rank, and the top findings.

use super::PaneView;
use super::parts::{part_glyph, parts, row_of};
use crate::analysis::breakdown::{Breakdown, Part};
use crate::format::{fit, human, pad, rpad};
use crate::model::{RankIx, StepNo};
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

/// The overview (the device view at device level).
pub struct Overview;

impl PaneView for Overview {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        match b.level() {
            Level::Device(_) => b.panes.device.ops.as_ref().map_or(0, |d| d.1.len()),
            _ => b.shared.heat.rows.len(),
        }
    }

    /// At device level its list is the rank's operators, with their own row.
    fn selected(&self, b: &Browser) -> usize {
        match b.level() {
            Level::Device(_) => b.panes.device.row,
            _ => b.panes.rows[Pane::Overview.index()],
        }
    }

    fn selection<'a>(&self, b: &'a mut Browser) -> &'a mut usize {
        match b.level() {
            Level::Device(_) => &mut b.panes.device.row,
            _ => &mut b.panes.rows[Pane::Overview.index()],
        }
    }

    fn enter(&self, b: &mut Browser, row: usize, _: &mut Ctx<UiMsg>) {
        match b.level() {
            Level::Cluster => {
                if let Some(r) = overview_rank(b, row) {
                    b.push(Level::Device(r), Pane::Overview);
                }
            }
            _ => {
                let op = b
                    .panes
                    .device
                    .ops
                    .as_ref()
                    .and_then(|d| d.1.get(row))
                    .map(|o| o.name);
                if let Some(op) = op {
                    b.push(Level::Operator(op), Pane::Operator);
                }
            }
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        match b.level() {
            Level::Device(r) => super::device::draw(f, area, b, ctx, r),
            _ => draw(f, area, b, ctx),
        }
    }
}

/// The rank of an overview row: the group's slowest member in the selected step.
pub fn overview_rank(b: &Browser, row: usize) -> Option<RankIx> {
    let job = &b.data.loaded.job;
    let group = b.shared.heat.rows.get(row)?.clone();
    let step = b.step_number();
    let span = |i: usize| {
        b.data
            .analysis
            .breakdown
            .iter()
            .find(|r| Some(r.step) == step && r.rank == job.ranks[i].id)
            .map_or(0, |r| r.span_ns)
    };
    group
        .max_by(|&x, &y| span(x).cmp(&span(y)).then(y.cmp(&x)))
        .map(RankIx::of)
}

/// Draws the cluster overview.
fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    // The rank rows take what they need (a header, borders, the legend); a tall terminal
    // gives the rest to the step chart and the findings, up to two thirds.
    let need = b.shared.heat.rows.len() as u16 + 4;
    let top_h = (area.height * 2 / 5)
        .clamp(6, 14)
        .max(area.height.saturating_sub(need).min(area.height * 2 / 3));
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Min(3)]).areas(area);
    let [chart, findings] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    step_chart(f, chart, b, ctx);
    top_findings(f, findings, b, ctx);
    let steps = b.steps().len() as u16;
    let heat_w = (10 + steps * 6 + 2).min(bottom.width / 2).max(20);
    let [heat, bars] =
        Layout::horizontal([Constraint::Length(heat_w), Constraint::Min(20)]).areas(bottom);
    heat_map(f, heat, b, ctx);
    breakdown_bars(f, bars, b, ctx);
}

fn step_chart(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let t = &ctx.theme;
    let st = &b.data.analysis.step_times;
    if st.is_empty() {
        f.render_widget(
            Paragraph::new(widgets::empty(&ctx.theme, " no steps"))
                .block(block(&ctx.theme, "step time")),
            area,
        );
        return;
    }
    let ms = |ns: i64| ns as f64 / 1e6;
    let series = |g: fn(&crate::analysis::step_times::StepTime) -> i64| -> Vec<(f64, f64)> {
        st.iter()
            .enumerate()
            .map(|(i, s)| (i as f64, ms(g(s))))
            .collect()
    };
    let max = series(|s| s.max_ns);
    let med = series(|s| s.median_ns);
    let min = series(|s| s.min_ns);
    let slow: Vec<(f64, f64)> = st
        .iter()
        .enumerate()
        .filter(|(_, s)| b.data.analysis.slow_steps.iter().any(|x| x.step == s.step))
        .map(|(i, s)| (i as f64, ms(s.max_ns)))
        .collect();
    let top = max.iter().map(|p| p.1).fold(0.0, f64::max) * 1.1;
    let sel = st
        .iter()
        .position(|s| Some(s.step) == b.step_number())
        .unwrap_or(0) as f64;
    let cursor = vec![(sel, 0.0), (sel, top)];
    let n = st.len().max(2) as f64 - 1.0;
    let line = |name: &'static str, color, points| {
        Dataset::default()
            .name(name)
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(t.fg(color))
            .data(points)
    };
    let data = vec![
        line("max", t.c.slow, &max),
        line("median", t.c.accent, &med),
        line("min", t.c.dim, &min),
        Dataset::default()
            .name("slow")
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(t.fg(t.c.slow).add_modifier(Modifier::BOLD))
            .data(&slow),
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(t.fg(t.c.selection_bg))
            .data(&cursor),
    ];
    let first = st.first().map_or(StepNo(0), |s| s.step);
    let last = st.last().map_or(StepNo(0), |s| s.step);
    let chart = Chart::new(data)
        .block(block(t, "step time across ranks (ms)"))
        .x_axis(
            Axis::default()
                .bounds([0.0, n])
                .labels([format!("step {first}"), format!("{last}")])
                .style(t.dim()),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top.max(1e-9)])
                .labels(["0".to_string(), format!("{top:.1}")])
                .style(t.dim()),
        );
    f.render_widget(chart, area);
}

fn top_findings(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let t = &ctx.theme;
    let w = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(2) as usize;
    let findings: Vec<_> = b
        .data
        .analysis
        .findings
        .iter()
        .zip(&b.shared.words)
        .collect();
    // Whole titles when they all fit, else one line each.
    let wrapped: Vec<Vec<String>> = findings
        .iter()
        .map(|(_, words)| crate::format::wrap(&words.title, w.saturating_sub(7), 0))
        .collect();
    let whole = wrapped.iter().map(Vec::len).sum::<usize>() <= rows;
    let mut lines: Vec<Line> = Vec::new();
    for ((x, words), title) in findings.iter().zip(&wrapped) {
        let sev = Span::styled(
            format!("{:<6} ", x.severity.as_str().to_uppercase()),
            super::advisor::severity_style(t, x.severity),
        );
        if whole {
            for (i, l) in title.iter().enumerate() {
                let lead = if i == 0 {
                    sev.clone()
                } else {
                    Span::raw(" ".repeat(7))
                };
                lines.push(Line::from(vec![lead, Span::styled(l.clone(), t.text())]));
            }
        } else {
            let text = fit(&words.title, w.saturating_sub(7));
            lines.push(Line::from(vec![sev, Span::styled(text, t.text())]));
        }
    }
    lines.truncate(rows);
    if lines.is_empty() {
        lines.push(widgets::empty(
            &ctx.theme,
            " no findings: nothing stands out",
        ));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(t, "what to fix first (key 5: the advisor)")),
        area,
    );
}

/// A deviation in at most 5 characters (`+24%`, `-3%`, `12×` beyond +999%).
fn deviation(dev: f64) -> String {
    let pct = (dev * 100.0).round();
    if dev >= 9.995 {
        format!("{:.0}×", dev + 1.0)
    } else if pct == 0.0 {
        "0%".to_string()
    } else {
        format!("{pct:+.0}%")
    }
}

/// Overview rows (rank groups) visible in `rows` lines, and the offset.
fn visible(b: &Browser, rows: usize) -> (Vec<std::ops::Range<usize>>, usize) {
    let groups = b.shared.heat.rows.clone();
    let off = widgets::offset(b.row_of(Pane::Overview), rows);
    (groups, off)
}

fn label(b: &Browser, g: &std::ops::Range<usize>) -> String {
    let ranks = &b.data.loaded.job.ranks;
    if g.len() == 1 {
        // `*`: summary only (the profiler's step summary, no timeline), as in the report.
        let mark = if ranks[g.start].summary_only { "*" } else { "" };
        format!("rank {}{mark}", ranks[g.start].id)
    } else {
        format!("r{}-{}", ranks[g.start].id, ranks[g.end - 1].id)
    }
}

fn heat_map(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let t = &ctx.theme;
    let inner = area.height.saturating_sub(3) as usize;
    let (groups, off) = visible(b, inner);
    let steps = b.steps();
    let cw = ((area.width.saturating_sub(12)) as usize / steps.len().max(1)).clamp(1, 6);
    let mut head = vec![Span::styled(pad("", 9), t.dim())];
    for s in steps {
        let slow = b.data.analysis.slow_steps.iter().any(|x| x.step == *s);
        let mut style = if slow {
            t.fg(t.c.slow).add_modifier(Modifier::BOLD)
        } else {
            t.dim()
        };
        if Some(*s) == b.step_number() {
            style = style.add_modifier(Modifier::UNDERLINED);
        }
        head.push(Span::styled(rpad(&s.to_string(), cw), style));
    }
    let mut lines = vec![Line::from(head)];
    for (gi, g) in groups.iter().enumerate().skip(off).take(inner) {
        let lstyle = if gi == b.row_of(Pane::Overview) {
            t.selected()
        } else {
            t.text()
        };
        let mut spans = vec![Span::styled(pad(&label(b, g), 8), lstyle), Span::raw(" ")];
        for si in 0..steps.len() {
            let cell = match b.shared.heat.cells[gi][si] {
                Some(dev) => {
                    let (glyph, color) = widgets::heat(t, dev);
                    if cw >= 6 {
                        Span::styled(rpad(&deviation(dev), cw), Style::default().fg(color))
                    } else {
                        Span::styled(glyph.to_string().repeat(cw), Style::default().fg(color))
                    }
                }
                _ => Span::styled(rpad("·", cw), t.dim()),
            };
            spans.push(cell);
        }
        lines.push(Line::from(spans));
    }
    widgets::hit_rows(ctx, area, 1, inner, off);
    let title = if groups.iter().any(|g| g.len() > 1) {
        format!(
            "own work vs step median, most first ({} ranks/row, worst shown)",
            groups[0].len()
        )
    } else {
        "own work vs step median, most first".to_string()
    };
    f.render_widget(Paragraph::new(lines).block(block(t, title)), area);
}

fn breakdown_bars(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let t = &ctx.theme;
    let inner = area.height.saturating_sub(3) as usize;
    let (groups, off) = visible(b, inner);
    let Some(step) = b.step_number() else {
        return;
    };
    let ranks = &b.data.loaded.job.ranks;
    let worst: Vec<Option<&Breakdown>> = groups
        .iter()
        .map(|g| {
            g.clone()
                .filter_map(|i| row_of(b, step, ranks[i].id))
                .max_by(|a, b| a.span_ns.cmp(&b.span_ns).then(b.rank.cmp(&a.rank)))
        })
        .collect();
    let longest = worst
        .iter()
        .flatten()
        .map(|b| b.span_ns)
        .max()
        .unwrap_or(0)
        .max(1);
    let bw = area.width.saturating_sub(2 + 9 + 11) as usize;
    let mut lines = Vec::new();
    for (gi, row) in worst.iter().enumerate().skip(off).take(inner) {
        let lstyle = if gi == b.row_of(Pane::Overview) {
            t.selected()
        } else {
            t.text()
        };
        let mut spans = vec![
            Span::styled(pad(&label(b, &groups[gi]), 8), lstyle),
            Span::raw(" "),
        ];
        match row {
            Some(row) => {
                // A bar never outgrows its column, whatever the spans hold.
                let w = (row.span_ns.max(0) as u128 * bw as u128 / longest as u128).min(bw as u128)
                    as usize;
                let p = parts(row);
                let segs: Vec<(u64, Color, char)> = (0..6)
                    .map(|i| (p[i], t.part(Part::ALL[i]), part_glyph(t, i)))
                    .collect();
                spans.extend(widgets::stacked(&segs, w));
                spans.push(Span::raw(" ".repeat(bw - w + 1)));
                spans.push(Span::styled(rpad(&human(row.span_ns), 9), t.text()));
            }
            None => spans.push(Span::styled("no such step on this rank", t.dim())),
        }
        lines.push(Line::from(spans));
    }
    let mut legend = Vec::new();
    for (i, p) in Part::ALL.iter().enumerate() {
        legend.push(Span::styled(
            format!(" {}", part_glyph(t, i)),
            t.fg(t.part(*p)),
        ));
        legend.push(Span::styled(
            format!(" {}", p.as_str().replace('_', "-")),
            t.dim(),
        ));
    }
    let body = Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1));
    widgets::hit_rows(ctx, body, 0, inner, off);
    let title = format!("step {step}: breakdown per rank (Enter: drill in)");
    f.render_widget(Paragraph::new(lines).block(block(t, title)), body);
    let leg = Rect::new(
        area.x,
        area.y + area.height.saturating_sub(1),
        area.width,
        1.min(area.height),
    );
    f.render_widget(Paragraph::new(Line::from(legend)), leg);
}

#[cfg(test)]
mod tests {
    #[test]
    fn deviations_fit_five_cells() {
        use super::deviation;
        assert_eq!(deviation(0.244), "+24%");
        assert_eq!(deviation(-0.0004), "0%");
        assert_eq!(deviation(-0.031), "-3%");
        assert_eq!(deviation(4.61), "+461%");
        assert_eq!(deviation(11.0), "12×");
    }
}
