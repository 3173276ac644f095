//! Savings of several fixes together (docs/metrics.md, "Joint savings"): savings do not add,
//! so the fixes of the report's first replayed findings are replayed together — fix 1, 1+2,
//! 1+2+3 … — over the steps the graph explains, beside the ideal step.

use super::fix::{Context, Fix};
use super::step::StepReplay;
use crate::analysis::comm::Comm;
use crate::model::{Job, StepNo};
use crate::time::Ns;
use rayon::prelude::*;
use serde::Serialize;

/// How many of the first findings' fixes are combined.
pub const JOINT: usize = 4;

/// The first k findings' fixes applied together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JointSaving {
    /// The rules of the findings whose fixes are applied (the report's first k replayed
    /// findings, in its order).
    pub rules: Vec<&'static str>,
    /// What they save together over the steps the graph explains: the replay, kept between
    /// what the fixes before this one saved together and that plus this finding's impact
    /// (a fix adds at most its own saving; one fix saves its finding's impact).
    pub saves_ns: Ns,
}

/// The joint savings of `fixes` (each finding's, in the report's order, with its `impact`)
/// over `steps` (those the graph explains); empty for fewer than two fixes.
pub fn joint(
    job: &Job,
    comm: &Comm,
    cx: &Context,
    steps: &[StepNo],
    findings: &[(&'static str, Fix, Ns)],
) -> Vec<JointSaving> {
    let n = findings.len().min(JOINT);
    if n < 2 {
        return Vec::new();
    }
    let fixes: Vec<Fix> = findings[..n].iter().map(|f| f.1.clone()).collect();
    // Per step, what each prefix of two or more fixes saves.
    let per_step: Vec<Vec<Ns>> = steps
        .par_iter()
        .filter_map(|&s| {
            let r = StepReplay::new(job, comm, s)?;
            let mut w = Vec::new();
            let mut t = Vec::new();
            let saved = (2..=n)
                .map(|k| {
                    r.weights_into(cx, &fixes[..k], &mut w);
                    r.replayed_ns.saturating_sub(r.time_with_in(&w, &mut t))
                })
                .collect();
            Some(saved)
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    let mut before = findings[0].2;
    out.push(JointSaving {
        rules: vec![findings[0].0],
        saves_ns: before,
    });
    for k in 2..=n {
        let replayed: Ns = per_step.iter().map(|v| v[k - 2]).sum();
        let saves = replayed.clamp(before, before.saturating_add(findings[k - 1].2));
        out.push(JointSaving {
            rules: findings[..k].iter().map(|f| f.0).collect(),
            saves_ns: saves,
        });
        before = saves;
    }
    out
}
