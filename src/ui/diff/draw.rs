//! Drawing the diff screen: one read-only function per region — the header, the tabs, the
//! overview (steps, the breakdown bars before and after, ranks, findings), the operator
//! and kernel lists, and the opened operator's timelines.

use super::{DiffScreen, View, timelines};
use crate::analysis::breakdown::Part;
use crate::analysis::diff::{Delta, OpRow, Status};
use crate::format::{fit, fit_name, human, signed};
use crate::ui::browser::panes::parts::part_glyph;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use crate::ui::shell::{Ctx, HitTarget};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The whole screen.
pub fn screen(f: &mut Frame, area: Rect, s: &DiffScreen, ctx: &Ctx<()>) {
    let [header, tabs, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(header_line(s, &ctx.theme, header.width)),
        header,
    );
    tab_line(f, tabs, s, ctx);
    match (&s.opened, s.view) {
        (Some(p), _) => timelines::draw(f, body, p, ctx),
        (None, View::Overview) => overview(f, body, s, ctx),
        (None, _) => list(f, body, s, ctx),
    }
}

fn header_line(s: &DiffScreen, th: &Theme, width: u16) -> Line<'static> {
    let r = &s.report;
    let text = format!(
        " diff  {} → {}  step {} → {} ({})  {} pair(s) by {}",
        r.before.title,
        r.after.title,
        human(r.step.mean_ns[0]),
        human(r.step.mean_ns[1]),
        r.step
            .delta_pct
            .map_or("n/a".into(), |p| format!("{p:+.1}%")),
        r.pairs.len(),
        r.aligned_by
    );
    Line::from(Span::styled(fit(&text, width as usize), th.title()))
}

fn tab_line(f: &mut Frame, area: Rect, s: &DiffScreen, ctx: &Ctx<()>) {
    let th = &ctx.theme;
    let mut spans = Vec::new();
    let mut x = area.x;
    for (i, v) in View::ALL.iter().enumerate() {
        let label = format!(" {} {} ", i + 1, v.name());
        let w = label.chars().count() as u16;
        ctx.hit(
            Rect::new(x, area.y, w.min(area.right().saturating_sub(x)), 1),
            HitTarget::Tab(i),
        );
        x += w;
        let style = if *v == s.view {
            th.selected()
        } else {
            th.dim()
        };
        spans.push(Span::styled(label, style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The overview: steps and the breakdown bars (left), ranks and findings (right), or all
/// stacked on a narrow terminal.
fn overview(f: &mut Frame, area: Rect, s: &DiffScreen, ctx: &Ctx<()>) {
    let wide = area.width >= 110;
    let [left, right] = if wide {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area)
    } else {
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area)
    };
    let steps_h = (s.report.pairs.len() as u16 + 2).clamp(3, 10);
    let [bars, steps, ops] = Layout::vertical([
        Constraint::Length(6),
        Constraint::Length(steps_h),
        Constraint::Min(0),
    ])
    .areas(left);
    breakdown_bars(f, bars, s, &ctx.theme);
    step_list(f, steps, s, &ctx.theme);
    top_ops(f, ops, s, &ctx.theme);
    let [ranks, findings] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(right);
    rank_list(f, ranks, s, &ctx.theme);
    finding_list(f, findings, s, &ctx.theme);
}

/// The mean rank-step before and after as stacked bars on one scale, and each part's change.
fn breakdown_bars(f: &mut Frame, area: Rect, s: &DiffScreen, th: &Theme) {
    let b = &s.report.breakdown;
    let n = b.rows.max(1) as i64;
    let inner = area.width.saturating_sub(2) as usize;
    let bar_w = inner.saturating_sub(8);
    let max = b.span.before_ns.max(b.span.after_ns).max(1);
    let bar = |side: usize| -> Vec<Span<'static>> {
        let total = if side == 0 {
            b.span.before_ns
        } else {
            b.span.after_ns
        };
        let parts: Vec<(u64, ratatui::style::Color, char)> = b
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let v = if side == 0 {
                    p.time.before_ns
                } else {
                    p.time.after_ns
                };
                (v.max(0) as u64, th.part(p.part), part_glyph(th, i))
            })
            .collect();
        let w = ((total as i128 * bar_w as i128) / max as i128) as usize;
        widgets::stacked(&parts, w)
    };
    let mut lines = Vec::new();
    for (side, label) in [(0, "before "), (1, "after  ")] {
        let mut spans = vec![Span::styled(label, th.dim())];
        spans.extend(bar(side));
        lines.push(Line::from(spans));
    }
    let deltas: Vec<Span> = b
        .parts
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            [
                Span::styled(
                    part_glyph(th, i).to_string(),
                    ratatui::style::Style::default().fg(th.part(p.part)),
                ),
                Span::styled(
                    format!("{} {}  ", short(p.part), signed(p.time.delta_ns() / n)),
                    th.text(),
                ),
            ]
        })
        .collect();
    lines.push(Line::from(deltas));
    let title = format!(
        "Breakdown per rank-step: {} → {} ({})",
        human(b.span.before_ns / n),
        human(b.span.after_ns / n),
        signed(b.span.delta_ns() / n)
    );
    f.render_widget(
        Paragraph::new(lines)
            .block(block(th, title))
            .wrap(ratatui::widgets::Wrap { trim: true }),
        area,
    );
}

