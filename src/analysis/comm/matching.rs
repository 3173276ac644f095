//! Collective instances (DESIGN §4): the k-th collective of process group G on each member
//! rank forms one instance. Calls key on (group, `Seq`) when every call of the group has a
//! `Seq`; otherwise on (group, step number, k-th call of the group in that step), so a rank
//! that profiled other steps does not shift every pairing. A step whose member ranks made
//! different numbers of calls is reported as a mismatch and forms no instances: counts that
//! disagree are reported, not guessed.
//!
//! Point-to-point calls pair per (group, sender, receiver): the k-th send from a to b with
//! the k-th receive at b from a (NCCL requires that order). Calls without a known peer are
//! counted as unpaired.

use super::calls::{Call, Calls};
use super::op::CollOp;
use crate::model::Job;
use std::collections::BTreeMap;

/// (rank index in `job.ranks`, call index in `Calls::per_rank`) of each participant.
type Members = Vec<(u32, u32)>;

/// One collective instance: the calls that perform it, one per participating rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Index into [`Calls::groups`].
    pub group: u32,
    /// The operation.
    pub op: CollOp,
    /// Step number (`None` outside every step).
    pub step: Option<u32>,
    /// `Seq`, or the position of the call in its (group, step).
    pub index: u64,
    /// Bytes (the largest any participant reports).
    pub bytes: Option<u64>,
    /// Sender and receiver of a point-to-point transfer, when the direction is known.
    pub p2p: Option<(u32, u32)>,
    /// (rank index in `job.ranks`, call index in `Calls::per_rank`), by rank.
    pub members: Vec<(u32, u32)>,
}

/// Calls that could not be matched into instances, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// Group name.
    pub group: String,
    /// Step number (`None`: outside steps, or keyed by `Seq`).
    pub step: Option<u32>,
    /// Calls per rank id of the group in that step.
    pub calls: Vec<(u32, u64)>,
    /// What disagrees.
    pub reason: String,
}

/// All instances of the job and what could not be matched.
#[derive(Debug, Default)]
pub struct Matching {
    /// Instances, ordered by (group, step, index).
    pub instances: Vec<Instance>,
    /// Steps of groups whose calls could not be matched.
    pub mismatches: Vec<Mismatch>,
    /// Point-to-point calls without a known peer or partner, per rank id.
    pub unpaired_p2p: Vec<(u32, u64)>,
    /// Group members that are not in the job, per group name (instances use those present).
    pub missing_members: Vec<(String, Vec<u32>)>,
}

/// Matches every group's calls across ranks.
pub fn match_calls(job: &Job, calls: &Calls) -> Matching {
    let mut m = Matching::default();
    let index_of: BTreeMap<u32, u32> = job
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i as u32))
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
        let present: Vec<u32> = group
            .members
            .iter()
            .filter_map(|id| index_of.get(id).copied())
            .collect();
        let missing: Vec<u32> = group
            .members
            .iter()
            .filter(|id| !index_of.contains_key(id))
            .copied()
            .collect();
        if !missing.is_empty() {
            m.missing_members.push((group.name.clone(), missing));
        }
        collectives(job, calls, g, &present, &mut m);
        point_to_point(job, calls, g, &present, &mut m);
    }
    m.instances
        .sort_by_key(|i| (i.group, i.step, i.index, i.p2p));
    m
}

/// Collective (non-p2p) instances of group `g`.
fn collectives(job: &Job, calls: &Calls, g: u32, present: &[u32], m: &mut Matching) {
    let of = |r: u32| {
        calls.per_rank[r as usize]
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.group == g && !c.op.is_p2p())
    };
    let by_seq = present.iter().all(|&r| of(r).all(|(_, c)| c.seq.is_some()));
    // key → (rank, call) in rank order.
    let mut buckets: BTreeMap<(Option<u32>, u64), Members> = BTreeMap::new();
    let mut counts: BTreeMap<Option<u32>, Vec<(u32, u64)>> = BTreeMap::new();
    for &r in present {
        let mut k_in_step: BTreeMap<Option<u32>, u64> = BTreeMap::new();
        for (ci, c) in of(r) {
            let key = if by_seq {
                (None, c.seq.unwrap_or_default())
            } else {
                let k = k_in_step.entry(c.step).or_default();
                *k += 1;
                (c.step, *k - 1)
            };
            buckets.entry(key).or_default().push((r, ci as u32));
        }
        if !by_seq {
            // Every step this rank profiled counts, including steps where it made no call.
            let rank = &job.ranks[r as usize];
            for s in rank.steps.iter().filter(|s| !s.synthetic) {
                k_in_step.entry(Some(s.number)).or_default();
            }
            for (step, n) in k_in_step {
                counts.entry(step).or_default().push((rank.id, n));
            }
        }
    }
    let group_name = &calls.groups[g as usize].name;
    let bad_steps: Vec<Option<u32>> = counts
        .iter()
        .filter(|(_, c)| c.iter().any(|x| x.1 != c[0].1))
        .map(|(s, _)| *s)
        .collect();
    for (step, c) in &counts {
        if bad_steps.contains(step) {
            m.mismatches.push(Mismatch {
                group: group_name.clone(),
                step: *step,
                calls: c.clone(),
                reason: "member ranks made different numbers of calls".to_string(),
            });
        }
    }
    for ((step, index), members) in buckets {
        if bad_steps.contains(&step) || members.len() < 2 {
            continue;
        }
        let first = calls.per_rank[members[0].0 as usize][members[0].1 as usize];
        let call = |&(r, c): &(u32, u32)| -> &Call { &calls.per_rank[r as usize][c as usize] };
        if members.iter().any(|x| call(x).op != first.op) {
            m.mismatches.push(Mismatch {
                group: group_name.clone(),
                step: if by_seq { first.step } else { step },
                calls: members
                    .iter()
                    .map(|&(r, _)| (job.ranks[r as usize].id, 1))
                    .collect(),
                reason: format!("call {index} is not the same operation on every rank"),
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

/// Point-to-point instances of group `g`.
fn point_to_point(job: &Job, calls: &Calls, g: u32, present: &[u32], m: &mut Matching) {
    // (sender, receiver, k) → members; SendRecv has no direction: (low, high).
    let mut pairs: BTreeMap<(u32, u32, bool, u64), Members> = BTreeMap::new();
    for &r in present {
        let me = job.ranks[r as usize].id;
        let mut k: BTreeMap<(u32, u32, bool), u64> = BTreeMap::new();
        let mut unpaired = 0;
        for (ci, c) in calls.per_rank[r as usize].iter().enumerate() {
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
                .push((r, ci as u32));
            *n += 1;
        }
        if unpaired > 0 {
            add(&mut m.unpaired_p2p, me, unpaired);
        }
    }
    for ((src, dst, directed, index), members) in pairs {
        let call = |&(r, c): &(u32, u32)| calls.per_rank[r as usize][c as usize];
        let ok = members.len() == 2
            && members[0].0 != members[1].0
            && (!directed || call(&members[0]).op != call(&members[1]).op);
        if !ok {
            for &(r, _) in &members {
                add(&mut m.unpaired_p2p, job.ranks[r as usize].id, 1);
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
            p2p: directed.then_some((src, dst)),
            members,
        });
    }
}

fn add(v: &mut Vec<(u32, u64)>, rank: u32, n: u64) {
    match v.iter_mut().find(|x| x.0 == rank) {
        Some(x) => x.1 += n,
        None => v.push((rank, n)),
    }
}
