//! The loading screen, shown at once while traces load and the analyses run in the
//! background: per-file state, bytes and events so far, then the analysis phase. It is done
//! when the session (or the error) arrives; only quit works meanwhile.

use super::UiMsg;
use super::shell::keymap::{Action, Key};
use super::shell::theme::Theme;
use super::shell::{Click, Ctx, Screen};
use crate::error::Error;
use crate::format::fit;
use crate::input::progress::{Counters, FILE_DONE, FILE_FAILED, FILE_READING};
use crate::session::Session;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The loading screen's state.
pub struct Loading {
    /// What is being opened.
    pub title: String,
    /// One label per input.
    pub files: Vec<String>,
    /// The loaders' counters.
    pub counters: Arc<Counters>,
    /// Set once loading is done and the analyses run.
    pub analysing: Arc<AtomicBool>,
    /// When loading began.
    pub began: Instant,
    /// The loaded and analysed session, once it arrives.
    pub result: Option<Result<Session, Error>>,
}

impl Loading {
    /// A loading screen for `files`; the loader shares `counters` and `analysing`.
    pub fn new(title: String, files: Vec<String>) -> Loading {
        let counters = Arc::new(Counters::new(files.len()));
        Loading {
            title,
            files,
            counters,
            analysing: Arc::new(AtomicBool::new(false)),
            began: Instant::now(),
            result: None,
        }
    }
}

impl Screen for Loading {
    type Msg = UiMsg;

    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<UiMsg>) {
        draw(f, area, self, &ctx.theme);
    }

    fn has_footer(&self) -> bool {
        false
    }

    fn hints(&self) -> Vec<Action> {
        Vec::new()
    }

    fn commands(&self) -> Vec<Action> {
        vec![Action::Quit]
    }

    /// Every key but quit is ignored while loading.
    fn take_key(&mut self, key: Key, ctx: &mut Ctx<UiMsg>) -> bool {
        ctx.keymap.action(key) != Some(Action::Quit)
    }

    fn apply(&mut self, _: Action, _: &mut Ctx<UiMsg>) {}

    fn click(&mut self, _: Click, _: &mut Ctx<UiMsg>) -> bool {
        false
    }

    fn scroll(&mut self, _: isize, _: &mut Ctx<UiMsg>) {}

    fn receive(&mut self, m: UiMsg, _: &mut Ctx<UiMsg>) -> bool {
        match m {
            UiMsg::Loaded(r) => {
                self.result = Some(*r);
                true
            }
            UiMsg::Work(_) => false,
        }
    }

    fn refresh(&mut self, _: &mut Ctx<UiMsg>) {}

    fn tick(&self) -> Option<Duration> {
        Some(Duration::from_millis(100))
    }

    fn done(&self) -> bool {
        self.result.is_some()
    }
}

/// Draws the loading view over `area`.
fn draw(f: &mut Frame, area: Rect, l: &Loading, theme: &Theme) {
    let c = &l.counters;
    let done = c.files_done.load(Ordering::Relaxed);
    let mb = c.bytes.load(Ordering::Relaxed) as f64 / 1e6;
    let phase = if l.analysing.load(Ordering::Relaxed) {
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
                l.began.elapsed().as_secs_f64()
            ),
            theme.text(),
        )),
        Line::default(),
    ];
    let w = area.width.saturating_sub(8) as usize;
    let room = area.height.saturating_sub(6) as usize;
    // Files being read first, then the rest in natural order (rank-2 before rank-10): the
    // interesting ones stay on screen.
    let state = |i: usize| {
        c.files
            .get(i)
            .map_or(0, |s| match s.load(Ordering::Relaxed) {
                FILE_READING => 0,
                FILE_FAILED => 1,
                _ => 2,
            })
    };
    let mut order: Vec<usize> = (0..l.files.len()).collect();
    order.sort_by(|&a, &b| {
        state(a)
            .cmp(&state(b))
            .then_with(|| crate::format::natural_cmp(&l.files[a], &l.files[b]))
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::{Terminal, backend::TestBackend};

    #[test]
    fn files_are_listed_in_natural_order() {
        let names = [
            "rank-10.json",
            "rank-1.json",
            "rank-100.json",
            "rank-0.json",
            "rank-2.json",
        ];
        let l = Loading::new("job".into(), names.iter().map(|s| s.to_string()).collect());
        let mut term = Terminal::new(TestBackend::new(40, 12)).unwrap();
        let theme = Theme::builtin("dark");
        term.draw(|f| draw(f, f.area(), &l, &theme)).unwrap();
        let screen: String = term
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        let at = |n: &str| screen.find(n).unwrap_or_else(|| panic!("{n}: {screen}"));
        let order = ["rank-0.", "rank-1.", "rank-2.", "rank-10.", "rank-100."].map(at);
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{screen}");
    }
}
