//! Nsight Systems SQLite exports (`nsys export --type sqlite`; docs/architecture.md): kernels,
//! memory copies and sets, device synchronizations, CUDA runtime calls (linked to their device
//! work by correlation id within a process) and NVTX ranges, one rank per process that ran
//! device work (nsys around `torchrun` records every rank's process in one file; a file per
//! rank, `report_%q{RANK}`, is one rank). Steps come from NVTX `ProfilerStep#N` ranges as
//! from Kineto's; times are put on the session's UTC clock
//! (`TARGET_INFO_SESSION_START_TIME`), so that files from several hosts line up before the
//! collectives align them.

mod nccl;
mod ops;
mod row;
mod tables;

use super::RankDraft;
use super::chrome::chunk::NO_ID;
use super::reader::{ReadContext, Reader};
use super::source::Source;
use super::sqlite::{Db, MAGIC};
use crate::error::Error;
use crate::model::{
    EventIx, Interner, Kind, Lane, LaneSide, NO_STEP, OpShape, Platform, Rank, RankFrom, RawSpan,
    SourceFormat, SourceInfo,
};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::Path;
use tables::{Row, Tables};

/// The reader of Nsight Systems SQLite exports.
pub(crate) struct NsysReader;

impl Reader for NsysReader {
    fn reads(&self) -> &'static str {
        "Nsight Systems SQLite exports (nsys export --type sqlite)"
    }

    /// Any SQLite file given as a file (Ascend's databases are read from their rank
    /// folders): its tables are checked once it is open, where the schema can be read —
    /// its text may lie megabytes into the file, past any sniffing.
    fn sniff(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn read(
        &self,
        src: &Source,
        path: Option<&Path>,
        cx: &ReadContext,
    ) -> Result<Vec<RankDraft>, Error> {
        let Some(path) = path else {
            return Err(Error::input(
                &src.label,
                "an Nsight Systems SQLite export must be given as a file (SQLite cannot be read \
                 from a stream)",
            ));
        };
        let db = Db::open(path)?;
        if !tables::is_nsys(&db)? {
            let what = super::identify::foreign(&src.label, &src.text)
                .unwrap_or_else(|| "a SQLite database of a schema stepscope does not know".into());
            return Err(Error::input(&src.label, what));
        }
        let t = tables::read(&db, path)?;
        ranks(&t, &src.label, src.file_bytes, cx)
    }
}

/// The platform of an Nsight export: a CUDA job; `TARGET_INFO_GPU` lists the node's GPUs.
const fn platform(node_devices: bool) -> Platform {
    Platform {
        lists_node_devices: node_devices,
        ..Platform::KINETO
    }
}

/// One rank per process that ran device work (else per process with any row), in pid order.
fn ranks(t: &Tables, label: &str, bytes: u64, cx: &ReadContext) -> Result<Vec<RankDraft>, Error> {
    let device_rows = || t.kernels.iter().chain(&t.copies).chain(&t.sets);
    let mut pids: Vec<i64> = device_rows().map(|r| r.process).collect();
    if pids.is_empty() {
        pids = t.runtime.iter().chain(&t.nvtx).map(|r| r.process).collect();
    }
    pids.sort_unstable();
    pids.dedup();
    if pids.is_empty() {
        return Err(Error::input(
            label,
            "an Nsight Systems export with no kernel, memory copy, runtime call or NVTX range",
        ));
    }
    let several = pids.len() > 1;
    let mut out = Vec::with_capacity(pids.len());
    for pid in pids {
        let mut d = rank_of(t, pid, cx);
        d.rank.source = SourceInfo {
            path: if several {
                format!("{label} (pid {pid})")
            } else {
                label.to_string()
            },
            input: 0,
            file_bytes: bytes,
            json_bytes: 0,
            rank_from: if d.declared_rank.is_some() {
                RankFrom::NcclInit
            } else {
                RankFrom::DiscoveryOrder
            },
            format: SourceFormat::Nsys,
            platform: platform(!t.gpus.is_empty()),
            summary: None,
        };
        if !t.missing.is_empty() {
            d.warnings.push(format!(
                "{label}: columns missing from this export's schema, their tables not read: {}",
                t.missing.join(", ")
            ));
        }
        out.push(d);
    }
    Ok(out)
}

/// A fact of a name, worked out once per distinct name (role patterns are matched per name,
/// not per row: a kernel's name repeats on most rows).
#[derive(Default)]
struct PerName<'a>(std::cell::RefCell<FxHashMap<&'a str, bool>>);

impl<'a> PerName<'a> {
    fn get(&self, name: &'a str, fact: impl FnOnce(&str) -> bool) -> bool {
        *self
            .0
            .borrow_mut()
            .entry(name)
            .or_insert_with(|| fact(name))
    }
}

