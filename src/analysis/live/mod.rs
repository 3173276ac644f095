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
pub mod evidence;
mod feeds;
pub mod goodput;
pub mod history;
pub mod job;
mod periods;
pub mod phases;
mod runs;
mod timers;

use crate::model::live::{EventKind, Provenance, Record, Said, Step};
use crate::time::Ns;
pub use alert::{Alert, Pattern, group};
use baseline::Baseline;
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
}

/// One series as the faces see it.
#[derive(Debug, Clone, Copy)]
pub struct SeriesView<'a> {
    /// The source it came from.
    pub source: usize,
    /// Its rank (`None`: lines without one).
    pub rank: Option<u32>,
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
    /// `rank 3 · megatron`, or the format alone for lines without a rank.
    pub fn label(&self) -> String {
        match self.rank {
            Some(r) => format!("rank {r} · {}", self.format),
            None => self.format.to_string(),
        }
    }
}

/// The live state: feed records in stream order with [`Live::add`].
#[derive(Debug, Default)]
pub struct Live {
    /// Per (source, rank, format): two formats in one stream (DeepSpeed's micro-step
    /// counter and Megatron's iteration) are two series, and so are two files without ranks.
    series: BTreeMap<(usize, Option<u32>, &'static str), Series>,
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
    printed: std::collections::BTreeSet<(usize, Option<u32>)>,
    /// Devices from monitor streams.
    pub devices: devices::Devices,
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

    /// Adds one record of source `source`; returns the alerts it raised.
    pub fn add(&mut self, source: usize, r: &Record) -> Vec<Alert> {
        self.counts.records += 1;
        match &r.said {
            Said::Step(s) => self.step((source, r.rank, r.format), s),
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

    fn step(&mut self, key: (usize, Option<u32>, &'static str), s: &Step) -> Vec<Alert> {
        let rank = key.1;
        let who = (key.0, rank);
        let mut out = Vec::new();
        let series = self.series.entry(key).or_default();
        // A step number that goes back is a restart: the series starts again, start-up first.
        let numbered = step_number(s.step);
        if let (Some(n), Some(last)) = (numbered, series.last) {
            // The same step again is the same line printed by another rank (lines without a
            // launcher prefix): counted once.
            if n == last.step {
                self.counts.repeats += 1;
                return out;
            }
            if n < last.step {
                out.extend(release(series, None));
                out.extend(close_run(series, rank, &self.events));
                *series = Series::default();
                self.events.push_back((EventKind::Restart, Some(n)));
            }
        }
        let n = numbered.unwrap_or(series.last.map_or(0, |l| l.step + 1));
        // Only a time in the range a step can take is judged (a log can print anything).
        let time = evidence::step_time(series.last, n, s)
            .filter(|t| (0..=crate::time::MAX_RANK_EXTENT_NS).contains(&t.0));
        let covers = series.last.map_or(1, |l| n.saturating_sub(l.step).max(1));
        if !s.metrics.is_empty() {
            series.metrics.clone_from(&s.metrics);
        }
        series.last = Some(evidence::Last {
            step: n,
            at_ns: s.at_ns,
            cumulative_ns: s.cumulative_ns,
        });
        series.seen += 1;
        self.phases.step(key.0, key.2, n);
        if let Some(at) = s.at_ns {
            self.clock.mark(key.2, at, n);
        }
        let Some((ns, from)) = time else {
            explain(&self.phases, key, &mut out);
            self.keep(&out);
            return out;
        };
        self.counts.timed_steps += 1;
        let printed = from != Provenance::FromTimestamps;
        if printed {
            self.printed.insert(who);
        }
        series.evidence = Some(from);
        // The first record is start-up (initialisation, compilation): never slow, no baseline.
        let judged = series.seen > 1 && (printed || !self.printed.contains(&who));
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
        self.keep(&out);
        out
    }

    /// Every series with its history, in key order (source, rank, format).
    pub fn series(&self) -> impl Iterator<Item = SeriesView<'_>> {
        self.series.iter().map(|(k, s)| SeriesView {
            source: k.0,
            rank: k.1,
            format: k.2,
            history: &s.history.buckets,
            limits: s.baseline.limits(),
            goodput: s.goodput,
            metrics: &s.metrics,
            evidence: s.evidence,
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
                mine.extend(settle(s, key.1, &self.events));
            }
            mine.extend(close_run(s, key.1, &self.events));
            explain(&self.phases, key, &mut mine);
            out.extend(mine.into_iter().map(|a| (key.0, a)));
        }
        let alerts: Vec<Alert> = out.iter().map(|x| x.1.clone()).collect();
        self.keep(&alerts);
        for rank in self.timers.finish() {
            out.extend(self.slow_rank(rank).into_iter().map(|a| (0, a)));
        }
        out
    }
}

/// Names the phases the time of the slow steps of series `key` went to.
fn explain(p: &phases::Phases, key: (usize, Option<u32>, &'static str), alerts: &mut [Alert]) {
    for a in alerts.iter_mut().filter(|a| a.rule == "slow_steps") {
        if let (Some(&first), Some(&last)) = (a.steps.first(), a.steps.last()) {
            a.phases = p.grown(key.0, key.2, first..=last, a.max_ns - a.median_ns);
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
mod tests {
    use super::*;
    use crate::model::live::Provenance;

    fn rec(step: u64, ms: i64) -> Record {
        Record {
            format: "test",
            rank: None,
            said: Said::Step(Step {
                step: Some(step),
                of: None,
                time_ns: Some(ms * 1_000_000),
                provenance: Provenance::PerStep,
                cumulative_ns: None,
                at_ns: None,
                metrics: Vec::new(),
            }),
        }
    }

    fn run(times: &[(u64, i64)]) -> Vec<Alert> {
        let mut l = Live::default();
        for &(s, ms) in times {
            l.add(0, &rec(s, ms));
        }
        l.finish();
        l.alerts
    }

    #[test]
    fn times_no_step_takes_are_not_judged_and_huge_step_gaps_saturate() {
        // 13-day-plus and negative "step times" are no step's: not judged, no alert. A jump of
        // 2^48 step numbers covers that many steps: goodput's sums saturate, never overflow;
        // numbers past 2^48 are none (the step after the last).
        let mut t: Vec<(u64, i64)> = (1..=12).map(|s| (s, 100)).collect();
        t.push((13, i64::MAX / 1_000_000));
        t.push((14, -5));
        t.extend([(MAX_STEP, 900), (MAX_STEP + 1, 100), (u64::MAX, 100)]);
        let mut l = Live::default();
        for &(s, ms) in &t {
            l.add(0, &rec(s, ms));
        }
        l.finish();
        assert_eq!(
            l.counts.timed_steps, 15,
            "two of seventeen had no step's time"
        );
        let share = l.series.values().next().unwrap().goodput.share().unwrap();
        assert!((0.0..=1.0).contains(&share), "{share}");
    }

    #[test]
    fn start_up_is_never_slow_and_a_one_off_is_one_alert() {
        // Step 1 (start-up) takes 10 s; then 100 ms steps and one 200 ms step at 8: the
        // baseline median is 100, the limit 105 (5% floor): step 8 is slow, alone.
        let mut t = vec![(1, 10_000)];
        t.extend((2..=12).map(|s| (s, if s == 8 { 200 } else { 100 })));
        let a = run(&t);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(
            (a[0].pattern.clone(), a[0].steps.clone()),
            (Pattern::OneOff, vec![8])
        );
        assert_eq!(
            (a[0].median_ns, a[0].threshold_ns),
            (100_000_000, 105_000_000)
        );
    }

    #[test]
    fn bursts_periods_and_regime_changes() {
        // Steps 8 and 9 slow: one burst alert.
        let t: Vec<_> = (1..=14)
            .map(|s| (s, if s == 8 || s == 9 { 300 } else { 100 }))
            .collect();
        let a = run(&t);
        assert_eq!(a.len(), 1);
        assert_eq!(
            (a[0].pattern.clone(), a[0].steps.clone()),
            (Pattern::Burst, vec![8, 9])
        );
        // A stall every 10 steps (10, 20, 30, 40): two one-offs, then the period is
        // recognised at the third, and the fourth raises nothing.
        let t: Vec<_> = (1..=45)
            .map(|s| (s, if s % 10 == 0 { 300 } else { 100 }))
            .collect();
        let a = run(&t);
        let patterns: Vec<_> = a.iter().map(|x| x.pattern.clone()).collect();
        assert_eq!(
            patterns,
            [
                Pattern::OneOff,
                Pattern::OneOff,
                Pattern::Periodic { period: 10 }
            ]
        );
        // From step 10 on every step takes 150 ms: one regime change, then quiet.
        let t: Vec<_> = (1..=40)
            .map(|s| (s, if s >= 10 { 150 } else { 100 }))
            .collect();
        let a = run(&t);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(
            a[0].pattern,
            Pattern::RegimeChange {
                from_ns: 100_000_000,
                to_ns: 150_000_000
            }
        );
    }

    #[test]
    fn an_alternating_series_that_steps_up_is_one_regime_change() {
        // 100/60 ms on odd/even steps, then 200/120 from step 41: the alternation is no slow
        // step; the step up is one regime change (level 80 → 160 ms), no one-offs before it.
        let t: Vec<_> = (1..=100)
            .map(|s| {
                let base = if s % 2 == 1 { 100 } else { 60 };
                (s, if s > 40 { 2 * base } else { base })
            })
            .collect();
        let a = run(&t);
        assert_eq!(a.len(), 1, "{a:?}");
        let Pattern::RegimeChange { from_ns, to_ns } = a[0].pattern else {
            panic!("{a:?}");
        };
        // The baseline before the window is mostly 100/60 pairs (its interquartile mean
        // within them); the later half of the window is all 200/120.
        assert!((75_000_000..=85_000_000).contains(&from_ns), "{from_ns}");
        assert_eq!(to_ns, 160_000_000);
        assert!(a[0].steps.contains(&41), "{:?}", a[0].steps);
    }

    #[test]
    fn the_same_step_again_is_counted_once_and_is_no_restart() {
        // Every rank prints step N (the times differ in the last digit); step 8 is slow.
        let mut l = Live::default();
        for s in 1..=12 {
            for ms in [100, 101, 100] {
                l.add(0, &rec(s, if s == 8 { 3 * ms } else { ms }));
            }
        }
        l.finish();
        assert_eq!(l.counts.repeats, 24);
        assert!(!l.events().any(|e| e.0 == EventKind::Restart));
        assert_eq!(l.alerts.len(), 1, "{:?}", l.alerts);
        assert_eq!(l.alerts[0].steps, [8]);
    }

    #[test]
    fn a_step_number_going_back_is_a_restart_whose_first_step_is_start_up() {
        let mut t: Vec<_> = (1..=8).map(|s| (s, 100)).collect();
        t.push((1, 5_000));
        t.extend((2..=8).map(|s| (s, 100)));
        assert!(run(&t).is_empty());
    }

    #[test]
    fn steps_without_a_time_take_it_from_timestamps() {
        let mut l = Live::default();
        for (s, at) in [(10, 0), (20, 10_000), (30, 20_000)] {
            l.add(
                0,
                &Record {
                    format: "t",
                    rank: Some(0),
                    said: Said::Step(Step {
                        step: Some(s),
                        of: None,
                        time_ns: None,
                        provenance: Provenance::FromTimestamps,
                        cumulative_ns: None,
                        at_ns: Some(at * 1_000_000),
                        metrics: Vec::new(),
                    }),
                },
            );
        }
        // 10 s over 10 steps: 1 s each, from the second line on.
        assert_eq!(l.counts.timed_steps, 2);
    }
}
