//! Bytes → model: find the inputs, read them in parallel (memory-mapped, one rank per rayon
//! task, each big file split into parallel chunks), resolve rank ids, intern names job-wide.

pub mod discover;
pub mod kineto;
pub mod progress;
pub mod source;

use crate::error::InputError;
use crate::model::{Job, RankFrom};
use discover::Input;
use kineto::{ParseOptions, RankDraft};
use rayon::prelude::*;
use source::Source;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A loaded job and what did not load.
#[derive(Debug)]
pub struct Loaded {
    /// The ranks that loaded.
    pub job: Job,
    /// Inputs that could not be read, with why (the others loaded).
    pub skipped: Vec<InputError>,
    /// Warnings about inputs that did load.
    pub warnings: Vec<String>,
    /// Wall time of the load, ns.
    pub load_ns: u64,
}

/// What to load beyond the defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Keep `python_function` frames (`with_stack=True`) as events of kind other; by default
    /// they are counted and dropped (they can be most of a trace).
    pub python_stacks: bool,
}

/// Loads inputs from the file system (or stdin). Unreadable inputs are skipped when at least
/// one loads; when none does, the first error is returned.
pub fn load(inputs: &[Input], opts: LoadOptions) -> Result<Loaded, InputError> {
    let progress = progress::Progress::start(inputs.len());
    let loaded = load_counted(inputs, opts, &progress.counters);
    drop(progress);
    loaded
}

/// [`load`] without the stderr display, bumping `counters` (made with
/// [`progress::Counters::new`] for `inputs.len()` files) as it goes: the TUI's loading view
/// reads them.
pub fn load_counted(
    inputs: &[Input],
    opts: LoadOptions,
    counters: &progress::Counters,
) -> Result<Loaded, InputError> {
    let began = Instant::now();
    let results: Vec<Result<RankDraft, InputError>> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, input)| {
            counted(counters, i, || {
                let src = match input {
                    Input::File(p) => source::open(p),
                    Input::Stdin => source::stdin(),
                };
                let parse = ParseOptions {
                    bytes_done: &counters.bytes,
                    python_stacks: opts.python_stacks,
                };
                src.and_then(|s| kineto::read(&s, &parse))
            })
        })
        .collect();
    let hints: Vec<Option<u32>> = inputs
        .iter()
        .map(|i| match i {
            Input::File(p) => discover::rank_from_name(p),
            Input::Stdin => None,
        })
        .collect();
    let mut loaded = assemble(results, &hints)?;
    loaded.load_ns = began.elapsed().as_nanos() as u64;
    Ok(loaded)
}

/// Loads sources already in memory (the demo cluster, tests), one rank each.
pub fn load_sources(sources: Vec<Source>, opts: LoadOptions) -> Result<Loaded, InputError> {
    let counters = progress::Counters::new(sources.len());
    load_sources_counted(sources, opts, &counters)
}

/// [`load_sources`], bumping `counters` as it goes (the TUI's loading view).
pub fn load_sources_counted(
    sources: Vec<Source>,
    opts: LoadOptions,
    counters: &progress::Counters,
) -> Result<Loaded, InputError> {
    let began = Instant::now();
    let parse = ParseOptions {
        bytes_done: &counters.bytes,
        python_stacks: opts.python_stacks,
    };
    let results: Vec<_> = sources
        .par_iter()
        .enumerate()
        .map(|(i, s)| counted(counters, i, || kineto::read(s, &parse)))
        .collect();
    let hints = vec![None; results.len()];
    let mut loaded = assemble(results, &hints)?;
    loaded.load_ns = began.elapsed().as_nanos() as u64;
    Ok(loaded)
}

