//! The browser's frame: header (job, ranks, device, step, breadcrumb), pane tabs, the pane,
//! and the search overlay. The footer and help are the shell's.

use super::panes;
use super::{Browser, Level, Pane};
use crate::format::{fit, fit_end};
use crate::ui::UiMsg;
use crate::ui::shell::widgets::{block, offset};
use crate::ui::shell::{Ctx, HitTarget};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// The header, tab and pane areas of the browser's area.
fn areas(area: Rect) -> [Rect; 3] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(area)
}

/// The pane's area (where overlays go).
pub fn body(area: Rect) -> Rect {
    areas(area)[2]
}

/// Draws the browser.
pub fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let [header, tabs, body] = areas(area);
    f.render_widget(Paragraph::new(header_line(b, ctx, header.width)), header);
    let labels = tab_labels(b.nav.pane, tabs.width as usize);
    f.render_widget(Paragraph::new(tab_line(b, ctx, &labels)), tabs);
    let mut x = tabs.x;
    for (i, label) in labels.iter().enumerate() {
        let w = label.chars().count() as u16;
        ctx.hit(
            Rect::new(x, tabs.y, w.min(tabs.right().saturating_sub(x)), 1),
            HitTarget::Tab(i),
        );
        x += w;
    }
    panes::view(b.nav.pane).draw(f, body, b, ctx);
    if b.search.typing {
        search_overlay(f, body, b, ctx);
    }
}

/// `cluster › rank 5 › aten::mm`.
pub fn breadcrumb(b: &Browser) -> String {
    let job = &b.data.loaded.job;
    let mut parts = vec!["cluster".to_string()];
    for (l, _) in &b.nav.stack[1..] {
        match l {
            Level::Device(r) => parts.push(format!("rank {}", job.rank(*r).id)),
            Level::Operator(s) => parts.push(fit(b.name(*s), 40)),
            Level::Cluster => {}
        }
    }
    parts.join(" › ")
}

fn header_line(b: &Browser, ctx: &Ctx<UiMsg>, width: u16) -> Line<'static> {
    let job = &b.data.loaded.job;
    let t = &ctx.theme;
    let style = t.fg(t.c.header_fg).bg(t.c.header_bg);
    let device = b
        .data
        .analysis
        .roofline
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .or_else(|| b.data.analysis.roofline.device_name.clone())
        .unwrap_or_else(|| "device ?".into());
    // The step's number, then its position among the profiled steps: numbers need not
    // start at 1 (`step 552 (1 of 2)`).
    let n = b.steps().len();
    let step = b.step_number().map_or("no steps".into(), |s| {
        let slow = b.data.analysis.slow_steps.iter().any(|x| x.step == s);
        let slow = if slow { "slow, " } else { "" };
        format!("step {s} ({slow}{} of {n})", b.nav.step + 1)
    });
    let skipped = match b.data.loaded.skipped.len() {
        0 => String::new(),
        n => format!(" │ {n} skipped"),
    };
    let rest = format!(
        " │ {} ranks │ {} │ {}{} │ {}",
        job.ranks.len(),
        device,
        step,
        skipped,
        breadcrumb(b)
    );
    // On a narrow terminal the product's name gives way first, then the title (a path,
    // keeping its end): the step and the breadcrumb say where the user is.
    let w = width as usize;
    let len = crate::format::width;
    let title = &b.data.title;
    let prefix = if len(" stepscope │ ") + len(title) + len(&rest) <= w {
        " stepscope │ "
    } else {
        " "
    };
    let room = w.saturating_sub(len(prefix) + len(&rest)).max(12);
    let text = format!("{prefix}{}{rest}", fit_end(title, room));
    let text = crate::format::pad(&text, width as usize);
    Line::from(Span::styled(text, style.add_modifier(Modifier::BOLD)))
}

