//! Causes absorb their symptoms (docs/advisor.md, "Explained by"): counterfactual attribution
//! on the replay. Finding B is explained by finding A when, with A's fix applied, B's fix
//! saves at most (1 − `explained_share`) of what it saves alone: most of B's time was A's.
//! When both explain each other, the narrower fix (fewer edges changed) leads, except that a
//! rule that observes lateness (a wait, a slow step, a spread) never leads the finding that
//! names what made the rank late.

use super::steps::WhatIf;
use crate::analysis::advisor::{Finding, Kind, fold};
use crate::time::Ns;
use std::cmp::Ordering;

/// Rules that observe lateness or exposure rather than name its cause: they never explain a
/// finding that names one, and one several causes explain together folds under the largest.
const SYMPTOMS: &[&str] = &[
    "comm_wait_dominated",
    "slow_step",
    "rank_imbalance",
    "poor_overlap",
];

/// Whether `rule` observes lateness rather than names its cause.
pub fn is_symptom(rule: &str) -> bool {
    SYMPTOMS.contains(&rule)
}

/// Whether finding `f` names an anomaly's cause: a problem that is no symptom. Together the
/// causes' fixes may explain a symptom or an opportunity (slower kernels on a straggler look
/// under-used) that none explains alone.
pub fn is_cause(f: &Finding) -> bool {
    f.kind == Kind::Problem && !is_symptom(f.rule)
}

/// The what-if columns of every cause's fix together, and of each other finding's (symptoms,
/// opportunities) on top.
#[derive(Debug, Clone, Default)]
pub struct Together {
    /// The column of the causes' fixes ([`is_cause`]) applied together.
    pub causes: usize,
    /// Per other finding (its position): the column of the causes' fixes and its own.
    pub with: Vec<(usize, usize)>,
}

/// A finding folded under the finding of its cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explained {
    /// The cause's position among the findings.
    pub cause: usize,
    /// What the symptom's own fix still saves with the cause's fix applied.
    pub remains_ns: Ns,
}

/// A finding as the attribution sees it: its fix's column in the what-if and its saving.
#[derive(Debug, Clone, Copy)]
struct Node {
    fix: usize,
    saves: Ns,
    changed: u64,
    symptom: bool,
    cause: bool,
}

/// Per finding (in `findings` order): the finding it is explained by, if any. `index[k]` is
/// finding k's fix column in `w` (`None`: not replayed, never explained nor explaining).
/// Only findings whose fix saves at least `min_ns` take part: below it, what a fix saves is
/// the replay's noise, and no cause is named on it.
pub fn attribute(
    findings: &[Finding],
    index: &[Option<usize>],
    w: &WhatIf,
    share: f64,
    min_ns: Ns,
    together: Option<&Together>,
) -> Vec<Option<Explained>> {
    let nodes: Vec<Option<Node>> = findings
        .iter()
        .zip(index)
        .map(|(f, k)| {
            let fix = (*k)?;
            let saves = w.saves(fix).filter(|&s| s > 0 && s >= min_ns)?;
            Some(Node {
                fix,
                saves,
                changed: w.changed(fix),
                symptom: is_symptom(f.rule),
                cause: is_cause(f),
            })
        })
        .collect();
    let remains = |b: Node, a: Node| w.saves_after(b.fix, a.fix);
    let explains = |a: usize, b: usize| -> bool {
        let (Some(na), Some(nb)) = (nodes[a], nodes[b]) else {
            return false;
        };
        // A symptom never explains a cause, nor an opportunity a problem: what any healthy
        // job could gain does not absorb an anomaly of this one.
        let observes = na.symptom && !nb.symptom;
        let gain = findings[a].kind == Kind::Opportunity && findings[b].kind == Kind::Problem;
        a != b && !observes && !gain && (remains(nb, na) as f64) <= (1.0 - share) * nb.saves as f64
    };
    let n = nodes.len();
    // by[b][a]: a explains b, each pair that explains itself both ways kept one way.
    let mut by: Vec<Vec<bool>> = (0..n)
        .map(|b| (0..n).map(|a| explains(a, b)).collect())
        .collect();
    for b in 0..n {
        for a in 0..b {
            if by[b][a] && by[a][b] {
                let (Some(na), Some(nb)) = (nodes[a], nodes[b]) else {
                    continue;
                };
                if leads(na, nb, &findings[a], &findings[b]) == Ordering::Less {
                    by[a][b] = false;
                } else {
                    by[b][a] = false;
                }
            }
        }
    }
    let mut out = fold_rounds(&nodes, &by, |b, a| {
        remains(nodes[b].unwrap(), nodes[a].unwrap())
    });
    if let Some(t) = together {
        fold_together(&nodes, &mut out, t, w, share);
    }
    out
}

