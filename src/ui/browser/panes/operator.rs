//! Operator (drill-down target): count, total, mean/p50/p99 over the job and per rank — bars
//! show who is slow at it — the shapes it ran with, the args of its longest occurrence (read
//! lazily), its roofline point (on an accelerator with a kernel table: its task type, unit
//! and PMU pipe ratios instead) and its share of the critical path. Without an operator:
//! the operator list to pick from.

use super::PaneView;
use crate::analysis::operator::{OpDetail, OpTask};
use crate::analysis::ops::OpStat;
use crate::format::{fit, human, pad, rpad};
use crate::model::{Kind, Pipe};
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Level, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The operator view's state: the detail's per-rank row and scroll, and the detail and args
/// it computed.
#[derive(Debug, Clone, Default)]
pub struct OperatorState {
    /// The detail's per-rank row (the list's row is the pane's row).
    pub row: usize,
    /// The shapes-and-args scroll: (operator it is for, lines scrolled).
    pub scroll: (Option<crate::model::Sym>, u16),
    /// Operator detail of (name, step: its critical-path share is the step's).
    pub detail: Option<(crate::model::Sym, crate::model::StepNo, OpDetail)>,
    /// Args of the operator's longest occurrence: (key, value) or why not.
    pub args: Option<crate::ui::browser::args::Args>,
}

/// The operator view: an operator's detail, or the list to pick one from.
pub struct OperatorPane;

impl PaneView for OperatorPane {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        match b.level() {
            Level::Operator(op) => b
                .panes
                .operator
                .detail
                .as_ref()
                .filter(|o| o.0 == op)
                .map_or(0, |o| o.2.per_rank.len()),
            _ => list(b).len(),
        }
    }

    /// In the detail: the row's rank in the timeline, the operator selected; in the list:
    /// the row's operator.
    /// With an operator open, its list is the per-rank rows, with their own row.
    fn selected(&self, b: &Browser) -> usize {
        match b.level() {
            Level::Operator(_) => b.panes.operator.row,
            _ => b.panes.rows[Pane::Operator.index()],
        }
    }

    fn selection<'a>(&self, b: &'a mut Browser) -> &'a mut usize {
        match b.level() {
            Level::Operator(_) => &mut b.panes.operator.row,
            _ => &mut b.panes.rows[Pane::Operator.index()],
        }
    }

    fn enter(&self, b: &mut Browser, row: usize, _: &mut Ctx<UiMsg>) {
        match b.level() {
            Level::Operator(op) => {
                let rank = b
                    .panes
                    .operator
                    .detail
                    .as_ref()
                    .filter(|o| o.0 == op)
                    .and_then(|o| o.2.per_rank.get(row))
                    .map(|r| r.rank);
                if let Some(rank) = rank {
                    b.nav.pane = Pane::Timeline;
                    b.panes.timeline.view.op = Some((op, 0));
                    b.panes.timeline.view.focus_rank = Some(rank);
                }
            }
            _ => {
                if let Some(op) = list(b).get(row).map(|o| o.name) {
                    b.push(Level::Operator(op), Pane::Operator);
                }
            }
        }
    }

    /// With an operator open, PgUp/PgDn scroll its shapes and args.
    fn page(&self, b: &mut Browser, by: isize, _: &Ctx<UiMsg>) -> bool {
        let Level::Operator(op) = b.level() else {
            return false;
        };
        let next = (scroll(b) as isize + by * 4).clamp(0, u16::MAX as isize);
        b.panes.operator.scroll = (Some(op), u16::try_from(next).unwrap_or(0));
        true
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

/// The operator list without an operator: the device's operators at device level, else the
/// job's.
fn list(b: &Browser) -> &[OpStat] {
    match (b.device(), &b.panes.device.ops) {
        (Some(r), Some((cr, ops))) if r == *cr => ops,
        _ => &b.data.analysis.top_ops,
    }
}

fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    match (b.level(), &b.panes.operator.detail) {
        (Level::Operator(op), Some((o, s, d))) if (*o, Some(*s)) == (op, b.step_number()) => {
            detail(f, area, b, ctx, d)
        }
        (Level::Operator(op), _) => {
            let msg = format!(
                " computing the statistics of {} over every rank…",
                b.name(op)
            );
            f.render_widget(
                Paragraph::new(widgets::empty(&ctx.theme, &msg))
                    .block(block(&ctx.theme, "operator")),
                area,
            );
        }
        _ => {
            let ops = list(b);
            let scope = b.device().map_or("all ranks".to_string(), |r| {
                format!("rank {}", b.data.loaded.job.rank(r).id)
            });
            let title = format!(
                "operators by {} time, {scope}, all steps (Enter: open; / search)",
                b.data.analysis.op_basis.as_str().replace('_', " ")
            );
            op_list(f, area, b, ctx, ops, b.row_of(Pane::Operator), &title);
        }
    }
}

