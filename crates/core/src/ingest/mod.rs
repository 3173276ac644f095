//! Bytes → model. Discovery turns paths into [`Input`]s (`where` a rank's data is, `what`
//! format it is in); [`load`] reads them in parallel — each through its format's reader — and
//! [`assemble`] makes one job of the ranks: rank ids resolved, names interned job-wide, every
//! name's role assigned from the role tables.
//!
//! A new input format is a module here whose [`reader::Reader`] sniffs an input's first bytes
//! and turns it into [`RankDraft`]s, plus one line of [`READERS`]
//! (docs/architecture.md).

pub mod ascend;
mod assemble;
pub(crate) mod bounds;
pub mod chrome;
mod consistency;
pub(crate) mod demo;
pub(crate) mod discover;
pub mod flight;
mod gunzip;
pub(crate) mod identify;
mod jobs;
pub(crate) mod kineto;
mod link;
pub mod logs;
pub(crate) mod membership;
pub mod modelfile;
pub(crate) mod nsys;
mod period;
pub mod progress;
pub(crate) mod reader;
pub mod roles;
pub mod source;
pub(crate) mod sqlite;
mod steps;

use crate::error::Error;
use crate::model::{Interner, ProcessGroup, Rank, RankId};
use demo::DemoJob;
use progress::Counters;
use rayon::prelude::*;
use reader::{ReadContext, Reader};
use roles::RoleTable;
use source::Source;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Where one rank's data is.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A file.
    File(PathBuf),
    /// Standard input.
    Stdin,
    /// Rank `rank` of a generated demo job.
    Demo(Arc<DemoJob>, u32),
    /// An Ascend rank directory (`*_ascend_pt/`, or a folder holding its files).
    Ascend(ascend::RankDir),
    /// Bytes already in memory, read as if from a file of this label (fuzz targets, tests).
    Memory(String, Arc<[u8]>),
    /// An entry of a searched directory that is skipped, with why: a trace-named FIFO,
    /// socket or device (never opened: it could block or never end), a dangling symbolic
    /// link, a folder that cannot be listed. Listed as skipped; the rest loads.
    Skipped(PathBuf, String),
}

/// One input: a file, a stream or a folder, read as one rank or more by the reader that
/// takes it (a file's format is told by its bytes, [`READERS`]).
#[derive(Debug, Clone)]
pub struct Input {
    /// Where it is.
    pub origin: Origin,
}

impl Input {
    /// The file at `path`.
    pub fn file(path: PathBuf) -> Input {
        Input {
            origin: Origin::File(path),
        }
    }

    /// The label used in messages and reports (the path as given, `-`, `demo:rank-N`).
    pub fn label(&self) -> String {
        match &self.origin {
            Origin::File(p) => p.display().to_string(),
            Origin::Stdin => "-".to_string(),
            Origin::Demo(_, r) => format!("demo:rank-{r}"),
            Origin::Ascend(d) => d.label(),
            Origin::Skipped(p, _) => p.display().to_string(),
            Origin::Memory(label, _) => label.clone(),
        }
    }

    /// The rank a file name states (`rank-3.json`), when it is a file.
    fn rank_hint(&self) -> Option<RankId> {
        match &self.origin {
            Origin::File(p) => discover::rank_from_name(p).map(RankId),
            _ => None,
        }
    }

    /// The input's bytes (a trace; an Ascend directory's reader opens its own files).
    fn open(&self) -> Result<Source, Error> {
        match &self.origin {
            Origin::File(p) => source::open(p),
            Origin::Stdin => source::stdin(),
            Origin::Demo(job, r) => Ok(job.source(*r)),
            Origin::Ascend(d) => Err(Error::input(&d.label(), "is a directory")),
            Origin::Memory(label, bytes) => source::from_memory(label.clone(), bytes.to_vec()),
            Origin::Skipped(p, why) => Err(Error::input(&p.display().to_string(), why.clone())),
        }
    }

    /// Bytes to decompress or generate before the text of an event ending at `end` is there
    /// again: 0 for a mapped plain file or memory; up to the event for a gzip file; the
    /// whole rank (`rank_bytes`) for the demo, which writes it anew.
    pub fn bytes_to_reread(&self, end: u64, rank_bytes: u64) -> u64 {
        match &self.origin {
            Origin::File(p) if p.extension().is_some_and(|x| x == "gz") => end,
            Origin::Demo(..) => rank_bytes,
            _ => 0,
        }
    }