/// Where an event goes: device (device, stream) lanes first, then host threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LaneKey {
    Stream(i64, i64),
    Thread(i64),
}

/// An event before grouping: lane, start, duration, name, kind, correlation id, and an
/// operator's sizes (`emit_nvtx`'s `sizes = […]`).
struct Ev<'a> {
    lane: LaneKey,
    start: Ns,
    dur: Ns,
    name: &'a str,
    kind: Kind,
    corr: u64,
    sizes: Option<&'a str>,
}

/// How a row's name reads: its kind, the event's name, an operator's sizes.
type Naming<'a, 'f> = dyn Fn(&'a str) -> (Kind, &'a str, Option<&'a str>) + 'f;

/// The rank of process `pid`.
fn rank_of<'a>(t: &'a Tables, pid: i64, cx: &ReadContext) -> RankDraft {
    let epoch = t.epoch_ns.unwrap_or(0);
    let mut warnings = Vec::new();
    let mut bad = 0u64;
    let mut evs: Vec<Ev> = Vec::new();
    let comm = PerName::default();
    let kernel = |n: &'a str| {
        let kind = if comm.get(n, |n| cx.roles.is_comm_kernel(n.as_bytes())) {
            Kind::Comm
        } else {
            Kind::Compute
        };
        (kind, n, None)
    };
    let rows = |rows, naming: &Naming<'a, '_>, evs: &mut Vec<_>, bad: &mut u64| {
        collect(rows, pid, epoch, naming, evs, bad);
    };
    rows(&t.kernels, &kernel, &mut evs, &mut bad);
    rows(&t.copies, &|n| (Kind::Memcpy, n, None), &mut evs, &mut bad);
    rows(&t.sets, &|n| (Kind::Memset, n, None), &mut evs, &mut bad);
    rows(&t.syncs, &|n| (Kind::Sync, n, None), &mut evs, &mut bad);
    rows(&t.runtime, &|n| (Kind::Launch, n, None), &mut evs, &mut bad);
    rows(&t.nvtx, &ops::classify, &mut evs, &mut bad);
    if bad > 0 {
        warnings.push(format!(
            "{bad} row(s) ending before they start (or out of range) skipped"
        ));
    }
    let mut strings = Interner::default();
    let (mut rank, lanes) = assemble(&evs, &mut strings, (cx, &t.thread_names));
    nccl::attach(&mut rank, &mut strings, (&t.nccl, epoch), pid, |tid| {
        lanes.get(&LaneKey::Thread(tid)).copied()
    });
    let used: Vec<i64> = evs
        .iter()
        .filter_map(|e| match e.lane {
            LaneKey::Stream(d, _) => Some(d),
            LaneKey::Thread(_) => None,
        })
        .collect();
    rank.devices = devices(t, &used)
        .iter()
        .map(|d| strings.intern(d))
        .collect();
    crate::ingest::steps::find_steps(&mut rank, &strings, cx.roles);
    if let Some(note) = steps_from_repetition(&mut rank, &strings) {
        warnings.push(note);
    }
    crate::ingest::steps::assign_steps(&mut rank);
    let mut draft = RankDraft::undeclared(rank, strings, warnings);
    draft.memberships = nccl::memberships(&t.nccl, pid);
    if let Some((r, n)) = nccl::world_place(&t.nccl, pid) {
        draft.declared_rank = Some(crate::model::RankId(r));
        draft.world_size = Some(n);
    }
    draft
}

/// Without NVTX step markers, the steps of the repeating kernel sequence when one holds
/// (`period.rs`), with the note that says so.
fn steps_from_repetition(rank: &mut Rank, strings: &Interner) -> Option<String> {
    if !rank.steps.iter().all(|s| s.synthetic) {
        return None;
    }
    let (steps, p) = super::period::steps(rank)?;
    let n = steps.len();
    rank.steps = steps;
    Some(format!(
        "no NVTX ProfilerStep#N ranges: {n} steps found from the repeating kernel sequence \
         (every {} kernel(s), {} once each); name the step with an NVTX range \
         (`ProfilerStep#N`; a range of your own with `--step-range NAME`) for exact steps",
        p.len,
        crate::format::echo(strings.resolve(p.anchor))
    ))
}