/// A table of operators by total time with the selected row highlighted.
pub fn op_list(
    f: &mut Frame,
    area: Rect,
    b: &Browser,
    ctx: &Ctx<UiMsg>,
    ops: &[OpStat],
    sel: usize,
    title: &str,
) {
    let th = &ctx.theme;
    let (rows, off) = widgets::page(area, 1, sel);
    let nw = (area.width as usize).saturating_sub(2 + 9 + 9 + 10 + 10 + 8 + 5);
    let mut lines = vec![widgets::head(
        &ctx.theme,
        format!(
            "{} {} {} {} {}  {}",
            pad("kind", 8),
            rpad("count", 8),
            rpad("total", 9),
            rpad("mean", 9),
            rpad("share", 7),
            "operator"
        ),
    )];
    for (i, o) in ops.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(Line::from(Span::styled(
            format!(
                "{} {} {} {} {}  {}",
                pad(o.kind.as_str(), 8),
                rpad(&o.count.to_string(), 8),
                rpad(&human(o.total_ns), 9),
                rpad(&human(o.mean_ns), 9),
                rpad(&format!("{:.1}%", o.share * 100.0), 7),
                crate::format::fit_name(b.name(o.name), nw)
            ),
            style,
        )));
    }
    if ops.is_empty() {
        lines.push(widgets::empty(&ctx.theme, " no operators"));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    f.render_widget(
        Paragraph::new(lines).block(block(&ctx.theme, title.to_string())),
        area,
    );
}

/// The shapes-and-args scroll of the open operator (another operator starts at the top).
fn scroll(b: &Browser) -> u16 {
    match (b.panes.operator.scroll, b.level()) {
        ((Some(s), by), Level::Operator(op)) if s == op => by,
        _ => 0,
    }
}

fn detail(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, d: &OpDetail) {
    // The kernel table's lines need room: type, dynamic, PMU and two units.
    let want = if d.task.is_some() { 14 } else { 11 };
    let top_h = want.min(area.height / 2).max(6);
    let [top, ranks] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Min(3)]).areas(area);
    let [stats, extra] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
    f.render_widget(
        Paragraph::new(stat_lines(b, &ctx.theme, d))
            .wrap(Wrap { trim: false })
            .block(block(&ctx.theme, "operator")),
        stats,
    );
    let lines = shapes_and_args(b, &ctx.theme, d, extra);
    let room = extra.height.saturating_sub(2) as usize;
    let by = scroll(b).min(u16::try_from(lines.len().saturating_sub(room)).unwrap_or(0));
    let title = match (by > 0, lines.len() > room + by as usize) {
        (false, false) => "shapes and args",
        (true, true) => "shapes and args (more above and below; PgUp/PgDn)",
        (true, false) => "shapes and args (more above; PgUp)",
        (false, true) => "shapes and args (more below; PgDn)",
    };
    f.render_widget(
        Paragraph::new(lines)
            .scroll((by, 0))
            .block(block(&ctx.theme, title)),
        extra,
    );
    per_rank(f, ranks, b, ctx, d);
}

