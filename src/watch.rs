//! `stepscope watch`, non-interactive: sources → lines (normalised, de-duplicated across
//! ranks that print the same line) → records → the live analysis, written as JSON lines
//! (schema `stepscope.watch/1`, docs/watch-schema.md) and, with `--summary`, a text summary at
//! the end of input.

use crate::analysis::live::{Alert, Live};
use crate::error::Error;
use crate::format::human;
use crate::ingest::logs::line::{Splitter, normalise};
use crate::ingest::logs::stream::{self, Chunk, FollowOptions};
use crate::ingest::logs::{self, Recogniser, Record};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;

/// How to watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Sources: files, or `-` for stdin.
    pub paths: Vec<PathBuf>,
    /// How files are read.
    pub follow: FollowOptions,
    /// Only this recogniser (`--format NAME`).
    pub format: Option<String>,
    /// Write one JSON object per record and alert.
    pub jsonl: bool,
    /// Print a text summary at the end of input.
    pub summary: bool,
    /// The watchdog's floor: a source still open that printed no record for
    /// max(5 × the typical step, this) is called silent.
    pub silence: std::time::Duration,
}

/// What is known of one source: its line splitter, its last line (the identical line of N
/// ranks in one stream counts once), the rank its file name gives (`rank3.log`) for lines
/// without a prefix, and what the watchdog needs.
struct Source {
    label: String,
    splitter: Splitter,
    last: Option<String>,
    file_rank: Option<u32>,
    open: bool,
    last_record: std::time::Instant,
    last_line: String,
    ranks: std::collections::BTreeSet<u32>,
    alerted: bool,
    table: logs::monitors::Table,
}

