//! Collective instances (docs/metrics.md, "Collective instance"): the k-th collective of process group G on each member
//! rank forms one instance. Calls key on (group, `Seq`) when every call of the group has a
//! `Seq`; otherwise on (group, step number, k-th call of the group in that step), so a rank
//! that profiled other steps does not shift every pairing. A step whose member ranks made
//! different numbers of calls is reported as a mismatch and forms no instances: counts that
//! disagree are reported, not guessed.
//!
//! Point-to-point calls pair per (group, sender, receiver): the k-th send from a to b with
//! the k-th receive at b from a (NCCL requires that order). Calls without a known peer are
//! counted as unpaired.

use super::RankCount;
use super::calls::{Call, Calls, GroupSource};
use crate::model::{CollOp, Job, RankId, RankIx, StepNo};
use serde::Serialize;
use std::collections::BTreeMap;

/// One participant of an instance: its rank and its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Member {
    /// The rank's position in `job.ranks` (and in `Calls::per_rank`).
    pub rank: RankIx,
    /// The call's index in the rank's `Calls::per_rank` list.
    pub call: u32,
}

/// The direction of a point-to-point transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct P2p {
    /// The sending rank.
    pub src: RankId,
    /// The receiving rank.
    pub dst: RankId,
}

type Members = Vec<Member>;

/// One collective instance: the calls that perform it, one per participating rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Index into [`Calls::groups`].
    pub group: u32,
    /// The operation.
    pub op: CollOp,
    /// Step number (`None` outside every step).
    pub step: Option<StepNo>,
    /// `Seq`, or the position of the call in its (group, step).
    pub index: u64,
    /// Bytes (the largest any participant reports).
    pub bytes: Option<u64>,
    /// Sender and receiver of a point-to-point transfer, when the direction is known.
    pub p2p: Option<P2p>,
    /// The participants, in rank order.
    pub members: Vec<Member>,
}

/// Why calls could not be matched into instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MismatchKind {
    /// The member ranks made different numbers of calls in the step.
    Counts,
    /// The call at this position is not the same operation on every rank.
    Operation {
        /// Its position in the (group, step).
        index: u64,
    },
}

/// Calls that could not be matched into instances, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// Group name.
    pub group: String,
    /// Step number (`None`: outside steps, or keyed by `Seq`).
    pub step: Option<StepNo>,
    /// Calls per rank of the group in that step (written `[rank, calls]`).
    #[serde(serialize_with = "pairs")]
    pub calls: Vec<RankCount>,
    /// What disagrees.
    #[serde(skip)]
    pub kind: MismatchKind,
}

/// Rank counts as `[rank, count]` pairs (the report's schema).
fn pairs<S: serde::Serializer>(v: &[RankCount], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|c| (c.rank, c.calls)))
}

/// All instances of the job and what could not be matched.
#[derive(Debug, Default)]
pub struct Matching {
    /// Instances, ordered by (group, step, index).
    pub instances: Vec<Instance>,
    /// Steps of groups whose calls could not be matched.
    pub mismatches: Vec<Mismatch>,
    /// Point-to-point calls without a known peer or partner, per rank.
    pub unpaired_p2p: Vec<RankCount>,
    /// Group members that are not in the job, per group (instances use those present).
    pub missing_members: Vec<MissingMembers>,
}

/// Members of a group that are not in the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingMembers {
    /// Group name.
    pub group: String,
    /// The ranks not loaded.
    pub ranks: Vec<RankId>,
}

