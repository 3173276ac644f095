//! `stepscope watch`, non-interactive: sources → lines (normalised, de-duplicated across
//! ranks that print the same line) → records → the live analysis, written as JSON lines
//! (schema `stepscope.watch/1`, docs/watch-schema.md) and, with `--summary`, a text summary at
//! the end of input.

pub mod dumps;
pub mod explain;
pub(crate) mod summary;

use crate::analysis::live::{Alert, Live};
use crate::error::Error;
use crate::input::{Record, Said};
use crate::session::watch::engine;
use crate::session::watch::{Next, WatchOptions, next, start};
use serde::Serialize;
use std::io::Write;
pub use summary::{alert_line, notes, summary};

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
            if opts.jsonl && failed.is_none() && rec.said != Said::Header {
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
            if opts.jsonl && failed.is_none() && rec.said != Said::Header {
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
        out.write_all(summary(&engine.live, &notes(&engine)).as_bytes())
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
