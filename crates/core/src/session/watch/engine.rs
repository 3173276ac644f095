//! The watch engine, shared by every face: chunks of bytes from the sources become lines
//! (normalised; the identical line of N ranks in one stream counted once), records (one
//! recogniser table, each source with its own monitor-table state) and alerts (the live
//! analysis), and each alert keeps the source lines that led to it. The watchdog calls a
//! source silent when it stops printing records.

use crate::analysis::live::{Alert, Live};
use crate::ingest::logs::line::{Line, Splitter, normalise_into};
use crate::ingest::logs::{self, Recogniser, Record, Said};
use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

/// Lines of context attached to each alert: around the line of its first step.
pub const CONTEXT: usize = 12;
/// Lines kept per source to find an alert's context in (alerts of closed runs are told some
/// steps after them: `analysis::live` holds them for a regime change to absorb).
pub const HISTORY: usize = 256;
/// Bytes of a kept line (a context line is one screen row; memory stays bounded).
pub const LINE_KEPT: usize = 512;
/// Step records whose line numbers are kept per source.
pub const STEPS_KEPT: usize = 128;
/// Alerts whose context lines are kept (the newest).
pub const KEPT: usize = 200;

/// What is known of one source.
pub struct Source {
    /// Its label (the path, or `stdin`).
    pub label: String,
    splitter: Splitter,
    last: Option<String>,
    /// The host of `last`.
    last_host: Option<String>,
    file_rank: Option<u32>,
    /// Still open (not at its end).
    pub open: bool,
    last_record: Instant,
    /// Its last recognised line.
    pub last_line: String,
    /// Ranks seen on it.
    pub ranks: std::collections::BTreeSet<u32>,
    alerted: bool,
    /// What its recognisers remember (monitor table, learned templates).
    pub state: logs::SourceState,
    /// Its last lines, numbered (the context of its alerts).
    pub recent: VecDeque<(u64, String)>,
    /// The line numbers of its last step records, by step number.
    step_lines: VecDeque<(u64, u64)>,
    /// Step records by the recogniser that read them.
    pub formats: std::collections::BTreeMap<&'static str, u64>,
    /// Lines read from it.
    pub lines: u64,
    /// Bytes read from it.
    pub bytes: u64,
    /// Lines with text left after normalisation (a stream of NULs has none).
    pub text_lines: u64,
    /// The line being read (its buffer reused line after line).
    line: Line,
    /// Lines cut in two, waiting for their second half.
    fragments: logs::rejoin::Fragments,
}

impl Source {
    fn new(label: String, path: &Path) -> Source {
        Source {
            label,
            splitter: Splitter::default(),
            last: None,
            last_host: None,
            file_rank: crate::ingest::discover::rank_from_name(path),
            open: true,
            last_record: Instant::now(),
            last_line: String::new(),
            ranks: Default::default(),
            alerted: false,
            state: Default::default(),
            recent: VecDeque::with_capacity(HISTORY),
            step_lines: VecDeque::with_capacity(STEPS_KEPT),
            formats: Default::default(),
            lines: 0,
            bytes: 0,
            text_lines: 0,
            line: Line::default(),
            fragments: Default::default(),
        }
    }

    /// Whether the watchdog has called it silent (and it has said nothing since).
    pub fn silent(&self) -> bool {
        self.alerted
    }

    /// The context of an alert about `steps`: [`CONTEXT`] lines from a few before the line
    /// of its first step, or its last lines when that line is no longer kept.
    fn context(&self, steps: &[u64]) -> Vec<(u64, String)> {
        let at = steps.first().and_then(|first| {
            let line = self.step_lines.iter().rev().find(|x| x.0 == *first)?.1;
            self.recent.iter().position(|x| x.0 == line)
        });
        let start = match at {
            Some(i) => i.saturating_sub(CONTEXT / 2),
            None => self.recent.len().saturating_sub(CONTEXT),
        };
        self.recent
            .iter()
            .skip(start)
            .take(CONTEXT)
            .cloned()
            .collect()
    }
}

/// An alert with the lines of its source that led to it.
#[derive(Debug, Clone)]
pub struct Raised {
    /// The alert.
    pub alert: Alert,
    /// The source's label.
    pub source: String,
    /// Its lines around the alert's first step (or its last lines), numbered.
    pub lines: Vec<(u64, String)>,
}

