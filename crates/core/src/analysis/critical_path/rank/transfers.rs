//! A CPU backend's transfers (`gloo:*` on its run-loop threads) in a rank's graph, as the
//! collective kernels of a CPU-only rank: each after its enqueue op and its thread's previous
//! transfer, split at its wait, and before the enqueuing thread's first op after it (which
//! waited for its result).

use super::{RankCalls, RankGraph, RankWindow};
use crate::analysis::critical_path::Category;
use crate::model::{EventIx, HostCollective, LaneSide};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// One transfer of the window.
struct Transfer {
    /// Its event.
    i: usize,
    /// The lane of the op that enqueued it, when paired.
    waiter_lane: Option<u16>,
    /// Where it completes on its rank's clock.
    done: Ns,
}

impl RankGraph<'_> {
    /// The window's transfers, thread by thread in order, with their edges.
    pub(super) fn host_transfers(&mut self, win: RankWindow, comm: &RankCalls) {
        for thread in self.transfers_of(win, comm) {
            let mut prev: Option<u32> = None;
            for t in thread {
                prev = Some(self.host_transfer(&t, prev, comm));
            }
        }
    }

    /// The window's transfers per run-loop thread, each ending at its completion: its
    /// recorded end less its tail past the instance's first member's end, and no later than
    /// the wake-up of the thread that waited for it ([`Self::woken`]). A run loop may close
    /// its record milliseconds after the waiting thread went on (2-core gloo runs), and that
    /// tail is nobody's wait.
    fn transfers_of(&self, win: RankWindow, comm: &RankCalls) -> Vec<Vec<Transfer>> {
        let (rank, ev) = (self.rank, &self.rank.events);
        let mut out: Vec<Vec<Transfer>> = Vec::new();
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side != LaneSide::Cpu {
                continue;
            }
            let thread: Vec<Transfer> = rank
                .lane_events(l as u16)
                .filter(|&i| self.role(i).host_collective == Some(HostCollective::Transfer))
                .filter(|&i| (win.lo..win.hi).contains(&ev.start[i]))
                .map(|i| Transfer {
                    i,
                    waiter_lane: comm.enqueues.get(&(i as u32)).map(|&q| ev.lane[q as usize]),
                    done: ev.end(i) - comm.tails.get(&(i as u32)).copied().unwrap_or(0),
                })
                .collect();
            if !thread.is_empty() {
                out.push(thread);
            }
        }
        // Per waiting lane: every transfer's completion, sorted (what else may have woken it).
        let mut ends: FxHashMap<u16, Vec<Ns>> = FxHashMap::default();
        for t in out.iter().flatten() {
            if let Some(l) = t.waiter_lane {
                ends.entry(l).or_default().push(t.done);
            }
        }
        ends.values_mut().for_each(|v| v.sort_unstable());
        let woken: Vec<Vec<Option<Ns>>> = out
            .iter()
            .map(|th| th.iter().map(|t| self.woken(t, &ends, comm)).collect())
            .collect();
        for (th, w) in out.iter_mut().zip(woken) {
            for (t, w) in th.iter_mut().zip(w) {
                t.done = w.map_or(t.done, |w| w.min(t.done));
            }
        }
        out
    }

    /// When the waiting thread went on before `t`'s recorded completion: the end of its idle
    /// gap that overlaps the transfer most, if that gap ends after the last member arrived
    /// and no other transfer it waits on completed within it (`ends`, per waiting lane).
    fn woken(&self, t: &Transfer, ends: &FxHashMap<u16, Vec<Ns>>, comm: &RankCalls) -> Option<Ns> {
        let lane = t.waiter_lane?;
        let gaps = self.gaps.get(&lane)?;
        let start = self.rank.events.start[t.i];
        let arrived = start + comm.waits.get(&(t.i as u32)).copied().unwrap_or(0);
        // Gaps are disjoint and in order: those ending in (arrived, done).
        let lo = gaps.partition_point(|g| g.1 <= arrived);
        let hi = gaps.partition_point(|g| g.1 < t.done);
        let &(from, to) = gaps
            .get(lo..hi)?
            .iter()
            .max_by_key(|g| (g.1 - g.0.max(start), g.1))?;
        let ends = ends.get(&lane)?;
        let other = ends
            .partition_point(|&x| x <= to)
            .saturating_sub(ends.partition_point(|&x| x < from));
        (other == 0).then_some(to)
    }

    /// Transfer `t` (after `prev`, its thread's previous transfer's end node), split at its
    /// wait; returns its end node. It starts after the later of `prev` and its enqueue op,
    /// which carries the run loop's pick-up delay; the enqueuing thread's first op after it
    /// waits for it (the thread's wake-up kept).
    fn host_transfer(&mut self, t: &Transfer, prev: Option<u32>, comm: &RankCalls) -> u32 {
        let (ev, ri, i) = (&self.rank.events, self.ri, t.i);
        let event = EventIx::of(i);
        let (s, e) = (self.g.node(ri, ev.start[i]), self.g.node(ri, t.done));
        self.device_nodes.insert(i as u32, (s, e));
        self.split_at_wait(s, e, i, Category::Communication, &comm.waits);
        let q = comm.enqueues.get(&(i as u32)).copied();
        let enqueued = q.and_then(|q| self.call_nodes.get(q)).map(|n| n.0);
        let at = |v: Option<u32>| v.map(|v| self.g.nodes[v as usize].1);
        let later = if at(prev) >= at(enqueued) {
            prev
        } else {
            enqueued
        };
        for v in [prev, enqueued].into_iter().flatten() {
            let delay = if Some(v) == later {
                ev.start[i] - self.g.nodes[v as usize].1
            } else {
                0
            };
            let cat = (delay > 0).then_some(Category::Communication);
            self.g.edge(v, s, delay.max(0), cat, ri, event);
        }
        let Some(lane) = t.waiter_lane else { return e };
        if let Some(next) = self.next_op(lane, t.done) {
            // The thread wakes this long after the result: kept on both ways in, and its
            // own (the event its gap into the op is in, else the op's transfer).
            let wake = self.g.nodes[next as usize].1 - t.done;
            let cat = (wake > 0).then_some(Category::HostGap);
            let own = self.gap_into.get(&next).map(|&k| self.g.edges[k].event);
            self.g.edge(e, next, wake, cat, ri, own.unwrap_or(event));
            self.explain_gap(next, t.done);
        }
        e
    }

    /// The thread waited for a transfer that ended at `t` before the op at node `next`: the
    /// host gap into that op counts only from `t` (the transfer's edges carry the rest).
    fn explain_gap(&mut self, next: u32, t: Ns) {
        let Some(&k) = self.gap_into.get(&next) else {
            return;
        };
        let to = self.g.nodes[next as usize].1;
        let edge = &mut self.g.edges[k];
        edge.w = edge.w.min((to - t).max(0));
    }

    /// The start node of the first op of `lane` in the graph starting at or after `t`.
    fn next_op(&self, lane: u16, t: Ns) -> Option<u32> {
        let ev = &self.rank.events;
        let r = self.rank.lane_events(lane);
        let from = r.start + ev.start[r.clone()].partition_point(|&x| x < t);
        (from..r.end).find_map(|i| self.call_nodes.get(i as u32).map(|n| n.0))
    }
}