/// Matches every group's calls across ranks.
pub fn match_calls(job: &Job, calls: &Calls) -> Matching {
    let mut m = Matching::default();
    let index_of: BTreeMap<RankId, RankIx> = job
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, RankIx::of(i)))
        .collect();
    for (g, group) in calls.groups.iter().enumerate() {
        let g = g as u32;
        if !calls
            .per_rank
            .iter()
            .any(|rc| rc.iter().any(|c| c.group == g))
        {
            continue;
        }
        let present: Vec<RankIx> = group
            .members
            .iter()
            .filter_map(|id| index_of.get(id).copied())
            .collect();
        let missing: Vec<RankId> = group
            .members
            .iter()
            .filter(|id| !index_of.contains_key(id))
            .copied()
            .collect();
        if !missing.is_empty() {
            m.missing_members.push(MissingMembers {
                group: group.name.clone(),
                ranks: missing,
            });
        }
        collectives(job, calls, g, &present, &mut m);
        point_to_point(job, calls, g, &present, &mut m);
    }
    m.instances
        .sort_by_key(|i| (i.group, i.step, i.index, i.p2p));
    m
}

/// Calls of one group bucketed by matching key — (step, k-th call in the step), or
/// (none, sequence number) when every call has one — with each rank's call count per step.
/// In a group assumed to be the world (no group args), the k-th call counts per operation:
/// an all-to-all group and an all-reduce group, unnamed, interleave differently per rank.
type Buckets = BTreeMap<(Option<StepNo>, CollOp, u64), Members>;
/// Each step's per-rank call counts.
type StepCounts = BTreeMap<Option<StepNo>, Vec<RankCount>>;

/// Collective (non-p2p) instances of group `g`.
fn collectives(job: &Job, calls: &Calls, g: u32, present: &[RankIx], m: &mut Matching) {
    let by_seq = present
        .iter()
        .all(|&r| group_calls(calls, g, r).all(|(_, c)| c.seq.is_some()));
    let per_op = calls.groups[g as usize].source == GroupSource::World;
    let (buckets, counts) = bucket_calls(job, calls, g, present, (by_seq, per_op));
    let group_name = &calls.groups[g as usize].name;
    let bad_steps = count_mismatches(group_name, &counts, m);
    for ((step, _, index), members) in buckets {
        // A lone loaded member is an instance only when its own waits for named peers
        // (HCCL) can time it against the ranks that are not loaded.
        let measured = members.len() == 1 && !job.rank(members[0].rank).peer_waits.is_empty();
        if bad_steps.contains(&step) || (members.len() < 2 && !measured) {
            continue;
        }
        let call = |x: &Member| -> &Call { &calls.per_rank[x.rank.get()][x.call as usize] };
        let first = *call(&members[0]);
        if members.iter().any(|x| call(x).op != first.op) {
            m.mismatches.push(Mismatch {
                group: group_name.clone(),
                step: if by_seq { first.step } else { step },
                calls: members
                    .iter()
                    .map(|x| RankCount {
                        rank: job.rank(x.rank).id,
                        calls: 1,
                    })
                    .collect(),
                kind: MismatchKind::Operation { index },
            });
            continue;
        }
        m.instances.push(Instance {
            group: g,
            op: first.op,
            step: if by_seq { first.step } else { step },
            index,
            bytes: members.iter().filter_map(|x| call(x).bytes).max(),
            p2p: None,
            members,
        });
    }
}

/// Rank `r`'s collective (non-p2p) calls in group `g`, with their index.
fn group_calls(calls: &Calls, g: u32, r: RankIx) -> impl Iterator<Item = (usize, &Call)> {
    calls.per_rank[r.get()]
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.group == g && !c.op.is_p2p())
}

