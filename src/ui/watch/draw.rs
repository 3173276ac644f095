//! Drawing the live screen: one read-only function per region — the status line, notes,
//! the step strip, the rank × step heat map, the device panel, the alert list, and the
//! alert's source lines on Enter.

use super::WatchScreen;
use crate::analysis::live::history::{self, Bucket};
use crate::format::{fit, human};
use crate::model::live::EventKind;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use crate::ui::shell::{Ctx, HitTarget};
use crate::ui::watch::view::{DeviceView, Strip, WatchView};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// Rows of bars in the step strip.
const STRIP_ROWS: u16 = 4;

/// The whole screen.
pub fn screen(f: &mut Frame, area: Rect, s: &WatchScreen, ctx: &Ctx<Box<WatchView>>) {
    let t = &ctx.theme;
    let v = &s.view;
    let notes = v.notes.len().min(2) as u16;
    let [status, notes_area, strip, rest] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(notes),
        Constraint::Length(STRIP_ROWS + 3),
        Constraint::Min(3),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(status_line(t, v, area.width)), status);
    let lines: Vec<Line> = v
        .notes
        .iter()
        .map(|n| Line::from(Span::styled(format!(" note: {n}"), t.fg(t.c.accent))))
        .collect();
    f.render_widget(Paragraph::new(lines), notes_area);
    strip_block(f, strip, v.strip.as_ref(), v.done, t);
    let side = !v.heat.is_empty() || !v.devices.is_empty();
    let [alerts, right] = if side {
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(rest)
    } else {
        [rest, Rect::default()]
    };
    alert_list(f, alerts, s, ctx);
    if side {
        let (heat, devices) = match (v.heat.is_empty(), v.devices.is_empty()) {
            (false, false) => {
                let [a, b] = Layout::vertical([Constraint::Ratio(1, 2); 2]).areas(right);
                (a, b)
            }
            (false, true) => (right, Rect::default()),
            _ => (Rect::default(), right),
        };
        heat_map(f, heat, v, t);
        device_panel(f, devices, &v.devices, t);
    }
    if s.open {
        detail(f, area, s, t);
    }
}

/// Sources, lines, rate, records, unrecognised lines, alerts.
fn status_line<'a>(t: &Theme, v: &WatchView, width: u16) -> Line<'a> {
    let c = &v.counts;
    let open = v.sources.iter().filter(|s| s.open).count();
    let silent = v.sources.iter().filter(|s| s.silent).count();
    let state = if v.done {
        "ended".to_string()
    } else if silent > 0 {
        format!("{silent} silent")
    } else {
        "live".to_string()
    };
    // Narrow terminals get the short words.
    let n = v.sources.len();
    let (sources, rec, unrec) = if width >= 100 {
        (
            format!("{n} source(s), {open} open"),
            "recognised",
            "unrecognised",
        )
    } else {
        (format!("{open}/{n} open"), "rec", "unrec")
    };
    let text = format!(
        " watch · {sources} · {state} · {} lines {:.0}/s · {} {rec} · {} {unrec} · {} alerts",
        c.lines, v.lines_per_s, c.records, c.unrecognised, c.alerts
    );
    Line::from(Span::styled(text, t.title()))
}

