//! Blocking calls and the framework operator that made them: the outermost `aten::` op
//! enclosing the call on its thread. Kineto records a thread's runtime calls on the same lane
//! as its ops; Ascend writes them under the CANN process with the thread's id, so a call with
//! no op around it on its own lane is looked up on the other lanes of the same thread id.

use crate::model::{Job, Kind, LaneSide, Rank, Sym};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// Calls `f(call, cause, duration, end)` for every blocking call in scope, with the outermost
/// framework op enclosing it on its thread (`-` when none).
pub(super) fn for_blocking_calls(
    job: &Job,
    rank: &Rank,
    ok: &dyn Fn(usize) -> bool,
    mut f: impl FnMut(&str, &str, Ns, Ns),
) {
    let ev = &rank.events;
    let mut threads: Option<ThreadOps> = None;
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut open: Vec<usize> = Vec::new();
        for i in rank.lane_events(l as u16) {
            while open.last().is_some_and(|&p| ev.end(p) <= ev.start[i]) {
                open.pop();
            }
            if job.role(ev.name[i]).is_blocking() && ev.kind[i] == Kind::Launch && ok(i) {
                let on_lane = open
                    .iter()
                    .copied()
                    .find(|&p| job.role(ev.name[p]).framework_op);
                let cause = on_lane.or_else(|| {
                    threads
                        .get_or_insert_with(|| ThreadOps::of(job, rank))
                        .enclosing(rank, l, ev.start[i], ev.end(i))
                });
                let cause = cause.map_or("-", |p| job.strings.resolve(ev.name[p]));
                f(job.strings.resolve(ev.name[i]), cause, ev.dur[i], ev.end(i));
            }
            if matches!(ev.kind[i], Kind::HostOp | Kind::Annotation | Kind::Launch) {
                open.push(i);
            }
        }
    }
}

/// Per thread id (the lane's `tid` text): its top-level framework ops on every CPU lane, in
/// start order. Top-level ops of one thread never overlap, so the one around a time is found
/// by binary search.
struct ThreadOps(FxHashMap<Sym, Vec<usize>>);

impl ThreadOps {
    fn of(job: &Job, rank: &Rank) -> ThreadOps {
        let ev = &rank.events;
        let mut by_tid: FxHashMap<Sym, Vec<usize>> = FxHashMap::default();
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side != LaneSide::Cpu {
                continue;
            }
            let tops = by_tid.entry(lane.tid).or_default();
            let mut end = Ns::MIN;
            for i in rank.lane_events(l as u16) {
                if job.role(ev.name[i]).framework_op && ev.start[i] >= end {
                    tops.push(i);
                    end = ev.end(i);
                }
            }
        }
        for tops in by_tid.values_mut() {
            tops.sort_by_key(|&i| ev.start[i]);
        }
        ThreadOps(by_tid)
    }

    /// The top-level op of lane `l`'s thread, on another of its lanes, that encloses
    /// [start, end).
    fn enclosing(&self, rank: &Rank, l: usize, start: Ns, end: Ns) -> Option<usize> {
        let lane = &rank.lanes[l];
        let ev = &rank.events;
        let tops = self.0.get(&lane.tid)?;
        let k = tops.partition_point(|&i| ev.start[i] <= start);
        let i = *tops.get(k.checked_sub(1)?)?;
        (ev.lane[i] as usize != l && ev.end(i) >= end).then_some(i)
    }
}
