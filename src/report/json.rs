//! The report's view of results that carry prose in the JSON schema (`stepscope.report/1`):
//! each wraps the typed result and adds its sentences, worded by `crate::prose`, as the last
//! fields — where the schema has always had them.

use crate::analysis::advisor::{Category, Evidence, Finding, Kind, Severity};
use crate::analysis::cluster::{SlowStep, Straggler};
use crate::analysis::comm::matching::Mismatch;
use crate::analysis::layout::Layout;
use crate::analysis::roofline::Roofline;
use crate::prose;
use crate::time::Ns;
use serde::Serialize;

/// A finding with its words.
#[derive(Debug, Clone, Serialize)]
pub struct FindingRow {
    /// Rule id.
    pub rule: &'static str,
    /// Its category (parallelism, communication, host, compute).
    pub category: Category,
    /// `problem` (an anomaly against the job's own baseline) or `opportunity`.
    pub kind: Kind,
    /// From impact_pct.
    pub severity: Severity,
    /// Step time it costs over the steps in scope: `saves_ns` (at most `covers_ns`) when
    /// replayed, else the rule's estimate.
    pub impact_ns: Ns,
    /// The time its own evidence covers, which its impact never exceeds (null: its rule's
    /// estimate is no such bound).
    pub covers_ns: Option<Ns>,
    /// What fixing it saves over the steps shown, by the what-if replay (null: not
    /// replayed; docs/metrics.md "Replay").
    pub saves_ns: Option<Ns>,
    /// impact / Σ cluster step time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub impact_pct: f64,
    /// One line.
    pub title: String,
    /// Numbers and references.
    pub evidence: Evidence,
    /// Why it happens.
    pub cause: &'static str,
    /// What to change.
    pub suggestions: &'static [&'static str],
    /// Symptoms of the same cause, folded into this finding (docs/advisor.md, "Precedence").
    pub folded: Vec<FoldedRow>,
}

/// A folded symptom: its rule, its own impact and its title.
#[derive(Debug, Clone, Serialize)]
pub struct FoldedRow {
    /// Rule id.
    pub rule: &'static str,
    /// The impact it had on its own.
    pub impact_ns: Ns,
    /// Folded by the replay: what its own fix still saves with the cause's fix applied
    /// (null: folded by a precedence rule; docs/advisor.md, "Explained by").
    pub remains_ns: Option<Ns>,
    /// Its one line.
    pub title: String,
}

impl FindingRow {
    /// A finding in words.
    pub fn of(f: &Finding) -> FindingRow {
        let w = prose::words(f);
        FindingRow {
            rule: f.rule,
            category: f.category,
            kind: f.kind,
            severity: f.severity,
            impact_ns: f.impact_ns,
            covers_ns: f.covers_ns,
            saves_ns: f.saves_ns,
            impact_pct: f.impact_pct,
            title: w.title,
            evidence: f.evidence.clone(),
            cause: w.cause,
            suggestions: w.suggestions,
            folded: f
                .folded
                .iter()
                .map(|x| FoldedRow {
                    rule: x.rule,
                    impact_ns: x.impact_ns,
                    remains_ns: x.remains_ns,
                    title: prose::claim_words(&x.claim).title,
                })
                .collect(),
        }
    }
}

/// A slow step with its reason.
#[derive(Debug, Clone, Serialize)]
pub struct SlowStepRow {
    /// The step.
    #[serde(flatten)]
    pub step: SlowStep,
    /// One line for people.
    pub reason: String,
}

impl SlowStepRow {
    /// A slow step in words.
    pub fn of(s: &SlowStep) -> SlowStepRow {
        SlowStepRow {
            reason: prose::slow_step_reason(s),
            step: s.clone(),
        }
    }
}

/// A straggler with its evidence sentence.
#[derive(Debug, Clone, Serialize)]
pub struct StragglerRow {
    /// The straggler.
    #[serde(flatten)]
    pub straggler: Straggler,
    /// Its position in the job's parallel layout (`pp1·dp0·tp3`), when there is one.
    pub position: Option<String>,
    /// One line for people.
    pub evidence: String,
}

impl StragglerRow {
    /// A straggler in words, at its position in `layout`.
    pub fn of(s: &Straggler, layout: Option<&Layout>) -> StragglerRow {
        StragglerRow {
            evidence: prose::straggler_evidence(s),
            position: layout.map(|l| l.label(s.rank)).filter(|p| !p.is_empty()),
            straggler: s.clone(),
        }
    }
}

/// A mismatch with its reason.
#[derive(Debug, Clone, Serialize)]
pub struct MismatchRow {
    /// The mismatch.
    #[serde(flatten)]
    pub mismatch: Mismatch,
    /// What disagrees.
    pub reason: String,
}

impl MismatchRow {
    /// A mismatch in words.
    pub fn of(m: &Mismatch) -> MismatchRow {
        MismatchRow {
            reason: prose::mismatch_reason(m),
            mismatch: m.clone(),
        }
    }
}

/// The roofline with its note.
#[derive(Debug, Clone, Serialize)]
pub struct RooflineView {
    /// The roofline.
    #[serde(flatten)]
    pub roofline: Roofline,
    /// Why kernels are unknown, when they are.
    pub note: Option<String>,
}

impl RooflineView {
    /// The roofline in words.
    pub fn of(r: &Roofline) -> RooflineView {
        RooflineView {
            note: r.note.as_ref().map(prose::roofline_note),
            roofline: r.clone(),
        }
    }
}
