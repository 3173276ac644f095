//! What the live analysis tells: alerts, one per pattern (a run of slow steps, a slow rank,
//! a silent source, a device condition), with typed evidence.

use crate::model::live::EventKind;
use crate::time::Ns;
use serde::Serialize;

/// The shape of a run of slow steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Pattern {
    /// One slow step (or window).
    OneOff,
    /// Several consecutive slow steps.
    Burst,
    /// Slow episodes every `period` steps.
    Periodic {
        /// Steps between episodes.
        period: u64,
    },
    /// A source printed no record for longer than the watchdog allows.
    Silent {
        /// The source (file path or `stdin`).
        source: String,
        /// Its last line (normalised).
        last_line: String,
        /// The last thing it said was the job ending (a traceback, a final summary): ended,
        /// not hung.
        ended: bool,
    },
    /// A sustained shift of the step time: eight slow steps in a row (from the baseline
    /// median to the run's median) or a level shift (interquartile means, `live/runs.rs`).
    RegimeChange {
        /// The typical step time before.
        from_ns: Ns,
        /// The typical step time after.
        to_ns: Ns,
    },
    /// A device that was busy sits idle with its memory still allocated.
    IdleMemoryHeld {
        /// Its utilisation now.
        util_pct: f64,
        /// Memory held, in `memory_unit`.
        memory: f64,
        /// `MiB`, or `%` of the device's memory.
        memory_unit: &'static str,
        /// Consecutive samples the condition held.
        samples: u64,
    },
    /// A device runs below its clock (or reports violation time) while busy.
    Throttled {
        /// SM clock now (0: not reported).
        clock_mhz: f64,
        /// The highest SM clock it reached while busy.
        max_clock_mhz: f64,
        /// Power + thermal violation time the monitor reports, in %.
        violation_pct: f64,
        /// Power draw, when reported.
        power_w: Option<f64>,
        /// Temperature, when reported.
        temp_c: Option<f64>,
        /// Consecutive samples the condition held.
        samples: u64,
    },
    /// A Megatron timer's fastest and slowest rank differ (the `minmax` layout: which rank
    /// is slow cannot be told).
    Spread {
        /// The timer.
        timer: String,
        /// The fastest rank's time.
        min_ns: Ns,
        /// The slowest rank's time.
        spread_max_ns: Ns,
        /// Timer blocks it spread in so far (the third is chronic).
        blocks: u64,
    },
    /// A small collective that takes as long as a much bigger one of the same operation:
    /// its time is waiting (skew, latency), not transfer (DeepSpeed's comms table).
    CommWait {
        /// The operation.
        op: String,
        /// Its message size.
        bytes: u64,
        /// Calls at that size.
        calls: u64,
        /// Average time per call.
        avg_ns: Ns,
        /// calls × average.
        total_ns: Ns,
        /// The bigger message compared with.
        vs_bytes: u64,
        /// Its average time per call.
        vs_avg_ns: Ns,
    },
    /// A device's utilisation trails its busy peers'.
    OddOneOut {
        /// Its utilisation.
        util_pct: f64,
        /// The median of its peers (same source and host).
        peers_util_pct: f64,
        /// How many peers.
        peers: usize,
        /// Consecutive samples the condition held.
        samples: u64,
    },
    /// A device hotter than its peers (same source and host) by [`super::devices::HOT_GAP_C`].
    Hot {
        /// Its temperature.
        temp_c: f64,
        /// The median of its peers'.
        peers_temp_c: f64,
        /// How many peers.
        peers: usize,
        /// Consecutive samples the condition held.
        samples: u64,
    },
    /// Every device of a host (or stream) dropped to a fraction of its usual utilisation at
    /// once: the job paused (a data stall, a checkpoint, a collective hang, interference).
    Dip {
        /// The devices' mean utilisation at the dip's lowest.
        util_pct: f64,
        /// Their usual mean utilisation (the median of recent busy rounds).
        usual_util_pct: f64,
        /// Rounds of samples the dip lasted.
        rounds: u64,
        /// The dip's first and last sample times, when the monitor prints them.
        #[serde(skip_serializing_if = "Option::is_none")]
        from_ns: Option<crate::time::Ns>,
        /// See `from_ns`.
        #[serde(skip_serializing_if = "Option::is_none")]
        to_ns: Option<crate::time::Ns>,
    },
}

