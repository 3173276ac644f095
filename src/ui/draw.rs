//! The frame: header (job, ranks, device, step, breadcrumb), pane tabs, the pane, footer
//! hints from the keymap; the help and search overlays; the ASCII fold for `--ascii`.

use super::app::{App, Level, Pane};
use super::keymap::Action;
use super::panes;
use super::widgets::fit;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &App) {
    let [header, tabs, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header_line(app, header.width)), header);
    app.hits.borrow_mut().clear();
    f.render_widget(Paragraph::new(tab_line(app)), tabs);
    let mut x = tabs.x;
    for (i, p) in Pane::ALL.iter().enumerate() {
        let w = format!(" {} {} ", i + 1, p.name()).len() as u16;
        app.hit(
            Rect::new(x, tabs.y, w.min(tabs.right().saturating_sub(x)), 1),
            super::HitTarget::Tab(*p),
        );
        x += w;
    }
    match (app.pane, app.level()) {
        (Pane::Overview, Level::Device(r)) => panes::device::draw(f, body, app, r),
        (Pane::Overview, _) => panes::overview::draw(f, body, app),
        (Pane::Timeline, _) => panes::timeline::draw(f, body, app),
        (Pane::Critical, _) => panes::critical::draw(f, body, app),
        (Pane::Roofline, _) => panes::roofline::draw(f, body, app),
        (Pane::Advisor, _) => panes::advisor::draw(f, body, app),
        (Pane::Operator, _) => panes::operator::draw(f, body, app),
        (Pane::Comm, _) => panes::comm::draw(f, body, app),
    }
    f.render_widget(Paragraph::new(footer_line(app)), footer);
    if app.search.typing {
        search_overlay(f, body, app);
    }
    if app.help {
        help_overlay(f, body, app);
    }
    if app.ascii {
        fold_ascii(f.buffer_mut());
    }
}

/// `cluster › rank 5 › aten::mm`.
pub fn breadcrumb(app: &App) -> String {
    let job = &app.data.loaded.job;
    let mut parts = vec!["cluster".to_string()];
    for (l, _) in &app.stack[1..] {
        match l {
            Level::Device(r) => parts.push(format!("rank {}", job.ranks[*r].id)),
            Level::Operator(s) => parts.push(fit(app.name(*s), 40)),
            Level::Cluster => {}
        }
    }
    parts.join(" › ")
}

fn header_line(app: &App, width: u16) -> Line<'static> {
    let job = &app.data.loaded.job;
    let t = &app.theme;
    let style = t.fg(t.c.header_fg).bg(t.c.header_bg);
    let device = app
        .data
        .analysis
        .roofline
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .or_else(|| app.data.analysis.roofline.device_name.clone())
        .unwrap_or_else(|| "device ?".into());
    let step = app.step_number().map_or("-".into(), |s| {
        let slow = app.data.analysis.slow_steps.iter().any(|x| x.step == s);
        format!("step {s}{}", if slow { " (slow)" } else { "" })
    });
    let skipped = match app.data.loaded.skipped.len() {
        0 => String::new(),
        n => format!(" │ {n} skipped"),
    };
    let text = format!(
        " stepscope │ {} │ {} ranks │ {} │ {} of {}{} │ {}",
        app.data.title,
        job.ranks.len(),
        device,
        step,
        app.data.steps.len(),
        skipped,
        breadcrumb(app)
    );
    let text = format!("{:<w$}", fit(&text, width as usize), w = width as usize);
    Line::from(Span::styled(text, style.add_modifier(Modifier::BOLD)))
}

fn tab_line(app: &App) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, p) in Pane::ALL.iter().enumerate() {
        let label = format!(" {} {} ", i + 1, p.name());
        let style = if *p == app.pane {
            app.theme.selected()
        } else {
            app.theme.dim()
        };
        spans.push(Span::styled(label, style));
    }
    Line::from(spans)
}

/// Actions hinted in the footer of each pane (keys and words come from the keymap).
fn hints(app: &App) -> Vec<Action> {
    let mut v = vec![Action::Help, Action::Quit, Action::NextPane, Action::Search];
    v.extend(match app.pane {
        Pane::Timeline => vec![
            Action::ZoomIn,
            Action::ZoomOut,
            Action::PanLeft,
            Action::NextOfKind,
            Action::PrevStep,
            Action::NextStep,
            Action::Enter,
        ],
        Pane::Comm => vec![Action::CycleMetric, Action::Enter],
        _ => vec![
            Action::Down,
            Action::PrevStep,
            Action::NextStep,
            Action::Enter,
        ],
    });
    if app.stack.len() > 1 || app.tl.expanded.is_some() {
        v.insert(2, Action::Back);
    }
    v
}

