//! Live analysis of recognised log records (`stepscope watch`, docs/metrics.md "Live"):
//! rolling step times per rank (or for the job when lines carry no rank), slow steps by the
//! DESIGN §4 rule over a rolling window, grouped into one alert per pattern — a one-off, a
//! burst of consecutive slow steps, a periodic stall, or a regime change (a sustained shift,
//! after which the baseline restarts) — annotated with the events around them; and ranks a
//! straggler detector names as the slowest.

mod alert;
mod baseline;
pub mod clock;
pub mod comms;
pub mod devices;
mod dips;
pub mod evidence;
mod feeds;
pub mod goodput;
pub mod history;
pub mod job;
mod key;
pub mod order;
mod pauses;
mod periods;
pub mod phases;
mod runs;
mod timers;

use crate::model::live::{EventKind, Provenance, Record, Said, Step};
use crate::time::Ns;
pub use alert::{Alert, Pattern, group};
use baseline::Baseline;
pub use key::SeriesKey;
pub use runs::MIN_SETTLE;
use runs::{close_run, judge, release, settle};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Step times the baseline is computed over.
pub const WINDOW: usize = 64;
/// Step times needed before anything can be slow.
pub const MIN_BASELINE: usize = 5;
/// Consecutive slow steps that make a regime change, not a burst.
pub const REGIME_STEPS: usize = 8;
/// Slow episodes at one constant spacing that make a periodic stall.
pub const PERIODIC_EPISODES: usize = 3;
/// The watchdog: a source is silent after this many typical step times without a record …
pub const SILENT_STEPS: i64 = 5;

/// Devices whose utilisation is kept by step (bounded memory for a huge monitor stream).
pub const MAX_DEVICE_STEPS: usize = 256;

/// Alerts kept in memory (the oldest go first; JSON lines already carry every one).
pub const MAX_ALERTS: usize = 1000;
/// A straggler report names a slow rank when max/min of the step time exceed this.
pub const STRAGGLER_SPREAD: f64 = 0.05;

/// Counts of what the stream held.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Lines read.
    pub lines: u64,
    /// Lines recognised.
    pub records: u64,
    /// Lines no recogniser took.
    pub unrecognised: u64,
    /// Records made of two lines one write was cut into (`ingest::logs::rejoin`).
    pub rejoined: u64,
    /// Alerts raised (all of them; `Live::alerts` keeps the last [`MAX_ALERTS`]).
    pub alerts: u64,
    /// Step records with a time.
    pub timed_steps: u64,
    /// Step records repeating the step just seen in their series (one line printed by
    /// every rank, without a prefix to tell them apart): counted once.
    pub repeats: u64,
    /// Step counters that restarted within a later epoch and were continued
    /// ([`order`]): each is one epoch boundary, not a restart.
    pub epochs: u64,
}

/// The most gaps in step counters kept (the oldest go first).
pub const MAX_GAPS: usize = 64;

/// A step counter that jumped forward past [`order::GAP_STRIDES`] strides: the same run
/// with steps missing (resumed from a later checkpoint, lines lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// The source it was in.
    pub source: usize,
    /// The rank of its series.
    pub rank: Option<u32>,
    /// The step before the gap and the step after it.
    pub from: u64,
    /// The step after the gap.
    pub to: u64,
}

/// One step time kept.
#[derive(Debug, Clone, Copy)]
struct Point {
    step: u64,
    ns: Ns,
    /// Steps the time stands for (a window average covers the steps since the last line).
    covers: u64,
}