/// The engine: sources, the live analysis, the alerts' context.
pub struct Engine {
    /// The sources, in the order given.
    pub sources: Vec<Source>,
    /// The live analysis.
    pub live: Live,
    only: Option<&'static Recogniser>,
    /// The newest [`KEPT`] alerts with their context.
    pub raised: VecDeque<Raised>,
    buf: Vec<u8>,
    ends: Vec<usize>,
    /// Records one line gave (reused line after line).
    given: logs::rejoin::Given,
    /// When the watchdog last looked.
    looked: Instant,
}

impl Engine {
    /// An engine over sources labelled `labels` (from `paths`), with every recogniser or
    /// only `only`.
    pub fn new(
        labels: Vec<String>,
        paths: &[std::path::PathBuf],
        only: Option<&'static Recogniser>,
    ) -> Engine {
        Engine {
            sources: labels
                .into_iter()
                .zip(paths)
                .map(|(l, p)| Source::new(l, p))
                .collect(),
            live: Live::default(),
            only,
            raised: VecDeque::new(),
            buf: Vec::new(),
            ends: Vec::new(),
            given: Default::default(),
            looked: Instant::now(),
        }
    }

    /// Every source's steps from the user's `--step-pattern` alone.
    pub fn set_step_pattern(&mut self, p: std::sync::Arc<logs::pattern::StepPattern>) {
        for s in &mut self.sources {
            s.state.pattern = Some(p.clone());
        }
    }

    /// Feeds bytes of source `i` (`end`: it ended); `sink` sees each record with the
    /// alerts it raised, in stream order.
    pub fn feed(
        &mut self,
        i: usize,
        bytes: &[u8],
        end: bool,
        sink: &mut impl FnMut(&str, &Record, &[Alert]),
    ) {
        let src = &mut self.sources[i];
        src.open &= !end;
        src.bytes += bytes.len() as u64;
        // The lines of this read, end to end in one buffer reused from read to read.
        let (mut buf, mut ends) = (
            std::mem::take(&mut self.buf),
            std::mem::take(&mut self.ends),
        );
        buf.clear();
        ends.clear();
        let mut take = |l: &[u8]| {
            buf.extend_from_slice(l);
            ends.push(buf.len());
        };
        src.splitter.push(bytes, &mut take);
        if end {
            src.splitter.finish(&mut take);
        }
        let mut start = 0;
        for &stop in &ends {
            let raw = &buf[start..stop];
            start = stop;
            self.live.counts.lines += 1;
            let src = &mut self.sources[i];
            src.lines += 1;
            let mut given = std::mem::take(&mut self.given);
            recognise(src, raw, self.only, &mut self.live, &mut given);
            self.take(i, given.records.drain(..), sink);
            self.given = given;
        }
        (self.buf, self.ends) = (buf, ends);
        let mut due = Vec::new();
        self.sources[i].fragments.release(end, &mut due);
        self.take(i, due.into_iter(), sink);
    }

    /// Records held for a second half that waited long enough (every source): taken now.
    pub fn release(&mut self, sink: &mut impl FnMut(&str, &Record, &[Alert])) {
        for i in 0..self.sources.len() {
            let mut due = Vec::new();
            self.sources[i].fragments.release(false, &mut due);
            self.take(i, due.into_iter(), sink);
        }
    }

    /// Adds records of source `i` to the live analysis, in order.
    fn take(
        &mut self,
        i: usize,
        records: impl Iterator<Item = Record>,
        sink: &mut impl FnMut(&str, &Record, &[Alert]),
    ) {
        for mut rec in records {
            self.live.order(i, &mut rec);
            if matches!(rec.said, Said::Step(_)) {
                *self.sources[i].formats.entry(rec.format).or_default() += 1;
            }
            if let Said::Step(crate::model::live::Step { step: Some(n), .. }) = &rec.said {
                let src = &mut self.sources[i];
                if src.step_lines.len() == STEPS_KEPT {
                    src.step_lines.pop_front();
                }
                src.step_lines.push_back((*n, src.lines));
            }
            let alerts = self.live.add(i, &rec);
            if !alerts.is_empty() {
                self.remember(i, &alerts);
            }
            sink(&self.sources[i].label, &rec, &alerts);
        }
    }

