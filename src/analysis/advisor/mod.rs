//! The advisor (Hermes §4.3, Table 4): rules that turn the analyses' results into findings —
//! what is wrong, the evidence (ranks, steps, operators, numbers), the cause, and what to
//! change — each with an impact estimate on step time that sets its severity (DESIGN §4:
//! high ≥ 5%, medium ≥ 3%, else low). Rules live in [`rules`]; thresholds in [`thresholds`]
//! (docs/advisor.md).

pub mod rules;
pub mod thresholds;

use super::breakdown::Breakdown;
use super::cluster::{Imbalance, SlowStep, Stage, Straggler};
use super::comm::stats::{SlowLink, TypeStats};
use super::critical_path::CriticalPath;
use super::host::Host;
use super::roofline::Roofline;
use super::step_times::StepTime;
use crate::time::Ns;
use serde::Serialize;
use std::collections::BTreeMap;
pub use thresholds::Thresholds;

/// Hermes Table 4 categories (+ memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Parallelism: stragglers, slow steps, stage imbalance.
    Parallel,
    /// Input pipeline.
    Io,
    /// Host: launch, synchronization, GC, Python.
    Cpu,
    /// Kernels: roofline, GEMM shapes and precision.
    Compute,
    /// Collectives: overlap, waiting, bandwidth, message sizes.
    Communication,
    /// Allocator and copies.
    Memory,
}

impl Category {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Parallel => "parallel",
            Category::Io => "io",
            Category::Cpu => "cpu",
            Category::Compute => "compute",
            Category::Communication => "communication",
            Category::Memory => "memory",
        }
    }
}

impl Severity {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// How much a finding costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// < medium_pct of step time.
    Low,
    /// ≥ medium_pct.
    Medium,
    /// ≥ high_pct.
    High,
}

/// What a finding is based on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// Ranks concerned.
    pub ranks: Vec<u32>,
    /// Steps concerned.
    pub steps: Vec<u32>,
    /// Operators, kernels or collective types concerned.
    pub ops: Vec<String>,
    /// The numbers behind it, by name.
    pub numbers: BTreeMap<&'static str, f64>,
}

/// One piece of advice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Rule id.
    pub rule: &'static str,
    /// Category.
    pub category: Category,
    /// From impact_pct.
    pub severity: Severity,
    /// Estimated step time it costs over the steps in scope (per rank).
    pub impact_ns: Ns,
    /// impact / Σ cluster step time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub impact_pct: f64,
    /// One line.
    pub title: String,
    /// Numbers and references.
    pub evidence: Evidence,
    /// Why it happens.
    pub cause: String,
    /// What to change.
    pub suggestions: Vec<String>,
}

/// The analysis results the rules read (borrowed; tests build them by hand).
#[derive(Debug, Default, Clone, Copy)]
pub struct Facts<'a> {
    /// Ranks in scope.
    pub ranks: u32,
    /// Per-step cluster times in scope.
    pub steps: &'a [StepTime],
    /// Breakdown rows in scope.
    pub rows: &'a [Breakdown],
    /// Communication per type and group.
    pub comm: &'a [TypeStats],
    /// Ranks with outlier transit.
    pub slow_links: &'a [SlowLink],
    /// Slow steps.
    pub slow_steps: &'a [SlowStep],
    /// Stragglers.
    pub stragglers: &'a [Straggler],
    /// Part imbalance.
    pub imbalance: &'a [Imbalance],
    /// Pipeline stages.
    pub stages: Option<&'a [Stage]>,
    /// Host analyses.
    pub host: Option<&'a Host>,
    /// Roofline.
    pub roofline: Option<&'a Roofline>,
    /// Critical path.
    pub critical: Option<&'a CriticalPath>,
}

impl Facts<'_> {
    /// Σ cluster step time (max rank span) over the steps: what impacts are relative to.
    pub fn step_ns(&self) -> Ns {
        self.steps.iter().map(|s| s.max_ns).sum()
    }
}

/// A finding before its severity is known.
pub struct Draft {
    /// Rule id.
    pub rule: &'static str,
    /// Category.
    pub category: Category,
    /// Impact, ns over the steps in scope.
    pub impact_ns: Ns,
    /// Title.
    pub title: String,
    /// Evidence.
    pub evidence: Evidence,
    /// Cause.
    pub cause: &'static str,
    /// Suggestions.
    pub suggestions: &'static [&'static str],
}

/// Runs every rule; findings by impact, largest first (ties: rule id).
pub fn advise(f: &Facts, t: &Thresholds) -> Vec<Finding> {
    let step = f.step_ns();
    let mut out: Vec<Finding> = rules::ALL
        .iter()
        .flat_map(|rule| rule(f, t))
        .map(|d| {
            let pct = if step > 0 {
                d.impact_ns as f64 / step as f64
            } else {
                0.0
            };
            Finding {
                rule: d.rule,
                category: d.category,
                severity: if pct >= t.high_pct {
                    Severity::High
                } else if pct >= t.medium_pct {
                    Severity::Medium
                } else {
                    Severity::Low
                },
                impact_ns: d.impact_ns,
                impact_pct: pct,
                title: d.title,
                evidence: d.evidence,
                cause: d.cause.to_string(),
                suggestions: d.suggestions.iter().map(|s| s.to_string()).collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.impact_ns.cmp(&a.impact_ns).then(a.rule.cmp(b.rule)));
    out
}
