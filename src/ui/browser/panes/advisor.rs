//! Advisor: findings by impact (severity first) on the left; the selected finding's evidence,
//! cause and suggestions on the right. Enter opens the evidence.

use super::PaneView;
use crate::analysis::advisor::{Finding, Severity, proof};
use crate::format::{fit, human};
use crate::prose::Words;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Pane, jumps};
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The advisor's state beyond its row: the detail's scroll.
#[derive(Debug, Clone, Copy, Default)]
pub struct AdvisorState {
    /// The detail scroll: (finding row it is for, lines scrolled).
    pub scroll: (usize, u16),
}

/// The findings and the selected one's evidence.
pub struct Advisor;

impl PaneView for Advisor {
    fn list_len(&self, b: &Browser, _: &Ctx<UiMsg>) -> usize {
        b.data.analysis.findings.len()
    }

    fn enter(&self, b: &mut Browser, row: usize, ctx: &mut Ctx<UiMsg>) {
        let from = b.place();
        evidence(b, row, ctx);
        b.jumped(from);
    }

    fn hints(&self) -> &'static [Action] {
        &[
            Action::Down,
            Action::PageDown,
            Action::PrevStep,
            Action::NextStep,
            Action::Enter,
        ]
    }

    /// PgUp/PgDn scroll the selected finding's detail (cause and fix below the fold).
    fn page(&self, b: &mut Browser, by: isize, ctx: &Ctx<UiMsg>) -> bool {
        let row = b.row_of(Pane::Advisor);
        // The detail's width at this terminal size (the layout's 55%, less the borders).
        let w = (ctx.size.0 as usize * 55 / 100).saturating_sub(2);
        let last = detail(&ctx.theme, b, row).map_or(0, |l| last_line(&l, w));
        let now = scroll(b) as isize;
        let next = (now + by * DETAIL_PAGE as isize).clamp(0, last as isize);
        b.panes.advisor.scroll = (row, u16::try_from(next).unwrap_or(u16::MAX));
        true
    }

    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
        draw(f, area, b, ctx);
    }
}

/// Lines PgUp/PgDn scroll the detail by.
const DETAIL_PAGE: u16 = 8;

/// The detail's scroll for the selected finding (a new selection starts at the top).
fn scroll(b: &Browser) -> u16 {
    let (row, by) = b.panes.advisor.scroll;
    if row == b.row_of(Pane::Advisor) {
        by
    } else {
        0
    }
}

/// Opens a finding's proof: the view and selection its focus resolves to.
fn evidence(b: &mut Browser, row: usize, ctx: &mut Ctx<UiMsg>) {
    let data = b.data.clone();
    let Some(f) = data.analysis.findings.get(row) else {
        return;
    };
    let target = proof::land(&data.loaded.job, &data.analysis, f);
    jumps::open(b, target, ctx);
}

/// The detail text of finding `row`.
fn detail(th: &Theme, b: &Browser, row: usize) -> Option<Vec<Line<'static>>> {
    let x = b.data.analysis.findings.get(row)?;
    Some(detail_lines(th, x, &b.shared.words[row]))
}

/// The last line the detail may scroll to: its wrapped lines (counted by width) less one.
fn last_line(body: &[Line], w: usize) -> usize {
    let w = w.max(1);
    body.iter()
        .map(|l| l.width().div_ceil(w).max(1))
        .sum::<usize>()
        .saturating_sub(1)
}

/// The style of a severity label.
pub fn severity_style(theme: &Theme, s: Severity) -> Style {
    let c = &theme.c;
    let color = match s {
        Severity::High => c.severity_high,
        Severity::Medium => c.severity_medium,
        Severity::Low => c.severity_low,
    };
    Style::default().fg(color).add_modifier(Modifier::BOLD)
}

fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let findings = &b.data.analysis.findings;
    let [list, detail] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);
    let rows = list.height.saturating_sub(2) as usize;
    let sel = b.row_of(Pane::Advisor);
    let off = widgets::offset(sel, rows);
    let w = list.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (i, x) in findings.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<6} ", x.severity.as_str().to_uppercase()),
                severity_style(th, x.severity),
            ),
            Span::styled(fit(&b.shared.words[i].title, w.saturating_sub(7)), style),
        ]));
    }
    if findings.is_empty() {
        lines.push(widgets::empty(
            th,
            " no findings: no rule fired on this job",
        ));
    }
    widgets::hit_rows(ctx, list, 0, rows, off);
    let title = format!("{} findings, largest impact first", findings.len());
    f.render_widget(Paragraph::new(lines).block(block(th, title)), list);
    let body = self::detail(th, b, sel).unwrap_or_default();
    let last = last_line(&body, detail.width.saturating_sub(2) as usize);
    let text = Paragraph::new(body).wrap(Wrap { trim: false });
    let by = scroll(b).min(u16::try_from(last).unwrap_or(u16::MAX));
    let title = if by > 0 {
        "finding (↑ more above; PgUp/PgDn scroll; Enter: open the evidence)"
    } else {
        "finding (PgUp/PgDn scroll; Enter: open the evidence)"
    };
    f.render_widget(text.scroll((by, 0)).block(block(th, title)), detail);
}

fn detail_lines(th: &Theme, x: &Finding, w: &Words) -> Vec<Line<'static>> {
    let head = |s: &str| Line::from(Span::styled(s.to_string(), th.title()));
    let mut l = vec![
        Line::from(Span::styled(
            w.title.clone(),
            th.text().add_modifier(Modifier::BOLD),
        )),
        widgets::pairs(
            th,
            &[
                ("severity", x.severity.as_str().to_string()),
                ("category", x.category.as_str().to_string()),
                ("rule", x.rule.to_string()),
            ],
        ),
        widgets::pairs(
            th,
            &[(
                "impact",
                format!(
                    "{} ({:.1}% of step time)",
                    human(x.impact_ns),
                    x.impact_pct * 100.0
                ),
            )],
        ),
        Line::default(),
        head("evidence"),
    ];
    let e = &x.evidence;
    if !e.ranks.is_empty() {
        l.push(widgets::pairs(
            th,
            &[("ranks", crate::format::ranges(&e.ranks))],
        ));
    }
    if !e.steps.is_empty() {
        l.push(widgets::pairs(
            th,
            &[("steps", crate::format::ranges(&e.steps))],
        ));
    }
    if !e.ops.is_empty() {
        l.push(widgets::pairs(th, &[("operators", e.ops.join(", "))]));
    }
    for (k, v) in &e.numbers {
        let (label, text) = crate::prose::evidence_number(k, *v);
        l.push(widgets::pairs(th, &[(&label, text)]));
    }
    if !x.folded.is_empty() {
        l.push(Line::default());
        l.push(head("also explains"));
        for s in &x.folded {
            l.push(Line::from(vec![
                Span::styled("• ", th.fg(th.c.accent)),
                Span::styled(crate::prose::claim_words(&s.claim).title, th.text()),
                Span::styled(format!(" [{}]", s.rule), th.dim()),
            ]));
        }
    }
    l.push(Line::default());
    l.push(head("cause"));
    l.push(Line::from(Span::styled(w.cause, th.text())));
    l.push(Line::default());
    l.push(head("what to change"));
    for s in w.suggestions {
        l.push(Line::from(vec![
            Span::styled("• ", th.fg(th.c.accent)),
            Span::styled(*s, th.text()),
        ]));
    }
    l
}
