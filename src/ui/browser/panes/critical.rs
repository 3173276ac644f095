//! Critical path of the selected step: time per category as one bar, then the path's
//! stretches in order — rank, category, duration, share, name. Enter shows one in the timeline.

use super::PaneView;
use crate::analysis::critical_path::{Category, CriticalPath};
use crate::format::{human, pad, rpad};
use crate::ui::UiMsg;
use crate::ui::browser::work::Task;
use crate::ui::browser::{Browser, Focus, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The critical path of the selected step.
pub struct Critical;

impl PaneView for Critical {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        b.critical().map_or(0, |c| c.ops.len())
    }

    /// Shows the stretch in the timeline: device work on the cluster timeline, host work on
    /// its rank's lanes.
    fn enter(&self, b: &mut Browser, row: usize, _: &mut Ctx<UiMsg>) {
        let Some(op) = b.critical().and_then(|c| c.ops.get(row)).cloned() else {
            return;
        };
        let job = &b.data.loaded.job;
        let Some(name) = job.strings.get(&op.name) else {
            return;
        };
        let Some(r) = job.rank_ix(op.rank) else {
            return;
        };
        let off = b.offset(r);
        let on_device = matches!(op.category, Category::GpuCompute | Category::Communication);
        if !on_device && b.device() != Some(r) {
            b.push(Level::Device(r), Pane::Timeline);
        }
        b.nav.pane = Pane::Timeline;
        b.panes.timeline.view.focus = Some(Focus {
            rank: op.rank,
            name,
            start: op.start_ns + off,
            end: op.start_ns + op.dur_ns + off,
        });
    }

    fn prepare(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if let Some(step) = b.step_number() {
            b.need(Task::Critical(step), ctx);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

/// A category's colour (the breakdown part it is closest to).
fn color(theme: &Theme, c: Category) -> Color {
    let k = &theme.c;
    match c {
        Category::Cpu => k.host_bound,
        Category::HostGap => k.free,
        Category::GpuCompute => k.compute,
        Category::Communication => k.comm,
        Category::LaunchOverhead => k.memory,
        Category::KernelGap => k.free,
        Category::Wait => k.slow,
    }
}

fn glyph(theme: &Theme, i: usize) -> char {
    if theme.mono {
        ['▒', '░', '█', '▓', ':', '·', '╳'][i]
    } else {
        '█'
    }
}

fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let Some(cp) = b.critical() else {
        let step = b.step_number().unwrap_or_default();
        let msg = if b.is_pending(Task::Critical(step)) {
            format!(" computing the critical path of step {step} across the ranks…")
        } else {
            " no critical path for this step (no events in its window)".to_string()
        };
        f.render_widget(
            Paragraph::new(widgets::empty(&ctx.theme, &msg))
                .block(block(&ctx.theme, "critical path")),
            area,
        );
        return;
    };
    let [sum, list] = Layout::vertical([Constraint::Length(5), Constraint::Min(3)]).areas(area);
    summary(f, sum, &ctx.theme, cp);
    stretches(f, list, b, ctx, cp);
}

/// The path's window, length and ranks; its time by category as one bar and a legend.
fn summary(f: &mut Frame, area: Rect, th: &Theme, cp: &CriticalPath) {
    let w = area.width.saturating_sub(2) as usize;
    let segs: Vec<(u64, Color, char)> = Category::ALL
        .iter()
        .enumerate()
        .map(|(i, c)| (cp.time_in(*c).max(0) as u64, color(th, *c), glyph(th, i)))
        .collect();
    // The largest categories first, as many as fit: the cut drops the smallest.
    let mut order: Vec<(usize, Category, i64)> = Category::ALL
        .iter()
        .enumerate()
        .map(|(i, c)| (i, *c, cp.time_in(*c)))
        .filter(|x| x.2 > 0)
        .collect();
    order.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let mut legend = Vec::new();
    let mut used = 0;
    for (k, (i, c, ns)) in order.iter().enumerate() {
        let text = format!(
            "{} {} ({:.0}%)  ",
            c.as_str(),
            human(*ns),
            cp.share(*ns) * 100.0
        );
        let more = order.len() - k;
        let need = 2 + crate::format::width(&text);
        // Room for this entry, and for "+N more" when others follow.
        if used + need + if more > 1 { 8 } else { 0 } > w {
            legend.push(Span::styled(format!("+{more} more"), th.dim()));
            break;
        }
        used += need;
        legend.push(Span::styled(
            format!("{} ", glyph(th, *i)),
            th.fg(color(th, *c)),
        ));
        legend.push(Span::styled(text, th.dim()));
    }
    let lines = vec![
        widgets::pairs(
            th,
            &[
                ("window", cp.window.to_string()),
                ("length", human(cp.total_ns)),
                ("ranks", crate::format::ranges(&cp.ranks)),
                ("stretches", cp.ops_total.to_string()),
            ],
        ),
        Line::from(widgets::stacked(&segs, w)),
        Line::from(legend),
    ];
    f.render_widget(
        Paragraph::new(lines).block(block(th, "critical path: time by category")),
        area,
    );
}

/// The path's stretches in order, the selected one highlighted.
fn stretches(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, cp: &CriticalPath) {
    let th = &ctx.theme;
    let sel = b.row_of(Pane::Critical);
    let (rows, off) = widgets::page(area, 1, sel);
    let nw = (area.width as usize).saturating_sub(2 + 6 + 7 + 16 + 10 + 8 + 5);
    let mut lines = vec![widgets::head(
        th,
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
        let cat_style = if i == sel {
            style
        } else {
            th.fg(color(th, op.category))
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "{} {} ",
                    rpad(&(i + 1).to_string(), 5),
                    rpad(&op.rank.to_string(), 6)
                ),
                style,
            ),
            Span::styled(pad(op.category.as_str(), 15), cat_style),
            Span::styled(
                format!(
                    " {} {} {}",
                    rpad(&human(op.dur_ns), 9),
                    rpad(&format!("{:.1}%", cp.share(op.dur_ns) * 100.0), 7),
                    crate::format::fit_name(&op.name, nw)
                ),
                style,
            ),
        ]));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    let title = format!(
        "path in order, {} of {} stretches (Enter: show in timeline)",
        cp.ops.len(),
        cp.ops_total
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}
