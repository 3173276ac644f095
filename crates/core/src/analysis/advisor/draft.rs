//! A finding before its severity is known, built by a rule step by step.

use super::{Category, Claim, Evidence, Finding, Focus, Kind, Quantity, Severity, View};
use crate::analysis::clocks::AtTopClock;
use crate::analysis::comm::stats::BusTarget;
use crate::analysis::host::GcPause;
use crate::analysis::roofline::speedup::Speedup;
use crate::model::{RankId, StepNo};
use crate::time::Ns;

/// A finding in the making: a rule fills in its evidence, focus and claim; the advisor sets
/// its rule, category and severity.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Impact, ns over the steps in scope.
    pub impact_ns: Ns,
    /// Ranks, steps, operators and numbers behind it.
    pub evidence: Evidence,
    /// Where a view shows it (default: its evidence, else the overview).
    pub focus: Focus,
    /// What it claims.
    pub claim: Claim,
}

impl Draft {
    /// A draft claiming `claim`, costing `impact_ns`.
    pub fn new(impact_ns: Ns, claim: Claim) -> Draft {
        Draft {
            impact_ns,
            evidence: Evidence::default(),
            focus: Focus::Evidence(View::Overview),
            claim,
        }
    }

    /// The ranks concerned.
    pub fn ranks(mut self, ranks: impl IntoIterator<Item = RankId>) -> Draft {
        self.evidence.ranks = ranks.into_iter().collect();
        self
    }

    /// The steps concerned.
    pub fn steps(mut self, steps: impl IntoIterator<Item = StepNo>) -> Draft {
        self.evidence.steps = steps.into_iter().collect();
        self
    }

    /// The operators (kernels, collective types, parts) concerned.
    pub fn ops<S: Into<String>>(mut self, ops: impl IntoIterator<Item = S>) -> Draft {
        // Each once, in the rule's order (its first is the one it names): a type that
        // runs in several groups is one operator.
        let mut seen = std::collections::HashSet::new();
        self.evidence.ops = ops
            .into_iter()
            .map(Into::into)
            .filter(|o: &String| seen.insert(o.clone()))
            .collect();
        self
    }

    /// What its model says the kernels of its operator types would take.
    pub fn speedups(mut self, s: impl IntoIterator<Item = Speedup>) -> Draft {
        self.evidence.speedups = s.into_iter().collect();
        self
    }

    /// The unrecorded pauses it names (what its replay takes away).
    pub fn pauses(mut self, p: impl IntoIterator<Item = GcPause>) -> Draft {
        self.evidence.pauses = p.into_iter().collect();
        self
    }

    /// The bus bandwidths its collectives would reach (what its replay runs them at).
    pub fn bandwidth(mut self, b: impl IntoIterator<Item = BusTarget>) -> Draft {
        self.evidence.bandwidth = b.into_iter().collect();
        self
    }

    /// The rank-steps whose compute ran below the top clock (what its replay speeds up).
    pub fn clocks(mut self, c: impl IntoIterator<Item = AtTopClock>) -> Draft {
        self.evidence.clocks = c.into_iter().collect();
        self
    }

    /// One number behind it.
    pub fn number(mut self, name: &'static str, q: Quantity) -> Draft {
        self.evidence.numbers.insert(name, q);
        self
    }

    /// Where a view shows it.
    pub fn focus(mut self, focus: Focus) -> Draft {
        self.focus = focus;
        self
    }

    /// The finding of rule `rule` (of `category`; its kind from the rule table), its
    /// severity, impact share and bound still to be set.
    pub fn finish(self, rule: &'static str, category: Category) -> Finding {
        let table = super::rules::all().find(|r| r.id == rule);
        Finding {
            rule,
            category,
            kind: table.map_or(Kind::Problem, |r| r.kind),
            severity: Severity::Low,
            impact_ns: self.impact_ns,
            impact_pct: 0.0,
            covers_ns: None,
            evidence: self.evidence,
            focus: self.focus,
            claim: self.claim,
            folded: Vec::new(),
            saves_ns: None,
        }
    }
}
