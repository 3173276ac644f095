//! What-if: the findings with what fixing each saves (the replay's, docs/metrics.md
//! "Replay"), then "ideal"; below, the selected step as measured and as replayed with the
//! selected row's fix, each rank's two rows one above the other on one time axis. Enter
//! gives the replayed step the whole pane (again: the list comes back).

use super::PaneView;
use crate::analysis::critical_path::Category;
use crate::analysis::whatif::bands::{Band, StepBands};
use crate::format::{fit, human};
use crate::ui::UiMsg;
use crate::ui::browser::work::Task;
use crate::ui::browser::{Browser, Pane};
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The what-if pane's state: whether the replayed step has the pane, and the steps it
/// measured and replayed.
#[derive(Debug, Clone, Default)]
pub struct WhatIfState {
    /// The replayed step alone (Enter toggles).
    pub zoom: bool,
    /// Steps measured and replayed, by (step, fix row); `None`: no events in the step.
    pub replay: std::collections::HashMap<(crate::model::StepNo, usize), Option<StepBands>>,
}

/// The what-if pane.
pub struct WhatIfPane;

/// The fix a list row stands for: a finding (by index) or, past them, the ideal.
pub fn row_fix(b: &Browser, row: usize) -> usize {
    row.min(b.data.analysis.findings.len())
}

impl PaneView for WhatIfPane {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        b.data.analysis.findings.len() + 1
    }

    fn enter(&self, b: &mut Browser, _row: usize, _: &mut Ctx<UiMsg>) {
        b.panes.whatif.zoom = !b.panes.whatif.zoom;
    }

    fn back(&self, b: &mut Browser, _: &mut Ctx<UiMsg>) -> bool {
        std::mem::replace(&mut b.panes.whatif.zoom, false)
    }

    fn hints(&self) -> &'static [Action] {
        &[
            Action::Down,
            Action::PrevStep,
            Action::NextStep,
            Action::Enter,
        ]
    }

    fn prepare(&self, b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
        if let Some(step) = b.step_number() {
            let fix = row_fix(b, b.row_of(Pane::WhatIf));
            b.need(Task::Replay(step, fix), ctx);
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        let th = &ctx.theme;
        let findings = &b.data.analysis.findings;
        let list_h = if b.panes.whatif.zoom {
            0
        } else {
            // Every finding and the ideal, a header and two borders.
            (findings.len() as u16 + 4).min(area.height / 2)
        };
        let [top, bottom] =
            Layout::vertical([Constraint::Length(list_h), Constraint::Min(4)]).areas(area);
        if list_h > 0 {
            list(f, top, b, ctx);
        }
        let step = b.step_number().unwrap_or_default();
        let fix = row_fix(b, b.row_of(Pane::WhatIf));
        match b.panes.whatif.replay.get(&(step, fix)) {
            Some(Some(sb)) => {
                let step_ns = b
                    .data
                    .analysis
                    .step_times
                    .iter()
                    .find(|t| t.step == sb.step)
                    .map_or(sb.measured_ns, |t| t.max_ns);
                replayed(f, bottom, th, sb, step_ns, &fix_name(b, fix))
            }
            Some(None) => empty(f, bottom, th, " no replay of this step (no events in it)"),
            None => empty(f, bottom, th, &format!(" replaying step {step}…")),
        }
    }
}

/// What a row's fix is called.
fn fix_name(b: &Browser, fix: usize) -> String {
    b.data
        .analysis
        .findings
        .get(fix)
        .map_or_else(|| "ideal (every fix)".into(), |f| format!("fix {}", f.rule))
}

fn empty(f: &mut Frame, area: Rect, th: &Theme, msg: &str) {
    f.render_widget(
        Paragraph::new(widgets::empty(th, msg)).block(block(th, "replayed step")),
        area,
    );
}

