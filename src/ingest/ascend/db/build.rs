//! The db's rows into a rank: the same lanes, kinds, launch links, collectives and peer waits
//! as the text export's `trace_view.json` gives (docs/metrics.md, "Ascend"), so every
//! analysis runs unchanged.

use super::rows::{CannRow, HostRow, OpRow, TaskRow};
use crate::ingest::ascend::dialect::task_class;
use crate::ingest::ascend::hccl::op_collective;
use crate::ingest::chrome::Class;
use crate::ingest::chrome::chunk::NO_ID;
use crate::model::{
    Collective, Dropped, EventIx, Events, Interner, Kind, Lane, LaneSide, NO_STEP, OpShape,
    PeerWait, PlaneTransfer, Rank, RawSpan, Sym,
};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// The rows of one rank's database.
pub struct Tables {
    /// `STRING_IDS`.
    pub strings: FxHashMap<i64, String>,
    /// `PYTORCH_API`.
    pub host: Vec<HostRow>,
    /// `CANN_API`.
    pub cann: Vec<CannRow>,
    /// `TASK` with its kernel or HCCL facts.
    pub tasks: Vec<TaskRow>,
    /// `COMMUNICATION_OP`.
    pub ops: Vec<OpRow>,
    /// `CONNECTION_IDS`: which connection ids each framework operator issued.
    pub connections: Vec<(i64, i64)>,
    /// `OVERLAP_ANALYSIS` rows: the profiler's derived tracks, counted, not stored.
    pub derived: u64,
}

/// Where an event goes, in the order lanes are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LaneKey {
    Stream(i64),
    Group(i64),
    Plane(i64),
    Host(i64),
    Cann(i64),
}

/// An event before the events are grouped by lane.
struct Ev {
    lane: LaneKey,
    start: Ns,
    dur: Ns,
    name: Sym,
    kind: Kind,
    corr: u64,
    /// The framework operator's key it belongs to (operators: their own), as the text
    /// export's `async_npu` flows link them.
    ext: u64,
}

/// What is built beside the events, by the event's position before sorting.
#[derive(Default)]
struct Extra {
    collectives: Vec<(usize, Collective)>,
    waits: Vec<(usize, u32)>,
    transfers: Vec<(usize, PlaneTransfer)>,
    shapes: Vec<(usize, OpShape)>,
}

/// A rank (id unset) and its string table from the rows.
pub fn rank(t: &Tables) -> (Rank, Interner) {
    let mut strings = Interner::default();
    let mut b = Builder {
        t,
        issued_by: issued_by(t),
        strings: &mut strings,
        evs: Vec::new(),
        extra: Extra::default(),
        dropped: Dropped::default(),
    };
    b.host();
    b.cann();
    let hccl_ops = !t.ops.is_empty();
    b.ops();
    b.tasks(hccl_ops);
    b.dropped.derived = t.derived;
    let (evs, extra, dropped) = (b.evs, b.extra, b.dropped);
    let mut rank = assemble(evs, extra, &mut strings);
    rank.dropped = dropped;
    (rank, strings)
}

struct Builder<'a> {
    t: &'a Tables,
    /// Connection id → the key of the framework operator that issued it.
    issued_by: FxHashMap<i64, i64>,
    strings: &'a mut Interner,
    evs: Vec<Ev>,
    extra: Extra,
    dropped: Dropped,
}

