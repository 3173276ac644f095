//! The hang screen (docs/tui.md "Hang"): Flight Recorder dumps in the same shell as the trace
//! browser. The verdict on top; the process groups, those left hanging first; the selected
//! group's members, each with how far it got — absent ones and waiting ones marked; Enter on a
//! member lists its last operations in that group.

mod draw;

use super::shell::keymap::{Action, Keymap};
use super::shell::theme::Theme;
use super::shell::{Click, Ctx, Screen, Shell};
use crate::model::flight::FlightEntry;
use crate::report::hang::{HangReport, build};
use crate::session::flight::Flight;
use ratatui::Frame;
use ratatui::layout::Rect;

/// The hang screen's state.
pub struct HangScreen {
    /// The dumps and their triage.
    pub flight: Flight,
    /// The report (its verdict in words).
    pub report: HangReport,
    /// The selected process group (index into the triage's groups).
    pub group: usize,
    /// The selected member of that group (index into its ranks).
    pub row: usize,
    /// Whether the selected member's operations are shown (Enter), until Back.
    pub opened: bool,
}

impl HangScreen {
    /// The screen over a job's dumps.
    pub fn new(flight: Flight) -> HangScreen {
        let report = build(&flight);
        HangScreen {
            flight,
            report,
            group: 0,
            row: 0,
            opened: false,
        }
    }

    /// The rank on the selected row.
    pub fn rank(&self) -> Option<u32> {
        let g = self.flight.hang.groups.get(self.group)?;
        g.ranks.get(self.row).copied()
    }

    /// The selected rank's operations in the selected group, newest first.
    pub fn entries(&self) -> Vec<&FlightEntry> {
        let (Some(rank), Some(g)) = (self.rank(), self.flight.hang.groups.get(self.group)) else {
            return Vec::new();
        };
        let Some(dump) = self.flight.dumps.iter().find(|d| d.rank == rank) else {
            return Vec::new();
        };
        // The rank's local names of the group: those its pg_config gives the group's
        // description and members (the triage's identity of a group).
        let names: Vec<&str> = dump
            .groups
            .iter()
            .filter(|x| x.desc == g.desc || format!("pg {}", x.name) == g.desc)
            .filter(|x| x.ranks.is_empty() || x.ranks == g.ranks)
            .map(|x| x.name.as_str())
            .collect();
        dump.entries
            .iter()
            .rev()
            .filter(|e| names.contains(&e.group.as_str()))
            .collect()
    }

    fn rows(&self) -> usize {
        self.flight
            .hang
            .groups
            .get(self.group)
            .map_or(0, |g| g.ranks.len())
    }

    fn move_by(&mut self, by: isize) {
        let n = self.rows();
        if n > 0 && !self.opened {
            self.row = (self.row as isize + by).clamp(0, n as isize - 1) as usize;
        }
    }

    fn group_by(&mut self, by: isize) {
        let n = self.flight.hang.groups.len();
        if n > 0 {
            self.group = (self.group as isize + by).rem_euclid(n as isize) as usize;
            self.row = 0;
            self.opened = false;
        }
    }
}

impl Screen for HangScreen {
    type Msg = ();

    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<()>) {
        draw::screen(f, area, self, ctx);
    }

    fn hints(&self) -> Vec<Action> {
        if self.opened {
            return vec![Action::Back, Action::Help, Action::Quit];
        }
        vec![
            Action::Up,
            Action::Down,
            Action::Enter,
            Action::NextPane,
            Action::Help,
            Action::Quit,
        ]
    }

    fn commands(&self) -> Vec<Action> {
        let mut v = vec![Action::NextPane, Action::PrevPane];
        v.extend(Action::LIST_MOVES);
        v.extend([Action::Enter, Action::Back, Action::Help, Action::Quit]);
        v
    }

    fn apply(&mut self, a: Action, _ctx: &mut Ctx<()>) {
        match a {
            Action::NextPane => self.group_by(1),
            Action::PrevPane => self.group_by(-1),
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-10),
            Action::PageDown => self.move_by(10),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Enter => self.opened = self.rank().is_some(),
            Action::Back => self.opened = false,
            _ => {}
        }
    }

    fn click(&mut self, c: Click, _ctx: &mut Ctx<()>) -> bool {
        match c {
            Click::Row(i) if i < self.rows() && !self.opened => {
                if self.row == i {
                    self.opened = true;
                }
                self.row = i;
                true
            }
            _ => false,
        }
    }

    fn scroll(&mut self, by: isize, _ctx: &mut Ctx<()>) {
        self.move_by(by);
    }
}

/// A hang screen without a terminal (tests).
pub fn headless(
    flight: Flight,
    keymap: Keymap,
    theme: Theme,
    ascii: bool,
    size: (u16, u16),
) -> Shell<HangScreen> {
    Shell::new(HangScreen::new(flight), keymap, theme, ascii, size)
}