    /// The text of one event again, for views that show its args (`None`: not kept, stdin).
    pub fn event_text(&self, raw: crate::model::RawSpan) -> Result<String, String> {
        match &self.origin {
            Origin::File(p) => match modelfile::summary::trace_of(p)? {
                Some(trace) => source::event_text(&trace, raw).map_err(|e| e.to_string()),
                None => source::event_text(p, raw).map_err(|e| e.to_string()),
            },
            Origin::Ascend(d) => source::event_text(&d.output.join("trace_view.json"), raw)
                .map_err(|e| e.to_string()),
            Origin::Stdin => Err("stdin is not kept after loading".into()),
            Origin::Skipped(..) => Err("not a regular file".into()),
            Origin::Memory(_, bytes) => {
                let (a, b) = (raw.offset as usize, raw.offset as usize + raw.len as usize);
                bytes
                    .get(a..b)
                    .map(|t| String::from_utf8_lossy(t).into_owned())
                    .ok_or_else(|| "out of the input".to_string())
            }
            Origin::Demo(job, r) => {
                let t = job.rank_text(*r);
                let (a, b) = (raw.offset as usize, raw.offset as usize + raw.len as usize);
                t.get(a..b)
                    .map(str::to_string)
                    .ok_or_else(|| "the demo trace changed".to_string())
            }
        }
    }
}

/// The inputs of a generated demo job, one per rank.
pub(crate) fn demo_inputs(spec: demo::DemoSpec) -> Vec<Input> {
    let job = DemoJob::new(spec);
    (0..spec.ranks)
        .map(|r| Input {
            origin: Origin::Demo(job.clone(), r),
        })
        .collect()
}

/// A rank read from one input, with names interned in its own table (re-interned into the
/// job's table when the job is assembled). Stored as it is in model files (`modelfile`).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RankDraft {
    /// The rank, with [`crate::model::Sym`]s into `strings`.
    pub rank: Rank,
    /// The rank-local string table.
    pub strings: Interner,
    /// The rank id the input states (`distributedInfo.rank`).
    pub declared_rank: Option<RankId>,
    /// The world size the input states.
    pub world_size: Option<u32>,
    /// The process groups the input declares.
    pub groups: Vec<ProcessGroup>,
    /// The parallel sizes the input declares.
    pub parallel: Option<crate::model::ParallelSizes>,
    /// Groups the input places the rank in without listing their members (the job
    /// assembles them: `membership.rs`).
    pub memberships: Vec<membership::Membership>,
    /// Things the user should know about this input (lossy names, clamped durations).
    pub warnings: Vec<String>,
    /// The median duration of its events, once checked (`bounds.rs`): its time unit shows in
    /// it, and the cross-rank checks compare it.
    pub typical_dur: Option<crate::time::Ns>,
    /// The sum of its events' durations, once checked (`bounds.rs`).
    pub busy_ns: crate::time::Ns,
}

impl RankDraft {
    /// A rank whose input states no rank id, world size or groups (a caller that reads them
    /// elsewhere sets them after).
    pub fn undeclared(rank: Rank, strings: Interner, warnings: Vec<String>) -> RankDraft {
        RankDraft {
            rank,
            strings,
            declared_rank: None,
            world_size: None,
            groups: Vec::new(),
            parallel: None,
            memberships: Vec::new(),
            warnings,
            typical_dur: None,
            busy_ns: 0,
        }
    }
}

/// The job assembled from the inputs that read, and what did not read: what ingest hands
/// the session, which makes it a `session::Loaded`.
#[derive(Debug)]
pub(crate) struct Assembled {
    /// The ranks that loaded.
    pub job: crate::model::Job,
    /// Inputs that could not be read, with why (the others loaded).
    pub skipped: Vec<Error>,
    /// Warnings about inputs that did load.
    pub warnings: Vec<String>,
}

/// What to load beyond the defaults.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Keep `python_function` frames (`with_stack=True`) as events of kind other; by default
    /// they are counted and dropped (they can be most of a trace).
    pub python_stacks: bool,
    /// The role tables names are read with.
    pub roles: Arc<RoleTable>,
    /// Which parser reads trace events (the fast scanner unless a test or a fuzz target asks
    /// for serde_json alone).
    pub events: chrome::document::JsonEvents,
    /// Of inputs holding several jobs (one per directory), the N-th (from 1; `--job N`).
    pub job: Option<u32>,
    /// The warm cache big traces are read through (`None`: `--no-cache`, tests).
    pub cache: Option<Arc<modelfile::cache::Cache>>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            python_stacks: false,
            roles: Arc::new(RoleTable::embedded()),
            events: Default::default(),
            job: None,
            cache: None,
        }
    }
}

