//! Stragglers and part imbalance per communication domain (see the module above).

use super::{IMBALANCE, MIN_STEPS_FOR_PERSISTENCE, PERSISTENCE, STRAGGLER_SHARE};
use crate::analysis::breakdown::{Breakdown, Part};
use crate::analysis::comm::Comm;
use crate::analysis::comm::waits::Unions;
use crate::analysis::stats::median_sorted;
use crate::analysis::steps::StepSpan;
use crate::model::{Job, RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One step of a straggler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StragglerStep {
    /// Step number.
    pub step: Option<StepNo>,
    /// Instances it arrived last at.
    pub last_arrivals: u64,
    /// Wait it imposed.
    pub imposed_wait_ns: Ns,
    /// Wait it imposed in this step across every group, as a union per waiting rank (two
    /// groups in flight at once charge a moment once): what a straggler of several groups
    /// costs. Not in the JSON report.
    #[serde(skip)]
    pub any_group_wait_ns: Ns,
}

/// A breakdown part of a rank against its domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartExcess {
    /// The own-work part.
    pub part: Part,
    /// The rank's Σ over its steps.
    pub rank_ns: Ns,
    /// The domain members' median of that Σ.
    pub median_ns: Ns,
}

/// A rank the others in a domain waited for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Straggler {
    /// Group name.
    pub group: String,
    /// Rank id.
    pub rank: RankId,
    /// Instances it arrived last at (with a nonzero skew).
    pub last_arrivals: u64,
    /// Instances of the domain it took part in.
    pub instances: u64,
    /// The loaded ranks of the domain (those the others' wait is measured on and spread
    /// over), with this one whether loaded or not. Not in the JSON report (schema
    /// `stepscope.report/1`).
    #[serde(skip)]
    pub members: u64,
    /// Σ over the others and steps of the union of their waits at the instances it arrived
    /// last at.
    pub imposed_wait_ns: Ns,
    /// The part of that wait at instances where it entered the step late: at least half the
    /// arrival skew was there before the step began (its delay is older than the window).
    pub late_entry_wait_ns: Ns,
    /// imposed_wait / all the waiting in the domain.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub share: f64,
    /// Steps in which it imposed the most wait, of `steps_with_wait`.
    pub top_steps: u64,
    /// Steps of the domain in which anyone waited.
    pub steps_with_wait: u64,
    /// Persistent: `top_steps` ≥ [`PERSISTENCE`] × `steps_with_wait` (with at least
    /// [`MIN_STEPS_FOR_PERSISTENCE`] steps; else share ≥ [`STRAGGLER_SHARE`]), and not mostly
    /// late entry (a rank that only starts steps late is not slow in them).
    pub flagged: bool,
    /// Parts above the domain median by more than [`IMBALANCE`] of the mean span.
    pub excess: Vec<PartExcess>,
    /// Its own trace is loaded. A rank that is not was found by the waits its peers
    /// measured for it (HCCL `Notify_Wait`): its arrivals are known, its work is not.
    pub loaded: bool,
    /// The collective (its event name on a waiting rank) at whose instance it imposed the
    /// most wait: where to look.
    pub worst_collective: Option<String>,
    /// Per step.
    pub steps: Vec<StragglerStep>,
}

/// Spread of one part over a domain's members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imbalance {
    /// Group name.
    pub group: String,
    /// The own-work part.
    pub part: Part,
    /// Rank with the most.
    pub max_rank: RankId,
    /// Its Σ.
    pub max_ns: Ns,
    /// Rank with the least.
    pub min_rank: RankId,
    /// Its Σ.
    pub min_ns: Ns,
    /// (max − min) / mean Σ span.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub spread: f64,
    /// spread > [`IMBALANCE`].
    pub flagged: bool,
}

/// One rank's arrivals in a domain.
#[derive(Default)]
struct RankWaits {
    /// Instances it arrived last at.
    last: u64,
    /// Instances it took part in.
    instances: u64,
    /// Σ of the others' waits at those.
    imposed: Ns,
    /// The part of it at instances it entered the step late.
    late_entry: Ns,
    /// Per step: (last arrivals, imposed wait).
    steps: BTreeMap<Option<StepNo>, (u64, Ns)>,
    /// Instances whose last arrival was measured by the peers' waits, not its own start.
    measured: u64,
    /// The instance (index in `comm.instances()`) it imposed the most wait at, with that
    /// wait.
    worst: Option<(Ns, usize)>,
}

