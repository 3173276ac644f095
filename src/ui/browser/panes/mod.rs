//! The panes of the trace browser, one unit each: what its list is, what Enter does, the
//! footer hints and commands it adds, what it needs computed before drawing, and its draw
//! (read-only over the browser). A new pane is a file here and an entry in [`view`] (and,
//! for a direct key, an action in the keymap).

pub mod advisor;
pub mod comm;
pub mod critical;
pub mod device;
pub mod operator;
pub mod overview;
mod parts;
mod raster;
pub mod roofline;
pub mod timeline;
mod timeline_nav;

use super::{Browser, Pane};
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use ratatui::Frame;
use ratatui::layout::Rect;

/// The footer hints most panes add: move, step, open.
pub const LIST_HINTS: &[Action] = &[
    Action::Down,
    Action::PrevStep,
    Action::NextStep,
    Action::Enter,
];

/// One pane.
pub trait PaneView: Sync {
    /// Rows of its list in the current state (what the selection moves over).
    fn list_len(&self, b: &Browser, ctx: &Ctx<UiMsg>) -> usize;

    /// Enter on row `row`.
    fn enter(&self, b: &mut Browser, row: usize, ctx: &mut Ctx<UiMsg>);

    /// The footer hints it adds after the global ones.
    fn hints(&self) -> &'static [Action] {
        LIST_HINTS
    }

    /// The actions only it takes (they join the help list).
    fn commands(&self) -> &'static [Action] {
        &[]
    }

    /// Applies one of its own commands.
    fn act(&self, _b: &mut Browser, _a: Action, _ctx: &mut Ctx<UiMsg>) {}

    /// Brings what it shows up to date: computed here, taken from the caches, or started in
    /// the background.
    fn prepare(&self, _b: &mut Browser, _ctx: &mut Ctx<UiMsg>) {}

    /// Work to start once its frame is on screen.
    fn after_frame(&self, _b: &mut Browser, _ctx: &mut Ctx<UiMsg>) {}

    /// Draws it into `area`.
    fn draw(&self, f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>);
}

/// The unit of a pane.
pub fn view(p: Pane) -> &'static dyn PaneView {
    match p {
        Pane::Overview => &overview::Overview,
        Pane::Timeline => &timeline::TimelinePane,
        Pane::Critical => &critical::Critical,
        Pane::Roofline => &roofline::RooflinePane,
        Pane::Advisor => &advisor::Advisor,
        Pane::Operator => &operator::OperatorPane,
        Pane::Comm => &comm::CommPane,
    }
}
