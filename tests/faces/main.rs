#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! The faces: the command line and its reports, the JSON schema, diff and export, the TUI's panes as snapshots and under tmux, and watch on real logs and monitor streams.
//!
//! One test binary per group (docs/testing.md): each former file is a module here, so the
//! suite links four binaries, not forty.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod diff;
mod export;
mod schema;
mod timeline_cursor;
mod tui;
mod tui_cli;
mod tui_diff;
mod tui_e2e;
mod tui_keys;
mod tui_watch;
mod watch;
mod watch_monitors;
mod watch_mutations;
mod watch_runs;
