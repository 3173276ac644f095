//! Collective calls of each rank: which timed event carries the transfer, its operation,
//! process group, bytes, sequence number and peer.
//!
//! - GPU ranks: every communication kernel. Metadata comes from the kernel's own args, else
//!   from the collective record (`record_param_comms`) its launching call belongs to
//!   (External id) or that encloses that call on its thread; traces without either fall back
//!   to the kernel name and the world group.
//! - CPU-only ranks with a CPU backend's transfers (gloo): the transfer (with the wait for
//!   peers) is the backend's annotation on its run-loop thread (`gloo:*`); the framework's
//!   enqueue op on the main thread (`c10d::*`) is paired with it by order and element count.
//! - Other CPU-only ranks: collective records with a `Collective name`, else enqueue ops.

use super::RankCount;
use super::op::dtype_bytes;
use crate::model::{
    CollOp, Collective, EventIx, HostCollective, Job, Kind, LaneSide, Rank, RankId, StepNo,
};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// One collective call of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// The timed event of the transfer (kernel, gloo annotation or host op).
    pub event: EventIx,
    /// What it does.
    pub op: CollOp,
    /// Index into [`Calls::groups`].
    pub group: u32,
    /// Bytes moved (NCCL-tests convention: the larger of input and output), when known.
    pub bytes: Option<u64>,
    /// `Seq` in its group, when the trace records it.
    pub seq: Option<u64>,
    /// The other rank of a point-to-point call (global id), when known.
    pub peer: Option<RankId>,
    /// Step number of the call (its launching call's step), `None` outside every step.
    pub step: Option<StepNo>,
    /// Issue time on the rank's clock (the launching call for kernels): orders calls.
    pub order: Ns,
    /// The enqueue op (`c10d::*`) of a CPU backend's transfer, when paired.
    pub enqueue: Option<EventIx>,
}

/// Where a group's membership came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupSource {
    /// `distributedInfo.pg_config`.
    Declared,
    /// `Process Group Ranks` args.
    Args,
    /// No membership information: the world (all ranks of `world_size`, else the loaded ranks
    /// and the peers their collectives named).
    World,
}

/// A communication domain (process group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommGroup {
    /// Process group name (`"0"`), or `world` when calls carry none.
    pub name: String,
    /// `pg_desc` (`default_pg`), when declared.
    pub description: String,
    /// Global ranks of the group.
    pub members: Vec<RankId>,
    /// Where the membership came from.
    pub source: GroupSource,
}

/// Every rank's calls and the groups they use.
#[derive(Debug, Default)]
pub struct Calls {
    /// Groups by index.
    pub groups: Vec<CommGroup>,
    /// Calls per rank (in `job.ranks` order), sorted by `order`.
    pub per_rank: Vec<Vec<Call>>,
    /// Enqueue ops without a transfer of the same size, per rank.
    pub unpaired_enqueues: Vec<RankCount>,
}

/// Finds every rank's collective calls.
pub fn find_calls(job: &Job) -> Calls {
    use rayon::prelude::*;
    let mut groups = Groups::new(job);
    // Metadata lookups read the interner; group registration needs `&mut`, so ranks are
    // scanned in parallel into raw calls first and their groups resolved after.
    let raw: Vec<(Vec<RawCall>, u64)> = job.ranks.par_iter().map(|r| rank_calls(job, r)).collect();
    let mut per_rank = Vec::with_capacity(raw.len());
    let mut unpaired_enqueues = Vec::new();
    for (r, (calls, unpaired)) in job.ranks.iter().zip(raw) {
        if unpaired > 0 {
            unpaired_enqueues.push(RankCount {
                rank: r.id,
                calls: unpaired,
            });
        }
        let mut out: Vec<Call> = calls
            .into_iter()
            .map(|c| {
                let group = groups.resolve(job, c.meta);
                let members = &groups.list[group as usize].members;
                let peer =
                    c.op.is_p2p()
                        .then(|| peer_of(r.id, c.meta, members))
                        .flatten();
                Call {
                    event: c.event,
                    op: c.op,
                    group,
                    bytes: c.bytes,
                    seq: c.meta.and_then(|m| m.seq),
                    peer,
                    step: c.step,
                    order: c.order,
                    enqueue: c.enqueue,
                }
            })
            .collect();
        out.sort_by_key(|c| (c.order, c.event));
        per_rank.push(out);
    }
    // A named group of unknown membership is whoever calls it.
    let mut groups = groups.list;
    for (g, group) in groups.iter_mut().enumerate() {
        if group.members.is_empty() {
            group.members = job
                .ranks
                .iter()
                .zip(&per_rank)
                .filter(|(_, rc)| rc.iter().any(|c| c.group == g as u32))
                .map(|(r, _)| r.id)
                .collect();
        }
    }
    Calls {
        groups,
        per_rank,
        unpaired_enqueues,
    }
}

