//! Roofline: a log-log chart (braille) of achieved TFLOP/s against arithmetic intensity with
//! the memory roof, the compute roof, the ridge and the U threshold lines, each operator a
//! letter of its class (C compute-bound, M memory-bound, U under-utilized); and the table of
//! operators with class, AI, TFLOP/s, GB/s and % of peak. On an accelerator whose PMU
//! counted its pipes and no FLOP estimate exists, the counters instead ([`super::pipes`]).

use super::PaneView;
use crate::analysis::roofline::{Class, OpRoof};
use crate::format::{human, pad, rpad};
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::symbols::Marker;
use ratatui::text::{Line as TLine, Span};
use ratatui::widgets::Paragraph;
use ratatui::widgets::canvas::{Canvas, Line};

/// Arithmetic intensity shown, log10 FLOP/byte.
const X: [f64; 2] = [-2.0, 4.0];

fn letter(c: Class) -> &'static str {
    match c {
        Class::ComputeBound => "C",
        Class::MemoryBound => "M",
        Class::UnderUtilized => "U",
        Class::Unknown => "?",
    }
}

/// The roofline chart and its operator table.
pub struct RooflinePane;

impl PaneView for RooflinePane {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        let rf = &b.data.analysis.roofline;
        if counted_only(b) {
            rf.pmu_ops.len()
        } else {
            rf.ops.len()
        }
    }

    /// Opens the row's operator (by name: the table aggregates an operator's kernels; a
    /// counted operator type by its first task's name).
    fn enter(&self, b: &mut Browser, row: usize, ctx: &mut Ctx<UiMsg>) {
        let data = b.data.clone();
        let rf = &data.analysis.roofline;
        let name = if counted_only(b) {
            rf.pmu_ops.get(row).map(|o| o.task_name.as_str())
        } else {
            rf.ops.get(row).map(|o| o.op.as_str())
        };
        match name.and_then(|n| data.loaded.job.strings.get(n)) {
            Some(s) => b.push(Level::Operator(s), Pane::Operator),
            None => ctx.status = Some("no operator of that name in the trace".into()),
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

/// The accelerator counted its own pipes and no operator has a FLOP estimate: the pane
/// shows the counters ([`super::pipes`]) instead of an empty chart.
fn counted_only(b: &Browser) -> bool {
    let rf = &b.data.analysis.roofline;
    rf.ops.is_empty() && !rf.pmu_ops.is_empty()
}

fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    if counted_only(b) {
        return super::pipes::draw(f, area, b, ctx);
    }
    let chart_h = (area.height * 11 / 20).max(8);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(chart_h), Constraint::Min(4)]).areas(area);
    chart(f, top, b, ctx);
    table(f, bottom, b, ctx);
}

fn chart(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let rf = &b.data.analysis.roofline;
    let Some(dev) = rf.device.as_ref() else {
        let note = rf
            .note
            .as_ref()
            .map_or_else(|| "no device peaks".into(), crate::prose::roofline_note);
        f.render_widget(
            Paragraph::new(widgets::empty(&ctx.theme, &format!(" {note}")))
                .block(block(&ctx.theme, "roofline")),
            area,
        );
        return;
    };
    let peak = dev.bf16_tflops;
    let bw = dev.hbm_gbps / 1e3; // TB/s: TFLOP/s = AI × TB/s
    let ridge = (peak / bw).log10();
    let y = [(peak.log10() - 5.0).floor(), peak.log10() + 0.5];
    let u = rf.u;
    let points: Vec<(f64, f64, Class)> = rf
        .ops
        .iter()
        .filter_map(|o| Some((o.ai?.log10(), o.tflops?.max(1e-12).log10(), o.class)))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let title = format!(
        "roofline: {} (bf16 {:.0} TFLOP/s, HBM {:.0} GB/s, ridge {:.0} FLOP/B, U = {})",
        dev.name,
        peak,
        dev.hbm_gbps,
        peak / bw,
        u
    );
    let roofs = Roofs {
        peak_log: peak.log10(),
        bw_log: bw.log10(),
        ridge,
        u_log: u.log10(),
        y,
    };
    let canvas = Canvas::default()
        .block(block(&ctx.theme, title))
        .marker(Marker::Braille)
        .x_bounds(X)
        .y_bounds(y)
        .paint(move |c| {
            roofs.paint(c, th);
            for &(x, yv, class) in &points {
                let style = ratatui::style::Style::default()
                    .fg(th.class(class))
                    .add_modifier(Modifier::BOLD);
                c.print(
                    x.clamp(X[0], X[1]),
                    yv.clamp(y[0], y[1]),
                    Span::styled(letter(class), style),
                );
            }
        });
    f.render_widget(canvas, area);
}

/// The chart's lines in log-log space: the memory and compute roofs, the U threshold under
/// them, the ridge, and the axis labels.
#[derive(Clone, Copy)]
struct Roofs {
    /// log10 peak TFLOP/s.
    peak_log: f64,
    /// log10 bandwidth, TB/s (TFLOP/s = AI × TB/s).
    bw_log: f64,
    /// log10 of the ridge's arithmetic intensity.
    ridge: f64,
    /// log10 U.
    u_log: f64,
    /// The y bounds.
    y: [f64; 2],
}