impl RankWaits {
    /// Whether the rank is loaded: it took part with its own call at some instance.
    fn loaded(&self) -> bool {
        self.measured < self.instances || self.instances == 0
    }
}

/// The waiting in one domain: per member, and all of it.
struct DomainWaits {
    ranks: BTreeMap<RankId, RankWaits>,
    total: Ns,
}

/// Σ own-work parts and span over the steps in scope, per member.
struct PartSums {
    per_rank: BTreeMap<RankId, ([Ns; 4], Ns)>,
    mean_span: f64,
}

/// Stragglers and imbalance of every domain with at least two ranks present. A domain
/// whose ranks are in different pipeline `stages` is left out: arrivals there are paced by
/// the pipeline (its drain, a heavier stage: the stage analysis's), and a slow worker shows
/// in the domains it shares with its own stage's peers.
pub fn stragglers(
    job: &Job,
    comm: &Comm,
    rows: &[Breakdown],
    spans: &[Vec<StepSpan>],
    step: Option<StepNo>,
    stages: Option<&[super::Stage]>,
) -> (Vec<Straggler>, Vec<Imbalance>) {
    let mut out = Vec::new();
    let mut imbalance = Vec::new();
    let across = cross_stage_groups(comm, stages);
    let any_group = imposed_any_group(comm, step, &across);
    for (g, group) in comm.calls.groups.iter().enumerate() {
        if across.contains(&(g as u32)) {
            continue;
        }
        let mut waits = domain_waits(comm, spans, g as u32, step);
        if waits.ranks.len() < 2 {
            continue;
        }
        let members: BTreeSet<RankId> = waits.ranks.keys().copied().collect();
        let sums = part_sums(rows, &members, step);
        let (medians, spread) = part_spread(&sums, &group.name);
        imbalance.extend(spread);
        let top = top_imposers(&waits);
        let domain = Domain {
            any_group: &any_group,
            group: &group.name,
            // A rank that is not loaded waited unseen: the waits are the loaded ranks'.
            members: waits.ranks.values().filter(|r| r.loaded()).count() as u64,
            total_wait: waits.total,
            top: &top,
            sums: &sums,
            medians: &medians,
            pipeline: stages.is_some(),
        };
        let names: BTreeMap<RankId, String> = waits
            .ranks
            .iter()
            .filter_map(|(&r, a)| Some((r, collective_name(job, comm, a.worst?.1)?)))
            .collect();
        let mut ranked: Vec<Straggler> = std::mem::take(&mut waits.ranks)
            .into_iter()
            .filter(|(_, a)| a.last > 0)
            .map(|(rank, a)| {
                let mut s = straggler(&domain, rank, a);
                s.worst_collective = names.get(&rank).cloned();
                s
            })
            .collect();
        ranked.sort_by_key(|s| (std::cmp::Reverse(s.imposed_wait_ns), s.rank));
        out.extend(ranked);
    }
    (out, imbalance)
}

/// Who arrived last at the domain's (non-p2p) instances of `step`, and the wait it imposed:
/// each waiting rank's wait is a union per step ([`Unions`]), so two buckets in flight at
/// once charge their common waiting moment once — to the total and to each imposer.
fn domain_waits(comm: &Comm, spans: &[Vec<StepSpan>], g: u32, step: Option<StepNo>) -> DomainWaits {
    let mut w = DomainWaits {
        ranks: BTreeMap::new(),
        total: 0,
    };
    let mut total = Unions::default();
    let mut imposed = Unions::default();
    for (k, (inst, t)) in comm.instances().enumerate() {
        if inst.group != g || inst.op.is_p2p() || (step.is_some() && inst.step != step) {
            continue;
        }
        for x in &t.members {
            w.ranks.entry(x.rank).or_default().instances += 1;
            let last = x.start_ns + x.wait_ns;
            total.add((), x.rank, inst.step, x.start_ns, last);
            if t.timing.skew_ns > 0 {
                imposed.add(
                    (t.timing.last_arriver, inst.step),
                    x.rank,
                    inst.step,
                    x.start_ns,
                    last,
                );
            }
        }
        if t.timing.skew_ns > 0 {
            let late = late_entry(comm, spans, inst, t);
            let a = w.ranks.entry(t.timing.last_arriver).or_default();
            // A late rank that was not loaded took part all the same: its peers waited.
            if t.timing.last_arriver_measured {
                a.instances += 1;
                a.measured += 1;
            }
            if a.worst.is_none_or(|(w, _)| t.timing.wait_ns > w) {
                a.worst = Some((t.timing.wait_ns, k));
            }
            a.last += 1;
            a.steps.entry(inst.step).or_default().0 += 1;
            if late * 2 >= t.timing.skew_ns {
                a.late_entry += t.timing.wait_ns;
            }
        }
    }
    w.total = total.totals().into_values().sum();
    for ((rank, st), wait) in imposed.totals() {
        let a = w.ranks.entry(rank).or_default();
        a.imposed += wait;
        a.steps.entry(st).or_default().1 += wait;
    }
    w
}