/// A call before its group is resolved.
struct RawCall<'j> {
    event: EventIx,
    op: CollOp,
    meta: Option<&'j Collective>,
    bytes: Option<u64>,
    step: Option<StepNo>,
    order: Ns,
    enqueue: Option<EventIx>,
}

/// The calls of one rank and how many enqueue ops stayed unpaired.
fn rank_calls<'j>(job: &'j Job, rank: &'j Rank) -> (Vec<RawCall<'j>>, u64) {
    let ev = &rank.events;
    let host = |i: usize| job.role(ev.name[i]).host_collective;
    if !rank.is_cpu_only() {
        return (device_calls(job, rank), 0);
    }
    let transfers: Vec<usize> = (0..ev.len())
        .filter(|&i| host(i) == Some(HostCollective::Transfer))
        .collect();
    if !transfers.is_empty() {
        return transfer_calls(job, rank, transfers);
    }
    // Other CPU-only backends: the host ops themselves are the calls.
    let with_meta: Vec<usize> = (0..ev.len())
        .filter(|&i| {
            host(i) == Some(HostCollective::Metadata)
                && meta_of(rank, EventIx::of(i)).is_some_and(|m| m.name.is_some())
        })
        .collect();
    let ops: Vec<usize> = if with_meta.is_empty() {
        (0..ev.len())
            .filter(|&i| ev.kind[i] == Kind::HostOp && host(i) == Some(HostCollective::Enqueue))
            .collect()
    } else {
        with_meta
    };
    let calls = ops
        .into_iter()
        .map(|i| raw_call(job, rank, i, meta_of(rank, EventIx::of(i)), ev.start[i]))
        .collect();
    (calls, 0)
}

/// The collective metadata of event `i`.
fn meta_of(rank: &Rank, i: EventIx) -> Option<&Collective> {
    let k = rank
        .collectives
        .binary_search_by_key(&i, |c| c.event)
        .ok()?;
    Some(&rank.collectives[k])
}

/// A GPU rank's calls: its communication kernels, with their metadata.
fn device_calls<'j>(job: &'j Job, rank: &'j Rank) -> Vec<RawCall<'j>> {
    let ev = &rank.events;
    let enclosing = Enclosing::metadata(rank);
    let carriers = Enclosing::collective_calls(job, rank);
    let mut calls = Vec::new();
    for i in 0..ev.len() {
        if ev.kind[i] != Kind::Comm || rank.lanes[ev.lane[i] as usize].side != LaneSide::Device {
            continue;
        }
        let launch = ev.link[i].get();
        let meta = meta_of(rank, EventIx::of(i)).filter(|m| m.name.is_some() || m.group.is_some());
        let meta = meta.or_else(|| {
            let l = launch?;
            let op = ev.op[l];
            (!op.is_none())
                .then(|| meta_of(rank, op))
                .flatten()
                .or_else(|| enclosing.at(rank, l).and_then(|e| meta_of(rank, e)))
        });
        let order = ev.start[launch.unwrap_or(i)];
        let mut call = raw_call(job, rank, i, meta, order);
        // NCCL before 2.19 runs all-to-all (and other grouped collectives) as SendRecv
        // kernels with no `Collective name`: the host call around the launch says what it is.
        if call.op.is_p2p() || call.op == CollOp::Other {
            if let Some(c) = launch.and_then(|l| carriers.at(rank, l)) {
                call.op = job.role(ev.name[c.index()]).collective;
            }
        }
        calls.push(call);
    }
    calls
}

