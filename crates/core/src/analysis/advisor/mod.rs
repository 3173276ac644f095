//! The advisor (after Hermes's optimization advisor, docs/architecture.md#sources): rules that turn the analyses' results into findings —
//! what is wrong (a typed [`Claim`]), the evidence (ranks, steps, operators, numbers with
//! their units), where a view shows it (a [`Focus`]) — each with an impact on step time (its
//! replayed saving, else the rule's estimate) that sets its severity (high ≥ 10%, medium ≥ 3%,
//! else low), and a [`Kind`]: a problem or an opportunity. The words — title, cause, what to
//! change — are the faces' (`crate::prose`).
//!
//! Rules live in [`rules`], one file per category; what they read is [`Facts`]; thresholds
//! are in [`thresholds`] (docs/advisor.md).

mod draft;
mod facts;
pub mod fold;
pub mod proof;
pub mod rules;
pub mod thresholds;

pub use draft::Draft;
pub use facts::Facts;
pub use thresholds::Thresholds;

use crate::analysis::clocks::AtTopClock;
use crate::analysis::comm::stats::BusTarget;
use crate::analysis::host::GcPause;
use crate::analysis::roofline::speedup::Speedup;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

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

/// What a finding is (docs/advisor.md, "Problems and opportunities").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// What any healthy job could still gain: fusion, overlap, graphs, GEMM efficiency.
    Opportunity,
    /// An anomaly against the job's own baseline: a slow rank, step or stage, a stall, a
    /// late collective, a slow link.
    Problem,
}

impl Kind {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Opportunity => "opportunity",
            Kind::Problem => "problem",
        }
    }
}

/// How much a finding costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// < medium_pct of step time.
    Low,
    /// ≥ medium_pct.
    Medium,
    /// ≥ high_pct.
    High,
}

impl Severity {
    /// Every severity, mildest first.
    pub const ALL: [Severity; 3] = [Severity::Low, Severity::Medium, Severity::High];

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// A number with its unit, so every face formats it the same way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// A duration.
    Ns(Ns),
    /// A count.
    Count(u64),
    /// A fraction (0.25 = 25%).
    Ratio(f64),
    /// Bandwidth, GB/s.
    Gbps(f64),
    /// Compute rate, TFLOP/s.
    Tflops(f64),
    /// Arithmetic intensity, FLOP per byte.
    FlopPerByte(f64),
    /// A z-score.
    Z(f64),
}

impl Quantity {
    /// The bare value (what the JSON report writes).
    pub fn value(self) -> f64 {
        match self {
            Quantity::Ns(v) => v as f64,
            Quantity::Count(v) => v as f64,
            Quantity::Ratio(v)
            | Quantity::Gbps(v)
            | Quantity::Tflops(v)
            | Quantity::FlopPerByte(v)
            | Quantity::Z(v) => v,
        }
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.value())
    }
}

/// What a finding is based on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// Ranks concerned.
    pub ranks: Vec<RankId>,
    /// Steps concerned.
    pub steps: Vec<StepNo>,
    /// Operators, kernels, collective types or breakdown parts concerned.
    pub ops: Vec<String>,
    /// The numbers behind it, by name.
    pub numbers: BTreeMap<&'static str, Quantity>,
    /// What a kernel finding's model says its operators' kernels would take: what its
    /// replay shrinks them to (not in the JSON: the rule's model, see docs/metrics.md).
    #[serde(skip)]
    pub speedups: Vec<Speedup>,
    /// The unrecorded pauses a host-gap finding names: what its replay takes away (not in
    /// the JSON: the ranks, steps and numbers say them).
    #[serde(skip)]
    pub pauses: Vec<GcPause>,
    /// The bus bandwidth a link finding's collectives would reach: what its replay runs
    /// their slower transfers at (not in the JSON: the numbers say it).
    #[serde(skip)]
    pub bandwidth: Vec<BusTarget>,
    /// The rank-steps a clock finding names at the top clock: what its replay runs their
    /// compute at (not in the JSON: the job's `clocks` say them).
    #[serde(skip)]
    pub clocks: Vec<AtTopClock>,
}

/// Where a view shows a finding's evidence: what its proof is, resolved against the job by
/// [`proof::land`] when the user asks to see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The communication view (at the first evidence rank's row).
    Comm,
    /// The communication view's collectives of at most this many bytes.
    SmallCalls(u64),
    /// The critical path of the step.
    CriticalPath,
    /// The first evidence operator that exists, else the first rank's device view, else
    /// this view.
    Evidence(View),
    /// The longest host call of this kind on the evidence's ranks and steps, on its rank's
    /// lanes: the device stream under it shows what it costs.
    HostCall(HostCall),
    /// The collective this rank arrived last at with the most wait (in the evidence steps),
    /// on the cluster timeline, joined across its members.
    LateArrival(RankId),
    /// The first evidence step's culprit rank (else its slowest) on the cluster timeline.
    SlowRank,
    /// The first evidence rank's row on the cluster timeline of the first evidence step.
    Rows,
    /// The lanes of the first evidence rank (else the step's slowest) in the first evidence
    /// step: host threads and streams side by side show the gaps.
    RankLanes,
}

