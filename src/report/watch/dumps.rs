//! `stepscope watch DIR`: the folder where a hung job's Flight Recorder dumps land (each rank
//! writes its own when its watchdog fires, seconds apart, often over minutes on a big job).
//! Each time the folder's dumps change and then hold still for one poll (a dump being written
//! is not read half-written), the dumps are read and triaged again
//! ([`crate::session::flight`]); a line is written when the triage says something new — the
//! verdict sharpens as more ranks dump ("3 of 4 dumped: rank 2 never entered …").

use crate::error::Error;
use crate::session::flight::{self, Flight};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// One file of a watched folder as it stands: path, size, modification time.
type Stat = (PathBuf, u64, Option<SystemTime>);

/// Every regular file directly in `dirs` (dumps are written there, not below), sorted.
fn listing(dirs: &[PathBuf]) -> Vec<Stat> {
    let mut v: Vec<Stat> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .filter_map(|e| {
            let m = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((e.path(), m.len(), m.modified().ok()))
        })
        .collect();
    v.sort();
    v
}

/// A `stepscope.watch/1` line of `type: hang` (docs/watch-schema.md).
#[derive(Serialize, PartialEq)]
struct HangLine {
    schema: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    /// Ranks with a dump, ranks a group lists without one, dumps that could not be read.
    dumped: Vec<u32>,
    missing: Vec<u32>,
    skipped: Vec<String>,
    /// The verdict in one sentence (absent: every group finished what it entered).
    headline: Option<String>,
    verdict: Option<crate::analysis::hang::Verdict>,
    /// Why the folder's dumps could not be triaged (two runs mixed, none readable).
    error: Option<String>,
}

impl HangLine {
    fn of(result: Result<Option<Flight>, Error>) -> Option<HangLine> {
        let mut line = HangLine {
            schema: super::SCHEMA,
            kind: "hang",
            dumped: Vec::new(),
            missing: Vec::new(),
            skipped: Vec::new(),
            headline: None,
            verdict: None,
            error: None,
        };
        match result {
            Ok(None) => return None,
            Ok(Some(f)) => {
                line.headline = f.hang.verdict.as_ref().map(crate::report::hang::headline);
                line.dumped = f.hang.dumped;
                line.missing = f.hang.missing;
                line.skipped = f.skipped;
                line.verdict = f.hang.verdict;
            }
            Err(e) => line.error = Some(e.to_string()),
        }
        Some(line)
    }

    /// The line as text (`--summary`): how many dumped, and the verdict or the error.
    fn text(&self) -> String {
        let said = match (&self.error, &self.headline) {
            (Some(e), _) => e.clone(),
            (None, Some(h)) => h.clone(),
            (None, None) => "every process group finished what it entered".into(),
        };
        let missing = if self.missing.is_empty() {
            String::new()
        } else {
            format!(", {} listed without one", self.missing.len())
        };
        crate::format::printable(&format!("{} dump(s){missing}: {said}", self.dumped.len()))
            .into_owned()
    }
}

/// Watches `dirs` for dumps, polling every `every`; with `once`, triages what is there now
/// and returns. Writes JSON lines, or text lines when `text`.
pub fn run(
    dirs: &[PathBuf],
    (once, text, every): (bool, bool, Duration),
    out: &mut impl Write,
) -> Result<(), Error> {
    let (mut seen, mut triaged) = (None::<Vec<Stat>>, None::<Vec<Stat>>);
    let mut said: Option<HangLine> = None;
    loop {
        let now = listing(dirs);
        let settled = once || seen.as_ref() == Some(&now);
        if settled && triaged.as_ref() != Some(&now) {
            let line = HangLine::of(flight::open(dirs).map(|(_, f)| f));
            if let Some(line) = line.filter(|l| said.as_ref() != Some(l)) {
                if !write(out, &line, text)? {
                    return Ok(()); // the reader downstream is gone (`| head`)
                }
                said = Some(line);
            }
            triaged = Some(now.clone());
        }
        if once {
            return Ok(());
        }
        seen = Some(now);
        std::thread::sleep(every);
    }
}

/// Writes one line; false when the output was closed.
fn write(out: &mut impl Write, line: &HangLine, text: bool) -> Result<bool, Error> {
    let mut s = if text {
        line.text()
    } else {
        crate::format::json::to_string(line).map_err(|e| Error::internal(e.to_string()))?
    };
    s.push('\n');
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(Error::internal(format!("cannot write: {e}"))),
    }
}

/// Whether `watch` was given folders to watch for dumps (every path a directory).
pub fn wanted(paths: &[PathBuf]) -> bool {
    !paths.is_empty() && paths.iter().all(|p| Path::new(p).is_dir())
}
