//! Device view (drill-down level 2): one rank — its breakdown in the selected step against
//! the cluster median part by part, its lanes, and its operators by device time.

use super::parts::{parts, row_of};
use crate::analysis::breakdown::{Part, median_row};
use crate::format::{fit, human, pad, rpad};
use crate::model::{LaneSide, RankId, RankIx};
use crate::ui::UiMsg;
use crate::ui::browser::Browser;
use crate::ui::shell::Ctx;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The device view's state: its operator table's row and the rank's operators by device
/// time (computed when the rank is opened).
#[derive(Debug, Clone, Default)]
pub struct DeviceState {
    /// Operator table row.
    pub row: usize,
    /// A rank's operators by device time.
    pub ops: Option<(RankIx, Vec<crate::analysis::ops::OpStat>)>,
}

/// Draws the device view of rank `r`.
pub fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, r: RankIx) {
    let rank = b.data.loaded.job.rank(r);
    let [top, bottom] = Layout::vertical([Constraint::Length(10), Constraint::Min(3)]).areas(area);
    let [bd, info] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    breakdown_vs_median(f, bd, b, ctx, rank.id);
    lanes(f, info, b, ctx, r);
    op_table(f, bottom, b, ctx, rank.id);
}

fn breakdown_vs_median(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, id: RankId) {
    let t = &ctx.theme;
    let Some(step) = b.step_number() else {
        return;
    };
    let title = format!("rank {id}, step {step}: breakdown vs cluster median");
    let (Some(mine), Some(med)) = (
        row_of(b, step, id),
        median_row(&b.data.analysis.breakdown, step),
    ) else {
        f.render_widget(
            Paragraph::new(widgets::empty(&ctx.theme, " this rank has no such step"))
                .block(block(&ctx.theme, title)),
            area,
        );
        return;
    };
    let bw = area.width.saturating_sub(2 + 11 + 10 + 10 + 10 + 2) as usize;
    let (pm, pc) = (parts(mine), parts(&med));
    let top = pm
        .iter()
        .chain(pc.iter())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{} {} {} {}",
            pad("part", 10),
            rpad("this rank", 10),
            rpad("median", 10),
            rpad("Δ", 10)
        ),
        t.dim(),
    ))];
    for i in 0..6 {
        let d = pm[i] as i64 - pc[i] as i64;
        let dstyle = if d > pc[i] as i64 / 10 && d > 0 {
            t.fg(t.c.slow).add_modifier(Modifier::BOLD)
        } else {
            t.text()
        };
        let part = Part::ALL[i];
        lines.push(Line::from(vec![
            Span::styled(
                pad(&part.as_str().replace('_', "-"), 10),
                t.fg(t.part(part)),
            ),
            Span::styled(format!(" {}", rpad(&human(pm[i] as i64), 10)), t.text()),
            Span::styled(format!(" {}", rpad(&human(pc[i] as i64), 10)), t.dim()),
            Span::styled(
                format!(
                    " {}",
                    rpad(&format!("{}{}", if d > 0 { "+" } else { "" }, human(d)), 10)
                ),
                dstyle,
            ),
            Span::raw(" "),
            Span::styled(widgets::bar(pm[i] as f64, top, bw), t.fg(t.part(part))),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled(pad("span", 10), t.text().add_modifier(Modifier::BOLD)),
        Span::styled(format!(" {}", rpad(&human(mine.span_ns), 10)), t.text()),
        Span::styled(format!(" {}", rpad(&human(med.span_ns), 10)), t.dim()),
    ]));
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}

fn lanes(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, r: RankIx) {
    let t = &ctx.theme;
    let job = &b.data.loaded.job;
    let rank = job.rank(r);
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![Line::from(Span::styled(fit(&rank.source.path, w), t.dim()))];
    for l in rank
        .lanes
        .iter()
        .filter(|l| l.count > 0 && l.side != LaneSide::Other)
    {
        let side = if l.side == LaneSide::Device {
            "dev"
        } else {
            "cpu"
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{side} "), t.dim()),
            Span::styled(
                pad(job.strings.resolve(l.name), w.saturating_sub(15)),
                t.text(),
            ),
            Span::styled(rpad(&l.count.to_string(), 10), t.dim()),
        ]));
    }
    let title = format!("{} lanes (2: timeline)", rank.lanes.len());
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}

/// The rank's operators table (shared look with the operator list).
fn op_table(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, id: RankId) {
    let ops = b
        .panes
        .device
        .ops
        .as_ref()
        .map(|d| d.1.as_slice())
        .unwrap_or(&[]);
    let title = format!("rank {id}: operators by time, all steps (Enter: operator)");
    super::operator::op_list(f, area, b, ctx, ops, b.panes.device.row, &title);
}