/// A CPU-only rank's transfers (`transfers`: event indices), each paired with its enqueue
/// op; and how many enqueue ops stayed unpaired.
fn transfer_calls<'j>(
    job: &'j Job,
    rank: &'j Rank,
    mut transfers: Vec<usize>,
) -> (Vec<RawCall<'j>>, u64) {
    let ev = &rank.events;
    transfers.sort_by_key(|&i| (ev.start[i], i));
    let mut enqueues: Vec<usize> = (0..ev.len())
        .filter(|&i| {
            ev.kind[i] == Kind::HostOp
                && job.role(ev.name[i]).host_collective == Some(HostCollective::Enqueue)
        })
        .collect();
    enqueues.sort_by_key(|&i| (ev.start[i], i));
    let elems = |i: usize| meta_of(rank, EventIx::of(i)).and_then(|m| m.in_nelems);
    let mut unpaired = 0;
    let mut next = 0;
    let mut calls = Vec::new();
    for &t in &transfers {
        // The k-th enqueue pairs with the k-th transfer when their sizes agree; an enqueue
        // without a transfer (a size mismatch) is skipped and counted.
        let mut enqueue = None;
        while next < enqueues.len() && ev.start[enqueues[next]] <= ev.start[t] {
            let e = enqueues[next];
            next += 1;
            if elems(e).is_none() || elems(t).is_none() || elems(e) == elems(t) {
                enqueue = Some(EventIx::of(e));
                break;
            }
            unpaired += 1;
        }
        let mut c = raw_call(job, rank, t, meta_of(rank, EventIx::of(t)), ev.start[t]);
        c.enqueue = enqueue;
        calls.push(c);
    }
    unpaired += (enqueues.len() - next) as u64;
    (calls, unpaired)
}

/// The call of event `i`: its operation from the metadata's `Collective name`, else from the
/// event's name (both roles), and its bytes.
fn raw_call<'j>(
    job: &Job,
    rank: &Rank,
    i: usize,
    meta: Option<&'j Collective>,
    order: Ns,
) -> RawCall<'j> {
    let op = meta
        .and_then(|m| m.name)
        .map(|n| job.role(n).collective)
        .filter(|op| *op != CollOp::Other)
        .unwrap_or_else(|| job.role(rank.events.name[i]).collective);
    let bytes = meta.and_then(|m| {
        let size = dtype_bytes(job.strings.resolve(m.dtype?))?;
        let elems = match (m.in_nelems, m.out_nelems) {
            (Some(i), Some(o)) => i.max(o),
            // gloo annotations give only the input: an all-gather outputs n times it.
            (Some(i), None) if op == CollOp::AllGather => i.checked_mul(m.group_size?)?,
            (i, o) => i.or(o)?,
        };
        elems.checked_mul(size)
    });
    RawCall {
        event: EventIx::of(i),
        op,
        meta,
        bytes,
        step: rank.step_of(i),
        order,
        enqueue: None,
    }
}

/// The peer of a point-to-point call: `Src Rank`/`Dst Rank` (group-local, mapped through the
/// group's members), else the other member of a two-rank group.
fn peer_of(me: RankId, meta: Option<&Collective>, members: &[RankId]) -> Option<RankId> {
    if let Some(local) = meta.and_then(|m| m.dst_rank.or(m.src_rank)) {
        let local = u32::try_from(local).ok()?;
        return Some(
            members
                .get(local as usize)
                .copied()
                .unwrap_or(RankId(local)),
        );
    }
    match members {
        [a, b] if *a == me => Some(*b),
        [a, b] if *b == me => Some(*a),
        _ => None,
    }
}

/// Host events of one kind per CPU lane, for "the host event that encloses this launch"
/// lookups: collective records with metadata, or host collective calls.
struct Enclosing {
    /// (lane, start, end, event), sorted.
    spans: Vec<(u16, Ns, Ns, EventIx)>,
}

impl Enclosing {
    fn of(rank: &Rank, events: impl Iterator<Item = usize>) -> Self {
        let ev = &rank.events;
        let mut spans: Vec<(u16, Ns, Ns, EventIx)> = events
            .map(|i| (ev.lane[i], ev.start[i], ev.end(i), EventIx::of(i)))
            .collect();
        spans.sort_unstable();
        Enclosing { spans }
    }

    /// Host ops carrying a collective record with a `Collective name`.
    fn metadata(rank: &Rank) -> Self {
        let ev = &rank.events;
        let with_name = rank
            .collectives
            .iter()
            .filter(|c| c.name.is_some() && ev.kind[c.event.0 as usize] == Kind::HostOp)
            .map(|c| c.event.0 as usize);
        Self::of(rank, with_name)
    }

    /// Host calls naming a collective (`nccl:all_to_all`, `c10d::alltoall_base_`): what a
    /// kernel that only says "SendRecv" really performs.
    fn collective_calls(job: &Job, rank: &Rank) -> Self {
        let ev = &rank.events;
        let named = (0..ev.len()).filter(|&i| {
            let role = job.role(ev.name[i]);
            matches!(
                role.host_collective,
                Some(HostCollective::Annotation | HostCollective::Enqueue)
            ) && !matches!(role.collective, CollOp::Other)
                && !role.collective.is_p2p()
        });
        Self::of(rank, named)
    }

