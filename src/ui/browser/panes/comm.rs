//! Comm: the rank × rank point-to-point matrix (bytes, time or bandwidth; `m` cycles), the
//! collective types with their bus bandwidth against the link peak, and each rank's
//! collectives in the selected step — wait, transit, its own busbw — slow links highlighted;
//! on Ascend, HCCL's traffic per rank and transport between them ([`super::transports`]).

use super::PaneView;
use crate::analysis::comm::per_rank::RankComm;
use crate::analysis::comm::per_rank::per_rank;
use crate::analysis::comm::stats::P2pCell;
use crate::format::{bytes, fit, human, pad, rpad};
use crate::model::RankId;
use crate::model::StepNo;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The comm pane's state: its view and the per-rank rows it computed.
#[derive(Debug, Clone, Default)]
pub struct CommState {
    /// What the matrix shows and the table counts.
    pub view: CommView,
    /// Per-rank collectives of a step (at most so many bytes).
    pub ranks: Option<(StepNo, Option<u64>, Vec<RankComm>)>,
    /// Pending (after an evidence jump): select this rank's row, or the first row, once the
    /// rows are computed.
    pub focus: Option<Option<RankId>>,
}

/// The comm pane's own state: what the matrix cells show and which collectives the per-rank
/// table counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommView {
    /// Matrix metric.
    pub metric: Metric,
    /// Only collectives of at most this many bytes (a small-messages proof).
    pub max_bytes: Option<u64>,
}

/// What the comm matrix cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// Bytes sent.
    #[default]
    Bytes,
    /// Transfer time.
    Time,
    /// Bandwidth (bytes / transfer time).
    Bandwidth,
}

/// The communication view.
pub struct CommPane;

