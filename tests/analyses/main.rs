#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! The analyses end to end: step breakdown, communication, critical path, layout, the advisor's findings and their proofs, the replay (what-if), the demo's scenarios and the invariants on every real trace.
//!
//! One test binary per group (docs/testing.md): each former file is a module here, so the
//! suite links four binaries, not forty.

#[path = "../common/mod.rs"]
mod common;

mod advisor;
mod attribution;
mod comm_fixtures;
mod critical_path;
mod demo;
mod diagnoses;
mod invariants;
mod layout;
mod proofs;
mod properties;
mod real_comm;
mod scenarios;
mod stages;
mod whatif;
mod whatif_pairs;