/// A job of ranks already read (and checked), assembled as a load assembles them: what a
/// reader's fuzz target analyses.
pub(crate) fn assemble_drafts(
    drafts: Vec<RankDraft>,
    roles: &RoleTable,
) -> Result<Assembled, Error> {
    let hints = vec![None; drafts.len()];
    assemble::assemble(drafts.into_iter().map(Ok).collect(), &hints, roles, None)
}

/// The time-range check every rank passes after its reader (`bounds.rs`).
#[cfg(any(test, feature = "fuzz"))]
pub fn check_bounds(d: &mut RankDraft) -> Result<(), Error> {
    bounds::check(d)
}

/// Loads inputs, showing progress on stderr when it is a terminal and the load is slow.
/// Unreadable inputs are skipped when at least one loads; when none does, the first error is
/// returned.
pub(crate) fn load(inputs: &[Input], opts: &LoadOptions) -> Result<Assembled, Error> {
    let progress = progress::Progress::start(inputs.len());
    let loaded = load_counted(inputs, opts, &progress.counters);
    drop(progress);
    loaded
}

/// [`load`] without the stderr display, bumping `counters` (made with [`Counters::new`] for
/// `inputs.len()` inputs) as it goes: the TUI's loading view reads them.
pub(crate) fn load_counted(
    inputs: &[Input],
    opts: &LoadOptions,
    counters: &Counters,
) -> Result<Assembled, Error> {
    let per_input: Vec<Result<Vec<RankDraft>, Error>> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, input)| {
            counted(counters, i, || {
                let mut drafts = read(input, opts, counters)?;
                for d in &mut drafts {
                    bounds::check(d)?;
                    d.rank.source.input = i;
                }
                Ok(drafts)
            })
        })
        .collect();
    // An input that is several ranks (one process's devices) names them itself: the input's
    // rank hint is for an input that is one rank.
    let mut results = Vec::with_capacity(per_input.len());
    let mut hints = Vec::with_capacity(per_input.len());
    for (r, input) in per_input.into_iter().zip(inputs) {
        match r {
            Ok(drafts) => {
                let hint = input.rank_hint().filter(|_| drafts.len() == 1);
                for d in drafts {
                    results.push(Ok(d));
                    hints.push(hint);
                }
            }
            Err(e) => {
                results.push(Err(e));
                hints.push(None);
            }
        }
    }
    assemble::assemble(results, &hints, &opts.roles, opts.job)
}

/// One input read and checked as a load reads it, before the job is assembled: what
/// `stepscope summarize` writes (`modelfile`). The drafts are returned as their reader made
/// them (the load checks them again); the check only refuses a rank out of range here.
pub(crate) fn read_one(input: &Input, opts: &LoadOptions) -> Result<Vec<RankDraft>, Error> {
    let drafts = read(input, opts, &Counters::new(1))?;
    for d in &drafts {
        bounds::measure(d)?;
    }
    Ok(drafts)
}

/// Reads one input with the reader that takes it ([`READERS`]): one rank, or several
/// (an Ascend summary of one process's devices).
fn read(input: &Input, opts: &LoadOptions, counters: &Counters) -> Result<Vec<RankDraft>, Error> {
    let cx = reader::ReadContext {
        roles: &opts.roles,
        bytes_done: &counters.bytes,
        python_stacks: opts.python_stacks,
        events: opts.events,
    };
    if let Origin::Ascend(dir) = &input.origin {
        return ascend::read(dir, &cx);
    }
    let path = match &input.origin {
        Origin::File(p) => Some(p.as_path()),
        _ => None,
    };
    let cold = || read_source(&input.open()?, path, &cx);
    let (Some(cache), Some(path)) = (&opts.cache, path) else {
        return cold();
    };
    let label = input.label();
    let through = cache.read_through(path, &label, modelfile::Reading::of(&cx), cold)?;
    if through.hit {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        counters.bytes.fetch_add(size, Ordering::Relaxed);
    }
    let mut drafts = through.drafts;
    if let (Some(note), Some(d)) = (through.note, drafts.first_mut()) {
        d.warnings.push(note);
    }
    Ok(drafts)
}

/// The file readers (the reader seam, [`reader::Reader`]), most specific first: the first whose [`Reader::sniff`] takes an input
/// reads it. (Ascend rank folders are found by discovery and read by `ascend::read`.)
pub(crate) static READERS: &[&dyn Reader] = &[
    &nsys::NsysReader,
    &ascend::TraceViewReader,
    &kineto::KinetoReader,
    &modelfile::summary::SummaryReader,
];