impl PaneView for CommPane {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        b.panes.comm.ranks.as_ref().map_or(0, |c| c.2.len())
    }

    /// Opens the row's rank.
    fn enter(&self, b: &mut Browser, row: usize, _: &mut Ctx<UiMsg>) {
        let rank = b
            .panes
            .comm
            .ranks
            .as_ref()
            .and_then(|c| c.2.get(row))
            .map(|c| c.rank);
        if let Some(r) = rank.and_then(|id| b.data.loaded.job.rank_ix(id)) {
            b.push(Level::Device(r), Pane::Overview);
        }
    }

    fn hints(&self) -> &'static [Action] {
        &[Action::CycleMetric, Action::Enter]
    }

    fn commands(&self) -> &'static [Action] {
        &[Action::CycleMetric]
    }

    fn act(&self, b: &mut Browser, a: Action, _: &mut Ctx<UiMsg>) {
        if a == Action::CycleMetric {
            b.panes.comm.view.metric = match b.panes.comm.view.metric {
                Metric::Bytes => Metric::Time,
                Metric::Time => Metric::Bandwidth,
                Metric::Bandwidth => Metric::Bytes,
            }
        }
    }

    /// The per-rank collectives of the selected step.
    fn prepare(&self, b: &mut Browser, _: &mut Ctx<UiMsg>) {
        let Some(step) = b.step_number() else { return };
        let max = b.panes.comm.view.max_bytes;
        if b.panes
            .comm
            .ranks
            .as_ref()
            .is_none_or(|c| (c.0, c.1) != (step, max))
        {
            let per = per_rank(&b.data.analysis.comm, Some(step), max);
            b.panes.comm.ranks = Some((step, max, per));
        }
        if let Some(rank) = b.panes.comm.focus.take() {
            let rows = b.panes.comm.ranks.as_ref().map_or(&[][..], |c| &c.2[..]);
            let at = rows.iter().position(|x| Some(x.rank) == rank);
            b.panes.rows[Pane::Comm.index()] = at.unwrap_or(0);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let comm = &b.data.analysis.comm;
    let p2p_ranks = p2p_ranks(&comm.p2p);
    let top_h = if p2p_ranks.is_empty() {
        (comm.types.len() as u16 + 3).min(area.height / 2).max(4)
    } else {
        (p2p_ranks.len() as u16 + 3).min(area.height / 2).max(5)
    };
    // HCCL's own per-transport traffic (Ascend), when a rank has it, between the two.
    let tr = &b.data.analysis.transports;
    let mid_h = if tr.is_empty() {
        0
    } else {
        (tr.len() as u16 + 3).min(area.height / 4).max(4)
    };
    let [top, mid, bottom] = Layout::vertical([
        Constraint::Length(top_h),
        Constraint::Length(mid_h),
        Constraint::Min(3),
    ])
    .areas(area);
    if p2p_ranks.is_empty() {
        types(f, top, b, ctx);
    } else {
        matrix(f, top, b, ctx, &p2p_ranks);
    }
    if mid_h > 0 {
        super::transports::draw(f, mid, b, ctx);
    }
    ranks(f, bottom, b, ctx);
}

fn p2p_ranks(cells: &[P2pCell]) -> Vec<RankId> {
    let mut v: Vec<RankId> = cells.iter().flat_map(|c| [c.src, c.dst]).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn cell_text(b: &Browser, c: &P2pCell) -> String {
    match b.panes.comm.view.metric {
        Metric::Bytes => bytes(c.bytes),
        Metric::Time => human(c.time_ns),
        Metric::Bandwidth => c.gbps.map_or("-".into(), |g| format!("{g:.1}G")),
    }
}

fn matrix(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, ranks: &[RankId]) {
    let th = &ctx.theme;
    let cw = 10usize;
    let cols = ((area.width as usize).saturating_sub(2 + 8) / cw).min(ranks.len());
    let slow = |r: RankId| {
        b.data
            .analysis
            .comm
            .slow_links
            .iter()
            .any(|l| l.rank == r || l.peer == Some(r))
    };
    let mut head = vec![Span::styled(pad("src\\dst", 8), th.dim())];
    for r in &ranks[..cols] {
        head.push(Span::styled(rpad(&r.to_string(), cw), th.dim()));
    }
    let mut lines = vec![Line::from(head)];
    for src in ranks.iter().take(area.height.saturating_sub(3) as usize) {
        let lstyle = if slow(*src) {
            th.fg(th.c.slow).add_modifier(Modifier::BOLD)
        } else {
            th.text()
        };
        let mut spans = vec![Span::styled(pad(&src.to_string(), 8), lstyle)];
        for dst in &ranks[..cols] {
            let cell = b
                .data
                .analysis
                .comm
                .p2p
                .iter()
                .find(|c| c.src == *src && c.dst == *dst);
            let (text, style) = match cell {
                Some(c) => (
                    cell_text(b, c),
                    if slow(*src) || slow(*dst) {
                        th.fg(th.c.slow)
                    } else {
                        th.text()
                    },
                ),
                None => ("·".into(), th.dim()),
            };
            spans.push(Span::styled(rpad(&text, cw), style));
        }
        lines.push(Line::from(spans));
    }
    let metric = match b.panes.comm.view.metric {
        Metric::Bytes => "bytes",
        Metric::Time => "time",
        Metric::Bandwidth => "GB/s",
    };
    let title = format!("point-to-point, all steps: {metric} (m: bytes / time / bandwidth)");
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}

fn types(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let comm = &b.data.analysis.comm;
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![widgets::head(
        &ctx.theme,
        format!(
            "{} {} {} {} {} {}  {}",
            pad("collective", 14),
            rpad("calls", 7),
            rpad("total", 9),
            rpad("wait", 7),
            rpad("busbw", 10),
            rpad("of peak", 8),
            "group"
        ),
    )];
    for t in &comm.types {
        let style = if t.wait_dominated {
            th.fg(th.c.slow)
        } else {
            th.text()
        };
        lines.push(Line::from(Span::styled(
            fit(
                &format!(
                    "{} {} {} {} {} {}  {} ({} ranks, {})",
                    pad(t.op.as_str(), 14),
                    rpad(&t.calls.to_string(), 7),
                    rpad(&human(t.total_ns), 9),
                    rpad(
                        &match t.waiting() {
                            (Some(x), hccl) => {
                                format!("{:.0}%{}", x * 100.0, if hccl { "*" } else { "" })
                            }
                            (None, _) => "-".into(),
                        },
                        7
                    ),
                    rpad(
                        &t.busbw_gbps.map_or("-".into(), |x| format!("{x:.1} GB/s")),
                        10
                    ),
                    rpad(
                        &t.busbw_of_peak
                            .map_or("-".into(), |x| format!("{:.0}%", x * 100.0)),
                        8
                    ),
                    t.group,
                    t.group_size,
                    t.placement
                ),
                w,
            ),
            style,
        )));
    }
    if comm.types.is_empty() {
        lines.push(widgets::empty(
            &ctx.theme,
            " no collectives matched across ranks",
        ));
    }
    let title = if comm.types.iter().any(|t| t.waiting().1) {
        "collectives by type (no point-to-point traffic; wait* = HCCL's own split: ranks not loaded)"
    } else {
        "collectives by type (no point-to-point traffic)"
    };
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}

fn ranks(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let Some((step, upto, per)) = &b.panes.comm.ranks else {
        return;
    };
    let sel = b.row_of(Pane::Comm);
    let (rows, off) = widgets::page(area, 1, sel);
    let max = per.iter().map(|r| r.wait_ns).max().unwrap_or(1).max(1) as f64;
    let bw = (area.width as usize).saturating_sub(2 + 8 + 10 + 10 + 10 + 12 + 6);
    let mut lines = vec![widgets::head(
        &ctx.theme,
        format!(
            "{} {} {} {} {}  wait for the last arriver",
            pad("rank", 7),
            rpad("instances", 9),
            rpad("wait", 9),
            rpad("transit", 9),
            rpad("busbw", 11)
        ),
    )];
    for (i, r) in per.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel {
            th.selected()
        } else if r.slow_link {
            th.fg(th.c.slow)
        } else {
            th.text()
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "{} {} {} {} {}  ",
                    pad(
                        &format!("{}{}", r.rank, if r.slow_link { " slow" } else { "" }),
                        7
                    ),
                    rpad(&r.instances.to_string(), 9),
                    rpad(&human(r.wait_ns), 9),
                    rpad(&human(r.transit_ns), 9),
                    rpad(
                        &r.busbw_gbps.map_or("-".into(), |x| format!("{x:.1} GB/s")),
                        11
                    )
                ),
                style,
            ),
            Span::styled(widgets::bar(r.wait_ns as f64, max, bw), th.fg(th.c.comm)),
        ]));
    }
    if per.is_empty() {
        lines.push(widgets::empty(
            &ctx.theme,
            " no collective instances in this step",
        ));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    let only = upto.map_or(String::new(), |m| format!(" of at most {}", bytes(m)));
    let title = format!(
        "collectives{only} per rank, step {step} (busbw: median of the rank's own; Enter: device)"
    );
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}