fn short(p: Part) -> &'static str {
    match p {
        Part::HostBound => "host",
        p => p.as_str(),
    }
}

fn delta_cells(d: &Delta) -> String {
    let pct = d
        .ratio()
        .map_or(String::new(), |r| format!(" {:+.1}%", r * 100.0));
    format!(
        "{:>9} → {:>9} {:>10}{pct}",
        human(d.before_ns),
        human(d.after_ns),
        signed(d.delta_ns())
    )
}

fn step_list(f: &mut Frame, area: Rect, s: &DiffScreen, th: &Theme) {
    let rows = area.height.saturating_sub(2) as usize;
    let pairs = &s.report.pairs;
    // When not all fit: the largest changes, shown in step order, and how many are left out.
    let mut shown: Vec<usize> = (0..pairs.len()).collect();
    if pairs.len() > rows {
        shown.sort_by_key(|&i| std::cmp::Reverse(pairs[i].delta_ns().unsigned_abs()));
        shown.truncate(rows.saturating_sub(1));
        shown.sort_unstable();
    }
    let mut lines: Vec<Line> = shown
        .iter()
        .map(|&i| {
            let p = &pairs[i];
            let d = Delta {
                before_ns: p.before_ns,
                after_ns: p.after_ns,
            };
            let label = if p.before == p.after {
                format!("{:>6}", p.before)
            } else {
                format!("{}→{}", p.before, p.after)
            };
            Line::from(Span::styled(
                fit(
                    &format!("{label:>8} {}", delta_cells(&d)),
                    area.width as usize - 2,
                ),
                th.text(),
            ))
        })
        .collect();
    if shown.len() < pairs.len() && rows > 0 {
        let n = pairs.len() - shown.len();
        lines.push(Line::from(Span::styled(
            format!(" … {n} more, smaller changes"),
            th.dim(),
        )));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(th, "Step time (max over ranks)")),
        area,
    );
}

/// The operators whose time changed most, either way.
fn top_ops(f: &mut Frame, area: Rect, s: &DiffScreen, th: &Theme) {
    if area.height < 3 {
        return;
    }
    let w = area.width.saturating_sub(2) as usize;
    let rows = &s.pair.diff.ops.operators;
    let changed = |i: &&usize| rows[**i].changed();
    let lines: Vec<Line> = s.order[0]
        .iter()
        .filter(changed)
        .take(area.height.saturating_sub(2) as usize)
        .map(|&i| {
            let o = &rows[i];
            let text = format!("{:>10}  {}", signed(o.total.delta_ns()), o.name);
            Line::from(Span::styled(fit(&text, w), th.text()))
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(block(th, "Operators that changed most (2: all)")),
        area,
    );
}

fn rank_list(f: &mut Frame, area: Rect, s: &DiffScreen, th: &Theme) {
    let rows = area.height.saturating_sub(3) as usize;
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![widgets::head(
        th,
        fit("  rank          Δ span    Δ own work  most changed part", w),
    )];
    for k in s.report.breakdown.ranks.iter().take(rows) {
        let id = k
            .paired_with
            .map_or(k.rank.to_string(), |a| format!("{}→{a}", k.rank));
        let text = format!(
            "{id:>6} {:>14} {:>13}  {} {}",
            signed(k.span.delta_ns()),
            signed(k.own_work.delta_ns()),
            k.top_part.as_str(),
            signed(k.top_part_delta_ns)
        );
        lines.push(Line::from(Span::styled(fit(&text, w), th.text())));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(th, "Ranks, the largest change first")),
        area,
    );
}

