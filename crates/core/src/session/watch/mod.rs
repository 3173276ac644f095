//! `stepscope watch`'s live session: the sources opened (their readers on threads of their
//! own), an [`engine::Engine`] over them (lines → records → the live analysis), and the loop
//! that publishes its state for a screen ([`live`]). The faces are elsewhere: the JSON lines
//! and the summary in `report::watch`, the screen's view model in `ui::watch`.

pub mod engine;
pub mod live;

use crate::error::Error;
use crate::ingest::logs::stream::{self, Chunk, FollowOptions};
use crate::ingest::logs::{self, Recogniser};
use engine::Engine;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, sync_channel};

/// How to watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Sources: files, or `-` for stdin.
    pub paths: Vec<PathBuf>,
    /// How files are read.
    pub follow: FollowOptions,
    /// Only this recogniser (`--format NAME`).
    pub format: Option<String>,
    /// The user's step line (`--step-pattern REGEX`).
    pub step_pattern: Option<String>,
    /// Write one JSON object per record and alert.
    pub jsonl: bool,
    /// Print a text summary at the end of input.
    pub summary: bool,
    /// Say at the end which recogniser read each source and where its step times come from.
    pub explain: bool,
    /// The watchdog's floor: a source still open that printed no record for
    /// max(5 × the typical step, this) is called silent.
    pub silence: std::time::Duration,
    /// What the logs do not print: model size, peak, ranks per node (flags).
    pub job: crate::analysis::live::job::Job,
}

/// Names of the recognisers, for `--format`.
pub fn formats() -> Vec<&'static str> {
    logs::RECOGNISERS.iter().map(|r| r.name).collect()
}

/// Opens the sources (their readers run on threads of their own) and an engine over them.
pub fn start(opts: &WatchOptions) -> Result<(Engine, Receiver<Chunk>), Error> {
    let only: Option<&'static Recogniser> = match &opts.format {
        Some(n) => Some(logs::recogniser(n).ok_or_else(|| {
            Error::usage(
                "--format",
                format!("no format `{n}` (formats: {})", formats().join(", ")),
            )
        })?),
        None => None,
    };
    let pattern = match &opts.step_pattern {
        Some(p) => Some(
            logs::pattern::StepPattern::new(p).map_err(|e| Error::usage("--step-pattern", e))?,
        ),
        None => None,
    };
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        opts.paths.clone()
    };
    let (tx, rx) = sync_channel(stream::QUEUE);
    let labels = stream::spawn(&paths, opts.follow, &tx)?;
    let mut engine = Engine::new(labels, &paths, only);
    if let Some(p) = pattern {
        engine.set_step_pattern(std::sync::Arc::new(p));
    }
    engine.live.job = opts.job.clone();
    Ok((engine, rx))
}

/// The next thing to do: bytes of a source (`end`: it ended), a quiet tick, or the end.
pub enum Next {
    /// Bytes of source `.0`; `.2`: it ended.
    Data(usize, Vec<u8>, bool),
    /// Nothing arrived for a [`TICK`]: time for the watchdog.
    Tick,
    /// Every source has ended.
    Done,
}

/// Waits at most a [`TICK`] for the next chunk.
pub fn next(rx: &Receiver<Chunk>) -> Next {
    use std::sync::mpsc::RecvTimeoutError;
    match rx.recv_timeout(TICK) {
        Ok(Chunk::Bytes(i, b)) => Next::Data(i, b, false),
        Ok(Chunk::End(i)) => Next::Data(i, Vec::new(), true),
        Err(RecvTimeoutError::Timeout) => Next::Tick,
        Err(RecvTimeoutError::Disconnected) => Next::Done,
    }
}

/// How often the watchdog looks, when nothing arrives.
pub const TICK: std::time::Duration = std::time::Duration::from_millis(250);