/// Buckets the group's calls by matching key; counts calls per rank and step (not needed,
/// and left empty, when matching by sequence number).
fn bucket_calls(
    job: &Job,
    calls: &Calls,
    g: u32,
    present: &[RankIx],
    (by_seq, per_op): (bool, bool),
) -> (Buckets, StepCounts) {
    let mut buckets = Buckets::new();
    let mut counts = StepCounts::new();
    for &r in present {
        let mut k_in_step: BTreeMap<Option<StepNo>, u64> = BTreeMap::new();
        let mut k_of_op: BTreeMap<(Option<StepNo>, CollOp), u64> = BTreeMap::new();
        for (ci, c) in group_calls(calls, g, r) {
            *k_in_step.entry(c.step).or_default() += 1;
            let key = if by_seq {
                (None, CollOp::Other, c.seq.unwrap_or_default())
            } else {
                let op = if per_op { c.op } else { CollOp::Other };
                let k = k_of_op.entry((c.step, op)).or_default();
                *k += 1;
                (c.step, op, *k - 1)
            };
            buckets.entry(key).or_default().push(Member {
                rank: r,
                call: ci as u32,
            });
        }
        if !by_seq {
            // Every step this rank profiled counts, including steps where it made no call.
            let rank = job.rank(r);
            for s in rank.steps.iter().filter(|s| !s.synthetic) {
                k_in_step.entry(Some(s.number)).or_default();
            }
            for (step, n) in k_in_step {
                counts.entry(step).or_default().push(RankCount {
                    rank: rank.id,
                    calls: n,
                });
            }
        }
    }
    (buckets, counts)
}

/// Steps whose ranks made different numbers of calls (recorded as mismatches): their calls
/// cannot be matched by position.
fn count_mismatches(group: &str, counts: &StepCounts, m: &mut Matching) -> Vec<Option<StepNo>> {
    let bad_steps: Vec<Option<StepNo>> = counts
        .iter()
        .filter(|(_, c)| c.iter().any(|x| x.calls != c[0].calls))
        .map(|(s, _)| *s)
        .collect();
    for (step, c) in counts {
        if bad_steps.contains(step) {
            m.mismatches.push(Mismatch {
                group: group.to_string(),
                step: *step,
                calls: c.clone(),
                kind: MismatchKind::Counts,
            });
        }
    }
    bad_steps
}

/// Point-to-point instances of group `g`.
fn point_to_point(job: &Job, calls: &Calls, g: u32, present: &[RankIx], m: &mut Matching) {
    // (sender, receiver, k) → members; SendRecv has no direction: (low, high).
    let mut pairs: BTreeMap<(RankId, RankId, bool, u64), Members> = BTreeMap::new();
    for &r in present {
        let me = job.rank(r).id;
        let mut k: BTreeMap<(RankId, RankId, bool), u64> = BTreeMap::new();
        let mut unpaired = 0;
        for (ci, c) in calls.per_rank[r.get()].iter().enumerate() {
            if c.group != g || !c.op.is_p2p() {
                continue;
            }
            let Some(peer) = c.peer else {
                unpaired += 1;
                continue;
            };
            let key = match c.op {
                CollOp::Send => (me, peer, true),
                CollOp::Recv => (peer, me, true),
                _ => (me.min(peer), me.max(peer), false),
            };
            let n = k.entry(key).or_default();
            pairs
                .entry((key.0, key.1, key.2, *n))
                .or_default()
                .push(Member {
                    rank: r,
                    call: ci as u32,
                });
            *n += 1;
        }
        if unpaired > 0 {
            add(&mut m.unpaired_p2p, me, unpaired);
        }
    }
    for ((src, dst, directed, index), members) in pairs {
        let call = |x: &Member| calls.per_rank[x.rank.get()][x.call as usize];
        let ok = members.len() == 2
            && members[0].rank != members[1].rank
            && (!directed || call(&members[0]).op != call(&members[1]).op);
        if !ok {
            for x in &members {
                add(&mut m.unpaired_p2p, job.rank(x.rank).id, 1);
            }
            continue;
        }
        let first = call(&members[0]);
        m.instances.push(Instance {
            group: g,
            op: if directed { CollOp::Send } else { first.op },
            step: first.step,
            index,
            bytes: members.iter().filter_map(|x| call(x).bytes).max(),
            p2p: directed.then_some(P2p { src, dst }),
            members,
        });
    }
}

fn add(v: &mut Vec<RankCount>, rank: RankId, n: u64) {
    match v.iter_mut().find(|x| x.rank == rank) {
        Some(x) => x.calls += n,
        None => v.push(RankCount { rank, calls: n }),
    }
}