impl Roofs {
    fn paint(&self, c: &mut ratatui::widgets::canvas::Context<'_>, th: &Theme) {
        let (roof, thr, dim) = (th.c.roof, th.c.threshold, th.c.dim);
        let (peak, ridge, ul, y) = (self.peak_log, self.ridge, self.u_log, self.y);
        let mem = |x: f64| x + self.bw_log;
        c.draw(&Line::new(X[0], mem(X[0]), ridge, peak, roof));
        c.draw(&Line::new(ridge, peak, X[1], peak, roof));
        c.draw(&Line::new(X[0], mem(X[0]) + ul, ridge, peak + ul, thr));
        c.draw(&Line::new(ridge, peak + ul, X[1], peak + ul, thr));
        c.draw(&Line::new(ridge, y[0], ridge, peak, dim));
        c.layer();
        let label = |s: String| Span::styled(s, ratatui::style::Style::default().fg(dim));
        c.print(ridge, y[0], label("ridge".into()));
        c.print(
            X[0],
            y[1],
            label(format!("TFLOP/s, log: 10^{} … 10^{:.1}", y[0], y[1])),
        );
        c.print(X[0], y[0], label("FLOP/byte, log: 0.01 … 10^4".into()));
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or("-".into(), f)
}

/// The narrowest operator column before optional columns are dropped.
const MIN_NAME: usize = 16;

/// Which optional columns fit beside an operator name of at least [`MIN_NAME`]: kernels and
/// AI go first on a narrow terminal (AI is on the chart), then the dtype.
#[derive(Clone, Copy)]
struct Columns {
    dtype: bool,
    kernels: bool,
    ai: bool,
    /// The operator column's width.
    name: usize,
}

impl Columns {
    fn fit(width: usize) -> Columns {
        // Borders, class, time, TFLOP/s, GB/s, % peak and the separators always show.
        let fixed = 2 + 16 + 9 + 9 + 9 + 8 + 1;
        // What is left beside the narrowest name goes to dtype (9), then AI (9), then
        // kernels (8): they are given up in the reverse order.
        let room = width.saturating_sub(fixed + MIN_NAME);
        let mut c = Columns {
            dtype: room >= 9,
            ai: room >= 9 + 9,
            kernels: room >= 9 + 9 + 8,
            name: 0,
        };
        let optional = 9 * c.dtype as usize + 8 * c.kernels as usize + 9 * c.ai as usize;
        c.name = width.saturating_sub(fixed + optional);
        c
    }

    fn head(&self) -> String {
        let mut h = String::new();
        if self.dtype {
            h += &format!("{} ", pad("dtype", 8));
        }
        h += &format!("{} {}", pad("class", 15), rpad("time", 8));
        if self.kernels {
            h += &format!(" {}", rpad("kernels", 7));
        }
        if self.ai {
            h += &format!(" {}", rpad("AI", 8));
        }
        h + &format!(
            " {} {} {}  operator",
            rpad("TFLOP/s", 8),
            rpad("GB/s", 8),
            rpad("% peak", 7)
        )
    }
}

fn table(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let rf = &b.data.analysis.roofline;
    let sel = b.row_of(Pane::Roofline);
    let (rows, off) = widgets::page(area, 1, sel);
    let cols = Columns::fit(area.width as usize);
    let mut lines = Vec::new();
    if rf.ops.is_empty() {
        lines.push(widgets::empty(
            th,
            " no operators with shapes or FLOP counts in the traces",
        ));
    } else {
        lines.push(TLine::from(Span::styled(cols.head(), th.dim())));
    }
    for (i, o) in rf.ops.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(row(th, o, cols, style, i == sel));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    let shares = super::pipes::class_shares(rf);
    let title = if rf.ops.is_empty() {
        format!("operators (kernel time: {shares})")
    } else {
        format!("operators (kernel time: {shares}; Enter: operator)")
    };
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}

fn row(
    th: &Theme,
    o: &OpRoof,
    cols: Columns,
    style: ratatui::style::Style,
    selected: bool,
) -> TLine<'static> {
    let peak = o
        .flops_of_peak
        .into_iter()
        .chain(o.bw_of_peak)
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
    let cstyle = if selected {
        style
    } else {
        th.fg(th.class(o.class))
    };
    let mut spans = Vec::new();
    if cols.dtype {
        let dtype = o
            .dtype
            .as_deref()
            .map_or("-", |d| d.trim_start_matches("c10::"));
        spans.push(Span::styled(format!("{} ", pad(dtype, 8)), style));
    }
    spans.push(Span::styled(pad(o.class.as_str(), 15), cstyle));
    let mut rest = format!(" {}", rpad(&human(o.time_ns), 8));
    if cols.kernels {
        rest += &format!(" {}", rpad(&o.kernels.to_string(), 7));
    }
    if cols.ai {
        rest += &format!(" {}", rpad(&opt(o.ai, |x| format!("{x:.1}")), 8));
    }
    rest += &format!(
        " {} {} {}  {}",
        rpad(&opt(o.tflops, |x| format!("{x:.2}")), 8),
        rpad(&format!("{:.0}", o.gbps), 8),
        rpad(&opt(peak, |x| format!("{:.0}%", x * 100.0)), 7),
        crate::format::fit_name(&o.op, cols.name)
    );
    spans.push(Span::styled(rest, style));
    TLine::from(spans)
}