/// One rank's (or the job's) series.
#[derive(Debug, Default)]
struct Series {
    baseline: Baseline,
    seen: u64,
    last: Option<evidence::Last>,
    run: Vec<Point>,
    periods: periods::Periods,
    /// Points seen before the baseline formed: judged once it has (or at the end).
    pending: Vec<Point>,
    /// Every judged step time, in bounded min/max buckets.
    history: history::History,
    /// Time at pace and time lost.
    goodput: goodput::Goodput,
    /// The last metrics printed with a step (throughput, MFU, loss …).
    metrics: Vec<(&'static str, f64)>,
    /// The evidence the last step time came from.
    evidence: Option<Provenance>,
    /// The last judged points, for the level shift, each with whether the baseline took it.
    recent: VecDeque<(Point, bool)>,
    /// Closed runs' alerts waiting for a level shift to absorb them, with the step due.
    held: VecDeque<(u64, Alert)>,
    /// Wall-clock pauses outside the printed step times.
    pauses: pauses::Pauses,
}

/// One series as the faces see it.
#[derive(Debug, Clone, Copy)]
pub struct SeriesView<'a> {
    /// The source it came from.
    pub source: usize,
    /// Its rank (`None`: lines without one).
    pub rank: Option<u32>,
    /// Its host (a launcher prefix on lines without a rank).
    pub host: Option<&'a str>,
    /// The format that recognised it.
    pub format: &'static str,
    /// Its step times, bucketed.
    pub history: &'a [history::Bucket],
    /// Baseline median and slow limit, once formed.
    pub limits: Option<(Ns, Ns)>,
    /// Time at pace and time lost.
    pub goodput: goodput::Goodput,
    /// The last metrics printed with a step.
    pub metrics: &'a [(&'static str, f64)],
    /// The evidence its last step time came from.
    pub evidence: Option<Provenance>,
}

impl SeriesView<'_> {
    /// `rank 3 · megatron`, `worker-3 · deepspeed`, or the format alone for lines without a
    /// rank or host.
    pub fn label(&self) -> String {
        match (self.rank, self.host) {
            (Some(r), _) => format!("rank {r} · {}", self.format),
            (None, Some(h)) => format!("{h} · {}", self.format),
            (None, None) => self.format.to_string(),
        }
    }
}

/// The live state: feed records in stream order with [`Live::add`].
#[derive(Debug, Default)]
pub struct Live {
    /// Per (source, rank, format): two formats in one stream (DeepSpeed's micro-step
    /// counter and Megatron's iteration) are two series, and so are two files without ranks.
    series: BTreeMap<SeriesKey, Series>,
    /// Hosts of series keys.
    hosts: key::Hosts,
    /// Alerts so far.
    pub alerts: Vec<Alert>,
    /// Counts.
    pub counts: Counts,
    /// Recent events and the step they came at (or the last step seen).
    events: VecDeque<(EventKind, Option<u64>)>,
    /// Straggler reports naming each rank slowest.
    slow_reports: BTreeMap<u32, u64>,
    /// Ranks (or the rankless stream) whose lines print step times: a series of the same
    /// rank that only has timestamps is not judged (it would repeat the printed one's alerts).
    printed: std::collections::BTreeSet<SeriesKey>,
    /// Devices from monitor streams.
    pub devices: devices::Devices,
    /// All-device dips of monitor streams.
    dips: dips::Dips,
    /// Megatron timer blocks naming ranks.
    timers: timers::Timers,
    /// Timed phases (timer rows, breakdowns), to tell where a slow step's time went.
    phases: phases::Phases,
    /// What the flags say of the job (model size, peak, ranks per node).
    pub job: job::Job,
    /// When steps ended, to put device samples on the step axis.
    clock: clock::Clock,
    /// DeepSpeed's comms-logger rows.
    comms: comms::Comms,
    /// Each series' step counter, which orders its records ([`Live::order`]).
    counters: BTreeMap<SeriesKey, order::Counter>,
    /// Gaps in step counters (the last [`MAX_GAPS`]).
    pub gaps: VecDeque<Gap>,
    /// Each device's idleness by step — 1000 − utilisation in ‰, so that a bucket's max is
    /// its least busy sample — when monitor rows and step lines carry timestamps.
    device_steps: BTreeMap<String, history::History>,
}

