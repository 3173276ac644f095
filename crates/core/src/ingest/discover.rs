//! Paths → per-rank inputs: files as given, directories searched recursively for traces, `-`
//! for stdin, each with the format it is in; and rank ids guessed from file names (`rank-3`,
//! `rank3`, `rank_3`).

use super::ascend::files::{RankDir, rank_dir_of};
use super::{Input, Origin};
use crate::error::Error;
use std::path::{Path, PathBuf};

/// True for names a trace writer produces: `*.json`, `*.json.gz` (incl. `*.pt.trace.json`),
/// Nsight Systems SQLite exports (`*.sqlite`) and stepscope's summaries (`*.stepscope`).
pub fn is_trace_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(".json")
        || n.ends_with(".json.gz")
        || n.ends_with(".sqlite")
        || n.ends_with(super::modelfile::summary::EXTENSION)
}

/// Expands the command-line paths into inputs, in a deterministic order. An Ascend rank
/// directory (or any of its files) is one input; a directory is searched for traces and
/// Ascend rank directories; Kineto and Ascend inputs cannot be mixed in one job.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<Input>, Error> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            out.push(Input {
                origin: Origin::Stdin,
            });
            continue;
        }
        let label = p.display().to_string();
        let meta =
            std::fs::metadata(p).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
        if let Some(dir) = rank_dir_of(p) {
            out.push(ascend_input(dir));
            continue;
        }
        if !meta.is_dir() {
            out.push(Input::file(p.clone()));
            continue;
        }
        let mut found = Found::default();
        walk(p, &mut found).map_err(|e| Error::input(&label, format!("cannot list: {e}")))?;
        if found.traces.is_empty() && found.ascend.is_empty() && found.odd.is_empty() {
            let dumps = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.path().is_file() && super::flight::is_dump(&e.path()))
                .count();
            if dumps > 0 {
                return Err(Error::input(
                    &label,
                    format!(
                        "{} PyTorch Flight Recorder dump(s) and no trace: `stepscope report` (or `stepscope` on a terminal) triages them; this command reads traces",
                        dumps
                    ),
                ));
            }
            let others = match &found.other {
                (0, _) => String::new(),
                (n, Some(p)) => format!(
                    " ({n} other file(s), e.g. {}: name one to see what it is)",
                    crate::format::printable(&p.display().to_string())
                ),
                (n, None) => format!(" ({n} other file(s))"),
            };
            return Err(Error::input(
                &label,
                format!(
                    "no trace files (*.json, *.json.gz, *.sqlite, *.stepscope) or Ascend profiler output in this directory{others}"
                ),
            ));
        }
        // Numbers in names in numeric order: `report_2` before `report_10`, so that ranks
        // numbered by discovery order follow the numbers the files were written with.
        found.traces.sort_by(|a, b| natural_cmp(a, b));
        found.ascend.sort();
        found.odd.sort();
        out.extend(found.traces.into_iter().map(Input::file));
        out.extend(found.ascend.into_iter().map(ascend_input));
        out.extend(found.odd.into_iter().map(|(p, kind)| Input {
            origin: Origin::Skipped(p, kind),
        }));
    }
    dedup(&mut out);
    check_not_mixed(&out)?;
    Ok(out)
}

fn ascend_input(dir: RankDir) -> Input {
    Input {
        origin: Origin::Ascend(dir),
    }
}

/// An input named twice is one, the first mention kept: a file by its canonical path (the
/// same path, another spelling, a link to it, or a folder and a file inside it), an Ascend
/// rank by its root (several of its files given on the command line).
fn dedup(inputs: &mut Vec<Input>) {
    let mut seen = std::collections::HashSet::new();
    inputs.retain(|i| match &i.origin {
        Origin::File(p) => seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
        Origin::Ascend(d) => seen.insert(d.root.clone()),
        _ => true,
    });
}

/// A job is Kineto traces or Ascend ranks, not both: their clocks, steps and collectives
/// cannot be matched.
fn check_not_mixed(inputs: &[Input]) -> Result<(), Error> {
    let ascend = inputs
        .iter()
        .find(|i| matches!(i.origin, Origin::Ascend(_)));
    // A skipped entry is no trace of either kind.
    let kineto = inputs
        .iter()
        .find(|i| !matches!(i.origin, Origin::Ascend(_) | Origin::Skipped(..)));
    match (ascend, kineto) {
        (Some(a), Some(k)) => Err(Error::usage(
            &k.label(),
            format!(
                "a Kineto trace, but {} is Ascend profiler output: load the two kinds separately",
                a.label()
            ),
        )),
        _ => Ok(()),
    }
}

