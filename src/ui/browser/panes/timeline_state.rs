//! The timeline pane's state: the view (zoom, cursor row and band, expanded group, pending
//! selections, mark, extra steps) and what it computed for that view (the selected
//! operator's band on every row, the inspector's text and its band's args).

use super::inspector::{Inspected, Key};
use crate::analysis::timeline::Band;
use crate::model::{EventRef, RankIx, StepNo, Sym};
use crate::time::Ns;
use crate::ui::browser::args::Args;

/// The timeline pane's state and caches.
#[derive(Debug, Clone, Default)]
pub struct TimelineState {
    /// Zoom, cursor, group and pending selections (what an evidence jump saves and restores).
    pub view: TimelineView,
    /// What [`TimelineState::bands`] was computed for.
    pub selected: Option<SelectedKey>,
    /// The selected operator's occurrences, one per timeline row.
    pub bands: Vec<Option<Band>>,
    /// The args of the inspector's band, read in the background.
    pub band_args: Option<(EventRef, Args)>,
    /// What the inspector says, for the cursor it was computed at.
    pub inspected: Option<(Key, Inspected)>,
}

/// The timeline's view state.
#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// Visible time window (aligned ns); `None`: the whole step.
    pub zoom: Option<(Ns, Ns)>,
    /// Selected row (index into the displayed rows).
    pub row: usize,
    /// The selected operator: name and occurrence in the step.
    pub op: Option<(Sym, usize)>,
    /// Rows shown individually after expanding a group (a range of rows).
    pub expanded: Option<(usize, usize)>,
    /// Pending: select this rank's band of this name nearest this aligned start.
    pub focus: Option<Focus>,
    /// Pending: select this rank's row.
    pub focus_rank: Option<crate::model::RankId>,
    /// The cursor is on this gap of the selected row (aligned start, end) rather than on
    /// the selected operator's band.
    pub gap: Option<(Ns, Ns)>,
    /// A range is marked from this aligned instant to the cursor.
    pub mark: Option<Ns>,
    /// The inspector is hidden.
    pub inspector_off: bool,
    /// Steps shown after the selected one on the same axis.
    pub more_steps: usize,
}

/// A band to select once its timeline is built: a rank's band of a name nearest a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Focus {
    /// The rank.
    pub rank: crate::model::RankId,
    /// The band's name.
    pub name: Sym,
    /// Its aligned start, about.
    pub start: Ns,
    /// Its aligned end: a call nested under the row's top-level band selects that band.
    pub end: Ns,
}

/// What [`TimelineState::bands`] was computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectedKey {
    /// The device level's rank, or the cluster.
    pub rank: Option<RankIx>,
    /// The step.
    pub step: StepNo,
    /// The operator's name.
    pub name: Sym,
    /// Its occurrence.
    pub k: usize,
    /// The timeline row it was picked on.
    pub row: usize,
}