/// The step strip: one column per bucket of steps, its height the slowest step in it (so
/// spikes show), slow buckets in the slow colour, the slow limit as a dotted row, events
/// marked underneath.
fn strip_block(f: &mut Frame, area: Rect, strip: Option<&Strip>, done: bool, t: &Theme) {
    let Some(s) = strip.filter(|s| !s.buckets.is_empty()) else {
        let b = block(t, "steps");
        let text = if done {
            " the input ended without a step line (no recogniser took one: --format, or a log of another kind)"
        } else {
            " waiting for step lines…"
        };
        f.render_widget(Paragraph::new(widgets::empty(t, text)).block(b), area);
        return;
    };
    let width = area.width.saturating_sub(2) as usize;
    let cols = history::fit(&s.buckets, width);
    if cols.is_empty() {
        return; // a terminal too narrow for one column
    }
    // A short history is drawn wider, filling the strip, so a few steps still read.
    let cw = (width / cols.len().max(1)).max(1);
    let scale = cols.iter().map(|b| b.max_ns).max().unwrap_or(1).max(1);
    let limit_row = s.limits.map(|(_, lim)| eighths(lim, scale, STRIP_ROWS));
    let mut lines = Vec::new();
    for row in (0..STRIP_ROWS).rev() {
        let spans = cols
            .iter()
            .flat_map(|b| {
                let cell = strip_cell(t, b, eighths(b.max_ns, scale, STRIP_ROWS), row, limit_row);
                std::iter::repeat_n(cell, cw)
            })
            .collect::<Vec<_>>();
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(
        cols.iter()
            .flat_map(|b| {
                let mark = event_mark(t, b, &s.events);
                std::iter::once(mark).chain(std::iter::repeat_n(Span::raw(" "), cw - 1))
            })
            .collect::<Vec<_>>(),
    ));
    let (first, last) = (cols[0].first, cols[cols.len() - 1].last);
    let limits = s.limits.map_or(String::new(), |(m, l)| {
        format!(" · median {}, slow > {}", human(m), human(l))
    });
    let good = s
        .goodput
        .share()
        .map_or(String::new(), |g| format!(" · goodput {:.1}%", 100.0 * g));
    let mfu = s
        .mfu
        .map_or(String::new(), |m| format!(" · MFU {:.1}% (derived)", m.pct));
    let title = format!(
        "steps {first}–{last} · {}{limits} · peak {}{good}{mfu}",
        s.label,
        human(scale)
    );
    f.render_widget(Paragraph::new(lines).block(block(t, title)), area);
}

/// A device's latest readings: utilisation, power, temperature, clock, memory.
fn readings(d: &DeviceView) -> String {
    let get = |k: &str| d.latest.get(k).copied();
    let mut read = String::new();
    if let Some(u) = get("util_pct") {
        read.push_str(&format!(" {u:>3.0}%"));
    }
    if let Some(p) = get("power_w") {
        read.push_str(&format!(" {p:.0}W"));
    }
    if let Some(c) = get("temp_c") {
        read.push_str(&format!(" {c:.0}°C"));
    }
    if let Some(c) = get("sm_clock_mhz") {
        read.push_str(&format!(" {c:.0}MHz"));
    }
    if let Some(m) = get("mem_used_mib") {
        read.push_str(&format!(" {:.1}GiB", m / 1024.0));
    } else if let Some(m) = get("mem_pct") {
        read.push_str(&format!(" mem {m:.0}%"));
    }
    read
}

/// A height in eighths of a cell over `rows` rows.
fn eighths(ns: i64, scale: i64, rows: u16) -> u32 {
    ((ns.max(0) as f64 / scale as f64) * f64::from(rows) * 8.0).round() as u32
}

/// One cell of a column `h` eighths high, in row `row` (0 at the bottom).
fn strip_cell<'a>(t: &Theme, b: &Bucket, h: u32, row: u16, limit: Option<u32>) -> Span<'a> {
    const EIGHTHS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let base = u32::from(row) * 8;
    let fill = h.saturating_sub(base).min(8) as usize;
    let colour = if b.slow { t.c.slow } else { t.c.compute };
    if fill == 0 && limit.is_some_and(|l| l > base && l <= base + 8) {
        return Span::styled("┄", t.dim());
    }
    Span::styled(EIGHTHS[fill].to_string(), t.fg(colour))
}