/// The name of instance `k`'s call on its first member (`hcom_allReduce__586_0_1`,
/// `ncclDevKernel_AllReduce_Sum_bf16_RING_LL`), without a kernel's parameter list.
fn collective_name(job: &Job, comm: &Comm, k: usize) -> Option<String> {
    crate::analysis::comm::instance_name(job, &comm.calls, comm.matching.instances.get(k)?)
}

/// The groups whose members are in more than one pipeline stage (none without stages).
pub fn cross_stage_groups(comm: &Comm, stages: Option<&[super::Stage]>) -> BTreeSet<u32> {
    let Some(stages) = stages else {
        return BTreeSet::new();
    };
    let stage_of = super::stage_map(stages);
    comm.calls
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| super::spans_stages(&stage_of, &g.members))
        .map(|(g, _)| g as u32)
        .collect()
}

/// Per (last arriver, step): the union over every group's (non-p2p) instances it arrived
/// last at of each waiting rank's wait, summed over the waiting ranks; the groups `across`
/// pipeline stages left out.
fn imposed_any_group(
    comm: &Comm,
    step: Option<StepNo>,
    across: &BTreeSet<u32>,
) -> BTreeMap<(RankId, Option<StepNo>), Ns> {
    let mut imposed = Unions::default();
    for (inst, t) in comm.instances() {
        if inst.op.is_p2p()
            || (step.is_some() && inst.step != step)
            || t.timing.skew_ns == 0
            || across.contains(&inst.group)
        {
            continue;
        }
        for x in &t.members {
            let key = (t.timing.last_arriver, inst.step);
            imposed.add(key, x.rank, inst.step, x.start_ns, x.start_ns + x.wait_ns);
        }
    }
    imposed.totals()
}

/// How much later than the first member the last arriver entered the instance's step
/// (aligned span starts; 0 when a member's span is unknown).
fn late_entry(
    comm: &Comm,
    spans: &[Vec<StepSpan>],
    inst: &crate::analysis::comm::matching::Instance,
    t: &crate::analysis::comm::TimedInstance,
) -> Ns {
    let Some(step) = inst.step else { return 0 };
    let entry = |k: usize| -> Option<Ns> {
        let ix = inst.members[k].rank.get();
        let sp = spans.get(ix)?.iter().find(|s| s.number == step)?;
        Some(sp.start + comm.offsets[ix].offset_ns)
    };
    let last = t
        .members
        .iter()
        .position(|m| m.rank == t.timing.last_arriver);
    let entries: Option<Vec<Ns>> = (0..inst.members.len()).map(entry).collect();
    match (last, entries) {
        (Some(l), Some(e)) => e[l] - e.iter().copied().min().unwrap_or(e[l]),
        _ => 0,
    }
}

/// The top imposer of each step (ties: lowest rank): (wait, rank) per step.
fn top_imposers(w: &DomainWaits) -> BTreeMap<Option<StepNo>, (Ns, RankId)> {
    let mut top: BTreeMap<Option<StepNo>, (Ns, RankId)> = BTreeMap::new();
    for (&rank, a) in &w.ranks {
        for (&st, &(_, wait)) in &a.steps {
            let e = top.entry(st).or_insert((wait, rank));
            if wait > e.0 {
                *e = (wait, rank);
            }
        }
    }
    top
}

