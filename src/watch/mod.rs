//! `stepscope watch`, non-interactive: sources → lines (normalised, de-duplicated across
//! ranks that print the same line) → records → the live analysis, written as JSON lines
//! (schema `stepscope.watch/1`, docs/watch-schema.md) and, with `--summary`, a text summary at
//! the end of input.

pub mod dumps;
pub mod engine;
pub mod explain;
pub mod live;
pub(crate) mod summary;
pub mod view;

use crate::analysis::live::{Alert, Live};
use crate::error::Error;
use crate::ingest::logs::stream::{self, Chunk, FollowOptions};
use crate::ingest::logs::{self, Recogniser, Record};
use engine::Engine;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, sync_channel};
pub use summary::{alert_line, summary};

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

/// One output line.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Out<'a> {
    Record {
        schema: &'static str,
        source: &'a str,
        #[serde(flatten)]
        record: &'a Record,
    },
    Alert {
        schema: &'static str,
        #[serde(flatten)]
        alert: &'a Alert,
    },
}

/// Names of the recognisers, for `--format`.
pub fn formats() -> Vec<&'static str> {
    logs::RECOGNISERS.iter().map(|r| r.name).collect()
}

/// Output that a closed pipe (`| head`) ends quietly: the reader downstream is gone, which
/// is no error worth a message; `closed` tells the read loop to stop.
struct Quiet<'a, W: Write> {
    inner: &'a mut W,
    closed: bool,
}

impl<W: Write> Write for Quiet<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.quiet(|w| w.write(buf)).map(|n| n.unwrap_or(buf.len()))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.quiet(Write::flush).map(|_| ())
    }
}

impl<W: Write> Quiet<'_, W> {
    fn quiet<T>(
        &mut self,
        f: impl FnOnce(&mut W) -> std::io::Result<T>,
    ) -> std::io::Result<Option<T>> {
        if self.closed {
            return Ok(None);
        }
        match f(self.inner) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(None)
            }
            r => r.map(Some),
        }
    }
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

/// Runs until every source ends (or stdout is closed); returns the live state (for the
/// summary and tests).
pub fn run(opts: &WatchOptions, out: &mut impl Write) -> Result<Live, Error> {
    let out = &mut Quiet {
        inner: out,
        closed: false,
    };
    let (mut engine, rx) = start(opts)?;
    let mut failed = None;
    loop {
        // The watchdog looks on its own clock: one busy source must not hide a silent one.
        let silent = engine.watchdog(opts.silence);
        if opts.jsonl && !silent.is_empty() {
            write_alerts(out, &silent)?;
        }
        // Records that waited for a second half long enough.
        engine.release(&mut |label, rec, alerts| {
            if opts.jsonl && failed.is_none() && rec.said != logs::Said::Header {
                failed = emit(out, label, rec, alerts).err();
            }
        });
        if let Some(e) = failed.take() {
            return Err(e);
        }
        out.flush().map_err(io)?;
        let (i, bytes, end) = match next(&rx) {
            Next::Data(i, b, end) => (i, b, end),
            Next::Tick => continue,
            Next::Done => break,
        };
        engine.feed(i, &bytes, end, &mut |label, rec, alerts| {
            if opts.jsonl && failed.is_none() && rec.said != logs::Said::Header {
                failed = emit(out, label, rec, alerts).err();
            }
        });
        if let Some(e) = failed.take() {
            return Err(e);
        }
        // Whatever one read brought is out before the next read is waited for.
        out.flush().map_err(io)?;
        if out.closed {
            return Ok(engine.live);
        }
    }
    let closing = engine.finish();
    if opts.jsonl {
        write_alerts(out, &closing)?;
    }
    for note in unread(opts, &engine) {
        crate::stderr_line!("{note}");
    }
    if opts.summary {
        out.write_all(summary(&engine.live, &view::notes(&engine)).as_bytes())
            .map_err(io)?;
    }
    if opts.explain {
        let text = explain::explain(&engine);
        if opts.summary {
            out.write_all(text.as_bytes()).map_err(io)?;
        } else {
            use std::io::Write as _;
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
    Ok(engine.live)
}

/// A line for each source that gave no line of text: a file `--once` read nothing of
/// because it started at the end (no `--from-start`), or bytes without a line of text in
/// them (a stream of NULs, a binary file): an empty answer that says why.
pub fn unread(opts: &WatchOptions, engine: &engine::Engine) -> Vec<String> {
    let at_end = !(opts.follow.follow || opts.follow.from_start);
    engine
        .sources
        .iter()
        .filter_map(|s| {
            let label = crate::format::printable(&s.label);
            if s.bytes > 0 && s.text_lines == 0 {
                Some(format!(
                    "note: {label}: no line in {} bytes (no text between line breaks: binary data or NULs, not a log)",
                    s.bytes
                ))
            } else if at_end && s.lines == 0 && s.label != "stdin" {
                Some(format!(
                    "note: {label}: nothing read: without --from-start, watch reads only lines written after it starts (add --from-start to read the file from its beginning)"
                ))
            } else {
                None
            }
        })
        .collect()
}

/// How often the watchdog looks, when nothing arrives.
pub const TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// The JSON-lines schema id.
pub const SCHEMA: &str = "stepscope.watch/1";

/// One record and the alerts it raised as JSON lines.
pub(crate) fn emit(
    out: &mut impl Write,
    source: &str,
    rec: &Record,
    alerts: &[Alert],
) -> Result<(), Error> {
    line(
        out,
        &Out::Record {
            schema: SCHEMA,
            source,
            record: rec,
        },
    )?;
    write_alerts(out, alerts)
}

/// One JSON line per alert.
pub(crate) fn write_alerts(out: &mut impl Write, alerts: &[Alert]) -> Result<(), Error> {
    for a in alerts {
        let o = Out::Alert {
            schema: SCHEMA,
            alert: a,
        };
        line(out, &o)?;
    }
    Ok(())
}

fn line(out: &mut impl Write, o: &Out) -> Result<(), Error> {
    let mut s = crate::format::json::to_string(o).map_err(|e| Error::internal(e.to_string()))?;
    s.push('\n');
    out.write_all(s.as_bytes()).map_err(io)
}

fn io(e: std::io::Error) -> Error {
    Error::internal(format!("cannot write: {e}"))
}
