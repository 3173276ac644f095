//! Advisor: findings by impact (severity first) on the left; the selected finding's evidence,
//! cause and suggestions on the right. Enter opens the evidence.

use crate::analysis::advisor::{Finding, Severity};
use crate::time::human;
use crate::ui::app::{App, Pane};
use crate::ui::widgets::{self, block, fit};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The style of a severity label.
pub fn severity_style(app: &App, s: Severity) -> Style {
    let c = &app.theme.c;
    let color = match s {
        Severity::High => c.severity_high,
        Severity::Medium => c.severity_medium,
        Severity::Low => c.severity_low,
    };
    Style::default().fg(color).add_modifier(Modifier::BOLD)
}

/// Draws the advisor pane.
pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let findings = &app.data.analysis.findings;
    let [list, detail] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);
    let rows = list.height.saturating_sub(2) as usize;
    let sel = app.row_of(Pane::Advisor);
    let off = widgets::offset(sel, rows);
    let w = list.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (i, x) in findings.iter().enumerate().skip(off).take(rows) {
        let style = if i == sel { th.selected() } else { th.text() };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<6} ", x.severity.as_str().to_uppercase()),
                severity_style(app, x.severity),
            ),
            Span::styled(fit(&x.title, w.saturating_sub(7)), style),
        ]));
    }
    if findings.is_empty() {
        lines.push(widgets::empty(
            app,
            " no findings: no rule fired on this job",
        ));
    }
    widgets::hit_rows(app, list, 0, rows, off);
    let title = format!("{} findings, largest impact first", findings.len());
    f.render_widget(Paragraph::new(lines).block(block(app, title)), list);
    let body = findings
        .get(sel)
        .map(|x| detail_lines(app, x))
        .unwrap_or_default();
    f.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .block(block(app, "finding (Enter: open the evidence)")),
        detail,
    );
}

fn detail_lines(app: &App, x: &Finding) -> Vec<Line<'static>> {
    let th = &app.theme;
    let head = |s: &str| Line::from(Span::styled(s.to_string(), th.title()));
    let mut l = vec![
        Line::from(Span::styled(
            x.title.clone(),
            th.text().add_modifier(Modifier::BOLD),
        )),
        widgets::pairs(
            app,
            &[
                ("severity", x.severity.as_str().to_string()),
                ("category", x.category.as_str().to_string()),
                ("rule", x.rule.to_string()),
            ],
        ),
        widgets::pairs(
            app,
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
        l.push(widgets::pairs(app, &[("ranks", widgets::ranges(&e.ranks))]));
    }
    if !e.steps.is_empty() {
        l.push(widgets::pairs(app, &[("steps", widgets::ranges(&e.steps))]));
    }
    if !e.ops.is_empty() {
        l.push(widgets::pairs(app, &[("operators", e.ops.join(", "))]));
    }
    for (k, v) in &e.numbers {
        let text = if k.ends_with("_ns") {
            human(*v as i64)
        } else if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.3}")
        };
        l.push(widgets::pairs(app, &[(k, text)]));
    }
    l.push(Line::default());
    l.push(head("cause"));
    l.push(Line::from(Span::styled(x.cause.clone(), th.text())));
    l.push(Line::default());
    l.push(head("what to change"));
    for s in &x.suggestions {
        l.push(Line::from(vec![
            Span::styled("• ", th.fg(th.c.accent)),
            Span::styled(s.clone(), th.text()),
        ]));
    }
    l
}