impl Live {
    /// Keeps `new` alerts (bounded) and counts them.
    fn keep(&mut self, new: &[Alert]) {
        self.counts.alerts += new.len() as u64;
        self.alerts.extend(new.iter().cloned());
        if self.alerts.len() > MAX_ALERTS {
            let extra = self.alerts.len() - MAX_ALERTS;
            self.alerts.drain(..extra);
        }
    }

    /// Gives a step record of source `source` its place in its series, before it is written
    /// or added ([`order`]): a counter restarted within a later epoch continues the series
    /// (the printed counter kept as `printed_step`); a jump past a gap is remembered.
    pub fn order(&mut self, source: usize, r: &mut Record) {
        let Said::Step(s) = &mut r.said else {
            return;
        };
        let Some(printed) = step_number(s.step) else {
            return;
        };
        let key = SeriesKey {
            source,
            rank: r.rank,
            host: self.hosts.id(r.host.as_deref()),
            format: r.format,
        };
        let before = self
            .series
            .get(&key)
            .and_then(|x| x.last)
            .map_or(0, |l| l.step);
        let o = self
            .counters
            .entry(key)
            .or_default()
            .order(printed, s.epoch, s.of);
        if o.step != printed {
            s.printed_step = Some(printed);
            s.step = Some(o.step);
        }
        self.counts.epochs += u64::from(o.epoch);
        if o.gap {
            if self.gaps.len() == MAX_GAPS {
                self.gaps.pop_front();
            }
            let rank = r.rank;
            self.gaps.push_back(Gap {
                source,
                rank,
                from: before,
                to: o.step,
            });
            self.event(source, rank, EventKind::Restart, Some(o.step));
        }
    }

    /// Adds one record of source `source`; returns the alerts it raised.
    pub fn add(&mut self, source: usize, r: &Record) -> Vec<Alert> {
        self.counts.records += 1;
        match &r.said {
            Said::Step(s) => {
                let key = SeriesKey {
                    source,
                    rank: r.rank,
                    host: self.hosts.id(r.host.as_deref()),
                    format: r.format,
                };
                self.step(key, s)
            }
            Said::Event { event, step } => self.event(source, r.rank, *event, step_number(*step)),
            Said::Straggler { extremes } => self.straggler(extremes),
            Said::SlowRanks { ranks } => ranks.iter().flat_map(|&x| self.slow_rank(x)).collect(),
            Said::Device(sample) => self.device(source, sample),
            Said::Timer(row) => self.timer(source, row),
            Said::Phases { phases } => {
                for p in phases {
                    self.phases.observe(source, &p.name, p.ns);
                }
                Vec::new()
            }
            Said::Comm(row) => self.comm(row),
            Said::Header => Vec::new(),
        }
    }

    /// A rank a detector named slowest: alerted the first time, and again when it becomes
    /// chronic (named in [`PERIODIC_EPISODES`] reports).
    fn slow_rank(&mut self, rank: u32) -> Vec<Alert> {
        let n = self.slow_reports.entry(rank).or_default();
        *n += 1;
        if *n != 1 && *n != PERIODIC_EPISODES as u64 {
            return Vec::new();
        }
        let pattern = if *n == 1 {
            Pattern::OneOff
        } else {
            Pattern::Burst
        };
        let a = Alert::about_ranks("slow_rank", pattern, vec![rank]);
        self.keep(std::slice::from_ref(&a));
        vec![a]
    }

    /// The number of step `s` in series `key` — printed, or the one after the last — or
    /// `None` for the same step again (another rank's copy: counted once). A number that goes
    /// back is a restart: the series starts again (start-up first), its alerts into `out`.
    fn number(&mut self, key: SeriesKey, s: &Step, out: &mut Vec<Alert>) -> Option<u64> {
        let series = self.series.entry(key).or_default();
        let numbered = step_number(s.step);
        if let (Some(n), Some(last)) = (numbered, series.last) {
            if n == last.step {
                self.counts.repeats += 1;
                return None;
            }
            if n < last.step {
                out.extend(release(series, None));
                out.extend(close_run(series, key.rank, &self.events));
                *series = Series::default();
                self.events.push_back((EventKind::Restart, Some(n)));
            }
        }
        Some(numbered.unwrap_or(series.last.map_or(0, |l| l.step + 1)))
    }

