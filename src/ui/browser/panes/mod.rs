//! The panes of the trace browser, one unit each: what its list is, what Enter does, the
//! footer hints and commands it adds, what it needs computed before drawing, and its draw
//! (read-only over the browser). A new pane is a file here, a [`Pane`] variant with its name,
//! and its unit in [`view`] (for a direct key, also an action in the keymap).

pub mod advisor;
pub mod comm;
pub mod critical;
pub mod device;
pub mod inspector;
pub mod operator;
pub mod overview;
mod parts;
mod pipes;
mod raster;
pub mod roofline;
pub mod timeline;
mod timeline_cursor;
mod timeline_nav;
mod transports;

use super::Browser;
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use ratatui::Frame;
use ratatui::layout::Rect;

/// The panes, in `Tab` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Step chart, heat map, breakdown bars, top findings (device level: the device view).
    Overview,
    /// Marey bands of the selected step.
    Timeline,
    /// The critical path of the selected step.
    Critical,
    /// Roofline chart and table.
    Roofline,
    /// Findings, largest impact first, with their evidence, cause and what to change.
    Advisor,
    /// Operator list / operator detail.
    Operator,
    /// Communication matrix and per-rank collectives.
    Comm,
}

impl Pane {
    /// Every pane, in order.
    pub const ALL: [Pane; 7] = [
        Pane::Overview,
        Pane::Timeline,
        Pane::Critical,
        Pane::Roofline,
        Pane::Advisor,
        Pane::Operator,
        Pane::Comm,
    ];

    /// Tab title (and `--view` name).
    pub fn name(self) -> &'static str {
        match self {
            Pane::Overview => "overview",
            Pane::Timeline => "timeline",
            Pane::Critical => "critical",
            Pane::Roofline => "roofline",
            Pane::Advisor => "advisor",
            Pane::Operator => "operator",
            Pane::Comm => "comm",
        }
    }

    /// The pane of a `--view` name.
    pub fn from_name(s: &str) -> Option<Pane> {
        Pane::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Position in [`Pane::ALL`] (and in `Browser::sel`).
    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).expect("listed")
    }
}

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

    /// The row its list has selected in the current state (default: its cluster-level row).
    fn selected(&self, b: &Browser) -> usize {
        b.sel[b.pane.index()]
    }

    /// That selection, to move it.
    fn selection<'a>(&self, b: &'a mut Browser) -> &'a mut usize {
        &mut b.sel[b.pane.index()]
    }

    /// Esc in it: undoes its own last step (a marked range, an expanded group); false when it
    /// has none (the browser goes back a jump or a level).
    fn back(&self, _b: &mut Browser, _ctx: &mut Ctx<UiMsg>) -> bool {
        false
    }

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

    /// Page up (`by` < 0) or down in its detail text; false when it has none (the list
    /// selection moves a page instead).
    fn page(&self, _b: &mut Browser, _by: isize, _ctx: &Ctx<UiMsg>) -> bool {
        false
    }

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