/// The findings with their savings, then the ideal.
fn list(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let a = &b.data.analysis;
    let sel = b.row_of(Pane::WhatIf);
    let (rows, first) = widgets::page(area, 1, sel);
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![widgets::head(
        th,
        format!("{:>10}  {:<7} {}", "saves Σ", "sev", "finding"),
    )];
    let ideal = a.whatif.ideal_saves();
    let n = a.findings.len();
    for i in (first..=n).take(rows) {
        let (saves, sev, title) = match a.findings.get(i) {
            Some(x) => (
                x.saves_ns
                    .map_or_else(|| format!("≈{}", human(x.impact_ns)), human),
                x.severity.as_str(),
                crate::prose::words(x).title,
            ),
            None => (human(ideal), "", "ideal: every fix at once".to_string()),
        };
        let text = format!("{saves:>10}  {sev:<7} {}", title);
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(Line::from(Span::styled(fit(&text, w), style)));
    }
    widgets::hit_rows(ctx, area, 1, rows, first);
    let title = format!(
        "what fixing it saves, Σ over the {} step(s) shown (≈: not replayed, the rule's estimate)",
        a.step_times.len()
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// The step as measured and replayed: a time axis, then per rank its two rows, then the
/// legend. `step_ns` is the step's time as every face measures it (the report's); the bands
/// are drawn on the graph's own span.
fn replayed(f: &mut Frame, area: Rect, th: &Theme, sb: &StepBands, step_ns: i64, name: &str) {
    let w = area.width.saturating_sub(2 + 9) as usize;
    let title = format!(
        "step {}: {name} saves {} of this step: measured {} → {}",
        sb.step,
        human(sb.saves_ns()),
        human(step_ns),
        human(sb.replayed_step_ns(step_ns)),
    );
    let span = sb.measured_ns.max(1);
    let mut lines = vec![widgets::head(th, axis(span, w))];
    let room = area.height.saturating_sub(4) as usize / 2;
    for r in sb.ranks.iter().take(room) {
        lines.push(row(
            th,
            &format!("r{:<4}msr ", r.rank),
            &r.measured,
            sb.start,
            span,
            w,
        ));
        lines.push(row(th, "     fix ", &r.replayed, sb.start, span, w));
    }
    lines.push(legend(th));
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// What the rows and colours mean.
fn legend<'a>(th: &Theme) -> Line<'a> {
    let mut spans = vec![Span::styled(
        "msr as measured · fix replayed with it · ".to_string(),
        th.dim(),
    )];
    for (cat, what) in [
        (Category::GpuCompute, "device "),
        (Category::Communication, "transfer "),
        (Category::Cpu, "host "),
        (Category::LaunchOverhead, "launch "),
        (Category::Wait, "wait "),
    ] {
        spans.push(Span::styled(
            glyph(th, cat).to_string(),
            th.fg(color(th, cat)),
        ));
        spans.push(Span::styled(what.to_string(), th.dim()));
    }
    spans.push(Span::styled("· blank: idle".to_string(), th.dim()));
    Line::from(spans)
}

/// The axis line: 0, the middle and the step time.
fn axis(span: i64, w: usize) -> String {
    let (mid, end) = (human(span / 2), human(span));
    let mut s = format!("{:9}0", "");
    let half = w / 2;
    while s.chars().count() < 9 + half.saturating_sub(mid.chars().count() / 2) {
        s.push(' ');
    }
    s.push_str(&mid);
    while s.chars().count() + end.chars().count() < 9 + w {
        s.push(' ');
    }
    s.push_str(&end);
    s
}

/// One row of bands: each cell the busiest category in it (device work over transfers over
/// host work over waits).
fn row<'a>(th: &Theme, label: &str, bands: &[Band], start: i64, span: i64, w: usize) -> Line<'a> {
    let mut cells: Vec<Option<Category>> = vec![None; w];
    for b in bands {
        let cell = |t: i64, up: i128| ((t - start).max(0) as i128 * w as i128 + up) / span as i128;
        let (a, z) = (
            cell(b.start, 0) as usize,
            cell(b.end, span as i128 - 1) as usize,
        );
        for c in cells.iter_mut().take(z.min(w)).skip(a.min(w)) {
            if c.is_none_or(|x| rank_of(b.cat) < rank_of(x)) {
                *c = Some(b.cat);
            }
        }
    }
    let mut spans = vec![Span::styled(label.to_string(), th.dim())];
    for c in cells {
        spans.push(match c {
            Some(cat) => Span::styled(glyph(th, cat).to_string(), th.fg(color(th, cat))),
            None => Span::raw(" "),
        });
    }
    Line::from(spans)
}

/// Which category a cell shows first.
fn rank_of(c: Category) -> u8 {
    match c {
        Category::GpuCompute => 0,
        Category::Communication => 1,
        Category::Cpu => 2,
        Category::HostGap => 3,
        Category::LaunchOverhead => 4,
        Category::Wait | Category::KernelGap => 5,
    }
}

fn color(th: &Theme, c: Category) -> Color {
    let k = &th.c;
    match c {
        Category::Cpu => k.host_bound,
        Category::HostGap | Category::KernelGap => k.free,
        Category::GpuCompute => k.compute,
        Category::Communication => k.comm,
        Category::LaunchOverhead => k.memory,
        Category::Wait => k.slow,
    }
}

fn glyph(th: &Theme, c: Category) -> char {
    if !th.mono {
        return '█';
    }
    match c {
        Category::GpuCompute => '█',
        Category::Communication => '▓',
        Category::Cpu => '▒',
        Category::HostGap => '░',
        Category::LaunchOverhead => ':',
        Category::Wait | Category::KernelGap => '·',
    }
}
