//! Cluster analysis (Hermes's first level: find the problematic steps and devices), over every rank
//! and step of the job (docs/metrics.md, "Slow step", "Stragglers"):
//!
//! - [`slow_steps`]: cluster step time = max rank span; a step is slow when it exceeds
//!   median + max(3·1.4826·MAD, 5% of median) over the steps seen. Its **culprit** is the
//!   rank whose own work (span − exposed comm) grew the most over that rank's median step,
//!   with the breakdown part that grew and the collectives of the step it arrived last at.
//! - [`stragglers`], per communication domain: how often each rank arrived last, the wait it
//!   imposed on the others (Σ of their waits at those instances), its share of all the
//!   domain's waiting, and which breakdown parts exceed the domain median. A part is
//!   imbalanced when (max − min) over the members exceeds [`IMBALANCE`] of the mean span
//!   (msprof-analyze's slow-rank rule).
//! - [`stages`] (send/recv between ranks): stage compute and the receive wait of each stage
//!   (bubble); the slowest stage sets the pace: its compute above the mean stage is what
//!   the imbalance costs each step, flagged from [`STAGE_IMBALANCE`] of its compute.

mod slow_steps;
mod stages;
mod stragglers;

pub use slow_steps::{LastArrivals, SlowStep, slow_steps, threshold};
pub use stages::{
    HEAVIER_OPS, Stage, StageOp, StagesFrom, Worker, name_heavier_ops, spans_stages, stage_map,
    stages, stages_of_layout,
};
pub use stragglers::{
    Imbalance, PartExcess, Straggler, StragglerStep, cross_stage_groups, stragglers,
};

/// MAD multiplier: 1.4826 (normal consistency) × 3, in ten-thousandths.
pub const MAD_FACTOR_E4: i64 = 44_478;
/// Minimum excess of a slow step over the median: 5%.
pub const MIN_EXCESS_PCT: i64 = 5;
/// Imbalance threshold: (max − min) / mean span.
pub const IMBALANCE: f64 = 0.05;
/// A straggler is persistent: it imposes the most wait in at least this share of the
/// domain's steps (a rank that stalls once is a slow step's culprit, not a straggler).
pub const PERSISTENCE: f64 = 2.0 / 3.0;
/// With fewer steps than this, persistence cannot be judged: the share of all waiting decides.
pub const MIN_STEPS_FOR_PERSISTENCE: u64 = 3;
/// Share of a domain's waiting that flags a rank when persistence cannot be judged.
pub const STRAGGLER_SHARE: f64 = 0.5;
/// The slowest pipeline stage is flagged when its pace cost (its compute − the mean stage
/// compute) is at least this share of its compute.
pub const STAGE_IMBALANCE: f64 = 0.1;