    fn step(&mut self, key: SeriesKey, s: &Step) -> Vec<Alert> {
        let rank = key.rank;
        let who = (key.source, rank, key.host);
        let mut out = Vec::new();
        let Some(n) = self.number(key, s, &mut out) else {
            return out;
        };
        let series = self.series.entry(key).or_default();
        // Only a time in the range a step can take is judged (a log can print anything).
        let time = evidence::step_time(series.last, n, s)
            .filter(|t| (0..=crate::time::MAX_RANK_EXTENT_NS).contains(&t.0));
        let steps = series.last.map_or(1, |l| n.saturating_sub(l.step).max(1));
        // A per-step figure is that step's time alone (step numbers in tokens or samples,
        // MLPerf's, would multiply it); the other evidence stands for each step between.
        let covers = match time {
            Some((_, Provenance::PerStep)) => 1,
            _ => steps,
        };
        let paused = pause(series, time, (n, steps), s.at_ns, &self.events);
        if !s.metrics.is_empty() {
            series.metrics.clone_from(&s.metrics);
        }
        series.last = Some(evidence::Last {
            step: n,
            at_ns: s.at_ns,
            cumulative_ns: s.cumulative_ns,
        });
        series.seen += 1;
        self.phases.step(key.source, key.format, n);
        if let Some(at) = s.at_ns {
            self.clock.mark(key.format, at, n);
        }
        out.extend(paused);
        let Some((ns, from)) = time else {
            explain(&self.phases, key, &mut out);
            self.keep(&out);
            return out;
        };
        self.counts.timed_steps += 1;
        let printed = from != Provenance::FromTimestamps;
        if printed {
            self.printed.insert(key);
        }
        // Another series of the same writer (another format) prints times.
        let other_prints = self
            .printed
            .iter()
            .any(|p| (p.source, p.rank, p.host) == who && p.format != key.format);
        series.evidence = Some(from);
        // The first record is start-up (initialisation, compilation): never slow, no baseline.
        let judged = series.seen > 1 && (printed || !other_prints);
        if judged {
            out.extend(judge(
                series,
                Point {
                    step: n,
                    ns,
                    covers,
                },
                rank,
                &self.events,
            ));
        }
        explain(&self.phases, key, &mut out);
        self.hosts.name_on(key.host, &mut out);
        self.keep(&out);
        out
    }