fn footer_line(app: &App) -> Line<'static> {
    let t = &app.theme;
    if let Some(msg) = &app.status {
        return Line::from(Span::styled(format!(" {msg}"), t.fg(t.c.accent)));
    }
    let mut spans = Vec::new();
    for a in hints(app) {
        let b = app.keymap.binding(a);
        spans.push(Span::styled(
            format!(" {}", app.keymap.key_of(a)),
            t.fg(t.c.accent),
        ));
        spans.push(Span::styled(format!(" {} ", b.desc), t.dim()));
    }
    Line::from(spans)
}

/// A rectangle centred in `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn help_overlay(f: &mut Frame, area: Rect, app: &App) {
    let rows = app.keymap.bindings.len().div_ceil(2) as u16;
    let r = centered(area, 96, rows + 4);
    let cols = Layout::horizontal([Constraint::Ratio(1, 2); 2]).split(Rect::new(
        r.x + 1,
        r.y + 2,
        r.width.saturating_sub(2),
        r.height.saturating_sub(3),
    ));
    f.render_widget(Clear, r);
    f.render_widget(super::widgets::block(app, "keys (any key closes)"), r);
    let intro = Line::from(Span::styled(
        " keymaps/default.toml; override in ~/.config/stepscope/keymaps/default.toml",
        app.theme.dim(),
    ));
    f.render_widget(
        Paragraph::new(intro),
        Rect::new(r.x + 1, r.y + 1, r.width.saturating_sub(2), 1),
    );
    let half = app.keymap.bindings.len().div_ceil(2);
    for (c, chunk) in app.keymap.bindings.chunks(half).enumerate() {
        let kw = 16usize;
        let lines: Vec<Line> = chunk
            .iter()
            .map(|b| {
                Line::from(vec![
                    Span::styled(
                        format!(" {:<kw$}", fit(&b.keys.join(" "), kw)),
                        app.theme.fg(app.theme.c.accent),
                    ),
                    Span::styled(b.desc.clone(), app.theme.text()),
                ])
            })
            .collect();
        f.render_widget(Paragraph::new(lines), cols[c]);
    }
}

fn search_overlay(f: &mut Frame, area: Rect, app: &App) {
    let shown = app.search.results.len().min(10) as u16;
    let h = shown + 3;
    let r = Rect::new(
        area.x,
        area.y + area.height.saturating_sub(h),
        area.width,
        h.min(area.height),
    );
    f.render_widget(Clear, r);
    let title = format!("search operators: {} match(es)", app.search.results.len());
    f.render_widget(super::widgets::block(app, title), r);
    let mut lines = vec![Line::from(vec![
        Span::styled(" /", app.theme.fg(app.theme.c.accent)),
        Span::styled(format!("{}▏", app.search.query), app.theme.text()),
    ])];
    let off = super::widgets::offset(app.search.cursor, shown as usize);
    for (i, s) in app
        .search
        .results
        .iter()
        .enumerate()
        .skip(off)
        .take(shown as usize)
    {
        let style = if i == app.search.cursor {
            app.theme.selected()
        } else {
            app.theme.text()
        };
        lines.push(Line::from(Span::styled(
            format!(
                " {}",
                fit(app.name(*s), (r.width as usize).saturating_sub(3))
            ),
            style,
        )));
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

/// Replaces every non-ASCII glyph with an ASCII look-alike (`--ascii`).
pub fn fold_ascii(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let s = cell.symbol();
        if s.is_ascii() {
            continue;
        }
        let c = s.chars().next().unwrap_or(' ');
        let a = match c {
            '─' | '━' | '╌' | '┄' => "-",
            '│' | '┃' | '╎' | '┆' => "|",
            '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╰' | '╯' => {
                "+"
            }
            '█' | '▉' | '▊' | '▋' | '▌' | '▐' | '▓' => "#",
            '▍' | '▎' | '▏' | '▕' => "|",
            '▒' => ":",
            '░' | '·' => ".",
            '▁' | '▂' | '▃' | '▄' => "_",
            '▅' | '▆' | '▇' | '▀' | '▔' => "=",
            '›' | '▶' | '→' => ">",
            '◀' | '←' => "<",
            '…' => "~",
            'µ' => "u",
            '•' | '●' => "*",
            '╲' => "\\",
            '✓' => "+",
            '✗' | '╳' => "x",
            '▸' => ">",
            '┊' => "|",
            'Δ' => "d",
            '▚' => "%",
            '╱' => "/",
            '×' => "x",
            '≥' => ">",
            '≤' => "<",
            c if ('\u{2800}'..='\u{28ff}').contains(&c) => ".",
            _ => "?",
        };
        cell.set_symbol(a);
    }
}