    /// Keeps the context of `alerts` raised by source `i`.
    fn remember(&mut self, i: usize, alerts: &[Alert]) {
        let src = &self.sources[i];
        for a in alerts {
            self.raised.push_back(Raised {
                alert: a.clone(),
                source: src.label.clone(),
                lines: src.context(&a.steps),
            });
            if self.raised.len() > KEPT {
                self.raised.pop_front();
            }
        }
    }

    /// Sources still open that printed no record for longer than the live state allows:
    /// one alert each per silence. Looks at most once a [`super::TICK`], so it can be called
    /// after every read.
    pub fn watchdog(&mut self, floor: Duration) -> Vec<Alert> {
        if self.looked.elapsed() < super::TICK {
            return Vec::new();
        }
        self.looked = Instant::now();
        let limit = self
            .live
            .silence_limit_ns(floor.as_nanos().min(i64::MAX as u128) as i64);
        let mut out = Vec::new();
        for i in 0..self.sources.len() {
            let w = &mut self.sources[i];
            let quiet = w.last_record.elapsed().as_nanos() as i64;
            if w.open && !w.alerted && quiet > limit {
                w.alerted = true;
                let ranks = w.ranks.iter().copied().collect();
                let a = self.live.silent(&w.label, ranks, &w.last_line);
                self.remember(i, std::slice::from_ref(&a));
                out.push(a);
            }
        }
        out
    }

    /// Closes the open runs at the end of input.
    pub fn finish(&mut self) -> Vec<Alert> {
        let closing = self.live.finish();
        for (i, a) in &closing {
            self.remember(*i, std::slice::from_ref(a));
        }
        closing.into_iter().map(|x| x.1).collect()
    }
}

/// One raw line of `src` to the records it gives now (none: empty, a repeat, unrecognised —
/// counted — or held for a second half).
fn recognise(
    src: &mut Source,
    raw: &[u8],
    only: Option<&Recogniser>,
    live: &mut Live,
    given: &mut logs::rejoin::Given,
) {
    if !normalise_into(raw, &mut src.line) {
        return;
    }
    src.text_lines += 1;
    let l = &mut src.line;
    // The same line again on the same host (or none): every rank printing it without a rank
    // prefix. Hosts of a pdsh stream print the same lines and are kept apart.
    let repeat =
        l.rank.is_none() && src.last.as_deref() == Some(l.text.as_str()) && src.last_host == l.host;
    if repeat && !src.state.table.is_open() {
        return;
    }
    // Buffers reused line after line: no allocation for what is only remembered.
    match &mut src.last {
        Some(last) => last.clone_from(&l.text),
        None => src.last = Some(l.text.clone()),
    }
    if src.last_host != l.host {
        src.last_host.clone_from(&l.host);
    }
    let mut slot = if src.recent.len() == HISTORY {
        src.recent.pop_front().map(|x| x.1).unwrap_or_default()
    } else {
        String::new()
    };
    slot.clear();
    slot.push_str(crate::ingest::logs::fields::head(&l.text, LINE_KEPT));
    src.recent.push_back((src.lines, slot));
    l.rank = l.rank.or(src.file_rank);
    src.state.learned.line = src.lines;
    let alone = logs::recognise(l, only, &mut src.state);
    // Steps of the lines a learned template was taught by: older than this line's. Those
    // lines were counted unrecognised when they came.
    let taught = src.state.learned.backlog.len() as u64;
    live.counts.unrecognised = live.counts.unrecognised.saturating_sub(taught);
    for (rank, s) in src.state.learned.backlog.drain(..) {
        let r = logs::record(l, "generic", rank.or(l.rank), Said::Step(s));
        given.records.push(r);
    }
    // Identical monitor rows are successive samples, not N ranks printing one line.
    if repeat
        && !alone
            .as_ref()
            .is_some_and(|r| matches!(r.said, Said::Device(_)))
    {
        live.counts.unrecognised += u64::from(alone.is_none());
        return;
    }
    let recognised = alone.is_some();
    src.fragments.offer(l, alone, only, &mut src.state, given);
    if given.rejoined {
        live.counts.rejoined += 1;
        if given.first_unrecognised {
            live.counts.unrecognised = live.counts.unrecognised.saturating_sub(1);
        }
    } else if !recognised {
        live.counts.unrecognised += 1;
        return;
    }
    src.last_record = Instant::now();
    src.last_line.clone_from(&l.text);
    src.ranks.extend(l.rank);
    src.alerted = false;
}
