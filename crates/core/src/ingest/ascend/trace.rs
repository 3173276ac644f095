//! `trace_view.json` into a rank: the shared Chrome-JSON reader with the Ascend dialect, then
//! what is Ascend's — lane names from process and thread names, the HCCL ops' own args as
//! collective metadata, launch links by `connection_id`, and `ProfilerStep#N` steps.

use super::dialect::{Ascend, Process, Processes};
use crate::error::Error;
use crate::ingest::chrome::chunk::{Chunk, MetaKind};
use crate::ingest::chrome::document::{self, ParseOptions};
use crate::ingest::chrome::merge;
use crate::ingest::kineto::args;
use crate::ingest::roles::RoleTable;
use crate::ingest::source::Source;
use crate::model::{Interner, Rank, SourceFormat, SourceInfo};
use rustc_hash::FxHashMap;
use std::sync::atomic::AtomicU64;

/// How to read one `trace_view.json`.
pub(crate) struct TraceOptions<'a> {
    /// The role tables.
    pub roles: &'a RoleTable,
    /// Advanced as chunks finish (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep `python_function` frames.
    pub python_stacks: bool,
    /// Which event parser runs.
    pub events: crate::ingest::chrome::document::JsonEvents,
}

/// A rank read from its trace, names in its own table.
pub(crate) struct TraceRank {
    /// The rank (id unset).
    pub rank: Rank,
    /// Its string table.
    pub strings: Interner,
    /// Lossy names, clamped durations.
    pub warnings: Vec<String>,
}

/// Reads one `trace_view.json`.
pub(crate) fn read_with(src: &Source, opts: &TraceOptions<'_>) -> Result<TraceRank, Error> {
    let label = &src.label;
    let dialect = Ascend::new(opts.roles);
    // The text is read again after the parse (HCCL ops, kept objects): it is brought in
    // chunk by chunk, and kept.
    let pages = src.pages(false);
    let parse = ParseOptions {
        dialect: &dialect,
        bytes_done: opts.bytes_done,
        stack_frames: opts.python_stacks,
        events: opts.events,
        pages: pages.as_ref().map(|p| p as &dyn document::TextPages),
    };
    // trace_view.json is a bare array; an object is read for its `traceEvents` alone.
    let mut chunks = document::parse(label, &src.text, &parse, &mut |_, _, _| Ok(()))?
        .ok_or_else(|| Error::input_at(label, 0, "no `traceEvents`: not a trace_view.json"))?;
    let processes = &super::dialect::processes(&chunks);
    super::dialect::settle(&mut chunks, processes);
    let m = merge::merge(label, &chunks, None)?;
    let mut strings = m.strings;
    let mut rank = Rank {
        source: SourceInfo {
            path: label.clone(),
            file_bytes: src.file_bytes,
            json_bytes: src.text.len() as u64,
            format: SourceFormat::Ascend,
            platform: super::PLATFORM,
            ..SourceInfo::default()
        },
        lanes: m.lanes,
        events: m.events,
        dropped: m.dropped,
        ..Rank::default()
    };
    name_lanes(&mut rank, &mut strings, processes, &chunks);
    rank.collectives = args::collectives(&chunks, &m.final_index, &mut strings);
    let hccl = super::hccl::read(&rank, &src.text, &mut strings, &by_pid_text(processes));
    rank.collectives.extend(hccl.collectives);
    rank.peer_waits = hccl.peer_waits;
    rank.transfers = hccl.transfers;
    let kept = |value| super::objects::kept(&src.text, &chunks, value);
    rank.clocks = super::counters::ai_core_clock(kept(super::dialect::CLOCK_COUNTER));
    rank.collectives.sort_by_key(|c| c.event);
    rank.shapes = args::shapes(&chunks, &m.final_index, &mut strings);
    rank.unknown_categories = merge::intern_categories(&mut strings, m.unknown_categories);
    crate::ingest::link::link(&mut rank, &m.corr, &m.ext);
    super::flows::link_ops(&mut rank, kept(super::dialect::OPERATOR_FLOWS), &strings);
    crate::ingest::steps::find_steps(&mut rank, &strings, opts.roles);
    crate::ingest::steps::assign_steps(&mut rank);
    Ok(TraceRank {
        rank,
        strings,
        warnings: m.warnings,
    })
}

/// The process of each pid, by the pid's text (what lanes keep).
pub(super) fn by_pid_text(processes: &Processes) -> FxHashMap<String, (Process, &str)> {
    processes
        .iter()
        .map(|(id, (p, name))| (id.text(), (*p, name.as_str())))
        .collect()
}

