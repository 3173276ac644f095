//! The critical path and the findings of two runs side by side (docs/metrics.md, "Diff").
//! Findings are per step: each run's impact over its own profiled steps divided by their
//! number, so runs of different lengths compare.

use super::parts::Delta;
use crate::analysis::Analysis;
use crate::analysis::critical_path::{Category, CriticalPath, Window};
use crate::model::RankId;
use crate::time::Ns;
use serde::Serialize;

/// Profiled steps of a run (at least 1: a divisor).
pub fn steps(a: &Analysis) -> Ns {
    (a.step_times.len() as Ns).max(1)
}

/// The critical paths of the two runs: time per category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathDelta {
    /// Each run's window (a step, or an annotation's instance).
    pub windows: [Window; 2],
    /// The path's length.
    pub total: Delta,
    /// Per category, every category (an object keyed by category name).
    #[serde(serialize_with = "by_name")]
    pub categories: Vec<(Category, Delta)>,
}

fn by_name<S: serde::Serializer>(c: &[(Category, Delta)], s: S) -> Result<S::Ok, S::Error> {
    let m: std::collections::BTreeMap<&str, Delta> =
        c.iter().map(|(k, d)| (k.as_str(), *d)).collect();
    m.serialize(s)
}

/// The critical-path comparison, when both runs have a path.
pub fn path(before: Option<&CriticalPath>, after: Option<&CriticalPath>) -> Option<PathDelta> {
    let (b, a) = (before?, after?);
    Some(PathDelta {
        windows: [b.window.clone(), a.window.clone()],
        total: Delta {
            before_ns: b.total_ns,
            after_ns: a.total_ns,
        },
        categories: Category::ALL
            .iter()
            .map(|&c| {
                (
                    c,
                    Delta {
                        before_ns: b.time_in(c),
                        after_ns: a.time_in(c),
                    },
                )
            })
            .collect(),
    })
}

/// What became of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Only the second run has it.
    Appeared,
    /// Only the first run has it, or its impact per step fell by at least
    /// [`RESOLVED_FALL`].
    Resolved,
    /// Both have it, its impact per step lower in the second.
    Improved,
    /// Both have it, its impact per step not lower.
    Persists,
}

/// A finding whose impact per step fell by at least this share is resolved.
pub const RESOLVED_FALL: f64 = 0.9;

impl Status {
    /// Of a finding with impact per step `before` and `after` in the two runs.
    fn of(before: Ns, after: Option<Ns>) -> Status {
        match after {
            None => Status::Resolved,
            Some(a) if before > 0 && (before - a) as f64 >= RESOLVED_FALL * before as f64 => {
                Status::Resolved
            }
            Some(a) if a < before => Status::Improved,
            Some(_) => Status::Persists,
        }
    }
}

/// One finding in the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingDelta {
    /// Its rule.
    pub rule: &'static str,
    /// Appeared, resolved or persists.
    pub status: Status,
    /// Its position in each run's findings.
    pub index: [Option<usize>; 2],
    /// Its ranks (the second run's where it has it).
    pub ranks: Vec<RankId>,
    /// Its impact per step in each run (0 where absent).
    pub impact: Delta,
    /// A resolved finding's saving per step as the first run's replay predicted it.
    pub predicted_ns: Option<Ns>,
}

/// The findings: matched by (rule, ranks), then by rule; those worth nothing in both runs
/// left out.
pub fn findings(before: &Analysis, after: &Analysis) -> Vec<FindingDelta> {
    let (fb, fa) = (&before.findings, &after.findings);
    let (nb, na) = (steps(before), steps(after));
    let mut pair: Vec<Option<usize>> = vec![None; fb.len()];
    let mut used = vec![false; fa.len()];
    for strict in [true, false] {
        for (i, f) in fb.iter().enumerate() {
            if pair[i].is_some() {
                continue;
            }
            let hit = (0..fa.len()).find(|&k| {
                !used[k]
                    && fa[k].rule == f.rule
                    && (!strict || fa[k].evidence.ranks == f.evidence.ranks)
            });
            if let Some(k) = hit {
                pair[i] = Some(k);
                used[k] = true;
            }
        }
    }
    let mut out: Vec<FindingDelta> = fb
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let a = pair[i].map(|k| &fa[k]);
            let status = Status::of(f.impact_ns / nb, a.map(|a| a.impact_ns / na));
            FindingDelta {
                rule: f.rule,
                status,
                index: [Some(i), pair[i]],
                ranks: a.unwrap_or(f).evidence.ranks.clone(),
                impact: Delta {
                    before_ns: f.impact_ns / nb,
                    after_ns: a.map_or(0, |a| a.impact_ns / na),
                },
                predicted_ns: if status == Status::Resolved {
                    f.saves_ns.map(|s| s / nb)
                } else {
                    None
                },
            }
        })
        .collect();
    out.extend(
        fa.iter()
            .enumerate()
            .filter(|(k, _)| !used[*k])
            .map(|(k, f)| FindingDelta {
                rule: f.rule,
                status: Status::Appeared,
                index: [None, Some(k)],
                ranks: f.evidence.ranks.clone(),
                impact: Delta {
                    before_ns: 0,
                    after_ns: f.impact_ns / na,
                },
                predicted_ns: None,
            }),
    );
    // A finding worth nothing in either run tells no story ("resolved 0 ns → 0 ns").
    out.retain(|d| d.impact.before_ns > 0 || d.impact.after_ns > 0);
    out.sort_by_key(|d| std::cmp::Reverse(d.impact.delta_ns().unsigned_abs()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_whose_impact_fell_by_nine_tenths_is_resolved() {
        assert_eq!(Status::of(100, None), Status::Resolved);
        assert_eq!(Status::of(100, Some(10)), Status::Resolved);
        assert_eq!(Status::of(100, Some(40)), Status::Improved);
        assert_eq!(Status::of(100, Some(100)), Status::Persists);
        assert_eq!(Status::of(100, Some(120)), Status::Persists);
        assert_eq!(Status::of(0, Some(0)), Status::Persists);
    }
}
