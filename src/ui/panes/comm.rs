//! Comm: the rank × rank point-to-point matrix (bytes, time or bandwidth; `m` cycles), the
//! collective types with their bus bandwidth against the link peak, and each rank's
//! collectives in the selected step — wait, transit, its own busbw — slow links highlighted.

use crate::analysis::comm::stats::P2pCell;
use crate::report::table::bytes;
use crate::time::human;
use crate::ui::app::{App, Metric, Pane};
use crate::ui::widgets::{self, block, fit, pad, rpad};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the comm pane.
pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let comm = &app.data.analysis.comm;
    let p2p_ranks = p2p_ranks(&comm.p2p);
    let top_h = if p2p_ranks.is_empty() {
        (comm.types.len() as u16 + 3).min(area.height / 2).max(4)
    } else {
        (p2p_ranks.len() as u16 + 3).min(area.height / 2).max(5)
    };
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Min(3)]).areas(area);
    if p2p_ranks.is_empty() {
        types(f, top, app);
    } else {
        matrix(f, top, app, &p2p_ranks);
    }
    ranks(f, bottom, app);
}

fn p2p_ranks(cells: &[P2pCell]) -> Vec<u32> {
    let mut v: Vec<u32> = cells.iter().flat_map(|c| [c.src, c.dst]).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn cell_text(app: &App, c: &P2pCell) -> String {
    match app.metric {
        Metric::Bytes => bytes(c.bytes),
        Metric::Time => human(c.time_ns),
        Metric::Bandwidth => c.gbps.map_or("-".into(), |g| format!("{g:.1}G")),
    }
}

fn matrix(f: &mut Frame, area: Rect, app: &App, ranks: &[u32]) {
    let th = &app.theme;
    let cw = 10usize;
    let cols = ((area.width as usize).saturating_sub(2 + 8) / cw).min(ranks.len());
    let slow = |r: u32| {
        app.data
            .analysis
            .comm
            .slow_links
            .iter()
            .any(|l| l.rank == r)
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
            let cell = app
                .data
                .analysis
                .comm
                .p2p
                .iter()
                .find(|c| c.src == *src && c.dst == *dst);
            let (text, style) = match cell {
                Some(c) => (
                    cell_text(app, c),
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
    let metric = match app.metric {
        Metric::Bytes => "bytes",
        Metric::Time => "time",
        Metric::Bandwidth => "GB/s",
    };
    let title = format!("point-to-point, all steps: {metric} (m: bytes / time / bandwidth)");
    f.render_widget(Paragraph::new(lines).block(block(app, title)), area);
}

fn types(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let comm = &app.data.analysis.comm;
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![widgets::head(
        app,
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
                        &t.wait_ratio
                            .map_or("-".into(), |x| format!("{:.0}%", x * 100.0)),
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
        lines.push(widgets::empty(app, " no collectives matched across ranks"));
    }
    let title = "collectives by type (no point-to-point traffic)";
    f.render_widget(Paragraph::new(lines).block(block(app, title)), area);
}

fn ranks(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let Some((step, per)) = &app.cache.comm_ranks else {
        return;
    };
    let sel = app.row_of(Pane::Comm);
    let (rows, off) = widgets::page(area, 1, sel);
    let max = per.iter().map(|r| r.wait_ns).max().unwrap_or(1).max(1) as f64;
    let bw = (area.width as usize).saturating_sub(2 + 8 + 10 + 10 + 10 + 12 + 6);
    let mut lines = vec![widgets::head(
        app,
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
        lines.push(widgets::empty(app, " no collective instances in this step"));
    }
    widgets::hit_rows(app, area, 1, rows, off);
    let title = format!(
        "collectives per rank, step {step} (busbw: median of the rank's own; Enter: device)"
    );
    f.render_widget(Paragraph::new(lines).block(block(app, title)), area);
}