/// Runs one input's read, recording its state and counts.
fn counted(
    counters: &progress::Counters,
    i: usize,
    read: impl FnOnce() -> Result<RankDraft, InputError>,
) -> Result<RankDraft, InputError> {
    counters.set_file(i, progress::FILE_READING);
    let r = read();
    if let Ok(d) = &r {
        counters
            .events
            .fetch_add(d.rank.events.len() as u64, Ordering::Relaxed);
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

/// Resolves rank ids (trace, then file name, then discovery order) and interns names job-wide.
fn assemble(
    results: Vec<Result<RankDraft, InputError>>,
    hints: &[Option<u32>],
) -> Result<Loaded, InputError> {
    let mut skipped = Vec::new();
    let mut drafts = Vec::new();
    for (r, hint) in results.into_iter().zip(hints) {
        match r {
            Ok(d) => drafts.push((d, *hint)),
            Err(e) => skipped.push(e),
        }
    }
    if drafts.is_empty() {
        return Err(skipped
            .into_iter()
            .next()
            .unwrap_or_else(|| InputError::whole("-", "no inputs")));
    }
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let mut claimed: std::collections::BTreeMap<u32, String> = Default::default();
    let mut unresolved = Vec::new();
    for (idx, (d, hint)) in drafts.iter_mut().enumerate() {
        let (id, from) = match (d.declared_rank, *hint) {
            (Some(r), _) => (r, RankFrom::DistributedInfo),
            (None, Some(r)) => (r, RankFrom::FileName),
            (None, None) => {
                unresolved.push(idx);
                continue;
            }
        };
        if let Some(other) = claimed.get(&id) {
            return Err(InputError::whole(
                &d.rank.source.path,
                format!("rank {id} is claimed by both {other} and this file"),
            ));
        }
        claimed.insert(id, d.rank.source.path.clone());
        d.rank.id = id;
        d.rank.source.rank_from = from;
    }
    let mut next = 0u32;
    for idx in unresolved {
        while claimed.contains_key(&next) {
            next += 1;
        }
        let d = &mut drafts[idx].0;
        d.rank.id = next;
        d.rank.source.rank_from = RankFrom::DiscoveryOrder;
        claimed.insert(next, d.rank.source.path.clone());
        notes.push(format!(
            "{}: no rank in the trace or its file name; taken as rank {next} (discovery order)",
            d.rank.source.path
        ));
    }
    let mut job = Job::default();
    drafts.sort_by_key(|(d, _)| d.rank.id);
    for (mut d, _) in drafts {
        warnings.append(&mut d.warnings);
        job.world_size = job.world_size.max(d.world_size);
        job.groups.append(&mut d.groups);
        let map: Vec<u32> = d
            .strings
            .iter()
            .map(|(_, s)| job.strings.intern(s))
            .collect();
        let r = &mut d.rank;
        r.events
            .name
            .par_iter_mut()
            .for_each(|n| *n = map[*n as usize]);
        for l in &mut r.lanes {
            l.pid = map[l.pid as usize];
            l.tid = map[l.tid as usize];
            l.name = map[l.name as usize];
        }
        r.devices.iter_mut().for_each(|n| *n = map[*n as usize]);
        r.unknown_categories
            .iter_mut()
            .for_each(|(n, _)| *n = map[*n as usize]);
        for c in &mut r.collectives {
            for s in [&mut c.name, &mut c.dtype, &mut c.group, &mut c.group_ranks]
                .into_iter()
                .flatten()
            {
                *s = map[*s as usize];
            }
        }
        for o in &mut r.shapes {
            for s in [&mut o.dims, &mut o.types].into_iter().flatten() {
                *s = map[*s as usize];
            }
        }
        if r.steps.len() == 1 && r.steps[0].synthetic {
            notes.push(format!(
                "rank {}: no ProfilerStep markers; the whole trace is analysed as one step",
                r.id
            ));
        }
        job.ranks.push(d.rank);
    }
    // Every rank repeats the groups it belongs to: keep each (name, ranks) once.
    job.groups.sort();
    job.groups.dedup();
    job.notes = notes;
    Ok(Loaded {
        job,
        skipped,
        warnings,
        load_ns: 0,
    })
}
