//! The roofline pane on an accelerator that counts for itself (Ascend PMU ratios, no FLOP
//! estimates): operators by time with their class and how busy each pipe was, the busiest
//! one marked — the counters say directly what the chart would estimate.

use crate::analysis::roofline::Roofline;
use crate::analysis::roofline::pmu::PmuOp;
use crate::format::{human, pad, rpad};
use crate::model::Pipe;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Width of a pipe column.
const PIPE_W: usize = 5;

/// The operators' pipe table.
pub fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let rf = &b.data.analysis.roofline;
    let sel = b.row_of(Pane::Roofline);
    let (rows, off) = widgets::page(area, 1, sel);
    let fixed = 2 + 15 + 9 + 5 + PIPE_W * Pipe::ALL.len() + 2;
    let name_w = (area.width as usize).saturating_sub(fixed).max(8);
    let mut head = format!(
        "{} {} {}",
        pad("class", 14),
        rpad("time", 8),
        pad("core", 4)
    );
    for p in Pipe::ALL {
        head += &rpad(label(p), PIPE_W);
    }
    let mut lines = vec![widgets::head(th, format!("{head}  operator"))];
    for (i, o) in rf.pmu_ops.iter().enumerate().skip(off).take(rows) {
        lines.push(row(th, o, i == sel, name_w));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    let title = format!(
        "pipes, % busy (PMU; bound at >= {:.0}%): {}; Enter: operator",
        rf.u * 100.0,
        class_shares(rf)
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// The classes that hold kernel time with their shares (`compute_bound 75%, …`): only
/// those, so a title fits 80 columns.
pub fn class_shares(rf: &Roofline) -> String {
    let shares: Vec<String> = rf
        .classes
        .iter()
        .filter(|(_, v)| v.share > 0.0)
        .map(|(k, v)| format!("{} {:.0}%", k.as_str(), v.share * 100.0))
        .collect();
    shares.join(", ")
}

/// A pipe's column label, four characters at most.
fn label(p: Pipe) -> &'static str {
    match p {
        Pipe::Scalar => "scal",
        Pipe::Fixpipe => "fixp",
        other => other.as_str(),
    }
}

/// One operator: class, time, unit, each pipe's busy share (the bound one bold), name.
fn row(th: &Theme, o: &PmuOp, selected: bool, name_w: usize) -> Line<'static> {
    let style = if selected { th.selected() } else { th.text() };
    let class_style = if selected {
        style
    } else {
        th.fg(th.class(o.class))
    };
    let mut spans = vec![
        Span::styled(pad(o.class.as_str(), 14), class_style),
        Span::styled(
            format!(
                " {} {}",
                rpad(&human(o.time_ns), 8),
                pad(o.core.map_or("-", |c| c.short()), 4)
            ),
            style,
        ),
    ];
    for (k, p) in Pipe::ALL.iter().enumerate() {
        let busy = [o.cube, o.vector]
            .iter()
            .flatten()
            .map(|u| u[k])
            .fold(0.0, f32::max);
        let text = if busy > 0.0 {
            format!("{:.0}", busy * 100.0)
        } else {
            "-".into()
        };
        let s: Style = if p.as_str() == o.bound_pipe {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        };
        spans.push(Span::styled(rpad(&text, PIPE_W), s));
    }
    spans.push(Span::styled(
        format!("  {}", crate::format::fit_name(&o.op, name_w)),
        style,
    ));
    Line::from(spans)
}
