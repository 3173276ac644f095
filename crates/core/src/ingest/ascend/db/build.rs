//! The db's rows into a rank: the same lanes, kinds, launch links, collectives and peer waits
//! as the text export's `trace_view.json` gives (docs/metrics.md, "Ascend"), so every
//! analysis runs unchanged.

use super::rows::{CannRow, HostRow, OpRow, TaskRow};
use crate::ingest::ascend::dialect::task_class;
use crate::ingest::ascend::hccl::op_collective;
use crate::ingest::ascend::lanes::{Ev, Extra, LaneKey, assemble};
use crate::ingest::chrome::Class;
use crate::ingest::chrome::chunk::NO_ID;
use crate::model::{Dropped, EventIx, Interner, Kind, OpShape, PlaneTransfer, Rank, Sym};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// The rows of one rank's database.
pub(crate) struct Tables {
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

/// A rank (id unset) and its string table from the rows.
pub(crate) fn rank(t: &Tables) -> (Rank, Interner) {
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

/// How many name ids the rows use that `STRING_IDS` does not have.
pub(crate) fn missing_names(t: &Tables) -> usize {
    let ids = t
        .host
        .iter()
        .map(|r| r.name)
        .chain(t.cann.iter().map(|r| r.name))
        .chain(
            t.tasks
                .iter()
                .flat_map(|r| [Some(r.task_type), r.kernel])
                .flatten(),
        )
        .chain(t.ops.iter().flat_map(|r| [r.name, r.group]));
    ids.filter(|id| !t.strings.contains_key(id)).count()
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
            step: crate::model::NO_STEP,
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

    /// AscendCL and runtime calls: the launches, by connection id. Named as the text export
    /// names them, their layer first (`AscendCL@aclrtSynchronizeStream`, `Node@launch`), so
    /// the role tables read both exports alike.
    fn cann(&mut self) {
        for r in &self.t.cann {
            let text = self.text(r.name);
            let name = match r.level.and_then(layer) {
                Some(l) => self.strings.intern(&format!("{l}@{text}")),
                None => self.name(r.name),
            };
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

/// The text export's prefix for a CANN layer (`ENUM_API_TYPE`).
fn layer(level: i64) -> Option<&'static str> {
    Some(match level {
        5000 => "Runtime",
        5500 => "Hccl",
        10000 => "Node",
        15000 => "Model",
        20000 => "AscendCL",
        _ => return None,
    })
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
