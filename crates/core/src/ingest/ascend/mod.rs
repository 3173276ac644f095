//! Ascend profiler output (torch_npu `*_ascend_pt`, MindSpore `*_ascend_ms`; reference
//! `ascend.md` in the shared folder): one rank directory into one [`RankDraft`] with the
//! same model as a Kineto trace. The text export's `trace_view.json` gives the events
//! ([`trace`], with the [`dialect`] that tells device, CANN and HCCL events apart);
//! `profiler_info`/`profiler_metadata` the rank, groups and environment ([`info`]);
//! `step_trace_time.csv` the profiler's own step summary, kept to cross-check the
//! breakdown ([`step_trace`]); a rank that kept only its summaries is read by [`summary`].
//! Where files are: [`files`].

pub mod communication;
pub(crate) mod counters;
pub(crate) mod csv_text;
pub mod db;
pub mod device_only;
pub(crate) mod dialect;
pub(crate) mod files;
pub(crate) mod flows;
pub(crate) mod hccl;
pub mod info;
pub mod kernel_details;
pub(crate) mod lanes;
pub mod matrix;
mod objects;
pub mod op_statistic;
pub mod step_trace;
pub mod summary;
pub(crate) mod tasks;
pub(crate) mod trace;

use super::RankDraft;
use super::reader::ReadContext;
use super::source;
use crate::error::Error;
use crate::model::{Interner, Rank};
pub use files::RankDir;

/// The reader of an Ascend `trace_view.json` given as a file (under any name: told by its
/// processes, `Ascend Hardware`, `HCCL`, `CANN`).
pub(crate) struct TraceViewReader;

impl super::reader::Reader for TraceViewReader {
    fn reads(&self) -> &'static str {
        "Ascend profiler output folders (*_ascend_pt; a trace_view.json alone under any name)"
    }

    fn sniff(&self, head: &[u8]) -> bool {
        super::reader::first_byte(head) == Some(b'[') && dialect::names_ascend_process(head)
    }

    fn read(
        &self,
        src: &source::Source,
        _: Option<&std::path::Path>,
        cx: &ReadContext,
    ) -> Result<Vec<RankDraft>, Error> {
        read_trace(src, cx).map(|d| vec![d])
    }
}

/// Reads one rank directory: its `trace_view.json`, else its profiler database, else its
/// kernel table alone, else its summaries ([`summary`]: one rank per device they name).
/// Files that are missing degrade what can be computed and are named in the warnings.
pub(crate) fn read(dir: &RankDir, opts: &ReadContext<'_>) -> Result<Vec<RankDraft>, Error> {
    let info = info::read(dir.profiler_info().as_deref(), dir.metadata().as_deref())?;
    let timeline = dir.output_file("trace_view.json").is_some()
        || dir.profiler_db().is_some()
        || dir.output_file("kernel_details.csv").is_some();
    if !timeline && summary::has_summaries(dir) {
        return summary::read(dir, info);
    }
    read_timeline(dir, info, opts).map(|d| vec![d])
}

/// Reads a rank directory that kept a timeline.
fn read_timeline(
    dir: &RankDir,
    info: info::Info,
    opts: &ReadContext<'_>,
) -> Result<RankDraft, Error> {
    let mut d = if let Some(trace_path) = dir.output_file("trace_view.json") {
        // Found in a directory, not named: only a regular file is read (a FIFO would block).
        source::check_regular(&trace_path)?;
        let src = source::open(&trace_path)?;
        let mut d = read_trace(&src, opts)?;
        d.rank.source.path = dir.label();
        if let Some(p) = dir.output_file("kernel_details.csv") {
            let table = kernel_details::read(&p)?;
            d.warnings.extend(table.warnings);
            let unmatched = tasks::attach(&mut d.rank, &mut d.strings, table.rows);
            if unmatched > 0 {
                d.warnings.push(format!(
                    "{}: {unmatched} kernel_details.csv row(s) match no device task of \
                     trace_view.json",
                    dir.label()
                ));
            }
        }
        d
    } else if let Some(db) = dir.profiler_db() {
        let mut d = read_db(dir, &db, opts)?;
        d.declared_rank = info.rank.or(d.declared_rank);
        d.rank.env = info.env.or(d.rank.env.take());
        d.world_size = info.world_size;
        d.parallel = info.parallel.or(d.parallel);
        if !info.groups.is_empty() {
            d.groups = info.groups;
        }
        return Ok(d);
    } else if let Some(k) = dir.output_file("kernel_details.csv") {
        read_kernel_table(dir, &k, opts)?
    } else {
        return Err(no_trace(dir));
    };
    read_summaries(dir, &mut d)?;
    d.declared_rank = info.rank;
    d.rank.env = info.env;
    d.world_size = info.world_size;
    d.parallel = info.parallel;
    d.groups = info.groups;
    Ok(d)
}

