//! The panes of the trace browser, one unit each: what its list is and which row it has
//! selected, what Enter and Esc do, the footer hints and commands it adds, what it needs
//! computed before drawing, and its draw (read-only over the browser). A pane's state (scroll,
//! zoom, filters, what it computed) is a struct in its own file, held in [`Panes`]. A new pane
//! is a file here, a [`Pane`] variant and its line in `TABLE` (with state: its [`Panes`]
//! field; for a direct key, a keymap line) — docs/architecture.md walks through one.

pub mod advisor;
pub mod comm;
pub mod critical;
pub mod device;
pub mod inspector;
pub mod layout;
pub mod layout_view;
pub mod operator;
pub mod overview;
pub mod parts;
mod pipes;
pub mod raster;
pub mod roofline;
pub mod timeline;
mod timeline_cursor;
mod timeline_nav;
mod timeline_state;
mod topology;
mod transports;
pub mod whatif;

use super::Browser;
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use ratatui::Frame;
use ratatui::layout::Rect;
pub use timeline_state::{Focus, SelectedKey, TimelineState, TimelineView};

/// Each pane's own state: the row its list has selected, and for a pane with more (scroll,
/// zoom, filters, what it computed for its view) its state struct, defined in its file. A
/// pane with state is its file, its line in `TABLE` and its field here.
#[derive(Debug, Clone, Default)]
pub struct Panes {
    /// Selected row of each pane's list (cluster level), by [`Pane::index`].
    pub rows: [usize; Pane::ALL.len()],
    /// The device view's (the overview at device level).
    pub device: device::DeviceState,
    /// The timeline's.
    pub timeline: TimelineState,
    /// The advisor's.
    pub advisor: advisor::AdvisorState,
    /// The operator view's.
    pub operator: operator::OperatorState,
    /// The comm pane's.
    pub comm: comm::CommState,
    /// The what-if pane's.
    pub whatif: whatif::WhatIfState,
    /// The layout pane's metric, cell grouping and view.
    pub layout: layout_view::LayoutView,
}

impl Panes {
    /// Drops what the panes computed for their views, keeping the views themselves (the
    /// frame benchmark's uncached frame).
    pub fn forget_computed(&mut self) {
        self.device.ops = None;
        self.operator.detail = None;
        self.operator.args = None;
        self.comm.ranks = None;
        self.whatif.replay.clear();
        let t = &mut self.timeline;
        (t.selected, t.band_args, t.inspected) = (None, None, None);
        t.bands.clear();
    }
}

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
    /// Findings with their replayed savings; the step measured and replayed with a fix.
    WhatIf,
    /// The ranks drawn as the job is split (pipeline stages × replicas × tensor groups).
    Layout,
}

/// Every pane: its variant, its tab title (and `--view` name), its unit. A new pane is its
/// file, its variant and one line here (a direct key: a `pane_*` line in the keymap).
const TABLE: [(Pane, &str, &dyn PaneView); 9] = [
    (Pane::Overview, "overview", &overview::Overview),
    (Pane::Timeline, "timeline", &timeline::TimelinePane),
    (Pane::Critical, "critical", &critical::Critical),
    (Pane::Roofline, "roofline", &roofline::RooflinePane),
    (Pane::Advisor, "advisor", &advisor::Advisor),
    (Pane::Operator, "operator", &operator::OperatorPane),
    (Pane::Comm, "comm", &comm::CommPane),
    (Pane::WhatIf, "whatif", &whatif::WhatIfPane),
    (Pane::Layout, "layout", &layout::LayoutPane),
];

impl Pane {
    /// Every pane, in `Tab` order.
    pub const ALL: [Pane; TABLE.len()] = {
        let mut all = [Pane::Overview; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    /// Tab title (and `--view` name).
    pub fn name(self) -> &'static str {
        TABLE[self.index()].1
    }

    /// The pane of a `--view` name.
    pub fn from_name(s: &str) -> Option<Pane> {
        TABLE.iter().find(|p| p.1 == s).map(|p| p.0)
    }

    /// Position in [`Pane::ALL`] (and in [`Panes::rows`]).
    pub fn index(self) -> usize {
        TABLE.iter().position(|p| p.0 == self).expect("listed")
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
        b.panes.rows[b.nav.pane.index()]
    }

    /// That selection, to move it.
    fn selection<'a>(&self, b: &'a mut Browser) -> &'a mut usize {
        &mut b.panes.rows[b.nav.pane.index()]
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
    TABLE[p.index()].2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pane_has_a_name_a_position_and_a_key() {
        for (i, p) in Pane::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(Pane::from_name(p.name()), Some(p));
            let key = Action::Pane(u8::try_from(i).expect("few panes"));
            assert!(
                Action::ALL.contains(&key),
                "{} has a keymap action",
                p.name()
            );
        }
    }
}
