//! Savings of several fixes together (docs/metrics.md, "Joint savings"): savings do not add,
//! so the fixes of the report's first replayed findings are replayed together — fix 1, 1+2,
//! 1+2+3 … — over the steps the graph explains, beside the ideal step. A step where at most
//! two of a prefix's fixes save anything alone reads the first pass's replays (the fix
//! alone, or the pair); only the others are built and replayed again.

use super::fix::{Context, Fix};
use super::step::StepReplay;
pub use super::steps::JointSaving;
use super::steps::{StepWhatIf, WhatIf};
use crate::analysis::comm::Comm;
use crate::model::{Job, StepNo};
use crate::time::Ns;
use rayon::prelude::*;

/// How many of the first findings' fixes are combined.
pub const JOINT: usize = 4;

/// One of the first findings: its rule, its fix, its impact and its fix's column in the
/// first pass.
pub type First = (&'static str, Fix, Ns, usize);

/// The joint savings of the first findings' fixes (in the report's order) over the steps the
/// first pass `w` explains; empty for fewer than two.
pub fn joint(
    job: &Job,
    comm: &Comm,
    cx: &Context,
    w: &WhatIf,
    findings: &[First],
) -> Vec<JointSaving> {
    let n = findings.len().min(JOINT);
    if n < 2 {
        return Vec::new();
    }
    let cols: Vec<usize> = findings[..n].iter().map(|f| f.3).collect();
    let fixes: Vec<Fix> = findings[..n].iter().map(|f| f.1.clone()).collect();
    // Per step and prefix (2..=n): the first pass's answer, or None (replay again).
    let known: Vec<(&StepWhatIf, Vec<Option<Ns>>)> = w
        .steps
        .iter()
        .filter(|s| s.explains())
        .map(|s| (s, (2..=n).map(|k| from_first_pass(s, &cols[..k])).collect()))
        .collect();
    let again: Vec<StepNo> = known
        .iter()
        .filter(|(_, v)| v.iter().any(Option::is_none))
        .map(|(s, _)| s.step)
        .collect();
    let replayed: Vec<(StepNo, Vec<Ns>)> = again
        .par_iter()
        .filter_map(|&s| {
            let r = StepReplay::new(job, comm, s)?;
            let (mut w, mut t) = (Vec::new(), Vec::new());
            let saved = (2..=n)
                .map(|k| {
                    r.weights_into(cx, &fixes[..k], &mut w);
                    r.replayed_ns.saturating_sub(r.time_with_in(&w, &mut t))
                })
                .collect();
            Some((s, saved))
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    let mut before = findings[0].2;
    out.push(JointSaving {
        rules: vec![findings[0].0],
        saves_ns: before,
    });
    for k in 2..=n {
        let replay: Ns = known
            .iter()
            .map(|(s, v)| {
                v[k - 2].unwrap_or_else(|| {
                    replayed
                        .iter()
                        .find(|r| r.0 == s.step)
                        .map_or(0, |r| r.1[k - 2])
                })
            })
            .sum();
        let saves = replay.clamp(before, before.saturating_add(findings[k - 1].2));
        out.push(JointSaving {
            rules: findings[..k].iter().map(|f| f.0).collect(),
            saves_ns: saves,
        });
        before = saves;
    }
    out
}

/// What the fixes of columns `cols` save together in step `s`, when the first pass knows it:
/// none of them saves anything alone (0), one does (its saving), or two do and were paired.
fn from_first_pass(s: &StepWhatIf, cols: &[usize]) -> Option<Ns> {
    let saving: Vec<usize> = cols.iter().copied().filter(|&c| s.saves(c) > 0).collect();
    match saving[..] {
        [] => Some(0),
        [c] => Some(s.saves(c)),
        [a, b] => {
            let (lo, hi) = (a.min(b), a.max(b));
            let pair = s.pairs.iter().find(|p| (p.0, p.1) == (lo, hi))?;
            Some(s.measured_ns.saturating_sub(pair.2).max(0))
        }
        _ => None,
    }
}
