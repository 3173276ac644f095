//! One rank's part of the graph over a window, in four stages: host chains (nested ops per
//! thread), device events launched from the window, device dependencies (stream order, launch
//! delays, waits on other streams) and synchronizations (see the module above for each edge).

use super::graph::{EventNodes, Graph};
use super::{Category, KERNEL_GAP_MAX_NS};
use crate::model::{EventIx, Kind, LaneSide, Rank, RankIx, Role, SyncCall};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

mod transfers;

/// Device event → (start node, end node).
pub(super) type DeviceNodes = EventNodes;

/// Blocking calls that move to a sibling lane of their OS thread (see
/// `RankGraph::sibling_syncs`).
#[derive(Default)]
struct Siblings {
    /// Per lane: the calls it takes in.
    taken: FxHashMap<u16, Vec<usize>>,
    /// The calls their own lane leaves out.
    left: rustc_hash::FxHashSet<usize>,
}

/// Ops looked back at, from a sibling row's blocking call, for one that holds it.
const HOLDER_LOOKBACK: usize = 256;

/// The events of a lane that start in the window (a lane's events are sorted by start).
fn window_slice(rank: &Rank, lane: u16, win: RankWindow) -> std::ops::Range<usize> {
    let ev = &rank.events;
    let r = rank.lane_events(lane);
    let from = r.start + ev.start[r.clone()].partition_point(|&t| t < win.lo);
    let to = r.start + ev.start[r.clone()].partition_point(|&t| t < win.hi);
    from..to.max(from)
}

/// What a rank's graph needs of the collectives of the window.
#[derive(Debug, Default, Clone)]
pub(super) struct RankCalls {
    /// Each collective call's event (kernel or CPU backend transfer) → its wait.
    pub waits: FxHashMap<u32, Ns>,
    /// A CPU backend's transfer event → the enqueue op it was paired with.
    pub enqueues: FxHashMap<u32, u32>,
    /// A collective call's event → how long its recorded end lies past the instance's
    /// completion (its first member's end), when it does.
    pub tails: FxHashMap<u32, Ns>,
}

/// A rank's window: host time `[lo, hi)` and, for a step, the step's index (device work then
/// belongs to it by its launching call's step).
#[derive(Debug, Clone, Copy)]
pub(super) struct RankWindow {
    /// Start of the window.
    pub lo: Ns,
    /// End of the window.
    pub hi: Ns,
    /// The step's index in `Rank::steps`, for a step window.
    pub step_idx: Option<u32>,
}

/// Builds one rank's graph.
pub(super) struct RankGraph<'a> {
    rank: &'a Rank,
    roles: &'a [Role],
    ri: RankIx,
    /// The graph being built.
    pub g: Graph,
    /// Device event → its nodes.
    pub device_nodes: DeviceNodes,
    /// Host call → its nodes.
    call_nodes: EventNodes,
    /// Blocking calls in event order (sync edges are created in a deterministic order).
    blocking_calls: Vec<u32>,
    /// The implicit syncs ([`SyncCall::Implicit`]) that blocked: no call recorded under
    /// them, device work ended inside them.
    implicit: rustc_hash::FxHashSet<u32>,
    /// The ends of the rank's device work, sorted (found at the first implicit sync).
    device_ends: Option<Vec<Ns>>,
    /// Device events in the window, stream by stream in order.
    device: Vec<usize>,
    /// Host-gap edges by the op node they lead to (a transfer the op waited for explains
    /// part of the gap).
    gap_into: FxHashMap<u32, usize>,
    /// Per host lane: its top-level gaps (start, end) in time order, where a thread may
    /// have waited for a transfer.
    gaps: FxHashMap<u16, Vec<(Ns, Ns)>>,
}