/// Counts, durations, its share of the critical path, its roofline point.
fn stat_lines(b: &Browser, th: &Theme, d: &OpDetail) -> Vec<Line<'static>> {
    let a = &d.all;
    let mut l = vec![
        Line::from(Span::styled(
            b.name(d.name).to_string(),
            th.text().add_modifier(Modifier::BOLD),
        )),
        widgets::pairs(
            th,
            &[
                ("kind", d.kind.as_str().into()),
                ("count", a.count.to_string()),
                ("ranks", d.per_rank.len().to_string()),
            ],
        ),
        widgets::pairs(
            th,
            &[("total", human(a.total_ns)), ("mean", human(a.mean_ns))],
        ),
        widgets::pairs(
            th,
            &[
                ("p50", human(a.p50_ns)),
                ("p99", human(a.p99_ns)),
                ("max", human(a.max_ns)),
            ],
        ),
    ];
    let cp = match d.critical_share {
        Some(s) => format!(
            "{} ({:.1}% of step {}'s path)",
            human(d.critical_ns),
            s * 100.0,
            b.step_number().unwrap_or_default()
        ),
        None => "no critical path".into(),
    };
    l.push(widgets::pairs(th, &[("critical path", cp)]));
    match &d.task {
        Some(t) => l.extend(task_lines(b, th, t)),
        None => l.extend(roofline_lines(th, d)),
    }
    l
}

/// The accelerator's view of its tasks: type, unit, block dim, dynamic compiles, the PMU's
/// class and every pipe's ratio.
fn task_lines(b: &Browser, th: &Theme, t: &OpTask) -> Vec<Line<'static>> {
    let mut l = vec![widgets::pairs(
        th,
        &[
            ("type", t.op_type.map_or("-", |s| b.name(s)).to_string()),
            ("core", t.core.map_or("-", |c| c.as_str()).to_string()),
            (
                "block dim",
                t.block_dim.map_or("-".into(), |x| x.to_string()),
            ),
        ],
    )];
    if t.with_state > 0 {
        l.push(widgets::pairs(
            th,
            &[(
                "dynamic",
                format!("{} of {} tasks", t.dynamic, t.with_state),
            )],
        ));
    }
    let Some(p) = &t.pmu else {
        l.push(widgets::pairs(
            th,
            &[("PMU", "no counters recorded".into())],
        ));
        return l;
    };
    l.push(widgets::pairs(
        th,
        &[(
            "PMU",
            format!(
                "{} (busiest: {} {:.0}%)",
                p.class.as_str(),
                p.bound_pipe,
                p.bound_ratio * 100.0
            ),
        )],
    ));
    for (unit, ratios) in [("cube", p.cube), ("vector", p.vector)] {
        if let Some(r) = ratios {
            let text = Pipe::ALL
                .iter()
                .zip(r)
                .filter(|(_, x)| *x > 0.0)
                .map(|(p, x)| format!("{} {:.0}", p.as_str(), x * 100.0))
                .collect::<Vec<_>>()
                .join(" ");
            l.push(widgets::pairs(th, &[(unit, format!("{text} (%)"))]));
        }
    }
    l
}

fn roofline_lines(th: &Theme, d: &OpDetail) -> Vec<Line<'static>> {
    let Some(r) = &d.roofline else {
        return vec![widgets::pairs(
            th,
            &[("roofline", "no shapes or FLOP count".into())],
        )];
    };
    vec![
        widgets::pairs(
            th,
            &[
                ("roofline", r.class.as_str().into()),
                ("dtype", r.dtype.clone().unwrap_or("-".into())),
            ],
        ),
        widgets::pairs(
            th,
            &[
                ("AI", r.ai.map_or("-".into(), |x| format!("{x:.1} FLOP/B"))),
                (
                    "TFLOP/s",
                    r.tflops.map_or("-".into(), |x| format!("{x:.2}")),
                ),
                ("GB/s", format!("{:.0}", r.gbps)),
            ],
        ),
    ]
}

/// Why an operator shows no shapes: the trace has none, or a kernel's launching operator
/// recorded none (the shapes sit on an operator further out), or a kernel ran outside any.
fn no_shapes(b: &Browser, d: &OpDetail) -> String {
    let device = !matches!(d.kind, Kind::HostOp | Kind::Annotation | Kind::Launch);
    match (d.job_has_shapes, device, d.launcher) {
        (false, _, _) => "no shapes recorded (record_shapes=True adds them)".into(),
        (true, true, Some(l)) => format!(
            "its operator {} recorded no shapes (an outer operator may hold them)",
            b.name(l)
        ),
        (true, true, None) => "launched outside any operator: no shapes to show".into(),
        (true, false, _) => "this operator recorded no shapes (others in the trace did)".into(),
    }
}