/// The text export's summaries beside the timeline: the profiler's step summary (to
/// cross-check), HCCL's traffic and groups, the link matrix, the operator statistics.
fn read_summaries(dir: &RankDir, d: &mut RankDraft) -> Result<(), Error> {
    match dir.output_file("step_trace_time.csv") {
        Some(p) => {
            d.rank.profiler_steps = step_trace::read(&p)?;
            if d.rank.profiler_steps.is_empty() {
                d.warnings.push(format!(
                    "{}: step_trace_time.csv has no step rows (it ends in or after its header: \
                     cut short?); the breakdown is not cross-checked against the profiler's",
                    p.display()
                ));
            }
        }
        None => d.warnings.push(format!(
            "{}: no step_trace_time.csv; the breakdown is not cross-checked against the profiler's",
            dir.label()
        )),
    }
    if let Some(p) = dir.output_file("communication.json") {
        let summary = communication::read(&p)?;
        d.rank.transports = summary.transports;
        d.rank.hccl_times = summary.times;
        let groups = communication::op_groups(&p)?;
        assign_groups(&mut d.rank, &mut d.strings, &groups);
    }
    if let Some(p) = dir.output_file("communication_matrix.json") {
        d.rank.links = matrix::read(&p)?;
        group_sizes(&mut d.rank, &d.strings);
    }
    if let Some(p) = dir.output_file("op_statistic.csv") {
        d.rank.op_stats = op_statistic::read(&p)?;
    }
    Ok(())
}

/// A rank whose export kept the kernel table but not `trace_view.json`: the device timeline
/// alone ([`device_only`]), said in the warnings.
fn read_kernel_table(
    dir: &RankDir,
    path: &std::path::Path,
    opts: &ReadContext<'_>,
) -> Result<RankDraft, Error> {
    let table = kernel_details::read(path)?;
    let mut strings = Interner::default();
    let label = path.display().to_string();
    let mut rank = device_only::rank(table.rows, &mut strings, opts.roles)
        .map_err(|m| Error::input(&label, &m))?;
    rank.source = source_of(dir, path);
    rank.devices = vec![strings.intern("Ascend NPU")];
    let mut warnings = vec![format!(
        "{}: no trace_view.json; the device timeline comes from kernel_details.csv alone (no \
         host side: no launches, host-bound or data-loading analysis)",
        dir.label()
    )];
    warnings.extend(table.warnings);
    Ok(RankDraft::undeclared(rank, strings, warnings))
}

/// Each HCCL op's group, by the op's name (`communication.json` names both; the trace only
/// the op).
fn assign_groups(rank: &mut Rank, strings: &mut Interner, groups: &[(String, String)]) {
    for c in &mut rank.collectives {
        let name = strings.resolve(rank.events.name[c.event.index()]);
        if let Ok(k) = groups.binary_search_by(|(op, _)| op.as_str().cmp(name)) {
            c.group = Some(strings.intern(&groups[k].1));
        }
    }
}

/// Each HCCL op's group size from the link matrix: its communicator ranks run 0..n, so the
/// largest one named is n − 1. What tells a group of the whole world from a smaller one when
/// no metadata declares it.
fn group_sizes(rank: &mut Rank, strings: &Interner) {
    let mut size: rustc_hash::FxHashMap<&str, u64> = Default::default();
    for l in &rank.links {
        let n = size.entry(l.group.as_str()).or_default();
        *n = (*n).max(u64::from(l.src.max(l.dst)) + 1);
    }
    for c in &mut rank.collectives {
        if let Some(&n) = c.group.and_then(|g| size.get(strings.resolve(g))) {
            c.group_size = Some(n);
        }
    }
}

