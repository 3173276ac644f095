//! The cross-rank part of the graph: each collective instance of the window joins its
//! members' graphs, so the path can pass to the rank everyone waited for.

use super::Category;
use super::Window;
use super::graph::Graph;
use super::rank::{DeviceNodes, RankCalls};
use crate::analysis::comm::Comm;
use crate::model::{EventIx, Job, RankIx};

/// Per rank (index): the waits of the window's instances, their recorded ends past the
/// instance's completion, and the transfers' enqueue ops.
pub(super) fn comm_waits(job: &Job, comm: &Comm, win: &Window) -> Vec<RankCalls> {
    let mut out = vec![RankCalls::default(); job.ranks.len()];
    for (inst, t) in comm.instances() {
        if let Window::Step(n) = win {
            if inst.step != Some(*n) {
                continue;
            }
        }
        // The instance completes when its first member ends: a later recorded end is the
        // member's bookkeeping after the result arrived (a CPU backend's run loop).
        let done = t.members.iter().map(|x| x.end_ns).min().unwrap_or(0);
        for (k, m) in inst.members.iter().enumerate() {
            let event = comm.calls.per_rank[m.rank.get()][m.call as usize].event;
            let calls = &mut out[m.rank.get()];
            let own = &t.members[k];
            calls.waits.insert(event.0, own.wait_ns);
            let tail = (own.end_ns - done).min(own.transit_ns);
            if tail > 0 {
                calls.tails.insert(event.0, tail);
            }
        }
    }
    for (r, calls) in comm.calls.per_rank.iter().enumerate() {
        for c in calls {
            if let Some(q) = c.enqueue {
                out[r].enqueues.insert(c.event.0, q.0);
            }
        }
    }
    out
}

/// Cross-rank edges: the last arriver's kernel start → every member's kernel end, weighted
/// by the transfer. The early members keep their wait edges: when the last arriver's own
/// path explains the wait it is at least as long and wins (ties go to less `wait`); when it
/// does not (it entered the window late), the path shows the wait as `wait`. `device_nodes[r]`: rank r's device nodes and the offset of its nodes in `g`.
pub(super) fn join_collectives(
    g: &mut Graph,
    job: &Job,
    comm: &Comm,
    device_nodes: &[(DeviceNodes, u32)],
) {
    for (inst, t) in comm.instances() {
        let node = |m: &crate::analysis::comm::matching::Member| {
            let e = comm.calls.per_rank[m.rank.get()][m.call as usize].event;
            let (nodes, off) = &device_nodes[m.rank.get()];
            nodes.get(e.0).map(|(s, t)| (m.rank, e, (s + off, t + off)))
        };
        let Some(members) = inst.members.iter().map(node).collect::<Option<Vec<_>>>() else {
            continue;
        };
        let Some(last) = inst
            .members
            .iter()
            .position(|m| job.rank(m.rank).id == t.timing.last_arriver)
        else {
            continue;
        };
        let (lr, le, (ls, _)): (RankIx, EventIx, (u32, u32)) = members[last];
        for (k, &(_, _, (_, end))) in members.iter().enumerate() {
            if k != last {
                let transit = t.timing.transit_ns;
                g.edge(ls, end, transit, Some(Category::Communication), lr, le);
            }
        }
    }
}
