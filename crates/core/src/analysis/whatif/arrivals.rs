//! Waits and stalls that HCCL's tasks carry (docs/metrics.md, "Replay": straggler,
//! stalled_transfer). A rank the profile does not hold shows only as the loaded members'
//! waits for it (HCCL's `Notify_Wait`, [`crate::analysis::comm::measured`]): on time, it
//! arrives with the last loaded member, and each member's wait shrinks to its wait for that
//! member. Where the collective's own tasks are recorded (Ascend Level1+: `Notify Wait`,
//! `SDMA` on the device's streams), the time cut from a call is cut from them too: they are
//! the edges its stream's next work waits for.

use super::step::StepReplay;
use crate::model::{EventIx, RankId, RankIx};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// Per rank: its communication edges that are no matched call (a collective's inner tasks).
type Tasks = FxHashMap<RankIx, Vec<usize>>;

impl StepReplay<'_> {
    /// The wait edges of the step's instances whose last arriver is not loaded (and one of
    /// `ids`, when given), at each member's wait for the last loaded member (never more than
    /// measured); the tasks inside the time cut lose it too.
    pub(super) fn on_time(&self, ids: Option<&[RankId]>, w: &mut [Option<Ns>]) {
        let mut tasks: Option<Tasks> = None;
        for k in self.step_instances() {
            let Some((inst, t)) = self.comm.instance(k) else {
                continue;
            };
            let named = ids.is_none_or(|ids| ids.contains(&t.timing.last_arriver));
            if !t.timing.last_arriver_measured || !named {
                continue;
            }
            let loaded_last = t.members.iter().map(|m| m.start_ns).max().unwrap_or(0);
            for (m, x) in inst.members.iter().zip(&t.members) {
                let e = self.comm.calls.per_rank[m.rank.get()][m.call as usize].event;
                let Some(&edge) = self.g.waits.get(&(m.rank, e)) else {
                    continue;
                };
                let Some(measured) = w[edge] else { continue };
                let wait = (loaded_last - x.start_ns).clamp(0, measured);
                w[edge] = Some(wait);
                let start = self.job.rank(m.rank).events.start[e.index()];
                let tasks = tasks.get_or_insert_with(|| self.inner_tasks());
                self.cut_tasks(tasks, (m.rank, e), (start + wait, start + measured), w);
            }
        }
    }

    /// The tasks of the step's stalled transfers lose the stall: on each member, the last
    /// `transit − expected` of its call (`expected`: what [`Self::stalled_expected`] gives).
    pub(super) fn cut_stalls(&self, w: &mut [Option<Ns>]) {
        let mut tasks: Option<Tasks> = None;
        for k in self.step_instances() {
            let (Some((inst, t)), Some(expected)) =
                (self.comm.instance(k), self.stalled_expected(k))
            else {
                continue;
            };
            for (m, x) in inst.members.iter().zip(&t.members) {
                let e = self.comm.calls.per_rank[m.rank.get()][m.call as usize].event;
                let end = self.job.rank(m.rank).events.end(e.index());
                let excess = (x.transit_ns - expected).max(0);
                let tasks = tasks.get_or_insert_with(|| self.inner_tasks());
                self.cut_tasks(tasks, (m.rank, e), (end - excess, end), w);
            }
        }
    }

    /// The matched instances of the step, in order.
    pub(super) fn step_instances(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.transfers().iter().map(|t| t.1).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Each rank's communication edges that are no matched call.
    fn inner_tasks(&self) -> Tasks {
        let mut out = Tasks::default();
        for (k, e) in self.g.edges.iter().enumerate() {
            let comm = e.cat == Some(crate::analysis::critical_path::Category::Communication);
            if comm && !self.instance_of.contains_key(&(e.rank, e.event)) {
                out.entry(e.rank).or_default().push(k);
            }
        }
        out
    }

    /// The tasks of `call`'s rank inside the call lose their overlap with `cut` (rank clock).
    fn cut_tasks(
        &self,
        tasks: &Tasks,
        (rank, call): (RankIx, EventIx),
        (lo, hi): (Ns, Ns),
        w: &mut [Option<Ns>],
    ) {
        let ev = &self.job.rank(rank).events;
        let (cs, ce) = (ev.start[call.index()], ev.end(call.index()));
        for &k in tasks.get(&rank).map_or(&[][..], |v| v.as_slice()) {
            let i = self.g.edges[k].event.index();
            let (s, e) = (ev.start[i], ev.end(i));
            let Some(x) = w[k] else { continue };
            if s < cs || e > ce {
                continue;
            }
            let over = (e.min(hi) - s.max(lo)).max(0);
            if over > 0 {
                w[k] = Some((x - over).max(0));
            }
        }
    }
}