impl Source {
    fn new(label: String, path: &std::path::Path) -> Source {
        Source {
            label,
            splitter: Splitter::default(),
            last: None,
            file_rank: crate::ingest::discover::rank_from_name(path),
            open: true,
            last_record: std::time::Instant::now(),
            last_line: String::new(),
            ranks: Default::default(),
            alerted: false,
            table: Default::default(),
        }
    }
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

/// Runs until every source ends (or stdout is closed); returns the live state (for the
/// summary and tests).
pub fn run(opts: &WatchOptions, out: &mut impl Write) -> Result<Live, Error> {
    let out = &mut Quiet {
        inner: out,
        closed: false,
    };
    let only: Option<&Recogniser> = match &opts.format {
        Some(n) => Some(logs::recogniser(n).ok_or_else(|| {
            Error::usage(
                "--format",
                format!("no format `{n}` (formats: {})", formats().join(", ")),
            )
        })?),
        None => None,
    };
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        opts.paths.clone()
    };
    let (tx, rx) = sync_channel(stream::QUEUE);
    let labels = stream::spawn(&paths, opts.follow, &tx)?;
    drop(tx);
    let mut sources: Vec<Source> = labels
        .into_iter()
        .zip(&paths)
        .map(|(l, p)| Source::new(l, p))
        .collect();
    let mut live = Live::default();
    loop {
        let (i, bytes, end) = match rx.recv_timeout(TICK) {
            Ok(Chunk::Bytes(i, b)) => (i, b, false),
            Ok(Chunk::End(i)) => (i, Vec::new(), true),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let silent = watchdog(&mut live, &mut sources, opts.silence);
                if opts.jsonl {
                    alerts(out, &silent)?;
                    out.flush().map_err(io)?;
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let src = &mut sources[i];
        src.open &= !end;
        let mut lines = Vec::new();
        let mut take = |l: &[u8]| lines.push(l.to_vec());
        src.splitter.push(&bytes, &mut take);
        if end {
            src.splitter.finish(&mut take);
        }
        for raw in lines {
            live.counts.lines += 1;
            if let Some(rec) = recognise(src, &raw, only, &mut live) {
                let alerts = live.add(i, &rec);
                if opts.jsonl && rec.said != logs::Said::Header {
                    emit(out, &src.label, &rec, &alerts)?;
                }
            }
        }
        // Whatever one read brought is out before the next read is waited for.
        out.flush().map_err(io)?;
        if out.closed {
            return Ok(live);
        }
    }
    let closing = live.finish();
    if opts.jsonl {
        alerts(out, &closing)?;
    }
    if opts.summary {
        out.write_all(summary(&live).as_bytes()).map_err(io)?;
    }
    Ok(live)
}

/// One raw line of `src` to a record (`None`: empty, a repeat, or unrecognised — counted).
fn recognise(
    src: &mut Source,
    raw: &[u8],
    only: Option<&Recogniser>,
    live: &mut Live,
) -> Option<Record> {
    let mut l = normalise(raw)?;
    let repeat = l.rank.is_none() && src.last.as_deref() == Some(l.text.as_str());
    if repeat && !src.table.is_open() {
        return None;
    }
    src.last = Some(l.text.clone());
    l.rank = l.rank.or(src.file_rank);
    let Some(rec) = logs::recognise(&l, only, &mut src.table) else {
        live.counts.unrecognised += 1;
        return None;
    };
    // Identical monitor rows are successive samples, not N ranks printing one line.
    if repeat && !matches!(rec.said, logs::Said::Device(_)) {
        return None;
    }
    src.last_record = std::time::Instant::now();
    src.last_line.clone_from(&l.text);
    src.ranks.extend(l.rank);
    src.alerted = false;
    Some(rec)
}

/// How often the watchdog looks, when nothing arrives.
const TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// Sources still open that printed no record for longer than the live state allows: one
/// alert each per silence.
fn watchdog(live: &mut Live, sources: &mut [Source], floor: std::time::Duration) -> Vec<Alert> {
    let limit = live.silence_limit_ns(floor.as_nanos().min(i64::MAX as u128) as i64);
    let mut out = Vec::new();
    for w in sources.iter_mut() {
        let quiet = w.last_record.elapsed().as_nanos() as i64;
        if w.open && !w.alerted && quiet > limit {
            w.alerted = true;
            out.push(live.silent(&w.label, w.ranks.iter().copied().collect(), &w.last_line));
        }
    }
    out
}

/// The JSON-lines schema id.
pub const SCHEMA: &str = "stepscope.watch/1";

fn emit(out: &mut impl Write, source: &str, rec: &Record, alerts: &[Alert]) -> Result<(), Error> {
    line(
        out,
        &Out::Record {
            schema: SCHEMA,
            source,
            record: rec,
        },
    )?;
    self::alerts(out, alerts)
}

/// One JSON line per alert.
fn alerts(out: &mut impl Write, alerts: &[Alert]) -> Result<(), Error> {
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
    let mut s = serde_json::to_string(o).map_err(|e| Error::internal(e.to_string()))?;
    s.push('\n');
    out.write_all(s.as_bytes()).map_err(io)
}

fn io(e: std::io::Error) -> Error {
    Error::internal(format!("cannot write: {e}"))
}

/// The end-of-input summary: counts, then each alert in one line.
pub fn summary(l: &Live) -> String {
    let c = &l.counts;
    let mut s = format!(
        "watch: {} lines, {} recognised, {} unrecognised, {} timed steps; {} alert(s)\n",
        c.lines, c.records, c.unrecognised, c.timed_steps, l.counts.alerts
    );
    for a in &l.alerts {
        s.push_str(&alert_line(a));
    }
    s
}

/// One alert as a summary line.
fn alert_line(a: &Alert) -> String {
    use crate::analysis::live::Pattern;
    let who = if a.ranks.is_empty() {
        String::new()
    } else {
        format!(" rank {}", crate::format::join(&a.ranks))
    };
    let devs = a.devices.join(", ");
    let what = match &a.pattern {
        Pattern::Silent {
            source,
            last_line,
            ended,
        } => {
            let state = if *ended { "ended" } else { "silent (hung?)" };
            return format!("  {source}{who}: {state}; last line: {last_line}\n");
        }
        _ if a.rule == "slow_rank" => {
            let why = if a.pattern == Pattern::OneOff {
                "named slowest by the straggler detector"
            } else {
                "named slowest again: chronic"
            };
            return format!("  slow_rank{who}: {why}\n");
        }
        Pattern::IdleMemoryHeld {
            util_pct,
            memory,
            memory_unit,
            samples,
        } => {
            return format!(
                "  device_idle {devs}: {util_pct:.0}% busy with {memory:.0} {memory_unit} held, {samples} samples in a row (was busy before: stalled?)\n"
            );
        }
        Pattern::Throttled {
            clock_mhz,
            max_clock_mhz,
            violation_pct,
            ..
        } => {
            return format!(
                "  device_throttling {devs}: SM clock {clock_mhz:.0} MHz vs {max_clock_mhz:.0} MHz reached while busy, violation {violation_pct:.0}%\n"
            );
        }
        Pattern::OddOneOut {
            util_pct,
            peers_util_pct,
            peers,
            ..
        } => {
            return format!(
                "  device_outlier {devs}: {util_pct:.0}% busy while its {peers} peers run at {peers_util_pct:.0}%\n"
            );
        }
        Pattern::OneOff => "one-off".to_string(),
        Pattern::Burst => "burst".to_string(),
        Pattern::Periodic { period } => format!("every {period} steps"),
        Pattern::RegimeChange { from_ns, to_ns } => {
            format!("regime change {} → {}", human(*from_ns), human(*to_ns))
        }
    };
    let around = if a.events.is_empty() {
        String::new()
    } else {
        format!(", around {:?}", a.events)
    };
    format!(
        "  {} ({what}){who}: steps {}, up to {} vs median {} (limit {}){around}\n",
        a.rule,
        crate::format::join(&a.steps),
        human(a.max_ns),
        human(a.median_ns),
        human(a.threshold_ns),
    )
}
