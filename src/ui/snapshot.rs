//! `stepscope snapshot`: one pane drawn to plain text after optional key presses — the same
//! draw code as the terminal, on ratatui's in-memory backend, so CI can diff it.

use super::app::{App, Level, Pane};
use super::keymap::Key;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

/// What to show before drawing.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The pane.
    pub view: Option<Pane>,
    /// Step number to select.
    pub step: Option<u32>,
    /// Rank id to drill into.
    pub rank: Option<u32>,
    /// Operator name to open.
    pub op: Option<String>,
    /// Keys pressed after that.
    pub keys: Vec<Key>,
}

/// Applies a setup to a fresh app; errors name what does not exist.
pub fn prepare(app: &mut App, s: &Setup) -> Result<(), String> {
    let view = s.view.unwrap_or(Pane::Overview);
    app.pane = view;
    if let Some(n) = s.step {
        app.step = app
            .data
            .steps
            .iter()
            .position(|x| *x == n)
            .ok_or_else(|| format!("no step {n}"))?;
    }
    if let Some(r) = s.rank {
        let job = &app.data.loaded.job;
        let i = job
            .ranks
            .iter()
            .position(|x| x.id == r)
            .ok_or_else(|| format!("no rank {r}"))?;
        app.push(Level::Device(i), view);
    }
    if let Some(name) = &s.op {
        let sym = app
            .data
            .loaded
            .job
            .strings
            .get(name)
            .filter(|s| app.data.names.contains(s));
        let sym =
            sym.ok_or_else(|| format!("no operator named `{name}` (search with / in the TUI)"))?;
        app.push(Level::Operator(sym), view);
    }
    app.refresh();
    for k in &s.keys {
        app.key(*k);
        if app.quit {
            break;
        }
    }
    Ok(())
}

/// Draws the app at its size and returns the screen as text (trailing spaces trimmed).
pub fn render(app: &App) -> String {
    let (w, h) = app.size;
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("in-memory backend");
    term.draw(|f| super::draw::draw(f, app))
        .expect("in-memory draw");
    text(term.backend().buffer())
}

/// A buffer as lines of text.
pub fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    let mut out = String::new();
    for row in buf.content.chunks(w.max(1)) {
        let mut line = String::new();
        for c in row {
            line.push_str(c.symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
