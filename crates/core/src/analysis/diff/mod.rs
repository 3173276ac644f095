//! Two runs compared (`stepscope diff`; docs/metrics.md, "Diff"): steps aligned, the step
//! time's change split into the breakdown's parts and by rank, operators lined up by a longest
//! common subsequence, collectives, the critical path and the findings side by side. Pure:
//! two jobs and their analyses in, a [`Diff`] out.

pub mod collectives;
pub mod host;
pub mod names;
pub mod ops;
pub mod others;
pub mod parts;
pub mod sequence;
pub mod steps;

use crate::analysis::Analysis;
use crate::analysis::ops::OpBasis;
use crate::model::Job;
use rayon::prelude::*;
use serde::Serialize;

pub use collectives::CollDelta;
pub use ops::{Matched, OpDiff, OpRow};
pub use others::{FindingDelta, PathDelta, Status};
pub use parts::{Delta, PartDelta, Parts, RankDelta};
pub use steps::{StepAlign, StepPair};

/// One run: its job and its analysis.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// The job.
    pub job: &'a Job,
    /// Its analysis.
    pub analysis: &'a Analysis,
}

/// How to compare.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// How steps line up.
    pub steps: StepAlign,
    /// Names of the first run to read as names of the second (`--op-map A=B`).
    pub op_map: Vec<(String, String)>,
}

/// What changed between two runs.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// `number`, `order` or `pairs`.
    pub aligned_by: &'static str,
    /// `id`, or `order` (no shared id, as many ranks: paired by position).
    pub ranks_by: &'static str,
    /// The aligned steps and their cluster step times.
    pub pairs: Vec<StepPair>,
    /// Σ cluster step time over the pairs.
    pub step: Delta,
    /// What operator time is (`device` or `host_self`).
    pub basis: &'static str,
    /// The change split into parts and by rank.
    pub parts: Parts,
    /// Operators and kernels.
    pub ops: OpDiff,
    /// Collectives per aligned step.
    pub collectives: Vec<CollDelta>,
    /// The critical paths.
    pub critical_path: Option<PathDelta>,
    /// Host-side work by role: host time and device idle per step.
    pub host: Vec<host::HostDelta>,
    /// The findings.
    pub findings: Vec<FindingDelta>,
}

impl Diff {
    /// The step time's change as a fraction of the first run's (`None`: it had no time).
    pub fn step_ratio(&self) -> Option<f64> {
        self.step.ratio()
    }

    /// Mean cluster step time over the pairs, each run.
    pub fn mean_step_ns(&self) -> [f64; 2] {
        let n = self.pairs.len().max(1) as f64;
        [
            self.step.before_ns as f64 / n,
            self.step.after_ns as f64 / n,
        ]
    }
}

/// Compares `before` with `after`: `Err` says why the steps do not line up.
pub fn diff(before: Run, after: Run, opts: &DiffOptions) -> Result<Diff, String> {
    let (ab, aa) = (before.analysis, after.analysis);
    let (aligned_by, pairs) = steps::align(&opts.steps, &ab.step_times, &aa.step_times)?;
    let step = pairs.iter().fold(Delta::default(), |d, p| Delta {
        before_ns: d.before_ns + p.before_ns,
        after_ns: d.after_ns + p.after_ns,
    });
    // One basis for both: device time where both ran device work, else host time.
    let basis = if ab.op_basis == OpBasis::Device && aa.op_basis == OpBasis::Device {
        OpBasis::Device
    } else {
        OpBasis::HostSelf
    };
    let ids = |j: &Job| j.ranks.iter().map(|r| r.id).collect::<Vec<_>>();
    let (ranks, ranks_by) = parts::rank_pairs(&ids(before.job), &ids(after.job));
    Ok(Diff {
        aligned_by,
        ranks_by,
        step,
        basis: basis.as_str(),
        parts: parts::parts(&ab.breakdown, &aa.breakdown, &pairs, &ranks),
        ops: operators(before.job, after.job, &pairs, &ranks, basis, &opts.op_map),
        collectives: collectives::collectives(ab, aa, &pairs),
        critical_path: changed_path(&before, &after, &pairs),
        host: host::host(ab, aa),
        findings: others::findings(ab, aa),
        pairs,
    })
}

/// The critical paths of the step pair whose time changed most: each run's analysed path
/// when that is the pair (or a window the user named), else both walked again.
fn changed_path(before: &Run, after: &Run, pairs: &[StepPair]) -> Option<others::PathDelta> {
    use crate::analysis::critical_path::{Window, critical_path};
    let (pb, pa) = (
        before.analysis.critical_path.as_ref(),
        after.analysis.critical_path.as_ref(),
    );
    let most = pairs
        .iter()
        .max_by_key(|p| (p.delta_ns().unsigned_abs(), std::cmp::Reverse(p.before)))?;
    let windows = (Window::Step(most.before), Window::Step(most.after));
    let analysed = (pb.map(|p| &p.window), pa.map(|p| &p.window));
    let steps = |w: Option<&Window>| matches!(w, Some(Window::Step(_)) | None);
    if !(steps(analysed.0) && steps(analysed.1))
        || (analysed.0 == Some(&windows.0) && analysed.1 == Some(&windows.1))
    {
        return others::path(pb, pa);
    }
    let b = critical_path(before.job, &before.analysis.comm, &windows.0);
    let a = critical_path(after.job, &after.analysis.comm, &windows.1);
    others::path(b.as_ref(), a.as_ref())
}

/// The operator diff over the ranks both jobs have.
fn operators(
    b: &Job,
    a: &Job,
    pairs: &[StepPair],
    ranks: &[(crate::model::RankId, crate::model::RankId)],
    basis: OpBasis,
    op_map: &[(String, String)],
) -> OpDiff {
    let names = names::Names::new(&b.strings, &a.strings, op_map);
    let common: Vec<(&crate::model::Rank, &crate::model::Rank)> = ranks
        .iter()
        .filter_map(|&(x, y)| Some((b.rank(b.rank_ix(x)?), a.rank(a.rank_ix(y)?))))
        .collect();
    let seqs: Vec<(sequence::Sequence, sequence::Sequence)> = common
        .par_iter()
        .map(|(rb, ra)| {
            (
                sequence::sequence(rb, &b.roles, &names.before, basis),
                sequence::sequence(ra, &a.roles, &names.after, basis),
            )
        })
        .collect();
    let rank_pairs: Vec<ops::RankPair> = common
        .iter()
        .zip(&seqs)
        .map(|(&(rb, ra), (sb, sa))| ops::RankPair {
            ranks: (rb, ra),
            seqs: (sb, sa),
        })
        .collect();
    ops::op_diff(&names, &rank_pairs, pairs, op_map)
}
