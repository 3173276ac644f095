//! Flight Recorder dumps among the paths a user names (docs/flight-recorder.md): read, one
//! per rank, unreadable ones skipped and said, and triaged ([`crate::analysis::hang`]).

use crate::analysis::hang::{self, Hang};
use crate::error::Error;
use crate::format::printable;
use crate::ingest::flight;
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
    let (rest, files) = flight::split(paths);
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
