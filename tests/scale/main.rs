#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! Scale: the layout, the what-if twins and the random jobs at hundreds to a thousand ranks (ignored or reduced in debug builds; CI runs this binary with --release).
//!
//! One test binary per group (docs/testing.md): each former file is a module here, so the
//! suite links four binaries, not forty.

#[path = "../common/mod.rs"]
mod common;

mod layout_scale;
mod random_jobs;
mod whatif_scale;
