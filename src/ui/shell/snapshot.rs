//! A screen drawn to plain text — the same draw code as the terminal, on ratatui's in-memory
//! backend — for `stepscope snapshot`, the pane snapshots of the tests, and the frame
//! benchmarks.

use super::{Screen, Shell};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

/// Draws the shell at its size and returns the screen as text (trailing spaces trimmed).
pub fn render<S: Screen>(shell: &Shell<S>) -> String {
    text(drawn(shell).backend().buffer())
}

/// An in-memory terminal of the shell's size with one frame drawn.
fn drawn<S: Screen>(shell: &Shell<S>) -> Terminal<TestBackend> {
    let (w, h) = shell.ctx.size;
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("in-memory backend");
    term.draw(|f| shell.draw(f)).expect("in-memory draw");
    term
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