fn finding_list(f: &mut Frame, area: Rect, s: &DiffScreen, th: &Theme) {
    let w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = s
        .report
        .findings
        .iter()
        .take(area.height.saturating_sub(2) as usize)
        .map(|v| {
            let (mark, style) = match v.delta.status {
                Status::Appeared => ("+ new     ", th.fg(th.c.accent)),
                Status::Resolved => ("- resolved", th.dim()),
                Status::Improved => ("  improved", th.text()),
                Status::Persists => ("  persists", th.text()),
            };
            let i = &v.delta.impact;
            let text = format!(
                "{mark} {} → {}  {}",
                human(i.before_ns),
                human(i.after_ns),
                v.title
            );
            Line::from(Span::styled(fit(&text, w), style))
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(block(th, "Findings (impact per step)")),
        area,
    );
}

/// The operator or kernel list, sorted, the selection highlighted.
fn list(f: &mut Frame, area: Rect, s: &DiffScreen, ctx: &Ctx<()>) {
    let th = &ctx.theme;
    let Some((rows, order, sel)) = s.list() else {
        return;
    };
    let w = area.width.saturating_sub(2) as usize;
    let name_w = w.saturating_sub(62).max(12);
    let (visible, first) = widgets::page(area, 1, sel);
    let mut lines = vec![widgets::head(
        th,
        fit(
            &format!(
                "{:<name_w$} {:<10} {:>11} {:>9} {:>9} {:>10} {:>7}",
                "name", "matched", "calls", "before", "after", "Δ", "Δ%"
            ),
            w,
        ),
    )];
    for (k, &i) in order.iter().enumerate().skip(first).take(visible) {
        let style = if k == sel {
            th.selected().add_modifier(Modifier::BOLD)
        } else {
            th.text()
        };
        lines.push(Line::from(Span::styled(
            fit(&op_line(&rows[i], name_w), w),
            style,
        )));
    }
    if rows.is_empty() {
        lines.push(widgets::empty(th, "nothing to compare"));
    }
    widgets::hit_rows(ctx, area, 1, visible, first);
    let m = &s.report.ops.matched;
    let title = if s.view == View::Kernels {
        let renamed = rows.iter().filter(|r| r.renamed_to.is_some()).count();
        format!(
            "Kernels ({} names, sorted by {}; {renamed} renamed)",
            rows.len(),
            s.sort.name()
        )
    } else {
        format!(
            "Top-level operators ({} names, sorted by {}; calls matched: {} by shapes, {} by name)",
            rows.len(),
            s.sort.name(),
            m.by_shapes,
            m.by_name
        )
    };
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

fn op_line(o: &OpRow, name_w: usize) -> String {
    let name = match &o.renamed_to {
        Some(n) => format!("{} → {n}", o.name),
        None => o.name.clone(),
    };
    let pct = o
        .total
        .ratio()
        .map_or("new".to_string(), |r| format!("{:+.0}%", r * 100.0));
    format!(
        "{:<name_w$} {:<10} {:>11} {:>9} {:>9} {:>10} {:>7}",
        fit_name(&name, name_w),
        format!("{:?}", o.matched).to_lowercase(),
        format!("{}→{}", o.count_before, o.count_after),
        human(o.total.before_ns),
        human(o.total.after_ns),
        signed(o.total.delta_ns()),
        pct
    )
}