/// An alert: one per pattern, not one per step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    /// `slow_steps` or `slow_rank`.
    pub rule: &'static str,
    /// What shape.
    #[serde(flatten)]
    pub pattern: Pattern,
    /// The steps concerned.
    pub steps: Vec<u64>,
    /// The ranks concerned (empty: the job's stream, no rank known).
    pub ranks: Vec<u32>,
    /// The devices concerned (monitor alerts), as `host/GPU 3` or `GPU 3`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// The hosts concerned (a launcher's host prefix on lines without a rank).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The slowest step time among them.
    pub max_ns: Ns,
    /// The baseline median.
    pub median_ns: Ns,
    /// The threshold they exceeded.
    pub threshold_ns: Ns,
    /// Events seen at or just before those steps (checkpoint, eval, GC …).
    pub events: Vec<EventKind>,
    /// The timed phases the slow steps' time went to, largest growth first (`phases`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<super::phases::PhaseGrowth>,
}

impl Alert {
    /// An alert about ranks, not steps (a slow rank, a silent source): no times.
    pub(super) fn about_ranks(rule: &'static str, pattern: Pattern, ranks: Vec<u32>) -> Alert {
        Alert {
            rule,
            pattern,
            steps: Vec::new(),
            ranks,
            devices: Vec::new(),
            hosts: Vec::new(),
            max_ns: 0,
            median_ns: 0,
            threshold_ns: 0,
            events: Vec::new(),
            phases: Vec::new(),
        }
    }
}

/// Alerts about the same steps with the same shape on several ranks (or hosts), as one alert
/// naming every rank (the checkpoint stall every rank shows is one finding, not N). Order is kept
/// (each group where its first member was); `alert` finds the alert in an item.
pub fn group<T>(items: Vec<T>, alert: impl Fn(&mut T) -> &mut Alert) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for mut it in items {
        fold_into_period(&mut out, &mut it, &alert);
        let a = alert(&mut it).clone();
        let lo = out.len().saturating_sub(64);
        let same = (lo..out.len()).rev().find(|&i| {
            let o = alert(&mut out[i]);
            a.rule == "slow_steps"
                && o.rule == a.rule
                && o.pattern == a.pattern
                && o.steps == a.steps
        });
        match same {
            Some(i) => {
                let o = alert(&mut out[i]);
                o.ranks.extend(a.ranks.iter().copied());
                o.ranks.sort_unstable();
                o.ranks.dedup();
                o.hosts.extend(a.hosts.iter().cloned());
                o.hosts.sort_unstable();
                o.hosts.dedup();
                o.max_ns = o.max_ns.max(a.max_ns);
            }
            None => out.push(it),
        }
    }
    out
}

/// A periodic pattern is told at its third episode; the two before it were told as one-offs
/// (or bursts) of the same series: they become the pattern's, their steps first in its list.
fn fold_into_period<T>(out: &mut Vec<T>, it: &mut T, alert: &impl Fn(&mut T) -> &mut Alert) {
    let a = alert(it);
    let (Pattern::Periodic { period }, Some(&first)) = (&a.pattern, a.steps.first()) else {
        return;
    };
    let (period, rule, ranks, hosts) = (*period, a.rule, a.ranks.clone(), a.hosts.clone());
    let mut max_ns = a.max_ns;
    // An earlier episode 1 or 2 periods before, within a tenth (the periods' tolerance).
    let on_phase = |s: u64| {
        (1..=2).any(|k| {
            first
                .checked_sub(s)
                .is_some_and(|g| g.abs_diff(k * period) <= k * period / 10)
        })
    };
    let (mut earlier, mut folded) = (Vec::new(), 0);
    let lo = out.len().saturating_sub(64);
    for i in (lo..out.len()).rev() {
        let o = alert(&mut out[i]);
        let episode = matches!(o.pattern, Pattern::OneOff | Pattern::Burst)
            && o.rule == rule
            && o.ranks == ranks
            && o.hosts == hosts
            && o.steps.first().is_some_and(|&s| on_phase(s));
        if episode && folded < 2 {
            folded += 1;
            earlier.extend(o.steps.iter().copied());
            max_ns = max_ns.max(o.max_ns);
            out.remove(i);
        }
    }
    let a = alert(it);
    a.max_ns = max_ns;
    earlier.append(&mut a.steps);
    earlier.sort_unstable();
    a.steps = earlier;
}
