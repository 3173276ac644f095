//! What-if (docs/metrics.md, "Replay"): the dependency graph of a step across every loaded
//! rank — the critical path's graph, joined at matched collectives — replayed as an
//! earliest-start schedule with durations that can be changed. The first use is the
//! self-check: replaying the measured durations must give back each rank's measured end of
//! the step; its error says how far the graph explains the step.

pub mod fix;
pub mod replay;

pub use fix::{Fix, Prediction, predict};
pub use replay::{ReplayCheck, check, check_graph};

/// The replay error above which the graph is taken not to explain the step (no saving is
/// claimed from it).
pub const MAX_REPLAY_ERROR: f64 = 0.02;
