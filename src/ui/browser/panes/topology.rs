//! The layout pane's second layout: the topology (analysis/layout/topology.rs) — a line per
//! node with its ranks shaded by the pane's metric, then the traffic per link type with its
//! bandwidth against its peak, then the slow links.

use super::layout_view::selected_line;
use crate::analysis::layout::metric::Value;
use crate::analysis::layout::topology::LinkTraffic;
use crate::format::{bytes, human, pad};
use crate::model::RankId;
use crate::ui::UiMsg;
use crate::ui::browser::Browser;
use crate::ui::shell::Ctx;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use rustc_hash::FxHashMap;

/// Ranks drawn per node line (a node of more is cut, with a count).
const RANKS_PER_LINE: usize = 64;

/// Draws the topology into `area`: the nodes, then the links, then the selected rank.
pub fn draw(
    f: &mut Frame,
    area: Rect,
    b: &Browser,
    ctx: &Ctx<UiMsg>,
    vals: &FxHashMap<RankId, Value>,
    sel: Option<RankId>,
) {
    let th = &ctx.theme;
    let a = &b.data.analysis;
    let Some(l) = a.layout.as_ref() else { return };
    let t: &LinkTraffic = &a.topology;
    let rpn = t.ranks_per_node.max(1);
    let nodes = l.world.div_ceil(rpn);
    // Nodes take what is left after the links, the slow links and the selected line.
    let tail = 3 + t.link_types.len() + t.slow.len().min(4);
    let room = (area.height as usize).saturating_sub(2 + tail).max(1);
    let mut lines = node_lines(ctx, (l.world, rpn), room, vals, sel);
    lines.extend(link_lines(ctx, t));
    lines.push(Line::from(Span::styled(
        selected_line(b, l, sel, vals),
        th.text(),
    )));
    let title = format!(
        "topology: {nodes} node(s) × {rpn} ({}) — {}",
        t.ranks_per_node_from,
        b.panes.layout.metric.title()
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// A line per node, `room` of them around the selected rank's: its ranks shaded.
fn node_lines<'a>(
    ctx: &Ctx<UiMsg>,
    (world, rpn): (u32, u32),
    room: usize,
    vals: &FxHashMap<RankId, Value>,
    sel: Option<RankId>,
) -> Vec<Line<'a>> {
    let th = &ctx.theme;
    let sel_node = sel.map_or(0, |s| (s.0 / rpn) as usize);
    let first = sel_node.saturating_sub(room.saturating_sub(1));
    let mut lines = Vec::new();
    for n in (first as u32..world.div_ceil(rpn)).take(room) {
        let lo = n * rpn;
        let hi = (lo + rpn).min(world);
        let mut spans = vec![Span::styled(
            format!("node {:<4} {} ", n, pad(&format!("r{lo}-{}", hi - 1), 12)),
            th.dim(),
        )];
        for r in (lo..hi).map(RankId).take(RANKS_PER_LINE) {
            let (ch, color) = vals
                .get(&r)
                .map_or(('·', th.c.dim), |v| widgets::heat(th, v.dev));
            let style = if Some(r) == sel {
                th.selected()
            } else {
                th.fg(color)
            };
            spans.push(Span::styled(ch.to_string(), style));
        }
        if (hi - lo) as usize > RANKS_PER_LINE {
            spans.push(Span::styled(
                format!(" +{}", hi - lo - RANKS_PER_LINE as u32),
                th.dim(),
            ));
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// The traffic per link type, then the slow links.
fn link_lines<'a>(ctx: &Ctx<UiMsg>, t: &LinkTraffic) -> Vec<Line<'a>> {
    let th = &ctx.theme;
    let mut lines = vec![widgets::head(
        th,
        format!(
            "  {:<18} {:>5} {:>9} {:>9} {:>7} {:>5} {:>4}",
            "link", "links", "traffic", "time", "GB/s", "peak", "slow"
        ),
    )];
    for k in &t.link_types {
        let of_peak = k
            .of_peak()
            .map_or("-".into(), |f| format!("{:.0}%", f * 100.0));
        let row = format!(
            "  {:<18} {:>5} {:>9} {:>9} {:>7} {:>5} {:>4}",
            crate::format::fit(&k.name, 18),
            k.links,
            bytes(k.bytes),
            human(k.time_ns),
            k.median_gbps.map_or("-".into(), |g| format!("{g:.1}")),
            of_peak,
            k.slow
        );
        let style = if k.slow > 0 {
            th.fg(th.c.heat_high)
        } else {
            th.text()
        };
        lines.push(Line::from(Span::styled(row, style)));
    }
    for s in t.slow.iter().take(4) {
        let vs = match (s.gbps, s.median_gbps) {
            (Some(g), Some(m)) => format!(": {g:.1} GB/s vs {m:.1} for its peers"),
            (Some(g), None) => format!(": {g:.1} GB/s"),
            _ => String::new(),
        };
        lines.push(Line::from(Span::styled(
            format!(
                "  slow {} {}{vs}",
                s.kind,
                crate::format::printable(&s.what)
            ),
            th.fg(th.c.heat_high),
        )));
    }
    if t.link_types.is_empty() {
        lines.push(widgets::empty(th, "  no traffic recorded between ranks"));
    }
    lines
}