/// Reads a `trace_view.json` alone (found by name in a rank directory, or by content).
pub(crate) fn read_trace(src: &source::Source, opts: &ReadContext<'_>) -> Result<RankDraft, Error> {
    let t = trace::read_with(
        src,
        &trace::TraceOptions {
            roles: opts.roles,
            bytes_done: opts.bytes_done,
            python_stacks: opts.python_stacks,
            events: opts.events,
        },
    )?;
    let mut strings = t.strings;
    let mut rank = t.rank;
    rank.devices = vec![strings.intern("Ascend NPU")];
    Ok(RankDraft::undeclared(rank, strings, t.warnings))
}

/// Reads a rank's db export: its profiler database, and `analysis.db` (MindSpore:
/// `communication_analyzer.db`, the same tables) for the step summary and the traffic.
fn read_db(
    dir: &RankDir,
    path: &std::path::Path,
    opts: &ReadContext<'_>,
) -> Result<RankDraft, Error> {
    let r = db::read(path)?;
    let (mut rank, mut strings) = (r.rank, r.strings);
    rank.source = source_of(dir, path);
    crate::ingest::steps::find_steps(&mut rank, &strings, opts.roles);
    crate::ingest::steps::assign_steps(&mut rank);
    rank.env = r.env;
    let device = r.device.as_deref().unwrap_or("Ascend NPU");
    rank.devices = vec![strings.intern(device)];
    let mut warnings = r.warnings;
    if r.unmatched_tasks > 0 {
        warnings.push(format!(
            "{}: {} COMPUTE_TASK_INFO row(s) match no device task",
            dir.label(),
            r.unmatched_tasks
        ));
    }
    let summary = dir
        .output_file("analysis.db")
        .or_else(|| dir.output_file("communication_analyzer.db"));
    match summary {
        Some(p) => {
            rank.profiler_steps = db::step_trace(&p)?;
            if rank.profiler_steps.is_empty() {
                warnings.push(format!(
                    "{}: no StepTraceTime rows; the breakdown is not cross-checked against the \
                     profiler's",
                    p.display()
                ));
            }
            rank.transports = db::transports(&p)?;
            rank.hccl_times = db::op_times(&p)?;
            rank.links = db::links(&p)?;
            group_sizes(&mut rank, &strings);
        }
        None => warnings.push(format!(
            "{}: no analysis.db or communication_analyzer.db; the breakdown is not cross-checked \
             against the profiler's",
            dir.label()
        )),
    }
    Ok(RankDraft {
        declared_rank: r.rank_id.map(crate::model::RankId),
        groups: r.groups,
        parallel: r.parallel,
        memberships: Vec::new(),
        ..RankDraft::undeclared(rank, strings, warnings)
    })
}

/// A rank read from one table file (`path`): named by its directory, sized by that file.
fn source_of(dir: &RankDir, path: &std::path::Path) -> crate::model::SourceInfo {
    crate::model::SourceInfo {
        path: dir.label(),
        file_bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        format: crate::model::SourceFormat::Ascend,
        platform: PLATFORM,
        ..crate::model::SourceInfo::default()
    }
}

/// An Ascend NPU job: a rank names its own device only; HCCS within a node and RoCE between
/// nodes; torch_npu's fused operator APIs.
pub(crate) const PLATFORM: crate::model::Platform = crate::model::Platform::ASCEND;

/// Why a rank with no timeline file cannot be read: its raw data was never parsed (only
/// `PROF_*` folders, as with `analyse_flag=False` on a large job), or nothing was recorded.
fn no_trace(dir: &RankDir) -> Error {
    let raw = std::fs::read_dir(&dir.root).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            e.path().is_dir()
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("PROF_"))
        })
    });
    let why = if raw {
        "only the profiler's raw data (PROF_*): parse it first, with torch_npu's \
         `torch_npu.profiler.profiler.analyse(\"DIR\")` (MindSpore: \
         `mindspore.profiler.profiler.analyse`), then load the ASCEND_PROFILER_OUTPUT it writes"
    } else {
        "no trace_view.json, ascend_*_profiler_*.db, kernel_details.csv or step summary \
         (analysis.db, step_trace_time.csv) in the profiler output (profile with the NPU and \
         CPU activities)"
    };
    Error::input(&dir.output.display().to_string(), why)
}