impl<'a> RankGraph<'a> {
    /// Builds the graph of `rank` (at index `ri`) over `win`; `comm` maps each collective
    /// call of the window's instances to its wait, and CPU transfers to their enqueue ops.
    pub(super) fn build(
        rank: &'a Rank,
        roles: &'a [Role],
        ri: RankIx,
        win: RankWindow,
        comm: &RankCalls,
    ) -> RankGraph<'a> {
        let mut b = RankGraph {
            rank,
            roles,
            ri,
            g: Graph::default(),
            device_nodes: EventNodes::new(rank.events.len()),
            call_nodes: EventNodes::new(rank.events.len()),
            blocking_calls: Vec::new(),
            implicit: Default::default(),
            device_ends: None,
            device: Vec::new(),
            gap_into: FxHashMap::default(),
            gaps: FxHashMap::default(),
        };
        let moved = b.sibling_syncs(win);
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side == LaneSide::Cpu {
                b.host_lane(l as u16, win, &moved);
            }
        }
        b.host_transfers(win, comm);
        b.device_events(win, &comm.waits);
        b.device_dependencies();
        b.syncs();
        b
    }

    fn role(&self, i: usize) -> &Role {
        &self.roles[self.rank.events.name[i] as usize]
    }

    /// Blocking on the critical path: synchronizations, polls and the implicit syncs that
    /// blocked.
    fn blocking(&self, i: usize) -> bool {
        match self.role(i).sync {
            Some(SyncCall::Implicit) => self.implicit.contains(&(i as u32)),
            s => s.is_some(),
        }
    }

    /// Whether implicit sync `i`, whose next op on its thread starts at `next`, blocked: it
    /// holds no recorded call and some device work ended inside it.
    fn implicit_blocked(&mut self, i: usize, next: Option<Ns>) -> bool {
        let ev = &self.rank.events;
        let (start, end) = (ev.start[i], ev.end(i));
        if next.is_some_and(|n| n < end) {
            return false;
        }
        let ends = self.device_ends.get_or_insert_with(|| {
            let mut v: Vec<Ns> = (0..ev.len())
                .filter(|&j| ev.kind[j].is_device_work())
                .map(|j| ev.end(j))
                .collect();
            v.sort_unstable();
            v
        });
        let k = ends.partition_point(|&t| t <= start);
        ends.get(k).is_some_and(|&t| t <= end)
    }

    /// Closes the innermost open op of a thread: its last segment (from its cursor to its
    /// end), attributed to it; the parent's cursor moves to its end. Returns its end node.
    fn close(&mut self, stack: &mut Vec<(usize, u32)>) -> u32 {
        let (i, cursor) = stack.pop().expect("non-empty");
        let end = self.call_nodes.of(i).1;
        let blocking = self.blocking(i);
        let w = if blocking {
            0
        } else {
            self.rank.events.end(i) - self.g.nodes[cursor as usize].1
        };
        let cat = if blocking {
            Category::Wait
        } else {
            Category::Cpu
        };
        self.g
            .edge(cursor, end, w, Some(cat), self.ri, EventIx::of(i));
        if let Some(top) = stack.last_mut() {
            top.1 = end;
        }
        end
    }

    /// Blocking calls recorded on one lane of an OS thread (Ascend's `CANN` row) while an
    /// operator of another lane of the same thread (its `Python` row, same tid) holds them:
    /// they belong in that operator's chain, so that its time in them is a wait on the device,
    /// not host work. Returns, per lane, the calls it takes in (the lane they were recorded on
    /// leaves them out).
    fn sibling_syncs(&self, win: RankWindow) -> Siblings {
        let rank = self.rank;
        let ev = &rank.events;
        let mut out = Siblings::default();
        for (a, la) in rank.lanes.iter().enumerate() {
            if la.side != LaneSide::Cpu {
                continue;
            }
            let siblings: Vec<u16> = (0..rank.lanes.len())
                .filter(|&b| {
                    let lb = &rank.lanes[b];
                    b != a && lb.side == LaneSide::Cpu && lb.tid == la.tid
                })
                .map(|b| b as u16)
                .collect();
            if siblings.is_empty() {
                continue;
            }
            for i in window_slice(rank, a as u16, win) {
                let call = matches!(ev.kind[i], Kind::HostOp | Kind::Launch);
                if !call || ev.dur[i] <= 0 {
                    continue;
                }
                let holder = siblings.iter().copied().find(|&b| {
                    // The holder starts before the call: look back from the call's start
                    // over the ops that could hold it (nesting is shallow; bounded).
                    let r = window_slice(rank, b, win);
                    let at = r.start + ev.start[r.clone()].partition_point(|&t| t <= ev.start[i]);
                    (r.start..at)
                        .rev()
                        .take(HOLDER_LOOKBACK)
                        .any(|j| ev.kind[j] == Kind::HostOp && ev.end(i) <= ev.end(j))
                });
                if let Some(b) = holder {
                    out.taken.entry(b).or_default().push(i);
                    out.left.insert(i);
                }
            }
        }
        out
    }

    /// One host thread's ops and runtime calls in the window, as nested chains (with the
    /// blocking calls of its sibling lanes that its ops hold).
    fn host_lane(&mut self, lane: u16, win: RankWindow, moved: &Siblings) {
        let rank = self.rank;
        let ev = &rank.events;
        let mut stack: Vec<(usize, u32)> = Vec::new(); // (event, cursor node)
        let mut prev_top_end: Option<u32> = None;
        // Open annotations (`DistributedDataParallel.forward`): what a host gap is inside.
        let mut within: Vec<usize> = Vec::new();
        // Events of a lane are sorted by start: only the window's slice is visited.
        let mut order: Vec<usize> = window_slice(rank, lane, win)
            .filter(|i| !moved.left.contains(i))
            .collect();
        if let Some(taken) = moved.taken.get(&lane) {
            order.extend(taken);
            // A parent before the children it holds: by start, the longer first.
            order.sort_by_key(|&i| (ev.start[i], std::cmp::Reverse(ev.end(i)), i));
        }
        for (pos, &i) in order.iter().enumerate() {
            let k = ev.kind[i];
            // A loader's or a GC's annotation is the thread's time itself (the stall a fix
            // takes away), not a region work runs in.
            let work = matches!(k, Kind::HostOp | Kind::Launch)
                || (k == Kind::Annotation && (self.role(i).data_loader || self.role(i).gc));
            while within.last().is_some_and(|&a| ev.end(a) <= ev.start[i]) {
                within.pop();
            }
            if k == Kind::Annotation && !work && !self.role(i).is_step_marker() {
                within.push(i);
            }
            if !work || ev.dur[i] <= 0 || self.role(i).is_step_marker() {
                continue;
            }
            while let Some(&(p, _)) = stack.last() {
                if ev.end(p) <= ev.start[i] || ev.end(p) < ev.end(i) {
                    let end = self.close(&mut stack);
                    if stack.is_empty() {
                        prev_top_end = Some(end);
                    }
                } else {
                    break;
                }
            }
            let s = self.g.node(self.ri, ev.start[i]);
            let e = self.g.node(self.ri, ev.end(i));
            self.call_nodes.insert(i as u32, (s, e));
            if self.role(i).sync == Some(SyncCall::Implicit) {
                let next = order.get(pos + 1).map(|&j| ev.start[j]);
                if self.implicit_blocked(i, next) {
                    self.implicit.insert(i as u32);
                }
            }
            if self.blocking(i) {
                self.blocking_calls.push(i as u32);
            }
            let top = prev_top_end.map(|pe| (pe, within.last().copied().unwrap_or(i)));
            self.link_call(stack.last().copied(), top, i, s, lane);
            stack.push((i, s));
        }
        while !stack.is_empty() {
            self.close(&mut stack);
        }
    }

    /// The edge into call `i`'s start node `s`: from its parent's cursor (its own work, or a
    /// wait when the parent blocks), or for a top-level call from the previous top-level
    /// call's end `top.0` (a host gap, attributed to the annotation `top.1` it fell in).
    fn link_call(
        &mut self,
        parent: Option<(usize, u32)>,
        top: Option<(u32, usize)>,
        i: usize,
        s: u32,
        lane: u16,
    ) {
        let ev = &self.rank.events;
        match parent {
            Some((p, c)) => {
                let blocked = self.blocking(p);
                let cat = if blocked {
                    Category::Wait
                } else {
                    Category::Cpu
                };
                let w = if blocked {
                    0
                } else {
                    ev.start[i] - self.g.nodes[c as usize].1
                };
                self.g.edge(c, s, w, Some(cat), self.ri, EventIx::of(p));
            }
            None => {
                // The thread ran no recorded op between two top-level ops: Python between
                // ops, a stall, descheduling. Attributed to the annotation it fell in.
                if let Some((pe, at)) = top {
                    let gap = ev.start[i] - self.g.nodes[pe as usize].1;
                    let cat = (gap > 0).then_some(Category::HostGap);
                    self.gap_into.insert(s, self.g.edges.len());
                    if gap > 0 {
                        let from = self.g.nodes[pe as usize].1;
                        self.gaps.entry(lane).or_default().push((from, ev.start[i]));
                    }
                    self.g.edge(pe, s, gap, cat, self.ri, EventIx::of(at));
                }
            }
        }
    }

    /// The edges of a collective call from node `s` to node `e`: its wait for the last
    /// arriver (when the window's instances give one) as its own edge, then the rest as `cat`.
    fn split_at_wait(
        &mut self,
        s: u32,
        e: u32,
        i: usize,
        cat: Category,
        waits: &FxHashMap<u32, Ns>,
    ) {
        let (ri, event) = (self.ri, EventIx::of(i));
        let g = &mut self.g;
        let dur = g.nodes[e as usize].1 - g.nodes[s as usize].1;
        match waits.get(&(i as u32)) {
            Some(&wait) if wait > 0 && wait < dur => {
                let mid = g.node(ri, self.rank.events.start[i] + wait);
                g.waits.insert((ri, event), g.edges.len());
                g.edge(s, mid, wait, Some(Category::Wait), ri, event);
                g.edge(mid, e, dur - wait, Some(cat), ri, event);
            }
            _ => g.edge(s, e, dur, Some(cat), ri, event),
        }
    }

    /// Device events launched from the window, per stream in order; a collective kernel's
    /// wait for its last arriver is split off as its own edge.
    fn device_events(&mut self, win: RankWindow, in_comm: &FxHashMap<u32, Ns>) {
        let (rank, ri) = (self.rank, self.ri);
        let ev = &rank.events;
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side != LaneSide::Device {
                continue;
            }
            for i in rank.lane_events(l as u16) {
                if !ev.kind[i].is_device_work() {
                    continue;
                }
                let inside = match win.step_idx {
                    Some(k) => ev.step[i] == k,
                    None => ev.link[i]
                        .get()
                        .is_some_and(|l| (win.lo..win.hi).contains(&ev.start[l])),
                };
                if !inside {
                    continue;
                }
                let g = &mut self.g;
                let s = g.node(ri, ev.start[i]);
                let e = g.node(ri, ev.end(i));
                self.device_nodes.insert(i as u32, (s, e));
                self.device.push(i);
                let cat = if ev.kind[i] == Kind::Comm {
                    Category::Communication
                } else {
                    Category::GpuCompute
                };
                self.split_at_wait(s, e, i, cat, in_comm);
            }
        }
    }

    /// What each device event waited for: the previous event of its stream (a short gap), its
    /// launch (when the device was waiting for the host), or other device work that ended
    /// after the launch returned (a stream or event wait the trace does not spell out).
    fn device_dependencies(&mut self) {
        let (rank, ri) = (self.rank, self.ri);
        let ev = &rank.events;
        let mut by_end: Vec<(Ns, usize)> = self.device.iter().map(|&i| (ev.end(i), i)).collect();
        by_end.sort_unstable();
        let mut prev_on_lane: BTreeMap<u16, usize> = BTreeMap::new();
        for &i in &self.device {
            let g = &mut self.g;
            let (s, _) = self.device_nodes.of(i);
            let start = ev.start[i];
            let event = EventIx::of(i);
            let prev = prev_on_lane.insert(ev.lane[i], i);
            let launch = ev.link[i].get();
            let calls = launch.and_then(|l| Some((l, self.call_nodes.get(l as u32)?)));
            let waited = calls.and_then(|(l, _)| {
                let k = by_end.partition_point(|&(e, _)| e <= start);
                by_end[..k]
                    .iter()
                    .rev()
                    .find(|&&(_, d)| d != i)
                    .filter(|&&(e, _)| e > ev.end(l))
                    .copied()
            });
            // The previous event of the stream, when its gap is short enough to be one.
            let stream_prev =
                prev.filter(|&p| (0..KERNEL_GAP_MAX_NS).contains(&(start - ev.end(p))));
            if let Some(p) = stream_prev {
                // Work of another stream that ended later explains the gap (a stream wait
                // on a collective, a copy): the gap is its time, not idle on this stream.
                let explained = waited.is_some_and(|(e, d)| d != p && e > ev.end(p));
                let pe = self.device_nodes.of(p).1;
                let w = if explained { 0 } else { start - ev.end(p) };
                g.edge(pe, s, w, Some(Category::KernelGap), ri, event);
            }
            let Some((launch, (ls, _))) = calls else {
                continue;
            };
            let by = ev.link[i];
            match waited {
                Some((e, d)) => {
                    // The stream's own previous event too, after a long gap (a wait the
                    // trace does not show): the kernel starts no sooner than measured.
                    if Some(d) != stream_prev {
                        let de = self.device_nodes.of(d).1;
                        g.edge(de, s, start - e, Some(Category::KernelGap), ri, event);
                    }
                    g.edge(ls, s, 0, Some(Category::LaunchOverhead), ri, by);
                }
                None => {
                    let delay = start - ev.start[launch];
                    g.edge(ls, s, delay, Some(Category::LaunchOverhead), ri, by);
                }
            }
        }
    }

    /// Each blocking call ends after the last device event of the stream it synchronized
    /// (every stream for a device-wide sync), weight 0.
    fn syncs(&mut self) {
        let rank = self.rank;
        let ev = &rank.events;
        let mut lane_ends: BTreeMap<u16, Vec<(Ns, u32)>> = BTreeMap::new();
        for (d, (_, de)) in self.device_nodes.iter() {
            lane_ends
                .entry(ev.lane[d as usize])
                .or_default()
                .push((ev.end(d as usize), de));
        }
        for v in lane_ends.values_mut() {
            v.sort_unstable();
        }
        for k in 0..self.blocking_calls.len() {
            let c = self.blocking_calls[k] as usize;
            let call_end = self.call_nodes.of(c).1;
            let t = ev.end(c);
            let device_wide = self.role(c).sync == Some(SyncCall::Device);
            // The stream a stream/event sync waited on: its sync record's lane.
            let lane = ev.link[c]
                .get()
                .filter(|_| !device_wide)
                .map(|l| ev.lane[l]);
            for (l, ends) in &lane_ends {
                if lane.is_some_and(|x| x != *l) {
                    continue;
                }
                let n = ends.partition_point(|&(e, _)| e <= t);
                if n > 0 {
                    self.g
                        .edge(ends[n - 1].1, call_end, 0, None, self.ri, EventIx::of(c));
                }
            }
        }
    }
}