impl Builder<'_> {
    /// The text of a string id (empty when unknown).
    fn text(&self, id: i64) -> &str {
        self.t.strings.get(&id).map_or("", String::as_str)
    }

    fn name(&mut self, id: i64) -> Sym {
        let s = self.t.strings.get(&id).map_or("", String::as_str);
        self.strings.intern(s)
    }

    fn push(&mut self, lane: LaneKey, start: Ns, end: Ns, name: Sym, kind: Kind, corr: u64) {
        self.evs.push(Ev {
            lane,
            start,
            dur: end - start,
            name,
            kind,
            corr,
            ext: NO_ID,
        });
    }

    /// The last event's input shapes and types, as the text export writes them (`Input
    /// Dims`, `Input type`): the column that holds only dimensions is the shapes.
    fn shapes(&mut self, (a, b): (Option<i64>, Option<i64>)) {
        let (a, b) = (a.map(|a| self.text(a)), b.map(|b| self.text(b)));
        let dims_like = |t: &&str| {
            !t.is_empty()
                && t.bytes()
                    .all(|c| c.is_ascii_digit() || b",; \r\n\t".contains(&c))
        };
        let (dims, types) = match (a, b) {
            (Some(a), b) if dims_like(&a) => (Some(a), b),
            (a, Some(b)) if dims_like(&b) => (Some(b), a),
            _ => return,
        };
        let (dims, types) = (dims.map(str::to_string), types.map(str::to_string));
        let shape = OpShape {
            event: EventIx::NONE,
            dims: dims.map(|d| self.strings.intern(&d)),
            types: types.map(|t| self.strings.intern(&t)),
            flops: None,
        };
        self.extra.shapes.push((self.evs.len() - 1, shape));
    }

    /// Marks the last event pushed as work that framework operator `key` issued (or, for an
    /// operator, as that operator).
    fn issued(&mut self, key: Option<i64>) {
        if let (Some(k), Some(e)) = (key, self.evs.last_mut()) {
            e.ext = k as u64;
        }
    }

    /// Framework operators (steps among them), the task queue, mstx ranges; Python frames
    /// are counted, as the text reader counts them.
    fn host(&mut self) {
        for r in &self.t.host {
            let kind = match r.api {
                50002 => Kind::Launch,
                50003 => {
                    self.dropped.python_function += 1;
                    continue;
                }
                50004 => Kind::Annotation,
                _ => Kind::HostOp,
            };
            let name = self.name(r.name);
            self.push(LaneKey::Host(r.tid), r.start, r.end, name, kind, NO_ID);
            if kind == Kind::HostOp {
                self.issued(r.links);
                self.shapes(r.inputs);
            }
        }
    }

    /// AscendCL and runtime calls: the launches, by connection id.
    fn cann(&mut self) {
        for r in &self.t.cann {
            let name = self.name(r.name);
            self.push(
                LaneKey::Cann(r.tid),
                r.start,
                r.end,
                name,
                Kind::Launch,
                r.corr as u64,
            );
        }
    }

    /// HCCL ops, with their count and element type as collective metadata.
    fn ops(&mut self) {
        for r in &self.t.ops {
            let name = self.name(r.name);
            let op = self.text(r.name).to_string();
            let at = self.evs.len();
            let corr = r.corr as u64;
            self.push(
                LaneKey::Group(r.group),
                r.start,
                r.end,
                name,
                Kind::Comm,
                corr,
            );
            let by = self.issued_by.get(&r.corr).copied();
            self.issued(by);
            let dtype = r.data_type.as_deref();
            let mut c = op_collective(EventIx::NONE, &op, r.count, dtype, self.strings);
            // Groups are keyed by HCCL's hash of the id, as the text export names them.
            let group = self.text(r.group);
            if !group.is_empty() {
                let hash = crate::ingest::ascend::info::double_hash(group);
                c.group = Some(self.strings.intern(&hash));
            }
            self.extra.collectives.push((at, c));
        }
    }

    /// Device tasks: kernels, copies and syncs on their streams by task type; HCCL's plane
    /// tasks on their planes, as `other`, the waits for a named peer kept as such.
    fn tasks(&mut self, hccl_ops: bool) {
        // An op's own task on its stream (typed AI_CORE) is the op again: the op stands for it.
        let op_tasks: rustc_hash::FxHashSet<i64> = self.t.ops.iter().map(|o| o.corr).collect();
        for r in &self.t.tasks {
            if r.plane.is_none() && op_tasks.contains(&r.corr) {
                continue;
            }
            if let Some(p) = &r.plane {
                let kind_text = self.text(p.task_type).to_string();
                let name = self.strings.intern(&kind_text);
                if matches!(kind_text.as_str(), "Notify Wait" | "Notify_Wait")
                    && p.dst != p.src
                    && (0..i64::from(u32::MAX)).contains(&p.dst)
                {
                    self.extra.waits.push((self.evs.len(), p.dst as u32));
                }
                let transfer = match (&p.transport, &p.link, p.size) {
                    (Some(t), Some(l), Some(b)) if b > 0 => {
                        PlaneTransfer::of(EventIx::NONE, t, l, b as u64)
                    }
                    _ => None,
                };
                self.extra
                    .transfers
                    .extend(transfer.map(|t| (self.evs.len(), t)));
                let lane = LaneKey::Plane(p.plane);
                self.push(lane, r.start, r.end, name, Kind::Other, NO_ID);
                continue;
            }
            let task_type = self.text(r.task_type).to_string();
            // torch_npu's Computing is the tasks with operator info (COMPUTE_TASK_INFO),
            // whatever their type (a DSA mask generator is STARS_COMMON); a kernel-typed task
            // without it is kept, not counted as compute.
            let kind = match task_class(task_type.as_bytes()) {
                _ if r.kernel.is_some() => Kind::Compute,
                Class::Kernel => Kind::Other,
                Class::CommKernel if !hccl_ops => Kind::Comm,
                Class::Memcpy => Kind::Memcpy,
                Class::Sync => Kind::Sync,
                _ => Kind::Other,
            };
            let name = match r.kernel {
                Some(k) if !self.text(k).is_empty() => self.name(k),
                _ => self.strings.intern(&task_type),
            };
            let (lane, corr) = (LaneKey::Stream(r.stream), r.corr as u64);
            self.push(lane, r.start, r.end, name, kind, corr);
            let by = self.issued_by.get(&r.corr).copied();
            self.issued(by);
        }
    }
}

