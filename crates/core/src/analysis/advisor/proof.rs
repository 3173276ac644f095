//! Where a finding's proof is: its typed [`Focus`] resolved against the job into the view
//! that shows it and the exact event to select there — the loader range on the stalled rank,
//! the blocking call, the collective the others wait at for the straggler, the slow step's
//! culprit row. Pure over the model and the analysis: the TUI opens what this says, and a
//! test can follow every finding to its proof without drawing anything.

use super::{Finding, Focus, HostCall, View};
use crate::analysis::Analysis;
use crate::analysis::breakdown::Part;
use crate::analysis::timeline;
use crate::model::{EventIx, Job, Kind, Rank, RankId, RankIx, Role, StepNo, Sym};
use crate::time::Ns;
use rayon::prelude::*;

/// The view a proof opens and what it selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One rank's lanes (host threads and device streams) in a step, with a band selected
    /// and the view zoomed on it.
    RankLanes {
        /// The rank.
        rank: RankIx,
        /// The step.
        step: StepNo,
        /// The band to select (an event of that rank).
        band: Option<EventIx>,
        /// The kind of host call the band is, when a host call is the culprit.
        call: Option<HostCall>,
    },
    /// Every rank's row in a step, a rank's row (and a band on it) selected.
    Cluster {
        /// The step.
        step: StepNo,
        /// The row to select.
        rank: Option<RankIx>,
        /// The band to select (an event of that rank).
        band: Option<EventIx>,
        /// Else the gap of that rank's row to put the cursor on (aligned start, end).
        gap: Option<(Ns, Ns)>,
    },
    /// The communication view.
    Comm {
        /// The step to show.
        step: Option<StepNo>,
        /// The rank row to select.
        rank: Option<RankId>,
        /// Only collectives of at most this many bytes.
        max_bytes: Option<u64>,
    },
    /// The critical path of a step.
    Critical {
        /// The step.
        step: Option<StepNo>,
    },
    /// An operator across the job.
    Operator {
        /// Its name.
        name: Sym,
        /// The step to show.
        step: Option<StepNo>,
    },
    /// A rank's device view.
    Device {
        /// The rank.
        rank: RankIx,
        /// The step to show.
        step: Option<StepNo>,
    },
    /// A view without a selection.
    View(View),
}

/// Where Enter on finding `f` lands.
pub fn land(job: &Job, a: &Analysis, f: &Finding) -> Target {
    let ev = &f.evidence;
    let step = ev.steps.first().copied();
    let rank = ev.ranks.first().and_then(|&id| job.rank_ix(id));
    let comm = |max_bytes| Target::Comm {
        step,
        rank: ev.ranks.first().copied(),
        max_bytes,
    };
    let found = match f.focus {
        Focus::Comm => Some(comm(None)),
        Focus::SmallCalls(max) => Some(comm(Some(max))),
        Focus::CriticalPath => Some(Target::Critical { step }),
        Focus::Evidence(view) => Some(evidence(job, f, view)),
        Focus::HostCall(call) => host_call(job, f, call),
        Focus::LateArrival(id) => job.rank_ix(id).and_then(|r| late_arrival(job, a, f, r)),
        Focus::SlowRank => step.map(|s| slow_rank(job, a, s)),
        Focus::Rows => step.map(|s| Target::Cluster {
            step: s,
            rank,
            band: None,
            gap: None,
        }),
        Focus::RankLanes => lanes(job, a, f),
    };
    // A proof that finds nothing (a step outside the window, no such call) still opens
    // the evidence's rank or view.
    found.unwrap_or_else(|| evidence(job, f, View::Overview))
}

/// The first evidence operator that names one, else the first rank's device view, else
/// `view`.
fn evidence(job: &Job, f: &Finding, view: View) -> Target {
    let ev = &f.evidence;
    let step = ev.steps.first().copied();
    if let Some(name) = ev.ops.iter().find_map(|o| job.strings.get(o)) {
        return Target::Operator { name, step };
    }
    match ev.ranks.first().and_then(|&id| job.rank_ix(id)) {
        Some(rank) => Target::Device { rank, step },
        None => Target::View(view),
    }
}

/// True for a name of role `call`.
fn is_call(role: &Role, call: HostCall) -> bool {
    match call {
        HostCall::DataLoader => role.data_loader,
        HostCall::Blocking => role.is_blocking(),
        HostCall::Allocator => role.allocator,
        HostCall::Graph => role.graph.is_some(),
        HostCall::Gc => role.gc,
        HostCall::OnlineCompile => role.online_compile,
        HostCall::Pageable => role.pageable.is_some(),
    }
}

/// The ranks a finding names, else every rank.
fn ranks_of(job: &Job, f: &Finding) -> Vec<RankIx> {
    let named: Vec<RankIx> = f
        .evidence
        .ranks
        .iter()
        .filter_map(|&id| job.rank_ix(id))
        .collect();
    if named.is_empty() {
        (0..job.ranks.len()).map(RankIx::of).collect()
    } else {
        named
    }
}

