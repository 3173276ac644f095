//! The terminal: raw mode, the alternate screen, mouse capture — and putting all of it back
//! on every way out, a panic included.

use crate::error::Error;
use ratatui::Terminal;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::prelude::CrosstermBackend;
use std::io::Stdout;

/// The terminal stepscope draws on.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Puts the terminal back: mouse off, main screen, cooked mode, cursor shown.
fn restore(mouse: bool) {
    let mut out = std::io::stdout();
    if mouse {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
}

/// Restores the terminal when dropped (normal exit, error, early return).
pub struct Guard {
    mouse: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore(self.mouse);
    }
}

/// Sets the terminal up; the guard restores it, and so does a panic (the previous panic hook
/// runs after, so the message is printed on the restored screen).
pub fn setup(mouse: bool) -> Result<(Guard, Term), Error> {
    let fail = |e: std::io::Error| Error::terminal(e.to_string());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore(mouse);
        hook(info);
    }));
    enable_raw_mode().map_err(fail)?;
    let guard = Guard { mouse };
    let mut out = std::io::stdout();
    execute!(out, EnterAlternateScreen).map_err(fail)?;
    if mouse {
        execute!(out, EnableMouseCapture).map_err(fail)?;
    }
    let mut term = Terminal::new(CrosstermBackend::new(out)).map_err(fail)?;
    term.hide_cursor().map_err(fail)?;
    term.clear().map_err(fail)?;
    Ok((guard, term))
}