/// Σ own-work parts over the steps in scope per member, and the members' mean Σ span.
fn part_sums(rows: &[Breakdown], members: &BTreeSet<RankId>, step: Option<StepNo>) -> PartSums {
    let mut per_rank: BTreeMap<RankId, ([Ns; 4], Ns)> = BTreeMap::new();
    for b in rows.iter().filter(|b| members.contains(&b.rank)) {
        if step.is_some_and(|s| s != b.step) {
            continue;
        }
        let e = per_rank.entry(b.rank).or_default();
        for (k, v) in e.0.iter_mut().enumerate() {
            *v += b.own_part(Part::OWN_WORK[k]);
        }
        e.1 += b.span_ns;
    }
    let mean_span = if per_rank.is_empty() {
        0.0
    } else {
        per_rank.values().map(|s| s.1 as f64).sum::<f64>() / per_rank.len() as f64
    };
    PartSums {
        per_rank,
        mean_span,
    }
}

/// Per own-work part: the members' median Σ, and its spread over the domain.
fn part_spread(sums: &PartSums, group: &str) -> ([Ns; 4], Vec<Imbalance>) {
    let mut medians = [0; 4];
    let mut out = Vec::new();
    for (k, part) in Part::OWN_WORK.iter().enumerate() {
        let mut v: Vec<(Ns, RankId)> = sums.per_rank.iter().map(|(&r, s)| (s.0[k], r)).collect();
        if v.len() < 2 {
            continue;
        }
        v.sort_unstable();
        let vals: Vec<Ns> = v.iter().map(|x| x.0).collect();
        medians[k] = median_sorted(&vals);
        let min = v[0];
        let max = *v
            .iter()
            .max_by_key(|x| (x.0, std::cmp::Reverse(x.1)))
            .expect("two or more");
        let spread = if sums.mean_span > 0.0 {
            (max.0 - min.0) as f64 / sums.mean_span
        } else {
            0.0
        };
        out.push(Imbalance {
            group: group.to_string(),
            part: *part,
            max_rank: max.1,
            max_ns: max.0,
            min_rank: min.1,
            min_ns: min.0,
            spread,
            flagged: spread > IMBALANCE,
        });
    }
    (medians, out)
}

/// What every member of a domain is judged against.
struct Domain<'a> {
    /// Per (imposer, step): the wait it imposed across every group.
    any_group: &'a BTreeMap<(RankId, Option<StepNo>), Ns>,
    group: &'a str,
    members: u64,
    total_wait: Ns,
    /// The top imposer of each step.
    top: &'a BTreeMap<Option<StepNo>, (Ns, RankId)>,
    sums: &'a PartSums,
    /// Per own-work part, the members' median Σ.
    medians: &'a [Ns; 4],
    /// The job is a pipeline (stages known).
    pipeline: bool,
}