/// The longest host event of role `call` on the finding's ranks and in its steps (any step
/// when it names none; only events inside a step: a view shows a step).
fn host_call(job: &Job, f: &Finding, call: HostCall) -> Option<Target> {
    let steps = &f.evidence.steps;
    let in_scope = |s: Option<StepNo>| s.is_some_and(|s| steps.is_empty() || steps.contains(&s));
    let best = ranks_of(job, f)
        .into_par_iter()
        .filter_map(|r| {
            let rank = job.rank(r);
            let e = &rank.events;
            let i = longest(rank, |i| {
                matches!(
                    e.kind[i],
                    Kind::HostOp | Kind::Launch | Kind::Annotation | Kind::Other
                ) && is_call(job.role(e.name[i]), call)
                    && in_scope(rank.step_of(i))
            })?;
            Some((e.dur[i], r, rank.step_of(i)?, i))
        })
        // Longest first; ties: the lower rank.
        .max_by_key(|&(d, r, _, _)| (d, std::cmp::Reverse(r.get())))?;
    let (_, rank, step, i) = best;
    Some(Target::RankLanes {
        rank,
        step,
        band: Some(EventIx::of(i)),
        call: Some(call),
    })
}

/// The longest event of a rank that `keep` accepts (ties: the earliest).
fn longest(rank: &Rank, keep: impl Fn(usize) -> bool) -> Option<usize> {
    let e = &rank.events;
    (0..e.len())
        .filter(|&i| keep(i))
        .max_by_key(|&i| (e.dur[i], std::cmp::Reverse(i)))
}

/// The matched collective where rank `r` arrived last with the most wait by the others (in
/// the finding's steps), its band on `r`'s row of the cluster timeline.
fn late_arrival(job: &Job, a: &Analysis, f: &Finding, r: RankIx) -> Option<Target> {
    let id = job.rank(r).id;
    let steps = &f.evidence.steps;
    let comm = &a.comm;
    let (inst, _) = comm
        .instances()
        .filter(|(i, t)| {
            !i.op.is_p2p()
                && t.timing.last_arriver == id
                && i.step
                    .is_some_and(|s| steps.is_empty() || steps.contains(&s))
        })
        .max_by_key(|(i, t)| (t.timing.wait_ns, std::cmp::Reverse(i.index)))?;
    let m = inst.members.iter().find(|m| m.rank == r)?;
    let event = comm.calls.per_rank[r.get()][m.call as usize].event;
    Some(Target::Cluster {
        step: inst.step?,
        rank: Some(r),
        band: Some(event),
        gap: None,
    })
}

/// A slow step's culprit row on the cluster timeline; when what grew in the culprit is idle
/// device time (host-bound or free), the cursor on the longest gap of its row: the stall.
fn slow_rank(job: &Job, a: &Analysis, step: StepNo) -> Target {
    let rank = culprit(job, a, step);
    let slow = a.slow_steps.iter().find(|s| s.step == step);
    let idle = slow
        .is_some_and(|s| !s.shared_growth && matches!(s.part, Some(Part::HostBound | Part::Free)));
    let gap = rank.filter(|_| idle).and_then(|r| {
        let t = timeline::cluster(job, &a.spans, &a.comm.offsets, step);
        let row = t.rows.iter().find(|x| x.rank_index == r)?;
        row.longest_gap((t.start, t.end))
    });
    Target::Cluster {
        step,
        rank,
        band: None,
        gap,
    }
}

/// The rank a slow step blames, else the rank with the longest span in it.
fn culprit(job: &Job, a: &Analysis, step: StepNo) -> Option<RankIx> {
    let named = a
        .slow_steps
        .iter()
        .find(|s| s.step == step)
        .and_then(|s| s.culprit_rank)
        .and_then(|id| job.rank_ix(id));
    named.or_else(|| slowest(a, step))
}

/// The rank whose span of `step` is the longest (ties: the lower rank).
fn slowest(a: &Analysis, step: StepNo) -> Option<RankIx> {
    let len = |spans: &[crate::analysis::steps::StepSpan]| -> Option<Ns> {
        spans.iter().find(|s| s.number == step).map(|s| s.len())
    };
    (0..a.spans.len())
        .filter_map(|i| Some((len(&a.spans[i])?, i)))
        .max_by_key(|&(l, i)| (l, std::cmp::Reverse(i)))
        .map(|(_, i)| RankIx::of(i))
}

/// The lanes of the finding's first rank (else the step's slowest) in its first step (else
/// the slowest step).
fn lanes(job: &Job, a: &Analysis, f: &Finding) -> Option<Target> {
    let step = f.evidence.steps.first().copied().or(a.slowest_step)?;
    let rank = f
        .evidence
        .ranks
        .first()
        .and_then(|&id| job.rank_ix(id))
        .or_else(|| slowest(a, step))?;
    Some(Target::RankLanes {
        rank,
        step,
        band: None,
        call: None,
    })
}