/// Every pane's tab label in `width` columns, so that every tab is shown and reachable: the
/// full names when they fit, else their first four letters, else numbers with the selected
/// pane's name.
fn tab_labels(selected: Pane, width: usize) -> Vec<String> {
    // Each pane's number and what `name` gives of it (nothing: the number alone).
    let labels = |name: &dyn Fn(Pane) -> String| -> Vec<String> {
        Pane::ALL
            .iter()
            .enumerate()
            .map(|(i, p)| match name(*p) {
                n if n.is_empty() => format!(" {} ", i + 1),
                n => format!(" {} {n} ", i + 1),
            })
            .collect()
    };
    let fits = |v: &[String]| v.iter().map(|l| l.chars().count()).sum::<usize>() <= width;
    let full = labels(&|p| p.name().to_string());
    if fits(&full) {
        return full;
    }
    let short = labels(&|p| p.name().chars().take(4).collect());
    if fits(&short) {
        return short;
    }
    labels(&|p| match p == selected {
        true => p.name().to_string(),
        false => String::new(),
    })
}

fn tab_line(b: &Browser, ctx: &Ctx<UiMsg>, labels: &[String]) -> Line<'static> {
    let mut spans = Vec::new();
    for (p, label) in Pane::ALL.iter().zip(labels) {
        let label = label.clone();
        let style = if *p == b.nav.pane {
            ctx.theme.selected()
        } else {
            ctx.theme.dim()
        };
        spans.push(Span::styled(label, style));
    }
    Line::from(spans)
}

/// A search result: its name cut to `room` columns with the characters the query matched
/// highlighted, then its count and total time.
fn result_line(
    name: &str,
    query: &str,
    room: usize,
    style: ratatui::style::Style,
    th: &crate::ui::shell::theme::Theme,
    stats: String,
) -> Line<'static> {
    let hit = super::search::matched(name, query);
    let shown = fit(name, room);
    let mut spans = vec![Span::styled(" ", style)];
    for (i, c) in shown.chars().enumerate() {
        let st = if hit.contains(&i) && c != '…' {
            style
                .fg(th.c.accent)
                .add_modifier(ratatui::style::Modifier::BOLD)
        } else {
            style
        };
        spans.push(Span::styled(c.to_string(), st));
    }
    let pad = room.saturating_sub(crate::format::width(&shown));
    spans.push(Span::styled(
        format!("{}{stats}", " ".repeat(pad)),
        th.dim(),
    ));
    Line::from(spans)
}

fn search_overlay(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let shown = b.search.results.len().min(10) as u16;
    let h = shown + 3;
    let r = Rect::new(
        area.x,
        area.y + area.height.saturating_sub(h),
        area.width,
        h.min(area.height),
    );
    f.render_widget(Clear, r);
    let title = format!("search operators: {} match(es)", b.search.results.len());
    f.render_widget(block(th, title), r);
    let mut lines = vec![Line::from(vec![
        Span::styled(" /", th.fg(th.c.accent)),
        Span::styled(format!("{}▏", b.search.query), th.text()),
    ])];
    let off = offset(b.search.cursor, shown as usize);
    for (i, s) in b
        .search
        .results
        .iter()
        .enumerate()
        .skip(off)
        .take(shown as usize)
    {
        let style = if i == b.search.cursor {
            th.selected()
        } else {
            th.text()
        };
        let (count, total) = b.shared.totals.get(s).copied().unwrap_or((0, 0));
        let stats = format!("  {count}× {}", crate::format::human(total));
        let room = (r.width as usize).saturating_sub(3 + stats.len());
        lines.push(result_line(
            b.name(*s),
            &b.search.query,
            room,
            style,
            th,
            stats,
        ));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect::new(
            r.x + 1,
            r.y + 1,
            r.width.saturating_sub(2),
            r.height.saturating_sub(2),
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tab_is_shown_at_any_width() {
        let width = |v: &[String]| v.iter().map(|l| l.chars().count()).sum::<usize>();
        let full = tab_labels(Pane::Overview, 200);
        assert_eq!(full[7], " 8 whatif ");
        let short = tab_labels(Pane::Overview, 80);
        assert!(width(&short) <= 80, "{short:?}");
        assert_eq!(
            (short[7].as_str(), short.len()),
            (" 8 what ", Pane::ALL.len())
        );
        let narrow = tab_labels(Pane::WhatIf, 40);
        assert!(width(&narrow) <= 40, "{narrow:?}");
        assert_eq!(
            (narrow[0].as_str(), narrow[7].as_str()),
            (" 1 ", " 8 whatif ")
        );
    }
}