/// Adds process `pid`'s rows to `evs` (times shifted by `epoch`), counting in `bad` those
/// that end before they start.
fn collect<'a>(
    rows: &'a [Row],
    pid: i64,
    epoch: Ns,
    naming: &Naming<'a, '_>,
    evs: &mut Vec<Ev<'a>>,
    bad: &mut u64,
) {
    for r in rows.iter().filter(|r| r.process == pid) {
        let (Some(start), Some(dur)) = (r.start.checked_add(epoch), r.end.checked_sub(r.start))
        else {
            *bad += 1;
            continue;
        };
        if dur < 0 {
            *bad += 1;
            continue;
        }
        let lane = if r.lane.0 >= 0 {
            LaneKey::Stream(r.lane.0, r.lane.1)
        } else {
            LaneKey::Thread(r.lane.1)
        };
        let (kind, name, sizes) = naming(&r.name);
        evs.push(Ev {
            lane,
            start,
            dur,
            name,
            kind,
            corr: r.corr.and_then(|c| u64::try_from(c).ok()).unwrap_or(NO_ID),
            sizes,
        });
    }
}

/// The rank's device names: the node's GPUs from `TARGET_INFO_GPU` when the export lists
/// them (the table is optional), else one unnamed CUDA GPU per device id its work ran on —
/// a model name, never an id, so that ranks on different devices of one model are one job.
fn devices(t: &Tables, used: &[i64]) -> Vec<String> {
    if !t.gpus.is_empty() {
        return t.gpus.iter().map(|g| g.1.clone()).collect();
    }
    let mut ids: Vec<i64> = used.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids.iter().map(|_| UNNAMED_GPU.to_string()).collect()
}

/// A GPU whose model the export does not record (no `TARGET_INFO_GPU`).
const UNNAMED_GPU: &str = "CUDA GPU (model not recorded)";

/// Groups the events by lane in start order (an enclosing range before what it encloses),
/// names the lanes, links launches to their device work and to their operators, and keeps
/// the shapes of roofline operators. Returns the rank and each lane's index.
fn assemble(
    evs: &[Ev],
    strings: &mut Interner,
    (cx, thread_names): (&ReadContext, &FxHashMap<i64, String>),
) -> (Rank, BTreeMap<LaneKey, u16>) {
    let mut order: Vec<usize> = (0..evs.len()).collect();
    order.sort_by_key(|&i| (evs[i].lane, evs[i].start, std::cmp::Reverse(evs[i].dur), i));
    let mut lanes: BTreeMap<LaneKey, u16> = BTreeMap::new();
    let mut rank = Rank::default();
    let mut corr = Vec::with_capacity(evs.len());
    let roofline_ops = PerName::default();
    for (k, &i) in order.iter().enumerate() {
        let e = &evs[i];
        let lane = *lanes.entry(e.lane).or_insert_with(|| {
            rank.lanes
                .push(lane_of(e.lane, k as u32, strings, thread_names));
            u16::try_from(rank.lanes.len() - 1).unwrap_or(u16::MAX)
        });
        rank.lanes[lane as usize].count += 1;
        let ev = &mut rank.events;
        ev.start.push(e.start);
        ev.dur.push(e.dur);
        ev.name.push(strings.intern(e.name));
        ev.lane.push(lane);
        ev.kind.push(e.kind);
        ev.step.push(NO_STEP);
        ev.link.push(EventIx::NONE);
        ev.op.push(EventIx::NONE);
        ev.raw.push(RawSpan::default());
        corr.push(e.corr);
        let shaped = |n: &str| cx.roles.op_family(n.as_bytes()).is_some();
        if let Some(dims) = e.sizes.filter(|_| roofline_ops.get(e.name, shaped)) {
            rank.shapes.push(OpShape {
                event: EventIx::of(k),
                dims: Some(strings.intern(dims)),
                types: None,
                flops: None,
            });
        }
    }
    let ext = ops::op_ids(&rank, &corr);
    crate::ingest::link::link(&mut rank, &corr, &ext);
    (rank, lanes)
}

/// A lane as Kineto names its own: `device 0 stream 7`, `thread 4037 (pt_main_thread)` in
/// its process (the name when the export has it).
fn lane_of(
    key: LaneKey,
    first: u32,
    strings: &mut Interner,
    thread_names: &FxHashMap<i64, String>,
) -> Lane {
    let parts = match key {
        LaneKey::Stream(d, s) => (
            LaneSide::Device,
            d.to_string(),
            s.to_string(),
            format!("device {d} stream {s}"),
        ),
        LaneKey::Thread(g) => {
            let (p, t) = (tables::pid_of(g), g & 0x00ff_ffff);
            let name = match thread_names.get(&g) {
                Some(n) => format!("thread {t} ({n})"),
                None => format!("thread {t}"),
            };
            (LaneSide::Cpu, p.to_string(), t.to_string(), name)
        }
    };
    Lane::named(parts, first, strings)
}
