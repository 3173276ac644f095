//! The what-if's twin predictions at 256 and 1 024 ranks (issue 31; 8 and 64 ranks are in
//! tests/whatif.rs): every scenario's first finding stays right, and its fix predicts the
//! clean twin within 5% per step. Four steps (10–13: every scenario's problem step is among
//! them). An unoptimised build takes tens of minutes for these, so they run in optimised
//! builds only: `cargo test --release --test whatif_scale` (CI runs it).

mod common;

use common::twins;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo test --release"
)]
fn fixing_each_scenario_predicts_its_clean_twin_at_256_ranks() {
    twins::twins_at(256, 4);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo test --release"
)]
fn fixing_each_scenario_predicts_its_clean_twin_at_1024_ranks() {
    twins::twins_at(1024, 4);
}