/// Names lanes as Ascend's tools do: `NPU Stream 2`, `HCCL Group 0 Communication`, `HCCL
/// Plane 3`, `CANN Thread 3099702`, `Python Thread 3096504`.
fn name_lanes(rank: &mut Rank, strings: &mut Interner, processes: &Processes, chunks: &[Chunk]) {
    let by_pid = by_pid_text(processes);
    let mut threads: FxHashMap<(String, String), &str> = FxHashMap::default();
    for m in chunks.iter().flat_map(|c| &c.meta) {
        if let (MetaKind::ThreadName, Some(tid)) = (m.what, &m.tid) {
            threads.insert((m.pid.text(), tid.text()), &m.value);
        }
    }
    for lane in &mut rank.lanes {
        let pid = strings.resolve(lane.pid).to_string();
        let tid = strings.resolve(lane.tid).to_string();
        let thread = threads
            .get(&(pid.clone(), tid.clone()))
            .map_or_else(|| format!("Thread {tid}"), |t| t.to_string());
        let name = match by_pid.get(&pid) {
            Some((Process::Hardware, _)) => format!("NPU {thread}"),
            Some((_, process)) => format!("{process} {thread}"),
            None => continue,
        };
        lane.name = strings.intern(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, LaneSide};

    /// Events before the metadata that names their processes, as torch_npu interleaves them.
    const LATE_NAMES: &str = r#"[{"name": "MatMul", "pid": 20, "tid": 2, "ts": "1000.000", "dur": "5.000", "args": {"Task Type": "AI_CORE"}, "ph": "X"},
{"name": "Notify_Wait", "pid": 20, "tid": 2, "ts": "1006.000", "dur": "1.000", "args": {"Task Type": "Notify Wait"}, "ph": "X"},
{"name": "hcom_allReduce__1_0_1", "pid": 30, "tid": 0, "ts": "1006.000", "dur": "2.000", "args": {"count": 4, "data_type": "FP32"}, "ph": "X"},
{"name": "Computing", "pid": 40, "tid": 0, "ts": "1000.000", "dur": "5.000", "ph": "X"},
{"name": "AscendCL@aclnnMatmul", "pid": 10, "tid": 3, "ts": "999.000", "dur": "1.000", "args": {"connection_id": 7}, "ph": "X"},
{"ph": "X", "name": "aten::mm", "pid": 50, "tid": 50, "ts": "998.000", "dur": "3.000", "cat": "cpu_op", "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
{"name": "process_name", "pid": 20, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
{"name": "process_name", "pid": 30, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},
{"name": "process_name", "pid": 40, "tid": 0, "args": {"name": "Overlap Analysis"}, "ph": "M"},
{"name": "process_name", "pid": 10, "tid": 0, "args": {"name": "CANN"}, "ph": "M"}]"#;

    fn read(text: &str) -> TraceRank {
        let src = crate::ingest::source::from_memory("t.json", text.as_bytes().to_vec()).unwrap();
        let opts = TraceOptions {
            roles: &RoleTable::embedded(),
            bytes_done: &AtomicU64::new(0),
            python_stacks: false,
            events: Default::default(),
        };
        read_with(&src, &opts).unwrap()
    }

    #[test]
    fn events_are_classified_by_processes_named_after_them() {
        let t = read(LATE_NAMES);
        let (ev, s) = (&t.rank.events, &t.strings);
        let kinds: FxHashMap<&str, Kind> = (0..ev.len())
            .map(|i| (s.resolve(ev.name[i]), ev.kind[i]))
            .collect();
        assert_eq!(kinds["MatMul"], Kind::Compute);
        // A part of the HCCL op, which is the one counted.
        assert_eq!(kinds["Notify_Wait"], Kind::Other);
        assert_eq!(kinds["hcom_allReduce__1_0_1"], Kind::Comm);
        assert_eq!(kinds["AscendCL@aclnnMatmul"], Kind::Launch);
        // The overlap track is derived: dropped, with its lane.
        assert!(!kinds.contains_key("Computing"));
        assert_eq!(t.rank.dropped.derived, 1);
        let pids: Vec<(&str, LaneSide)> = t
            .rank
            .lanes
            .iter()
            .map(|l| (s.resolve(l.pid), l.side))
            .collect();
        assert_eq!(pids.len(), 4, "{pids:?}");
        assert!(pids.contains(&("20", LaneSide::Device)));
        assert!(pids.contains(&("10", LaneSide::Cpu)));
        assert!(!pids.iter().any(|p| p.0 == "40"));
        assert_eq!(t.rank.collectives.len(), 1);
        // Stored after the dropped event: its shapes still point at it.
        let shape = &t.rank.shapes[0];
        assert_eq!(s.resolve(ev.name[shape.event.index()]), "aten::mm");
        assert_eq!(shape.dims.map(|d| s.resolve(d)), Some("[[2, 3], [3, 4]]"));
    }
}
