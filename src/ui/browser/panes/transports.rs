//! The comm pane's transports block (Ascend): each rank's traffic per link type as HCCL
//! summed it — bytes, transfer time and bandwidth — SDMA beside its HCCS/PCIe/SIO parts,
//! never added to them (docs/metrics.md "Ascend", transports).

use crate::format::{bytes, human, pad, rpad};
use crate::ui::UiMsg;
use crate::ui::browser::Browser;
use crate::ui::shell::Ctx;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Rows per rank and transport over the analysis's steps.
pub fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let tr = &b.data.analysis.transports;
    let mut lines = vec![widgets::head(
        th,
        format!(
            "{} {} {} {} {}",
            pad("rank", 6),
            pad("transport", 10),
            rpad("ops", 5),
            rpad("bytes", 11),
            rpad("time", 10),
        ) + &format!(" {}", rpad("GB/s", 8)),
    )];
    let rows = area.height.saturating_sub(3) as usize;
    for t in tr.iter().take(rows) {
        lines.push(Line::from(Span::styled(
            format!(
                "{} {} {} {} {} {}",
                pad(&t.rank.to_string(), 6),
                pad(t.transport.as_str(), 10),
                rpad(&t.ops.to_string(), 5),
                rpad(&bytes(t.bytes), 11),
                rpad(&human(t.time_ns), 10),
                rpad(&t.gbps.map_or("-".into(), |g| format!("{g:.1}")), 8)
            ),
            th.text(),
        )));
    }
    let more = tr.len().saturating_sub(rows);
    let title = if more > 0 {
        format!("HCCL transports (SDMA holds HCCS/PCIE/SIO; {more} more rows in the report)")
    } else {
        "HCCL transports (SDMA holds HCCS/PCIE/SIO: never add them)".to_string()
    };
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}