/// The reader of an input no reader sniffs and [`identify`] does not name: Kineto's,
/// which says what a trace would need (`byte 0: not a JSON trace …`).
pub(crate) static DEFAULT: &dyn Reader = &kineto::KinetoReader;

/// Reads `src` with the first reader that takes it; else names what it looks like; else
/// lets the default reader say why it is not a trace.
pub(crate) fn read_source(
    src: &Source,
    path: Option<&std::path::Path>,
    cx: &ReadContext,
) -> Result<Vec<RankDraft>, Error> {
    if let Some(r) = READERS.iter().find(|r| r.sniff(&src.text)) {
        return r.read(src, path, cx);
    }
    if let Some(what) = identify::foreign(&src.label, &src.text) {
        return Err(Error::input(&src.label, what));
    }
    DEFAULT.read(src, path, cx)
}

/// What stepscope reads, from the reader table: said after what a file no reader takes is.
pub(crate) fn reads() -> String {
    let v: Vec<&str> = READERS.iter().map(|r| r.reads()).collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("stepscope reads {} and {last}", rest.join(", "))
        }
        _ => format!("stepscope reads {}", v.join("")),
    }
}

/// Runs one input's read, recording its state and counts.
fn counted(
    counters: &Counters,
    i: usize,
    read: impl FnOnce() -> Result<Vec<RankDraft>, Error>,
) -> Result<Vec<RankDraft>, Error> {
    counters.set_file(i, progress::FILE_READING);
    let r = read();
    if let Ok(drafts) = &r {
        let events: usize = drafts.iter().map(|d| d.rank.events.len()).sum();
        counters.events.fetch_add(events as u64, Ordering::Relaxed);
    }
    counters.files_done.fetch_add(1, Ordering::Relaxed);
    let state = if r.is_ok() {
        progress::FILE_DONE
    } else {
        progress::FILE_FAILED
    };
    counters.set_file(i, state);
    r
}

#[cfg(test)]
mod reread_tests {
    use super::*;

    #[test]
    fn rereading_an_event_costs_its_prefix_in_a_gzip_file_and_the_rank_in_the_demo() {
        let input = |origin| Input { origin };
        let gz = input(Origin::File(PathBuf::from("rank-0.json.gz")));
        assert_eq!(gz.bytes_to_reread(5_000, 90_000), 5_000);
        let plain = input(Origin::File(PathBuf::from("rank-0.json")));
        assert_eq!(plain.bytes_to_reread(5_000, 90_000), 0);
        let memory = input(Origin::Memory("m".into(), Arc::from(&b"{}"[..])));
        assert_eq!(memory.bytes_to_reread(5_000, 90_000), 0);
        let demo = demo_inputs(demo::DemoSpec::default()).remove(0);
        assert_eq!(demo.bytes_to_reread(5_000, 90_000), 90_000);
    }
}

#[cfg(test)]
mod reader_tests {
    use super::*;

    #[test]
    fn each_input_goes_to_the_reader_that_sniffs_it() {
        // Which reader (by what it reads) takes an input whose text starts so.
        let takes = |head: &[u8]| {
            READERS
                .iter()
                .find(|r| r.sniff(head))
                .map(|r| r.reads().split(' ').next().unwrap_or(""))
        };
        assert_eq!(takes(b"  {\"traceEvents\": []}"), Some("PyTorch"));
        let ascend = br#"[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}}]"#;
        assert_eq!(takes(ascend), Some("Ascend"));
        // Any SQLite file: the Nsight reader checks its tables once it is open.
        assert_eq!(takes(b"SQLite format 3\0"), Some("Nsight"));
        assert_eq!(takes(b"\x80\x04pickle"), None);
        assert_eq!(takes(b""), None);
        // The message for a file no reader takes lists every reader of the table.
        let said = reads();
        assert!(
            said.starts_with("stepscope reads Nsight Systems SQLite exports"),
            "{said}"
        );
        assert!(said.contains(", Ascend profiler output folders"), "{said}");
        assert!(said.contains(", PyTorch profiler (Kineto) JSON traces (.json, .json.gz)"));
        assert!(said.ends_with(" and stepscope summaries (stepscope summarize)"));
        assert_eq!(takes(b"\x89STEPSCOPE-MODEL\x10"), Some("stepscope"));
    }
}
