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
pub struct TraceOptions<'a> {
    /// The role tables.
    pub roles: &'a RoleTable,
    /// Advanced as chunks finish (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep `python_function` frames.
    pub python_stacks: bool,
}

/// A rank read from its trace, names in its own table.
pub struct TraceRank {
    /// The rank (id unset).
    pub rank: Rank,
    /// Its string table.
    pub strings: Interner,
    /// Lossy names, clamped durations.
    pub warnings: Vec<String>,
}

/// True when a trace's processes are Ascend's (a `trace_view.json` under another name).
pub fn is_ascend(processes: &Processes) -> bool {
    processes
        .values()
        .any(|(p, _)| !matches!(p, Process::Host | Process::Other))
}

/// Reads one `trace_view.json` whose processes were already found.
pub fn read_with(
    src: &Source,
    processes: &Processes,
    opts: &TraceOptions<'_>,
) -> Result<TraceRank, Error> {
    let label = &src.label;
    let dialect = Ascend::new(opts.roles, processes);
    let parse = ParseOptions {
        dialect: &dialect,
        bytes_done: opts.bytes_done,
        stack_frames: opts.python_stacks,
    };
    // trace_view.json is a bare array; an object is read for its `traceEvents` alone.
    let chunks = document::parse(label, &src.text, &parse, &mut |_, _, _| Ok(()))?
        .ok_or_else(|| Error::input_at(label, 0, "no `traceEvents`: not a trace_view.json"))?;
    let m = merge::merge(label, &chunks, None)?;
    let mut strings = m.strings;
    let mut rank = Rank {
        source: SourceInfo {
            path: label.clone(),
            file_bytes: src.file_bytes,
            json_bytes: src.text.len() as u64,
            format: SourceFormat::Ascend,
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
    let kept = |needle| super::objects::kept(&src.text, &chunks, needle);
    rank.clocks = super::counters::ai_core_clock(kept(b"\"AI Core Freq\""));
    rank.collectives.sort_by_key(|c| c.event);
    rank.shapes = args::shapes(&chunks, &m.final_index, &mut strings);
    rank.unknown_categories = merge::intern_categories(&mut strings, m.unknown_categories);
    crate::ingest::link::link(&mut rank, &m.corr, &m.ext);
    super::flows::link_ops(&mut rank, kept(b"\"async_npu\""), &strings);
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
