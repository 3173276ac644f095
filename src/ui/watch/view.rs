//! What the live screen shows, taken from the engine at most a few times a second: counts
//! and rate, sources, the step strip of the main series, the rank × step rows, devices,
//! alerts with their lines, and plain notes on what the stream cannot tell.

use crate::analysis::live::Counts;
use crate::analysis::live::devices::label;
use crate::analysis::live::goodput::Goodput;
use crate::analysis::live::history::Bucket;
use crate::model::live::EventKind;
use crate::report::watch::notes;
use crate::session::watch::engine::{Engine, Raised};
use crate::time::Ns;
use std::collections::BTreeMap;

/// Ranks kept for the heat map (the first ones by rank number).
pub const HEAT_RANKS: usize = 1024;

/// One frame's worth of the live state.
#[derive(Debug, Clone, Default)]
pub struct WatchView {
    /// Counts so far.
    pub counts: Counts,
    /// Lines per second over the last interval.
    pub lines_per_s: f64,
    /// The sources.
    pub sources: Vec<SourceView>,
    /// The main series' step strip, once a step time exists.
    pub strip: Option<Strip>,
    /// Per-rank step histories (rank order), when lines carry ranks.
    pub heat: Vec<(u32, Vec<Bucket>)>,
    /// Devices from monitor streams.
    pub devices: Vec<DeviceView>,
    /// The newest alerts with their source lines, oldest first.
    pub alerts: Vec<Raised>,
    /// What the stream cannot tell.
    pub notes: Vec<String>,
    /// Every source has ended.
    pub done: bool,
    /// What the flags say of the job.
    pub job: crate::analysis::live::job::Job,
}

/// One source's state.
#[derive(Debug, Clone)]
pub struct SourceView {
    /// Still open.
    pub open: bool,
    /// Called silent by the watchdog.
    pub silent: bool,
}

/// The step strip: the series with the most step times.
#[derive(Debug, Clone)]
pub struct Strip {
    /// `rank 3 · megatron`, or the format alone.
    pub label: String,
    /// Its history.
    pub buckets: Vec<Bucket>,
    /// Baseline median and slow limit.
    pub limits: Option<(Ns, Ns)>,
    /// Time at pace and lost.
    pub goodput: Goodput,
    /// Events and their steps.
    pub events: Vec<(EventKind, u64)>,
    /// MFU stepscope derived from the flags, when it could.
    pub mfu: Option<crate::analysis::live::job::Mfu>,
}

/// One device.
#[derive(Debug, Clone)]
pub struct DeviceView {
    /// `host/GPU 3` or `GPU 3`.
    pub label: String,
    /// Utilisation samples, oldest first.
    pub util: Vec<f64>,
    /// Idleness by step (1000 − utilisation ‰, max = least busy), when placed on steps.
    pub by_step: Vec<Bucket>,
    /// Latest readings.
    pub latest: BTreeMap<&'static str, f64>,
    /// An alert names it.
    pub alerted: bool,
}

impl WatchView {
    /// The view of `e` now; `lines_per_s` measured by the caller.
    pub fn of(e: &Engine, lines_per_s: f64) -> WatchView {
        let live = &e.live;
        let strip = live.main_series().map(|s| Strip {
            label: s.label(),
            buckets: s.history.to_vec(),
            limits: s.limits,
            goodput: s.goodput,
            events: live.events().filter_map(|(k, at)| Some((k, at?))).collect(),
            mfu: live.job.mfu(s.metrics, s.limits.map(|l| l.0)),
        });
        let mut heat: BTreeMap<u32, Vec<Bucket>> = BTreeMap::new();
        for s in live.series().filter(|s| !s.history.is_empty()) {
            if let Some(r) = s.rank {
                if heat.len() < HEAT_RANKS || heat.contains_key(&r) {
                    heat.entry(r).or_insert_with(|| s.history.to_vec());
                }
            }
        }
        let alerts =
            crate::analysis::live::group(e.raised.iter().cloned().collect(), |r| &mut r.alert);
        let named: std::collections::BTreeSet<&str> = alerts
            .iter()
            .flat_map(|r| r.alert.devices.iter().map(String::as_str))
            .collect();
        let devices = live
            .devices
            .by
            .iter()
            .map(|(k, d)| {
                let label = label(k);
                let by_step = live.device_steps(&label);
                DeviceView {
                    alerted: named.contains(label.as_str()),
                    label,
                    util: d.util.iter().copied().collect(),
                    by_step: by_step.to_vec(),
                    latest: d.latest.clone(),
                }
            })
            .collect();
        WatchView {
            counts: live.counts.clone(),
            lines_per_s,
            sources: e
                .sources
                .iter()
                .map(|s| SourceView {
                    open: s.open,
                    silent: s.silent(),
                })
                .collect(),
            notes: notes(e),
            job: live.job.clone(),
            strip,
            heat: heat.into_iter().collect(),
            devices,
            alerts,
            done: e.sources.iter().all(|s| !s.open),
        }
    }
}
