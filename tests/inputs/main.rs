#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! The readers and what guards them: every input format on hand-made fixtures and on the real traces, bad and hostile input, bounded memory, the summaries and the warm cache, values a user gives, progress.
//!
//! One test binary per group (docs/testing.md): each former file is a module here, so the
//! suite links four binaries, not forty.

#[path = "../common/mod.rs"]
mod common;

mod ascend;
mod ascend_db;
mod ascend_summary;
mod bad_input;
mod fixtures;
mod flight;
mod hardening;
mod memory;
mod modelfile;
mod msprof;
mod nsys;
mod output_paths;
mod progress;
mod real_traces;
mod values;
