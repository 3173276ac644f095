//! Drawing the hang screen: one read-only function per region — the header and verdict,
//! the process groups, the selected group's members, a member's last operations.

use super::HangScreen;
use crate::analysis::hang::GroupState;
use crate::format::{fit, ranges};
use crate::report::hang::headline;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use crate::ui::shell::{Ctx, HitTarget};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The whole screen.
pub fn screen(f: &mut Frame, area: Rect, s: &HangScreen, ctx: &Ctx<()>) {
    let th = &ctx.theme;
    let [header, verdict, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Min(1),
    ])
    .areas(area);
    let h = &s.flight.hang;
    let title = format!(
        " hang  {} Flight Recorder dump(s), ranks {}{}",
        s.flight.dumps.len(),
        ranges(&h.dumped),
        if h.missing.is_empty() {
            String::new()
        } else {
            format!("; no dump from {}", ranges(&h.missing))
        }
    );
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            fit(&title, header.width as usize),
            th.title(),
        ))),
        header,
    );
    let words = h.verdict.as_ref().map_or_else(
        || "every process group completed every collective its members entered".to_string(),
        headline,
    );
    let style = match h.verdict {
        Some(_) => alarm(th),
        None => th.text(),
    };
    f.render_widget(
        Paragraph::new(Span::styled(words, style)).wrap(Wrap { trim: true }),
        verdict,
    );
    let [left, right] =
        Layout::horizontal([Constraint::Length(30), Constraint::Min(20)]).areas(body);
    groups(f, left, s, th);
    match s.flight.hang.groups.get(s.group) {
        Some(g) if s.opened => entries(f, right, s, g, th),
        Some(g) => members(f, right, s, g, ctx),
        None => f.render_widget(Paragraph::new("no process group recorded"), right),
    }
}

/// What draws the eye: the theme's high severity colour, bold.
fn alarm(th: &Theme) -> Style {
    Style::default()
        .fg(th.c.severity_high)
        .add_modifier(Modifier::BOLD)
}

fn warn(th: &Theme) -> Style {
    Style::default().fg(th.c.severity_medium)
}

fn groups(f: &mut Frame, area: Rect, s: &HangScreen, th: &Theme) {
    let w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = s
        .flight
        .hang
        .groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            // `!` members absent, `≠` a desync, `~` something left open.
            let mark = match &g.stuck {
                _ if !g.mismatches.is_empty() => "≠",
                Some(x) if !x.absent.is_empty() => "!",
                Some(_) => "~",
                None if !g.open_p2p.is_empty() => "~",
                None => " ",
            };
            let text = fit(&format!("{mark} {} ({})", g.desc, ranges(&g.ranks)), w);
            let style = if k == s.group {
                th.selected()
            } else if mark == " " {
                th.text()
            } else {
                warn(th)
            };
            Line::from(Span::styled(text, style))
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(block(th, "process groups (Tab)")),
        area,
    );
}

fn members(f: &mut Frame, area: Rect, s: &HangScreen, g: &GroupState, ctx: &Ctx<()>) {
    let th = &ctx.theme;
    let (rows, first) = widgets::page(area, 1, s.row);
    let seq = |x: Option<u64>| x.map_or_else(|| "-".into(), |v| format!("#{v}"));
    let mut lines = vec![widgets::head(
        th,
        format!(
            "{:>6}  {:>12}  {:>14}  state",
            "rank", "last entered", "last completed"
        ),
    )];
    for (k, &rank) in g.ranks.iter().enumerate().skip(first).take(rows) {
        let m = g.members.iter().find(|m| m.rank == rank);
        let stuck = g.stuck.as_ref();
        let open = g.open_p2p.iter().any(|p| p.rank == rank);
        let (state, style) = match (m, stuck) {
            (None, _) => ("no dump", warn(th)),
            (Some(_), Some(x)) if x.absent.contains(&rank) => ("absent", alarm(th)),
            (Some(_), Some(x)) if x.waiting.contains(&rank) => ("waiting", warn(th)),
            _ if open => ("p2p open", warn(th)),
            _ => ("", th.text()),
        };
        let text = format!(
            "{rank:>6}  {:>12}  {:>14}  {state}",
            seq(m.and_then(|m| m.last_entered)),
            seq(m.and_then(|m| m.last_completed)),
        );
        let style = if k == s.row { th.selected() } else { style };
        lines.push(Line::from(Span::styled(
            fit(&text, area.width.saturating_sub(2) as usize),
            style,
        )));
    }
    let title = match &g.stuck {
        Some(x) => format!(
            "{}: stuck at {} #{} (Enter: a member's operations)",
            g.desc, x.op, x.seq
        ),
        None => format!(
            "{}: last collective #{} (Enter: a member's operations)",
            g.desc, g.last_seq
        ),
    };
    let inner = Rect {
        y: area.y + 2,
        height: area.height.saturating_sub(3),
        ..area
    };
    ctx.hit(inner, HitTarget::Rows(first));
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

fn entries(f: &mut Frame, area: Rect, s: &HangScreen, g: &GroupState, th: &Theme) {
    let w = area.width.saturating_sub(2) as usize;
    let mut lines = vec![widgets::head(
        th,
        format!("{:>8}  {:<10} {}", "seq", "state", "operation"),
    )];
    for e in s.entries() {
        let seq = if e.is_p2p {
            format!("p2p {}", e.p2p_seq)
        } else {
            format!("#{}", e.seq)
        };
        let text = format!(
            "{seq:>8}  {:<10} {} {:?} {}",
            e.state.as_str(),
            e.op,
            e.input_sizes,
            e.input_dtypes.join(",")
        );
        let style = match e.state {
            crate::model::flight::FlightState::Completed => th.text(),
            _ => warn(th),
        };
        lines.push(Line::from(Span::styled(fit(&text, w), style)));
    }
    if lines.len() == 1 {
        lines.push(Line::from(Span::styled(
            "no operation recorded in this group",
            th.dim(),
        )));
    }
    let title = format!(
        "rank {} in {}: its operations, newest first (Esc: back)",
        s.rank().unwrap_or(0),
        g.desc
    );
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}