    /// The innermost metadata event on the launch's lane that contains the launch's start.
    fn at(&self, rank: &Rank, launch: usize) -> Option<EventIx> {
        let (lane, t) = (rank.events.lane[launch], rank.events.start[launch]);
        let k = self.spans.partition_point(|s| (s.0, s.1) <= (lane, t));
        // Spans enclosing `t` start before it; the nearest such start is the innermost.
        self.spans[..k]
            .iter()
            .rev()
            .take_while(|s| s.0 == lane)
            .take(64)
            .find(|s| s.2 >= t)
            .map(|s| s.3)
    }
}

/// The world when no trace states its size: the loaded ranks, and every rank the loaded
/// ranks' collectives waited for by name or sent to in HCCL's link matrix (HCCL peers are
/// communicator ranks: up to the largest communicator's size, the world's when the job has a
/// world collective).
fn unstated_world(job: &Job) -> Vec<RankId> {
    let mut ranks: std::collections::BTreeSet<RankId> = job.ranks.iter().map(|r| r.id).collect();
    let peers = job.ranks.iter().flat_map(|r| &r.peer_waits).map(|w| w.peer);
    let linked = job
        .ranks
        .iter()
        .flat_map(|r| &r.links)
        .map(|l| l.src.max(l.dst));
    if let Some(max) = peers.chain(linked).max() {
        ranks.extend((0..=max).map(RankId));
    }
    ranks.into_iter().collect()
}

/// Groups seen so far, by name.
struct Groups {
    list: Vec<CommGroup>,
    by_name: FxHashMap<String, u32>,
    world: Option<u32>,
    world_members: Vec<RankId>,
}

impl Groups {
    fn new(job: &Job) -> Self {
        let world_members = match job.world_size {
            Some(n) => (0..n).map(RankId).collect(),
            None => unstated_world(job),
        };
        let mut g = Groups {
            list: Vec::new(),
            by_name: FxHashMap::default(),
            world: None,
            world_members,
        };
        for pg in &job.groups {
            let idx = g.push(CommGroup {
                name: pg.name.clone(),
                description: pg.description.clone(),
                members: pg.ranks.clone(),
                source: GroupSource::Declared,
            });
            // PyTorch's world, and Ascend's (`parallel_group_info`).
            if matches!(pg.description.as_str(), "default_pg" | "default_group") {
                g.world = Some(idx);
            }
        }
        g
    }

    fn push(&mut self, group: CommGroup) -> u32 {
        let idx = self.list.len() as u32;
        self.by_name.insert(group.name.clone(), idx);
        self.list.push(group);
        idx
    }

    /// The group of a call with this metadata.
    fn resolve(&mut self, job: &Job, meta: Option<&Collective>) -> u32 {
        let Some(name) = meta.and_then(|m| m.group) else {
            return self.world();
        };
        let name = job.strings.resolve(name);
        if let Some(&g) = self.by_name.get(name) {
            return g;
        }
        let members = meta
            .and_then(|m| m.group_ranks)
            .and_then(|r| parse_rank_list(job.strings.resolve(r)));
        match members {
            Some(members) => self.push(CommGroup {
                name: name.to_string(),
                description: String::new(),
                members,
                source: GroupSource::Args,
            }),
            None => {
                // A named group without membership: the world when sizes agree.
                let world = self.world();
                let size = meta.and_then(|m| m.group_size);
                if size.is_none_or(|s| s == self.list[world as usize].members.len() as u64) {
                    self.by_name.insert(name.to_string(), world);
                    world
                } else {
                    self.push(CommGroup {
                        name: name.to_string(),
                        description: "membership unknown: the ranks calling it".to_string(),
                        members: Vec::new(),
                        source: GroupSource::World,
                    })
                }
            }
        }
    }

    fn world(&mut self) -> u32 {
        if let Some(w) = self.world {
            return w;
        }
        let idx = self.push(CommGroup {
            name: "world".to_string(),
            description: "no group args: the world".to_string(),
            members: self.world_members.clone(),
            source: GroupSource::World,
        });
        self.world = Some(idx);
        idx
    }
}

/// `"[0, 1, 2]"` → `[0, 1, 2]`.
pub fn parse_rank_list(s: &str) -> Option<Vec<RankId>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|t| t.trim().parse().ok().map(RankId))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists_parse() {
        let ids = |v: &[u32]| Some(v.iter().copied().map(RankId).collect::<Vec<_>>());
        assert_eq!(parse_rank_list("[0, 1, 2]"), ids(&[0, 1, 2]));
        assert_eq!(parse_rank_list(" [7] "), ids(&[7]));
        assert_eq!(parse_rank_list("[]"), Some(vec![]));
        assert_eq!(parse_rank_list("0, 1"), None);
        assert_eq!(parse_rank_list("[0, x]"), None);
    }
}