/// One rank that arrived last at least once, judged for persistence.
fn straggler(d: &Domain, rank: RankId, a: RankWaits) -> Straggler {
    let Domain {
        group,
        total_wait,
        top,
        sums,
        medians,
        ..
    } = *d;
    let share = if total_wait > 0 {
        a.imposed as f64 / total_wait as f64
    } else {
        0.0
    };
    let excess: Vec<PartExcess> = sums
        .per_rank
        .get(&rank)
        .map(|s| {
            (0..Part::OWN_WORK.len())
                .filter(|&k| (s.0[k] - medians[k]) as f64 > IMBALANCE * sums.mean_span)
                .map(|k| PartExcess {
                    part: Part::OWN_WORK[k],
                    rank_ns: s.0[k],
                    median_ns: medians[k],
                })
                .collect()
        })
        .unwrap_or_default();
    let steps_with_wait = top.values().filter(|t| t.0 > 0).count() as u64;
    let top_steps = top.values().filter(|t| t.1 == rank && t.0 > 0).count() as u64;
    let persistent = if steps_with_wait >= MIN_STEPS_FOR_PERSISTENCE {
        top_steps as f64 >= PERSISTENCE * steps_with_wait as f64
    } else {
        share >= STRAGGLER_SHARE
    };
    // In a pipeline, a loaded rank late with no own work above its peers' was held up in
    // its receives by another stage: paced by the pipeline (a heavier stage, or a slow
    // worker there, which its own stage's domain shows), not slow itself.
    let loaded = a.loaded();
    let paced = d.pipeline && loaded && excess.is_empty();
    let flagged = persistent && a.late_entry * 2 < a.imposed && !paced;
    Straggler {
        group: group.to_string(),
        rank,
        last_arrivals: a.last,
        instances: a.instances,
        members: d.members + u64::from(!loaded),
        imposed_wait_ns: a.imposed,
        late_entry_wait_ns: a.late_entry,
        share,
        top_steps,
        steps_with_wait,
        flagged,
        excess,
        loaded,
        worst_collective: None,
        steps: a
            .steps
            .into_iter()
            .map(|(step, (l, w))| StragglerStep {
                step,
                last_arrivals: l,
                imposed_wait_ns: w,
                any_group_wait_ns: d.any_group.get(&(rank, step)).copied().unwrap_or(w),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(per_rank: &[(u32, u32, Ns)]) -> DomainWaits {
        let mut w = DomainWaits {
            ranks: BTreeMap::new(),
            total: 0,
        };
        for &(rank, step, wait) in per_rank {
            let a = w.ranks.entry(RankId(rank)).or_default();
            a.steps.insert(Some(StepNo(step)), (1, wait));
            w.total += wait;
        }
        w
    }

    #[test]
    fn the_top_imposer_of_a_step_and_ties() {
        // Step 1: ranks 1 and 2 imposed 100 each (a tie: the lower rank), step 2: rank 2's
        // 300 beats rank 1's 200.
        let top = top_imposers(&waits(&[
            (1, 1, 100),
            (2, 1, 100),
            (1, 2, 200),
            (2, 2, 300),
        ]));
        assert_eq!(top[&Some(StepNo(1))], (100, RankId(1)));
        assert_eq!(top[&Some(StepNo(2))], (300, RankId(2)));
    }

    /// Three members with these compute Σs and a mean Σ span of 1000.
    fn sums(compute: [Ns; 3]) -> PartSums {
        PartSums {
            per_rank: (0..3)
                .map(|r| (RankId(r), ([compute[r as usize], 0, 0, 0], 1000)))
                .collect(),
            mean_span: 1000.0,
        }
    }

    #[test]
    fn spread_and_excess_above_five_percent_not_at_it() {
        // Compute 400, 420, 450: spread (450 − 400) / 1000 = 0.05 exactly — not above 5%.
        let (medians, out) = part_spread(&sums([400, 420, 450]), "0");
        assert_eq!(medians[0], 420);
        let c = &out[0];
        assert_eq!(
            (c.part, c.max_rank, c.min_rank),
            (Part::Compute, RankId(2), RankId(0))
        );
        assert_eq!((c.spread, c.flagged), (0.05, false));
        // 451: above.
        let (_, out) = part_spread(&sums([400, 420, 451]), "0");
        assert!(out[0].flagged);
        // Excess over the median: 470 − 420 = 50 = 5% of the span is not excess; 471 is.
        let excess = |top: Ns| {
            let s = sums([400, 420, top]);
            let (medians, _) = part_spread(&s, "0");
            judge(&s, &medians, false, RankWaits::default()).excess
        };
        assert!(excess(470).is_empty());
        assert_eq!(excess(471)[0].rank_ns, 471);
    }

    #[test]
    fn in_a_pipeline_a_late_rank_without_excess_is_paced_not_slow() {
        // Rank 2 imposed all of the domain's 10 ns of waiting (share 1 ≥ 0.5, too few steps
        // for persistence): a straggler — unless the job is a pipeline and its own work is
        // no more than its peers' (400, 420, 420: no excess), when it waited in receives.
        let (medians, _) = part_spread(&sums([400, 420, 420]), "0");
        let judged = |pipeline: bool, top_work: Ns| {
            let a = RankWaits {
                last: 2,
                instances: 2,
                imposed: 10,
                ..RankWaits::default()
            };
            judge(&sums([400, 420, top_work]), &medians, pipeline, a).flagged
        };
        assert!(judged(false, 420));
        assert!(!judged(true, 420));
        // Slow itself (471 over a median of 420 by more than 5% of the span): still one.
        assert!(judged(true, 471));
    }

    /// Rank 2 of a 3-rank domain with 10 ns of waiting, judged with these sums.
    fn judge(s: &PartSums, medians: &[Ns; 4], pipeline: bool, a: RankWaits) -> Straggler {
        let (top, any_group) = (BTreeMap::new(), BTreeMap::new());
        let d = Domain {
            any_group: &any_group,
            group: "0",
            members: 3,
            total_wait: 10,
            top: &top,
            sums: s,
            medians,
            pipeline,
        };
        straggler(&d, RankId(2), a)
    }
}