/// Connection id → the `CONNECTION_IDS` key of the framework operator that issued it (the
/// queue's records have keys too; only operators' count).
fn issued_by(t: &Tables) -> FxHashMap<i64, i64> {
    let ops: rustc_hash::FxHashSet<i64> = t
        .host
        .iter()
        .filter(|r| r.api == 50001)
        .filter_map(|r| r.links)
        .collect();
    t.connections
        .iter()
        .filter(|(key, _)| ops.contains(key))
        .map(|&(key, conn)| (conn, key))
        .collect()
}

/// Groups the events by lane (in start order within each), names the lanes, links launches
/// and finds the steps' events.
fn assemble(evs: Vec<Ev>, extra: Extra, strings: &mut Interner) -> Rank {
    let mut order: Vec<usize> = (0..evs.len()).collect();
    order.sort_by_key(|&i| (evs[i].lane, evs[i].start, i));
    let mut lanes: BTreeMap<LaneKey, u16> = BTreeMap::new();
    let mut rank = Rank::default();
    let mut new_ix = vec![0u32; evs.len()];
    let mut corr = Vec::with_capacity(evs.len());
    for (k, &i) in order.iter().enumerate() {
        let e = &evs[i];
        let lane = *lanes.entry(e.lane).or_insert_with(|| {
            rank.lanes.push(lane_of(e.lane, k as u32, strings));
            (rank.lanes.len() - 1) as u16
        });
        rank.lanes[lane as usize].count += 1;
        new_ix[i] = k as u32;
        push_event(&mut rank.events, e, lane);
        corr.push(e.corr);
    }
    let ext: Vec<u64> = order.iter().map(|&i| evs[i].ext).collect();
    crate::ingest::link::link(&mut rank, &corr, &ext);
    let at = |i: usize| EventIx(new_ix[i]);
    rank.collectives = placed(extra.collectives, |(i, c)| Collective { event: at(i), ..c });
    rank.collectives.sort_by_key(|c| c.event);
    rank.shapes = placed(extra.shapes, |(i, s)| OpShape { event: at(i), ..s });
    rank.shapes.sort_by_key(|s| s.event);
    let starts = &rank.events.start;
    rank.peer_waits = placed(extra.waits, |(i, peer)| PeerWait { event: at(i), peer });
    rank.peer_waits
        .sort_by_key(|w| (starts[w.event.index()], w.event));
    rank.transfers = placed(extra.transfers, |(i, t)| PlaneTransfer {
        event: at(i),
        ..t
    });
    rank.transfers
        .sort_by_key(|t| (starts[t.event.index()], t.event));
    rank
}

/// A side table's entries, each given its event's place after sorting.
fn placed<T, U>(v: Vec<(usize, T)>, place: impl Fn((usize, T)) -> U) -> Vec<U> {
    v.into_iter().map(place).collect()
}

fn push_event(ev: &mut Events, e: &Ev, lane: u16) {
    ev.start.push(e.start);
    ev.dur.push(e.dur);
    ev.name.push(e.name);
    ev.lane.push(lane);
    ev.kind.push(e.kind);
    ev.step.push(NO_STEP);
    ev.link.push(EventIx::NONE);
    ev.op.push(EventIx::NONE);
    ev.raw.push(RawSpan::default());
}

/// A lane as the text export names it: `NPU Stream 2`, `HCCL Plane 3`, `Python Thread 77`.
fn lane_of(key: LaneKey, first: u32, strings: &mut Interner) -> Lane {
    let thread = |g: i64| (g >> 32, g & 0xffff_ffff);
    let (side, pid, tid, name) = match key {
        LaneKey::Stream(s) => (
            LaneSide::Device,
            "0".into(),
            s.to_string(),
            format!("NPU Stream {s}"),
        ),
        LaneKey::Group(g) => (
            LaneSide::Device,
            "HCCL".into(),
            g.to_string(),
            "HCCL Group Communication".to_string(),
        ),
        LaneKey::Plane(p) => (
            LaneSide::Device,
            "HCCL".into(),
            format!("plane {p}"),
            format!("HCCL Plane {p}"),
        ),
        LaneKey::Host(g) => {
            let (p, t) = thread(g);
            (
                LaneSide::Cpu,
                p.to_string(),
                t.to_string(),
                format!("Python Thread {t}"),
            )
        }
        LaneKey::Cann(g) => {
            let (p, t) = thread(g);
            (
                LaneSide::Cpu,
                format!("CANN {p}"),
                t.to_string(),
                format!("CANN Thread {t}"),
            )
        }
    };
    Lane {
        side,
        pid: strings.intern(&pid),
        tid: strings.intern(&tid),
        name: strings.intern(&name),
        first,
        count: 0,
    }
}
