//! The rules (docs/advisor.md), one file per category. Each reads [`Facts`] and returns at
//! most one [`Draft`] per cause, listing every rank, step and operator concerned. Impacts are
//! step time over the steps in scope, per rank: Σ-over-ranks quantities are divided by the
//! rank count.
//!
//! A new rule is a function and an entry in its category's `RULES` list, with a variant of
//! that category's `Claim` (what its title states); its words go in `crate::prose`.

pub mod accelerator;
pub mod communication;
pub mod compute;
pub mod host;
pub mod parallel;
#[cfg(test)]
mod tests;

use super::{Category, Draft, Facts, Kind, Thresholds};
use crate::model::CollOp;
use crate::time::Ns;

/// A rule: its id (the JSON `rule`), its category, and what detects it.
pub struct Rule {
    /// Stable id.
    pub id: &'static str,
    /// Its category (Hermes's: parallelism, communication, host, compute).
    pub category: Category,
    /// A problem (an anomaly against the job's own baseline) or an opportunity (what any
    /// healthy job could still gain).
    pub kind: Kind,
    /// Whether its estimate is the time its own evidence covers, which its replayed saving
    /// never exceeds (docs/advisor.md, "Impact").
    pub bound: Bound,
    /// The detection.
    pub detect: fn(&Facts, &Thresholds) -> Option<Draft>,
}

/// Every rule, in docs/advisor.md order.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    parallel::RULES
        .iter()
        .chain(communication::RULES)
        .chain(host::RULES)
        .chain(compute::RULES)
        .chain(accelerator::RULES)
}

/// What a rule's estimate says of the time its evidence covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Nothing: the estimate is a model, not a measured time.
    None,
    /// The estimate is that time (a step's excess over the median, a stage's pace cost).
    Total,
    /// The estimate is a Σ-over-ranks time per rank: the evidence covers the Σ (exactly
    /// the estimate on one rank; on many, a bound on Σ over steps of the max over ranks).
    PerRank,
}

impl Bound {
    /// The time the evidence covers, for an estimate `ns` over `ranks` ranks.
    pub fn covers(self, ns: Ns, ranks: u32) -> Option<Ns> {
        match self {
            Bound::None => None,
            Bound::Total => Some(ns),
            Bound::PerRank => Some(ns.saturating_mul(Ns::from(ranks.max(1)))),
        }
    }
}

/// A Σ-over-ranks time, per rank.
fn per_rank(ns: Ns, f: &Facts) -> Ns {
    ns / Ns::from(f.ranks.max(1))
}

/// a / b, 0 when b is 0.
/// Sorted, without repeats.
fn distinct<T: Ord>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn share(a: Ns, b: Ns) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

/// `share` of the step time as a share of the typical steps: each step's excess over the
/// median step taken out of the whole, so that a cost every step pays is not diluted by one
/// outlier step (a 350 ms stall in a job of 80 ms steps halves every other share).
fn undiluted(share: f64, f: &Facts) -> f64 {
    let mut times: Vec<Ns> = f.steps.iter().map(|s| s.max_ns).collect();
    let total: Ns = times.iter().sum();
    times.sort_unstable();
    let Some(&median) = times.get(times.len() / 2) else {
        return share;
    };
    let typical: Ns = times.iter().map(|&t| t.min(median)).sum();
    if typical > 0 {
        share * total as f64 / typical as f64
    } else {
        share
    }
}

/// Σ span of the breakdown rows.
fn rows_span(f: &Facts) -> Ns {
    f.rows.iter().map(|b| b.span_ns).sum()
}

/// A collective type in a group, for evidence lists (`all_reduce (0)`).
fn describe(op: CollOp, group: &str) -> String {
    format!("{} ({group})", op.as_str())
}
