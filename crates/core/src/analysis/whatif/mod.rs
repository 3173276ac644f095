//! What-if (docs/metrics.md, "Replay"): the dependency graph of a step across every loaded
//! rank — the critical path's graph, joined at matched collectives — replayed as an
//! earliest-start schedule with durations that can be changed. The self-check replays the
//! measured durations (its error says how far the graph explains the step); each fix is a
//! transform of the durations ([`fix`]), and what it saves becomes its finding's impact
//! ([`savings`]); the ideal step gives the slowdown decomposition ([`slowdown`]).

mod arrivals;
pub mod asked;
pub mod attribution;
pub mod bands;
pub mod bounds;
pub mod choice;
pub mod cover;
pub mod edges;
mod entries;
pub mod fix;
pub mod joint;
mod kernels;
mod overlap;
mod rebalance;
pub mod replay;
pub mod savings;
pub mod slowdown;
pub mod step;
pub mod steps;
mod threads;
pub mod transfers;

pub use fix::{CommKind, Context, Fix};
pub use replay::ReplayCheck;
pub use step::{StepReplay, check, unreplayable};
pub use steps::{StepWhatIf, WhatIf, run};

/// The replay error above which the graph is taken not to explain the step (no saving is
/// claimed from it).
pub const MAX_REPLAY_ERROR: f64 = 0.02;
