//! Flight Recorder dumps among the paths a user names (docs/flight-recorder.md): read, one
//! per rank, unreadable ones skipped and said, and triaged ([`crate::analysis::hang`]).

use crate::analysis::hang::{self, Hang};
use crate::error::Error;
use crate::format::printable;
use crate::ingest::{discover, flight};
use crate::model::flight::FlightDump;
use std::path::PathBuf;

/// The dumps of one hung job and their triage.
#[derive(Debug, Clone)]
pub struct Flight {
    /// One per rank, by rank.
    pub dumps: Vec<FlightDump>,
    /// The dumps that could not be read, each as its one-line error.
    pub skipped: Vec<String>,
    /// The triage.
    pub hang: Hang,
}

/// Splits `paths` into the dumps they name or hold, read and triaged, and the rest (the
/// traces). `None` when no path is or holds a dump. Two dumps of one rank are an error:
/// they are two runs, never to be mixed.
pub fn open(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Option<Flight>), Error> {
    let (rest, files) = split(paths);
    if files.is_empty() {
        return Ok((rest, None));
    }
    let mut dumps: Vec<FlightDump> = Vec::new();
    let mut errors: Vec<Error> = Vec::new();
    for f in &files {
        match flight::read(f) {
            Ok(d) => {
                if let Some(o) = dumps.iter().find(|o| o.rank == d.rank) {
                    return Err(Error::input(
                        &d.source,
                        format!(
                            "a second Flight Recorder dump of rank {} (the first: {}): dumps of two runs are not mixed",
                            d.rank,
                            printable(&o.source)
                        ),
                    ));
                }
                dumps.push(d);
            }
            Err(e) => errors.push(e),
        }
    }
    if dumps.is_empty() {
        // Nothing to triage: the first dump's own error (the others likely say the same).
        return Err(errors.swap_remove(0));
    }
    let skipped = errors.iter().map(Error::to_string).collect();
    dumps.sort_by_key(|d| d.rank);
    let hang = hang::hang(&dumps);
    Ok((
        rest,
        Some(Flight {
            dumps,
            skipped,
            hang,
        }),
    ))
}

/// The dumps among `paths` and the files of the folders among them, and what is left to
/// read as traces: a folder holding no dump stays whole; of one holding dumps, its trace
/// files and sub-folders.
fn split(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut rest, mut dumps) = (Vec::new(), Vec::new());
    for p in paths {
        if p.is_dir() {
            let listed: Vec<PathBuf> = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect();
            let (mut found, others): (Vec<PathBuf>, Vec<PathBuf>) = listed
                .into_iter()
                .partition(|f| f.is_file() && flight::is_dump(f));
            if found.is_empty() {
                rest.push(p.clone());
            } else {
                rest.extend(others.into_iter().filter(|f| {
                    f.is_dir()
                        || f.file_name()
                            .is_some_and(|n| discover::is_trace_name(&n.to_string_lossy()))
                }));
            }
            found.sort_by(|a, b| discover::natural_cmp(a, b));
            dumps.extend(found);
        } else if p.is_file() && flight::is_dump(p) {
            dumps.push(p.clone());
        } else {
            rest.push(p.clone());
        }
    }
    (rest, dumps)
}
