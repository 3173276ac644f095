//! The terminal UI (DESIGN §5): panes over the analysis results, a drill-down stack
//! cluster → device → operator, fuzzy search, keymaps and themes from files, and the
//! `snapshot` renderer that draws a pane to text for CI. No analysis code lives here: panes
//! render results of `crate::analysis`.
//!
//! - [`app`]: the one state struct and its actions
//! - [`nav`]: what Enter opens, evidence jumps, timeline zoom and moves
//! - [`keymap`], [`theme`], [`config`]: the TOML files
//! - [`search`]: fuzzy operator search
//! - [`draw`], [`widgets`], [`panes`]: drawing
//! - [`run`]: the terminal loop; [`work`]: background analyses; [`snapshot`]: text rendering

pub mod app;
pub mod args;
pub mod config;
pub mod draw;
pub mod keymap;
pub mod nav;
pub mod panes;
pub mod run;
pub mod search;
pub mod snapshot;
pub mod theme;
pub mod widgets;
pub mod work;

/// Where a mouse click lands: rows of a list (the first visible index), or a pane tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitTarget {
    /// The rows of the current view's list; the area's first line is this index.
    Rows(usize),
    /// Every other line is a row (timeline with Marey joins between rows).
    SpacedRows(usize),
    /// A pane tab.
    Tab(app::Pane),
}

/// A clickable area recorded while drawing.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Screen area.
    pub area: ratatui::layout::Rect,
    /// What it selects.
    pub target: HitTarget,
}