    /// Every series with its history, in key order (source, rank, format).
    pub fn series(&self) -> impl Iterator<Item = SeriesView<'_>> {
        self.series.iter().map(|(k, s)| SeriesView {
            source: k.source,
            rank: k.rank,
            host: self.hosts.name(k.host),
            format: k.format,
            history: &s.history.buckets,
            limits: s.baseline.limits(),
            goodput: s.goodput,
            metrics: &s.metrics,
            evidence: s.evidence,
        })
    }

    /// The series the strip and the summary speak of: the one with the most step times (the
    /// lowest source and rank on a tie).
    pub fn main_series(&self) -> Option<SeriesView<'_>> {
        self.series()
            .filter(|s| !s.history.is_empty())
            .max_by_key(|s| {
                (
                    s.history.iter().map(|b| u64::from(b.n)).sum::<u64>(),
                    std::cmp::Reverse((s.source, s.rank)),
                )
            })
    }

    /// Recent events and the step each came at (oldest first).
    pub fn events(&self) -> impl Iterator<Item = (EventKind, Option<u64>)> + '_ {
        self.events.iter().copied()
    }

    /// A device's idleness by step (see `device_steps`), when its rows could be placed.
    pub fn device_steps(&self, label: &str) -> &[history::Bucket] {
        self.device_steps.get(label).map_or(&[], |h| &h.buckets)
    }

    /// The typical step time: the largest baseline median over the series, once one exists.
    pub fn median_step_ns(&self) -> Option<Ns> {
        self.series
            .values()
            .filter_map(|s| s.baseline.limits().map(|l| l.0))
            .max()
    }

    /// How long a source may print no record before the watchdog calls it silent:
    /// max([`SILENT_STEPS`] × the typical step time, `floor_ns`).
    pub fn silence_limit_ns(&self, floor_ns: Ns) -> Ns {
        self.median_step_ns()
            .map_or(floor_ns, |m| m.saturating_mul(SILENT_STEPS).max(floor_ns))
    }

    /// Whether the last event seen is the job ending.
    pub fn ended(&self) -> bool {
        self.events.back().is_some_and(|e| e.0 == EventKind::Exit)
    }

    /// Raises the watchdog's alert for a silent source.
    pub fn silent(&mut self, source: &str, ranks: Vec<u32>, last_line: &str) -> Alert {
        let pattern = Pattern::Silent {
            source: source.to_string(),
            last_line: last_line.to_string(),
            ended: self.ended(),
        };
        let a = Alert {
            median_ns: self.median_step_ns().unwrap_or(0),
            ..Alert::about_ranks("silent", pattern, ranks)
        };
        self.keep(std::slice::from_ref(&a));
        a
    }

    /// Closes open runs (end of stream) and returns the alerts that raised, each with the
    /// source of its series.
    pub fn finish(&mut self) -> Vec<(usize, Alert)> {
        let mut out = Vec::new();
        for (&key, s) in self.series.iter_mut() {
            let mut mine = release(s, None);
            if s.pending.len() >= MIN_SETTLE {
                mine.extend(settle(s, key.rank, &self.events));
            }
            mine.extend(close_run(s, key.rank, &self.events));
            explain(&self.phases, key, &mut mine);
            self.hosts.name_on(key.host, &mut mine);
            out.extend(mine.into_iter().map(|a| (key.source, a)));
        }
        let alerts: Vec<Alert> = out.iter().map(|x| x.1.clone()).collect();
        self.keep(&alerts);
        for rank in self.timers.finish() {
            out.extend(self.slow_rank(rank).into_iter().map(|a| (0, a)));
        }
        out
    }
}

/// The pause a record at step `n` (`steps` after the series' last) hides when its printed
/// time and its timestamps disagree (`live/pauses.rs`).
fn pause(
    series: &mut Series,
    time: Option<(Ns, Provenance)>,
    (n, steps): (u64, u64),
    at: Option<Ns>,
    events: &VecDeque<(EventKind, Option<u64>)>,
) -> Option<Alert> {
    let (Some((t, Provenance::PerStep | Provenance::WindowAverage)), Some(l)) = (time, series.last)
    else {
        return None;
    };
    let wall = at.zip(l.at_ns).map(|(a, b)| a.saturating_sub(b))?;
    // A per-step figure printed every N steps is one step's time; a gap of more than 1000
    // numbers is a count of samples or tokens (MLPerf's metadata), one step per record.
    let count = if steps > 1000 { 1 } else { steps };
    series.pauses.check((l.step, n, count), t, wall, events)
}

/// Names the phases the time of the slow steps of series `key` went to.
fn explain(p: &phases::Phases, key: SeriesKey, alerts: &mut [Alert]) {
    for a in alerts.iter_mut().filter(|a| a.rule == "slow_steps") {
        if let (Some(&first), Some(&last)) = (a.steps.first(), a.steps.last()) {
            a.phases = p.grown(key.source, key.format, first..=last, a.max_ns - a.median_ns);
        }
    }
}

/// The most steps a log can number: 2^48 (a step a microsecond for nine years). A larger
/// number is no step's, read as none (then the step after the last one seen), so that step
/// arithmetic never overflows.
pub const MAX_STEP: u64 = 1 << 48;

/// A step number a log printed, when it can be one.
fn step_number(n: Option<u64>) -> Option<u64> {
    n.filter(|&n| n <= MAX_STEP)
}

#[cfg(test)]
mod tests;
