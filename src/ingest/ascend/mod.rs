//! Ascend profiler output (torch_npu `*_ascend_pt`, MindSpore `*_ascend_ms`; reference
//! `ascend.md` in the shared folder): one rank directory into one [`RankDraft`] with the
//! same model as a Kineto trace. The text export's `trace_view.json` gives the events
//! ([`trace`], with the [`dialect`] that tells device, CANN and HCCL events apart);
//! `profiler_info`/`profiler_metadata` the rank, groups and environment ([`info`]);
//! `step_trace_time.csv` the profiler's own step summary, kept to cross-check the
//! breakdown ([`step_trace`]). Where files are: [`files`].

pub mod dialect;
pub mod files;
pub mod hccl;
pub mod info;
pub mod step_trace;
pub mod trace;

use super::RankDraft;
use super::source;
use crate::error::Error;
pub use files::RankDir;
use std::sync::atomic::AtomicU64;

/// How to read one rank.
pub struct ReadOptions<'a> {
    /// The role tables.
    pub roles: &'a super::roles::RoleTable,
    /// Advanced as the trace is parsed (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep `python_function` frames.
    pub python_stacks: bool,
}

/// Reads one rank directory. Files that are missing degrade what can be computed and are
/// named in the warnings; a rank with no timed events at all is an error.
pub fn read(dir: &RankDir, opts: &ReadOptions<'_>) -> Result<RankDraft, Error> {
    let info = info::read(dir.profiler_info().as_deref(), dir.metadata().as_deref())?;
    let Some(trace_path) = dir.output_file("trace_view.json") else {
        return Err(no_trace(dir));
    };
    let src = source::open(&trace_path)?;
    let processes = dialect::scan_processes(&src.text);
    let mut d = read_trace(&src, &processes, opts)?;
    d.rank.source.path = dir.label();
    match dir.output_file("step_trace_time.csv") {
        Some(p) => d.rank.profiler_steps = step_trace::read(&p)?,
        None => d.warnings.push(format!(
            "{}: no step_trace_time.csv; the breakdown is not cross-checked against the profiler's",
            dir.label()
        )),
    }
    d.declared_rank = info.rank;
    d.world_size = info.world_size;
    d.groups = info.groups;
    Ok(d)
}

/// The processes of a trace when it is an Ascend `trace_view.json` (a bare array with
/// Ascend's processes), whatever its name; `None` for anything else.
pub fn sniff(src: &source::Source) -> Option<dialect::Processes> {
    let first = src.text.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'[' {
        return None;
    }
    let p = dialect::scan_processes(&src.text);
    trace::is_ascend(&p).then_some(p)
}

/// Reads a `trace_view.json` alone (found by name in a rank directory, or by content).
pub fn read_trace(
    src: &source::Source,
    processes: &dialect::Processes,
    opts: &ReadOptions<'_>,
) -> Result<RankDraft, Error> {
    let t = trace::read_with(
        src,
        processes,
        &trace::TraceOptions {
            roles: opts.roles,
            bytes_done: opts.bytes_done,
            python_stacks: opts.python_stacks,
        },
    )?;
    let mut strings = t.strings;
    let mut rank = t.rank;
    rank.devices = vec![strings.intern("Ascend NPU")];
    Ok(RankDraft {
        rank,
        strings,
        declared_rank: None,
        world_size: None,
        groups: Vec::new(),
        warnings: t.warnings,
    })
}

/// Why a rank without `trace_view.json` cannot be read.
fn no_trace(dir: &RankDir) -> Error {
    let what = if dir.profiler_db().is_some() {
        "a db export (ascend_*_profiler_*.db) without trace_view.json; stepscope reads the text \
         export (export_type=text) so far"
    } else {
        "no trace_view.json in the profiler output (profile with the NPU and CPU activities and \
         export_type=text)"
    };
    Error::input(&dir.output.display().to_string(), what)
}
