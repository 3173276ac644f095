//! `stepscope summarize`: each input read where it lies and written as a summary
//! (`ingest::modelfile`, docs/cache.md) into one folder, so that a job too big to read on one
//! machine is read by many — one task per node or per file, on the cluster's own scheduler
//! (README: srun, sbatch --array, xargs -P, a Kubernetes indexed job) — and analysed from the
//! summaries, which every face opens as it opens traces.

use super::Settings;
use crate::error::Error;
use crate::ingest::modelfile::{self, FileKind, Identity, Reading, summary};
use crate::ingest::{self, Input, Origin};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Which of the inputs this task summarizes: input `k` (in discovery order) goes to task
/// `k mod count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This task's index, from 0.
    pub index: u32,
    /// How many tasks share the inputs.
    pub count: u32,
}

impl Shard {
    /// All inputs.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// `I/N` (`--shard`), 0 ≤ I < N.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or("is I/N (task I of N, from 0)")?;
        let (index, count) = (i.trim().parse::<u32>(), n.trim().parse::<u32>());
        match (index, count) {
            (Ok(index), Ok(count)) if index < count => Ok(Shard { index, count }),
            _ => Err(format!(
                "`{}` is not I/N with 0 ≤ I < N",
                crate::format::fit(s, 40)
            )),
        }
    }

    /// The shard of a task of a Slurm job step (`SLURM_PROCID` of `SLURM_STEP_NUM_TASKS`,
    /// which srun sets and a batch script's own shell has not) when it is one of several.
    pub fn of_slurm() -> Option<Shard> {
        let var = |k: &str| std::env::var(k).ok()?.trim().parse::<u32>().ok();
        let (index, count) = (var("SLURM_PROCID")?, var("SLURM_STEP_NUM_TASKS")?);
        (count > 1 && index < count).then_some(Shard { index, count })
    }
}

/// What a summarize run did.
pub struct Summarized {
    /// Each summary written: the input's label, the file and its size.
    pub written: Vec<(String, PathBuf, u64)>,
    /// The inputs that could not be read or written, with why.
    pub failed: Vec<Error>,
}

/// Summarizes this shard's inputs of `paths` into `out` (made if missing; never a folder of
/// an input). Two inputs whose summaries would have one name are refused before anything
/// is written; a summary already there of another trace is never replaced.
pub fn summarize(
    paths: &[PathBuf],
    settings: &Settings,
    out: &Path,
    shard: Shard,
) -> Result<Summarized, Error> {
    let inputs: Vec<Input> = ingest::discover::discover(paths)?
        .into_iter()
        .enumerate()
        .filter(|(k, _)| *k as u64 % shard.count as u64 == shard.index as u64)
        .map(|(_, i)| i)
        .collect();
    let targets = targets(&inputs, out)?;
    let label = out.display().to_string();
    crate::output::check_folder(out, paths).map_err(|e| Error::usage(&label, e.to_string()))?;
    std::fs::create_dir_all(out)
        .map_err(|e| Error::usage(&out.display().to_string(), format!("cannot make: {e}")))?;
    // Read, not through the warm cache: a cluster's nodes would each fill their home's.
    let opts = ingest::LoadOptions {
        cache: None,
        ..settings.load_options()?
    };
    let results: Vec<Result<(String, PathBuf, u64), Error>> = inputs
        .par_iter()
        .zip(&targets)
        .map(|(input, target)| one(input, target, &opts, paths))
        .collect();
    let (mut written, mut failed) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(w) => written.push(w),
            Err(e) => failed.push(e),
        }
    }
    Ok(Summarized { written, failed })
}

/// Each input's summary file: its own name with [`summary::EXTENSION`] after it, in `out`.
fn targets(inputs: &[Input], out: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut seen: std::collections::HashMap<PathBuf, String> = Default::default();
    let mut v = Vec::with_capacity(inputs.len());
    for input in inputs {
        let label = input.label();
        let name = match &input.origin {
            Origin::File(p) => p.file_name().map(|n| n.to_string_lossy().into_owned()),
            Origin::Ascend(d) => Path::new(&d.label())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            // A FIFO or dangling link found in a folder: its read fails and says why.
            Origin::Skipped(p, _) => p.file_name().map(|n| n.to_string_lossy().into_owned()),
            _ => None,
        }
        .ok_or_else(|| Error::usage(&label, "summarize reads files and folders, not streams"))?;
        let target = out.join(format!("{name}{}", summary::EXTENSION));
        if let Some(other) = seen.insert(target.clone(), label.clone()) {
            return Err(Error::usage(
                &label,
                format!(
                    "its summary would be {}, as {other}'s: summarize the two folders into separate --out folders",
                    target.display()
                ),
            ));
        }
        v.push(target);
    }
    Ok(v)
}

/// Reads one input and writes its summary.
fn one(
    input: &Input,
    target: &Path,
    opts: &ingest::LoadOptions,
    paths: &[PathBuf],
) -> Result<(String, PathBuf, u64), Error> {
    let label = input.label();
    let source = match &input.origin {
        Origin::File(p) => Identity::of(p).map_err(|e| Error::input(&label, e.to_string()))?,
        _ => Identity {
            path: label.clone(),
            size: 0,
            mtime: (0, 0),
            ends: 0,
        },
    };
    refuse_other(target, &source)?;
    let drafts = ingest::read_one(input, opts)?;
    let reading = Reading::new(opts.python_stacks, opts.events, &opts.roles);
    let file = modelfile::encode(FileKind::Summary, source, reading, &drafts)
        .map_err(|e| Error::internal(format!("{label}: {e}")))?;
    let out = target.display().to_string();
    crate::output::write(target, paths, |w| file.write_to(w))
        .map_err(|e| Error::usage(&out, e.to_string()))?;
    Ok((label, target.to_path_buf(), file.bytes()))
}

/// An error when `target` holds the summary of another trace (two hosts' files of one name
/// into one folder): replacing it would lose a rank.
fn refuse_other(target: &Path, source: &Identity) -> Result<(), Error> {
    match modelfile::read_header(target) {
        Ok(Some(h)) if h.source.path != source.path => Err(Error::usage(
            &target.display().to_string(),
            format!(
                "already holds the summary of {}, not {}: summarize into separate --out folders",
                h.source.path, source.path
            ),
        )),
        Ok(None) if target.exists() => Err(Error::usage(
            &target.display().to_string(),
            "exists and is not a stepscope summary: stepscope does not replace it",
        )),
        _ => Ok(()),
    }
}