/// What a directory search found.
#[derive(Default)]
struct Found {
    traces: Vec<PathBuf>,
    ascend: Vec<RankDir>,
    /// Entries skipped, with why (not regular files, dangling links, unlistable folders).
    odd: Vec<(PathBuf, String)>,
    /// Files of no trace name: how many, and the first by path (for a message).
    other: (u64, Option<PathBuf>),
}

/// Folders of derived outputs, never per-rank traces (msprof-analyze's cluster results).
const DERIVED_DIRS: [&str; 1] = ["cluster_analysis_output"];

fn walk(dir: &Path, found: &mut Found) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if ty.is_dir() {
            if DERIVED_DIRS.contains(&name.as_str()) {
                continue;
            }
            match rank_dir_of(&path) {
                Some(rank) => found.ascend.push(rank),
                // A subfolder that cannot be listed is skipped and said, as an unreadable
                // file is: the rest of the job loads.
                None => {
                    if walk(&path, found).is_err() {
                        found
                            .odd
                            .push((path, "a folder that cannot be listed".into()));
                    }
                }
            }
        } else if is_trace_name(&name) {
            // Unreadable files are kept: opening them reports the problem. A FIFO, socket or
            // device is never opened: it could block or never end. A dangling link names no
            // file at all: taken as a trace, it would make a folder of another format a mix.
            match std::fs::metadata(&path) {
                Ok(m) => match super::source::file_kind(&m) {
                    Some(kind) if kind != "a directory" => {
                        found
                            .odd
                            .push((path, format!("not a regular file ({kind})")));
                    }
                    _ => found.traces.push(path),
                },
                Err(_) if ty.is_symlink() => {
                    found.odd.push((path, "a dangling symbolic link".into()));
                }
                Err(_) => found.traces.push(path),
            }
        } else {
            found.other.0 += 1;
            // The first by path, not by listing order: the same message on every machine.
            if found.other.1.as_ref().is_none_or(|p| path < *p) {
                found.other.1 = Some(path);
            }
        }
    }
    Ok(())
}

/// The rank in a file name: the last `rank` token followed by an optional `-`/`_` and digits.
pub fn rank_from_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let b = name.as_bytes();
    let mut found = None;
    let mut i = 0;
    while let Some(off) = name[i..].find("rank") {
        let mut j = i + off + 4;
        if j < b.len() && (b[j] == b'-' || b[j] == b'_') {
            j += 1;
        }
        let digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            found = name[j..j + digits].parse().ok().or(found);
        }
        i += off + 4;
    }
    found
}

/// Paths compared with each run of digits as a number (then as text, so that `01` and `1`
/// still differ and the order is total).
pub(crate) fn natural_cmp(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.to_string_lossy(), b.to_string_lossy());
    natural_key(&a)
        .cmp(&natural_key(&b))
        .then_with(|| a.cmp(&b))
}

/// A name's runs: text runs as text, digit runs as (length without leading zeros, digits)
/// — a number of any length compares by value without parsing it.
fn natural_key(s: &str) -> Vec<(bool, usize, &str)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let digit = b[i].is_ascii_digit();
        let j = i + b[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit() == digit)
            .count();
        let run = &s[i..j];
        if digit {
            let v = run.trim_start_matches('0');
            out.push((true, v.len(), v));
        } else {
            out.push((false, 0, run));
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_names_sort_by_value() {
        let mut v: Vec<PathBuf> = [
            "report_10.sqlite",
            "report_2.sqlite",
            "a/report_1.sqlite",
            "report_02.sqlite",
            "r.sqlite",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        let names: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "a/report_1.sqlite",
                "r.sqlite",
                "report_02.sqlite",
                "report_2.sqlite",
                "report_10.sqlite"
            ]
        );
    }

    #[test]
    fn ranks_from_names() {
        let r = |s: &str| rank_from_name(Path::new(s));
        assert_eq!(r("rank-3.Apr_03_18_51_38.1102.pt.trace.json.gz"), Some(3));
        assert_eq!(r("sampled_rank-1.json.gz"), Some(1));
        assert_eq!(r("rank0.json.gz"), Some(0));
        assert_eq!(r("rank12_trace.json"), Some(12));
        assert_eq!(r("job_rank_7.json"), Some(7));
        assert_eq!(r("dir/ranked_rank2.json"), Some(2));
        assert_eq!(r("vm_22876.1795311738915375909.pt.trace.json.gz"), None);
        assert_eq!(r("frank.json"), None);
    }

    #[test]
    fn trace_names() {
        assert!(is_trace_name("a.pt.trace.json.gz"));
        assert!(is_trace_name("A.JSON"));
        assert!(!is_trace_name("SOURCE.md"));
        assert!(!is_trace_name("x.json.bak"));
    }
}
