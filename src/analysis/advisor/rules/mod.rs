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

use super::{Category, Draft, Facts, Thresholds};
use crate::model::CollOp;
use crate::time::Ns;

/// A rule: its id (the JSON `rule`), its category, and what detects it.
pub struct Rule {
    /// Stable id.
    pub id: &'static str,
    /// Its category (Hermes's: parallelism, communication, host, compute).
    pub category: Category,
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

/// Σ span of the breakdown rows.
fn rows_span(f: &Facts) -> Ns {
    f.rows.iter().map(|b| b.span_ns).sum()
}

/// A collective type in a group, for evidence lists (`all_reduce (0)`).
fn describe(op: CollOp, group: &str) -> String {
    format!("{} ({group})", op.as_str())
}