/// The shapes it ran with and the args of its longest occurrence.
fn shapes_and_args(b: &Browser, th: &Theme, d: &OpDetail, area: Rect) -> Vec<Line<'static>> {
    let w = area.width.saturating_sub(2) as usize;
    let mut l = Vec::new();
    for s in d.shapes.iter().take(3) {
        let dims = s.dims.map_or("-", |x| b.name(x));
        let types = s.types.map_or("-", |x| b.name(x));
        l.push(Line::from(vec![
            Span::styled(format!("{}× ", s.count), th.dim()),
            Span::styled(
                fit(&format!("{dims} {types}"), w.saturating_sub(8)),
                th.text(),
            ),
        ]));
    }
    // The device task's own inputs (Ascend's kernel table): formats the operator's shapes
    // were converted to show here, so they are shown beside the operator's.
    let task_input = d.task.as_ref().and_then(|t| t.input);
    if let Some((shapes, types)) = task_input {
        let text = format!(
            "{} {}",
            shapes.map_or("-", |x| b.name(x)),
            types.map_or("-", |x| b.name(x))
        );
        l.push(Line::from(vec![
            Span::styled("task input ", th.dim()),
            Span::styled(fit(&text, w.saturating_sub(11)), th.text()),
        ]));
    } else if d.shapes.is_empty() {
        l.push(widgets::empty(th, &fit(&no_shapes(b, d), w)));
    }
    l.push(Line::from(Span::styled(
        "args of the longest occurrence:",
        th.title(),
    )));
    match &b.panes.operator.args {
        Some(Ok(args)) if !args.is_empty() => {
            // Every arg, a long value wrapped under its key (PgUp/PgDn scroll them).
            for (k, v) in args {
                let room = w.saturating_sub(k.len() + 2).max(8);
                let wrapped = crate::format::wrap(v, room, 0);
                for (i, part) in wrapped.into_iter().enumerate() {
                    let key = if i == 0 {
                        format!("{k}: ")
                    } else {
                        " ".repeat(k.len() + 2)
                    };
                    l.push(Line::from(vec![
                        Span::styled(key, th.dim()),
                        Span::styled(part, th.text()),
                    ]));
                }
            }
        }
        Some(Ok(_)) => l.push(widgets::empty(th, "no args")),
        Some(Err(e)) => l.push(widgets::empty(th, &fit(e, w))),
        None => {}
    }
    l
}

fn per_rank(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>, d: &OpDetail) {
    let th = &ctx.theme;
    let (rows, off) = widgets::page(area, 1, b.panes.operator.row);
    let max = d
        .per_rank
        .iter()
        .map(|r| r.stats.total_ns)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let bw = (area.width as usize).saturating_sub(2 + 8 + 8 + 10 * 4 + 2);
    let mut lines = vec![widgets::head(
        &ctx.theme,
        format!(
            "{} {} {} {} {} {}  total per rank",
            pad("rank", 7),
            rpad("count", 7),
            rpad("total", 9),
            rpad("mean", 9),
            rpad("p99", 9),
            rpad("max", 9)
        ),
    )];
    for (i, r) in d.per_rank.iter().enumerate().skip(off).take(rows) {
        let slow = Some(r.rank) == d.slowest_rank;
        let style = if i == b.panes.operator.row {
            th.selected()
        } else {
            th.text()
        };
        let bar_style = if slow {
            th.fg(th.c.slow)
        } else {
            th.fg(th.c.accent)
        };
        let s = &r.stats;
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "{} {} {} {} {} {}  ",
                    pad(&format!("{}{}", r.rank, if slow { " ◀" } else { "" }), 7),
                    rpad(&s.count.to_string(), 7),
                    rpad(&human(s.total_ns), 9),
                    rpad(&human(s.mean_ns), 9),
                    rpad(&human(s.p99_ns), 9),
                    rpad(&human(s.max_ns), 9)
                ),
                style,
            ),
            Span::styled(widgets::bar(s.total_ns as f64, max, bw), bar_style),
        ]));
    }
    widgets::hit_rows(ctx, area, 1, rows, off);
    let title = format!(
        "{}: {} ranks ({}; Enter: timeline)",
        if d.kind == Kind::Comm {
            "who is late to it"
        } else {
            "who is slow at it"
        },
        d.per_rank.len(),
        if d.kind == Kind::Comm {
            "◀ over 5% below the median: the late one, the others wait for it"
        } else {
            "◀ over 5% above the median"
        }
    );
    f.render_widget(Paragraph::new(lines).block(block(&ctx.theme, title)), area);
}