/// A symptom or opportunity no single cause explains, which the causes' fixes together do
/// (its fix saves at most 1 − `share` of its own on top of theirs), folds under the cause
/// that saves the most.
fn fold_together(
    nodes: &[Option<Node>],
    out: &mut [Option<Explained>],
    t: &Together,
    w: &WhatIf,
    share: f64,
) {
    let Some(cause) = (0..nodes.len())
        .filter(|&a| out[a].is_none() && nodes[a].is_some_and(|n| n.cause))
        .max_by_key(|&a| (nodes[a].map_or(0, |n| n.saves), usize::MAX - a))
    else {
        return;
    };
    for &(b, col) in &t.with {
        let Some(nb) = nodes.get(b).copied().flatten() else {
            continue;
        };
        let remains = w.gain(t.causes, col);
        if out[b].is_none() && (remains as f64) <= (1.0 - share) * nb.saves as f64 {
            out[b] = Some(Explained {
                cause,
                remains_ns: remains,
            });
        }
    }
}

/// Whether `a` leads `b` (`Less`) when each explains the other: a symptom yields; else the
/// finding the precedence rules name the cause ([`fold::always_folds`]: one fix measured
/// two ways); else the narrower fix; else the larger saving; else the rule id.
fn leads(a: Node, b: Node, fa: &Finding, fb: &Finding) -> Ordering {
    let folds_into = |x: &Finding, y: &Finding| fold::always_folds(x.rule, y.rule);
    a.symptom
        .cmp(&b.symptom)
        .then(folds_into(fa, fb).cmp(&folds_into(fb, fa)))
        .then(a.changed.cmp(&b.changed))
        .then(b.saves.cmp(&a.saves))
        .then(fa.rule.cmp(fb.rule))
}

/// Roots are the findings nothing left open explains; each open finding a root explains
/// folds under the one of them that saves the most; repeated over what is left (a cycle is
/// broken at the finding that saves the most).
fn fold_rounds(
    nodes: &[Option<Node>],
    by: &[Vec<bool>],
    remains: impl Fn(usize, usize) -> Ns,
) -> Vec<Option<Explained>> {
    let saves = |i: usize| nodes[i].map_or(0, |n| n.saves);
    let mut out = vec![None; nodes.len()];
    let mut open: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].is_some()).collect();
    while !open.is_empty() {
        let mut roots: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&b| !open.iter().any(|&a| by[b][a]))
            .collect();
        if roots.is_empty() {
            roots.extend(
                open.iter()
                    .copied()
                    .max_by_key(|&i| (saves(i), usize::MAX - i)),
            );
        }
        open.retain(|i| !roots.contains(i));
        open.retain(|&b| {
            let cause = roots
                .iter()
                .copied()
                .filter(|&a| by[b][a])
                .max_by_key(|&a| (saves(a), usize::MAX - a));
            if let Some(a) = cause {
                out[b] = Some(Explained {
                    cause: a,
                    remains_ns: remains(b, a),
                });
            }
            cause.is_none()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(saves: Ns, changed: u64) -> Option<Node> {
        Some(Node {
            fix: 0,
            saves,
            changed,
            symptom: false,
            cause: true,
        })
    }

    #[test]
    fn a_chain_folds_into_its_root_and_a_cycle_breaks_at_the_largest() {
        // 0 explains 1, 1 explains 2, 0 does not explain 2: 2 is left a root of its own
        // once 1 has folded under 0.
        let nodes = [node(10, 1), node(8, 1), node(5, 1), None];
        let mut by = vec![vec![false; 4]; 4];
        by[1][0] = true;
        by[2][1] = true;
        let out = fold_rounds(&nodes, &by, |_, _| 1);
        assert_eq!(out[0], None);
        assert_eq!(
            out[1],
            Some(Explained {
                cause: 0,
                remains_ns: 1
            })
        );
        assert_eq!(out[2], None);
        assert_eq!(out[3], None);
        // A three-cycle: the largest saving is the root, and it explains one of the others,
        // which then folds; the third explained only by that one stays.
        let mut by = vec![vec![false; 4]; 4];
        by[0][1] = true;
        by[1][2] = true;
        by[2][0] = true;
        let out = fold_rounds(&nodes, &by, |_, _| 0);
        assert_eq!(out[0], None);
        assert_eq!(out[2].map(|e| e.cause), Some(0));
        assert_eq!(out[1], None);
    }

    #[test]
    fn a_symptom_yields_and_else_the_narrower_fix_leads() {
        use crate::analysis::advisor::rules::communication::Claim as Comm;
        use crate::analysis::advisor::{Category, Claim, Draft};
        let f = |rule| {
            let c = Comm::PoorOverlap {
                ratio: 0.0,
                exposed_ns: 0,
                exposed_share: 0.0,
            };
            Draft::new(0, Claim::Communication(c)).finish(rule, Category::Parallel)
        };
        let wide = Node {
            fix: 0,
            saves: 10,
            changed: 100,
            symptom: false,
            cause: true,
        };
        let narrow = Node { changed: 5, ..wide };
        let (fa, fb) = (f("stage_imbalance"), f("dataloader"));
        assert_eq!(leads(narrow, wide, &fa, &fb), Ordering::Less);
        let wait = Node {
            symptom: true,
            cause: false,
            ..narrow
        };
        assert_eq!(leads(wait, wide, &fa, &fb), Ordering::Greater);
    }
}
