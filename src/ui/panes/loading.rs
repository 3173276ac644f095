//! The loading view, shown at once while traces load and the analyses run in the background:
//! per-file state, bytes and events so far, then the analysis phase.

use crate::ingest::progress::{Counters, FILE_DONE, FILE_FAILED, FILE_READING};
use crate::ui::theme::Theme;
use crate::ui::widgets::fit;
use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::sync::atomic::Ordering;

/// What the loading view shows.
pub struct Loading<'a> {
    /// What is being opened.
    pub title: &'a str,
    /// One label per input file.
    pub files: &'a [String],
    /// The loaders' counters.
    pub counters: &'a Counters,
    /// True once loading is done and the analyses run.
    pub analysing: bool,
    /// Seconds since the start.
    pub elapsed: f64,
}

/// Draws the loading view over the whole screen.
pub fn draw(f: &mut Frame, l: &Loading<'_>, theme: &Theme) {
    let area = f.area();
    let c = l.counters;
    let done = c.files_done.load(Ordering::Relaxed);
    let mb = c.bytes.load(Ordering::Relaxed) as f64 / 1e6;
    let phase = if l.analysing {
        "analysing (steps, comm, critical path, roofline, advisor)…"
    } else {
        "loading…"
    };
    let mut lines = vec![
        Line::from(Span::styled(format!(" {phase}"), theme.title())),
        Line::from(Span::styled(
            format!(
                " {done}/{} files, {mb:.0} MB, {} events, {:.1} s",
                l.files.len(),
                c.events.load(Ordering::Relaxed),
                l.elapsed
            ),
            theme.text(),
        )),
        Line::default(),
    ];
    let w = area.width.saturating_sub(8) as usize;
    let room = area.height.saturating_sub(6) as usize;
    // Files being read first, then the rest in order: the interesting ones stay on screen.
    let mut order: Vec<usize> = (0..l.files.len()).collect();
    order.sort_by_key(|&i| {
        c.files
            .get(i)
            .map_or(0, |s| match s.load(Ordering::Relaxed) {
                FILE_READING => 0,
                FILE_FAILED => 1,
                _ => 2,
            })
    });
    for &i in order.iter().take(room) {
        let (mark, style) = match c.files.get(i).map(|s| s.load(Ordering::Relaxed)) {
            Some(FILE_READING) => ("▸", theme.fg(theme.c.accent)),
            Some(FILE_DONE) => ("✓", theme.fg(theme.c.compute)),
            Some(FILE_FAILED) => ("✗", theme.fg(theme.c.slow)),
            _ => ("·", theme.dim()),
        };
        lines.push(Line::from(vec![
            Span::styled(format!(" {mark} "), style),
            Span::styled(fit(&l.files[i], w), theme.text()),
        ]));
    }
    if l.files.len() > room {
        lines.push(Line::from(Span::styled(
            format!(" … {} more", l.files.len() - room),
            theme.dim(),
        )));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(
            format!(" stepscope: {} ", l.title),
            theme.title(),
        ));
    f.render_widget(Paragraph::new(lines).block(block), area);
}
