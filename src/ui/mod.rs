//! The terminal UI (docs/tui.md). Two layers:
//!
//! - [`shell`]: what every screen shares — keymap and theme files, footer hints and the help
//!   overlay from one command list, mouse hit areas, background work and the event loop on
//!   one channel, the terminal guard, text snapshots. Knows nothing about traces.
//! - the screens: [`loading`] while a job loads, then the trace [`browser`] (panes over the
//!   analysis results, a drill-down stack cluster → device → operator, fuzzy search).
//!
//! [`run`] opens a terminal on them. No analysis lives here: panes render results of
//! `crate::analysis`, and word findings through `crate::prose`.

pub mod browser;
pub mod diff;
pub mod hang;
pub mod loading;
pub mod run;
pub mod shell;
pub mod watch;

pub use run::{UiOptions, headless, run};

use crate::error::Error;
use crate::session::Session;

/// What the UI's screens receive besides terminal input.
pub enum UiMsg {
    /// The job finished loading and analysing (or failed).
    Loaded(Box<Result<Session, Error>>),
    /// A background analysis finished.
    Work(browser::work::Done),
}
