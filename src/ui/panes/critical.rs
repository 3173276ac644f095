//! Critical path of the selected step: time per category as one bar, then the path's
//! stretches in order — rank, category, duration, share, name. Enter shows one in the timeline.

use crate::analysis::critical_path::Category;
use crate::time::human;
use crate::ui::app::{App, Pane};
use crate::ui::widgets::{self, block, fit, pad, rpad};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A category's colour (the breakdown part it is closest to).
fn color(app: &App, c: Category) -> Color {
    let k = &app.theme.c;
    match c {
        Category::Cpu => k.host_bound,
        Category::GpuCompute => k.compute,
        Category::Communication => k.comm,
        Category::LaunchOverhead => k.memory,
        Category::KernelGap => k.free,
        Category::Wait => k.slow,
    }
}

fn glyph(app: &App, i: usize) -> char {
    if app.theme.mono {
        ['▒', '█', '▓', '░', '·', '╳'][i]
    } else {
        '█'
    }
}

/// Draws the critical path pane.
pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let Some(cp) = app.critical() else {
        let step = app.step_number().unwrap_or(0);
        let msg = if app.pending(crate::ui::work::Task::Critical(step)) {
            format!(" computing the critical path of step {step} across the ranks…")
        } else {
            " no critical path for this step (no events in its window)".to_string()
        };
        let msg = msg.as_str();
        f.render_widget(
            Paragraph::new(widgets::empty(app, msg)).block(block(app, "critical path")),
            area,
        );
        return;
    };
    let [sum, list] = Layout::vertical([Constraint::Length(5), Constraint::Min(3)]).areas(area);
    let w = sum.width.saturating_sub(2) as usize;
    let total = cp.total_ns.max(1);
    let segs: Vec<(u64, Color, char)> = Category::ALL
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                cp.by_category.get(c.as_str()).copied().unwrap_or(0).max(0) as u64,
                color(app, *c),
                glyph(app, i),
            )
        })
        .collect();
    let mut legend = Vec::new();
    for (i, c) in Category::ALL.iter().enumerate() {
        let ns = cp.by_category.get(c.as_str()).copied().unwrap_or(0);
        legend.push(Span::styled(
            format!("{} ", glyph(app, i)),
            th.fg(color(app, *c)),
        ));
        legend.push(Span::styled(
            format!(
                "{} {} ({:.0}%)  ",
                c.as_str(),
                human(ns),
                ns as f64 * 100.0 / total as f64
            ),
            th.dim(),
        ));
    }
    let lines = vec![
        widgets::pairs(
            app,
            &[
                ("window", cp.window.clone()),
                ("length", human(cp.total_ns)),
                ("ranks", widgets::ranges(&cp.ranks)),
                ("stretches", cp.ops_total.to_string()),
            ],
        ),
        Line::from(widgets::stacked(&segs, w)),
        Line::from(legend),
    ];
    f.render_widget(
        Paragraph::new(lines).block(block(app, "critical path: time by category")),
        sum,
    );
    let sel = app.row_of(Pane::Critical);
    let (rows, off) = widgets::page(list, 1, sel);
    let nw = (list.width as usize).saturating_sub(2 + 6 + 7 + 16 + 10 + 8 + 5);
    let mut lines = vec![widgets::head(
        app,
        format!(
            "{} {} {} {} {} {}",
            rpad("#", 5),
            rpad("rank", 6),
            pad("category", 15),
            rpad("duration", 9),
            rpad("share", 7),
            "operator"
        ),
    )];
    for (i, op) in cp.ops.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "{} {} ",
                    rpad(&(i + 1).to_string(), 5),
                    rpad(&op.rank.to_string(), 6)
                ),
                style,
            ),
            Span::styled(
                pad(op.category.as_str(), 15),
                if i == sel {
                    style
                } else {
                    th.fg(color(app, op.category))
                },
            ),
            Span::styled(
                format!(
                    " {} {} {}",
                    rpad(&human(op.dur_ns), 9),
                    rpad(
                        &format!("{:.1}%", op.dur_ns as f64 * 100.0 / total as f64),
                        7
                    ),
                    fit(&op.name, nw)
                ),
                style,
            ),
        ]));
    }
    widgets::hit_rows(app, list, 1, rows, off);
    let title = format!(
        "path in order, {} of {} stretches (Enter: show in timeline)",
        cp.ops.len(),
        cp.ops_total
    );
    f.render_widget(Paragraph::new(lines).block(block(app, title)), list);
}