/// A kind of host call a finding blames (matched by its name's role).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCall {
    /// A data-loader range.
    DataLoader,
    /// A blocking runtime call (synchronize, synchronous copy).
    Blocking,
    /// An allocator call.
    Allocator,
    /// A graph capture or replay call.
    Graph,
    /// A garbage-collection pause.
    Gc,
    /// An operator compiled at run time.
    OnlineCompile,
    /// A copy through pageable host memory.
    Pageable,
}

/// A view without a selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The overview.
    Overview,
    /// The roofline.
    Roofline,
}

/// What a finding claims, per rule: the facts its title states.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Parallelism rules.
    Parallel(rules::parallel::Claim),
    /// Communication rules.
    Communication(rules::communication::Claim),
    /// Host, input and memory rules.
    Host(rules::host::Claim),
    /// Kernel rules.
    Compute(rules::compute::Claim),
    /// The accelerator's own tables (Ascend kernel table, clock, framework operators).
    Accelerator(rules::accelerator::Claim),
}

/// One piece of advice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Rule id.
    pub rule: &'static str,
    /// Its category (parallelism, communication, host, compute).
    pub category: Category,
    /// A problem or an opportunity (its rule's).
    pub kind: Kind,
    /// From impact_pct.
    pub severity: Severity,
    /// Step time it costs over the steps in scope: its saving when replayed, else the
    /// rule's own estimate (per rank).
    pub impact_ns: Ns,
    /// What the what-if replay says fixing it saves over the steps shown (`None`: its cause
    /// has no transform, or the graph does not explain the steps; docs/metrics.md "Replay").
    pub saves_ns: Option<Ns>,
    /// impact / Σ cluster step time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub impact_pct: f64,
    /// The time its own evidence covers, when its rule's estimate is that time: its impact
    /// never exceeds it (`None`: the rule's estimate is no such bound).
    pub covers_ns: Option<Ns>,
    /// Ranks, steps, operators and numbers.
    pub evidence: Evidence,
    /// Where a view shows it.
    #[serde(skip)]
    pub focus: Focus,
    /// What it claims (the faces word it).
    #[serde(skip)]
    pub claim: Claim,
    /// Findings that were this one's symptoms ([`fold`]), folded into it as evidence.
    #[serde(skip)]
    pub folded: Vec<Folded>,
}

/// A symptom folded into the finding of its cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Folded {
    /// Its rule id.
    pub rule: &'static str,
    /// The impact it had on its own.
    pub impact_ns: Ns,
    /// Folded by the replay: what its own fix still saves once the cause's fix is applied
    /// (`None`: folded by a rule of [`fold`], the replay not judging the pair).
    pub remains_ns: Option<Ns>,
    /// What it claimed.
    pub claim: Claim,
}

impl Finding {
    /// Sets the impact, and what follows from it against the step time `step_ns`: its share
    /// and its severity (docs/advisor.md: high ≥ high_pct, medium ≥ medium_pct).
    pub fn set_impact(&mut self, impact_ns: Ns, step_ns: Ns, t: &Thresholds) {
        self.impact_ns = impact_ns;
        self.impact_pct = if step_ns > 0 {
            impact_ns as f64 / step_ns as f64
        } else {
            0.0
        };
        self.severity = if self.impact_pct >= t.high_pct {
            Severity::High
        } else if self.impact_pct >= t.medium_pct {
            Severity::Medium
        } else {
            Severity::Low
        };
    }
}

/// Runs every rule, folds symptoms into their causes ([`fold`]); findings ranked
/// ([`fold::rank`]). Without a replay: the analysis replays [`detect`]'s findings first.
pub fn advise(f: &Facts, t: &Thresholds) -> Vec<Finding> {
    fold::fold(detect(f, t), f.step_ns(), t)
}

/// Every rule's finding, each with its rule's estimate as its impact, unranked.
pub fn detect(f: &Facts, t: &Thresholds) -> Vec<Finding> {
    let step = f.step_ns();
    rules::all()
        .filter_map(|rule| Some((rule, (rule.detect)(f, t)?)))
        .map(|(rule, d)| {
            let ns = d.impact_ns;
            let mut x = d.finish(rule.id, rule.category);
            x.set_impact(ns, step, t);
            x.covers_ns = rule.bound.covers(ns, f.ranks);
            x
        })
        .collect()
}