/// The event mark under a column: the first event at one of its steps.
fn event_mark<'a>(t: &Theme, b: &Bucket, events: &[(EventKind, u64)]) -> Span<'a> {
    let e = events
        .iter()
        .find(|(_, at)| *at >= b.first && *at <= b.last)
        .map(|e| e.0);
    let c = match e {
        Some(EventKind::Eval) => 'E',
        Some(EventKind::Checkpoint) => 'C',
        Some(EventKind::Gc) => 'G',
        Some(EventKind::Skipped) => 'S',
        Some(EventKind::NanLoss) => 'N',
        Some(EventKind::Restart) => 'R',
        Some(EventKind::Exit) => 'X',
        None if b.slow => '^',
        None => ' ',
    };
    Span::styled(c.to_string(), t.fg(t.c.accent))
}

/// Ranks × steps: each cell the rank's slowest step in that range against the column's
/// median across ranks.
fn heat_map(f: &mut Frame, area: Rect, v: &WatchView, t: &Theme) {
    if area.height == 0 {
        return;
    }
    let rows = area.height.saturating_sub(2) as usize;
    let shown = &v.heat[..v.heat.len().min(rows)];
    let label_w = 6;
    let columns = (area.width as usize).saturating_sub(2 + label_w);
    let buckets: Vec<&[Bucket]> = shown.iter().map(|(_, b)| b.as_slice()).collect();
    let heat = history::heat(&buckets, columns);
    let lines: Vec<Line> = shown
        .iter()
        .zip(&heat)
        .map(|((rank, _), cells)| {
            let mut spans = vec![Span::styled(
                format!("{:<label_w$}", format!("r{rank}")),
                t.dim(),
            )];
            spans.extend(cells.iter().map(|cell| match cell {
                Some(dev) => {
                    let (g, colour) = widgets::heat(t, *dev);
                    Span::styled(g.to_string(), t.fg(colour))
                }
                None => Span::raw(" "),
            }));
            Line::from(spans)
        })
        .collect();
    let title = format!(
        "ranks × steps ({} of {} ranks; █ ≥10% over the median)",
        shown.len(),
        v.heat.len()
    );
    f.render_widget(Paragraph::new(lines).block(block(t, title)), area);
}

/// One line per device: utilisation history, then the latest readings.
fn device_panel(f: &mut Frame, area: Rect, devices: &[DeviceView], t: &Theme) {
    if area.height == 0 {
        return;
    }
    let inner = area.width.saturating_sub(2) as usize;
    let label_w = devices
        .iter()
        .map(|d| crate::format::width(&d.label))
        .max()
        .unwrap_or(0)
        .min(16);
    // The readings first: the sparkline takes what they leave (never a cut reading).
    let reads: Vec<String> = devices.iter().map(readings).collect();
    let read_w = reads
        .iter()
        .map(|r| crate::format::width(r))
        .max()
        .unwrap_or(0);
    let spark_w = inner.saturating_sub(label_w + 2 + read_w).clamp(0, 40);
    // Devices placed on steps share one step axis.
    let placed = devices.iter().any(|d| !d.by_step.is_empty());
    let rows: Vec<&[Bucket]> = devices.iter().map(|d| d.by_step.as_slice()).collect();
    let by_step = history::utilisation(&rows, spark_w);
    let lines: Vec<Line> = devices
        .iter()
        .take(area.height.saturating_sub(2) as usize)
        .zip(&by_step)
        .zip(&reads)
        .map(|((d, cells), read)| {
            let colour = if d.alerted { t.c.slow } else { t.c.compute };
            let spark = if placed {
                step_sparkline(cells)
            } else {
                sparkline(&d.util, spark_w)
            };
            let mark = if d.alerted { "!" } else { " " };
            Line::from(vec![
                Span::styled(mark, t.fg(t.c.slow)),
                Span::styled(
                    format!("{} ", crate::format::pad(&d.label, label_w)),
                    t.text(),
                ),
                Span::styled(spark, t.fg(colour)),
                Span::styled(read.clone(), t.dim()),
            ])
        })
        .collect();
    let span = devices
        .iter()
        .flat_map(|d| {
            d.by_step
                .first()
                .map(|b| b.first)
                .zip(d.by_step.last().map(|b| b.last))
        })
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let title = match span {
        Some((a, z)) => format!("devices ({}) · by step {a}–{z}", devices.len()),
        None => format!("devices ({}) · utilisation", devices.len()),
    };
    f.render_widget(Paragraph::new(lines).block(block(t, title)), area);
}

