//! The live screen of `stepscope watch` (docs/tui.md "Watch"): the same shell, theme, keymap
//! and help as the trace browser. A worker thread runs the watch engine and sends a
//! [`WatchView`] at most [`crate::session::watch::live::PUBLISH`] apart, so the screen redraws at most
//! four times a second however fast lines arrive; drawing only reads the view.

mod draw;
pub mod view;

use super::shell::keymap::Action;
use super::shell::{Click, Ctx, Screen};
use crate::ui::watch::view::WatchView;
use ratatui::Frame;
use ratatui::layout::Rect;

/// The live screen's state: the latest view and what the user selected.
#[derive(Default)]
pub struct WatchScreen {
    /// What the engine last published.
    pub view: Box<WatchView>,
    /// The selected alert (an index into `view.alerts`); `None` follows the newest.
    pub selected: Option<usize>,
    /// The selected alert's source lines are open.
    pub open: bool,
}

impl WatchScreen {
    /// The selected alert's index, following the newest until the user moves.
    pub fn selection(&self) -> Option<usize> {
        let n = self.view.alerts.len();
        (n > 0).then(|| self.selected.unwrap_or(n - 1).min(n - 1))
    }

    fn move_by(&mut self, by: isize) {
        let n = self.view.alerts.len();
        if let Some(cur) = self.selection() {
            let next = (cur as isize + by).clamp(0, n as isize - 1) as usize;
            // Back on the newest: follow new alerts again.
            self.selected = (next + 1 != n).then_some(next);
        }
    }
}

impl Screen for WatchScreen {
    type Msg = Box<WatchView>;

    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<Self::Msg>) {
        draw::screen(f, area, self, ctx);
    }

    fn hints(&self) -> Vec<Action> {
        if self.open {
            vec![Action::Back, Action::Help, Action::Quit]
        } else {
            vec![
                Action::Up,
                Action::Down,
                Action::Enter,
                Action::Bottom,
                Action::Help,
                Action::Quit,
            ]
        }
    }

    fn commands(&self) -> Vec<Action> {
        let mut v = Action::LIST_MOVES.to_vec();
        v.extend([Action::Enter, Action::Back, Action::Help, Action::Quit]);
        v
    }

    fn apply(&mut self, a: Action, _ctx: &mut Ctx<Self::Msg>) {
        match a {
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-10),
            Action::PageDown => self.move_by(10),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.selected = None,
            Action::Enter => self.open = self.selection().is_some(),
            Action::Back => self.open = false,
            _ => {}
        }
    }

    fn click(&mut self, c: Click, _ctx: &mut Ctx<Self::Msg>) -> bool {
        match c {
            Click::Row(i) if i < self.view.alerts.len() => {
                if self.selection() == Some(i) {
                    self.open = true;
                }
                self.selected = (i + 1 != self.view.alerts.len()).then_some(i);
                true
            }
            _ => false,
        }
    }

    fn scroll(&mut self, by: isize, _ctx: &mut Ctx<Self::Msg>) {
        self.move_by(by);
    }

    fn receive(&mut self, m: Box<WatchView>, _ctx: &mut Ctx<Self::Msg>) -> bool {
        // Keep the same alert selected as the list grows, groups and drops old ones.
        let key = |r: &crate::session::watch::engine::Raised| {
            let a = &r.alert;
            (a.rule, a.steps.clone(), a.devices.clone(), r.source.clone())
        };
        let was = self.selected.and_then(|i| self.view.alerts.get(i)).map(key);
        self.view = m;
        if let Some(k) = was {
            let n = self.view.alerts.len();
            let at = self.view.alerts.iter().position(|r| key(r) == k);
            self.selected = at.filter(|&i| i + 1 != n);
        }
        true
    }

    fn refresh(&mut self, _ctx: &mut Ctx<Self::Msg>) {}
}