/// Utilisation per step column as block glyphs (blank: no sample placed there).
fn step_sparkline(util: &[Option<f64>]) -> String {
    util.iter().map(|u| u.map_or(' ', glyph)).collect()
}

/// A 0–100 utilisation as a block glyph, from empty to full.
fn glyph(u: f64) -> char {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    LEVELS[((u.clamp(0.0, 100.0) / 100.0) * 7.0).round() as usize]
}

/// The last `w` samples of a 0–100 series as block glyphs.
fn sparkline(util: &[f64], w: usize) -> String {
    let tail = &util[util.len().saturating_sub(w)..];
    let mut s: String = tail.iter().map(|&u| glyph(u)).collect();
    s.extend(std::iter::repeat_n(' ', w - tail.len()));
    s
}

/// The alerts, newest last; the selected one highlighted. When every alert fits wrapped in
/// the rows there are, each is shown whole; else one row each, cut at the width.
fn alert_list(f: &mut Frame, area: Rect, s: &WatchScreen, ctx: &Ctx<Box<WatchView>>) {
    let t = &ctx.theme;
    let v = &s.view;
    let sel = s.selection();
    let w = area.width.saturating_sub(2) as usize;
    let style = |i: usize| {
        if Some(i) == sel {
            t.selected()
        } else {
            t.text()
        }
    };
    let texts: Vec<String> = v
        .alerts
        .iter()
        .map(|r| {
            crate::report::watch::alert_line(&r.alert, &v.job)
                .trim()
                .to_string()
        })
        .collect();
    let wrapped: Vec<Vec<String>> = texts.iter().map(|x| crate::format::wrap(x, w, 2)).collect();
    let inner = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line> = if v.alerts.is_empty() {
        vec![widgets::empty(t, " no alert")]
    } else if wrapped.iter().map(Vec::len).sum::<usize>() <= inner {
        let mut y = area.y + 1;
        let mut lines = Vec::new();
        for (i, rows) in wrapped.into_iter().enumerate() {
            for row in rows {
                // Each row of an alert's text selects that alert.
                ctx.hit(
                    Rect::new(area.x + 1, y, area.width.saturating_sub(2), 1),
                    HitTarget::Rows(i),
                );
                y += 1;
                lines.push(Line::from(Span::styled(row, style(i))));
            }
        }
        lines
    } else {
        let (rows, first) = widgets::page(area, 0, sel.unwrap_or(0));
        widgets::hit_rows(
            ctx,
            area,
            0,
            rows.min(texts.len().saturating_sub(first)),
            first,
        );
        texts
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, x)| Line::from(Span::styled(fit(x, w), style(i))))
            .collect()
    };
    let title = format!(
        "alerts ({}; {} raised; enter: lines)",
        v.alerts.len(),
        v.counts.alerts
    );
    f.render_widget(Paragraph::new(lines).block(block(t, title)), area);
}

/// The selected alert in full, with the lines of its source that led to it.
fn detail(f: &mut Frame, area: Rect, s: &WatchScreen, t: &Theme) {
    let Some(r) = s.selection().and_then(|i| s.view.alerts.get(i)) else {
        return;
    };
    let box_ = widgets::centered(
        area,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    let mut lines = vec![
        Line::from(Span::styled(
            crate::report::watch::alert_line(&r.alert, &s.view.job)
                .trim()
                .to_string(),
            t.title(),
        )),
        Line::from(Span::styled(format!("source: {}", r.source), t.dim())),
        Line::default(),
    ];
    for (n, text) in &r.lines {
        lines.push(Line::from(vec![
            Span::styled(format!("{n:>7} "), t.dim()),
            Span::styled(text.clone(), t.text()),
        ]));
    }
    f.render_widget(Clear, box_);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(t, "alert · its source lines (esc: back)")),
        box_,
    );
}
