//! Devices from monitor streams (docs/metrics.md "Live: devices"): each device's latest
//! readings, a short history of its utilisation, and three sustained conditions, each alerted
//! once per episode (re-armed when it clears):
//!
//! - **idle with memory held**: utilisation ≤ [`IDLE_UTIL_PCT`] while memory stays allocated,
//!   on a device that was busy before — its rank is stalled (waiting on data, a collective,
//!   a hang), not finished;
//! - **throttling**: the monitor reports power/thermal violation time, or the SM clock sits
//!   below [`THROTTLE_CLOCK`] of the highest this device reached while it is busy;
//! - **odd one out**: a device whose utilisation trails its peers' median by
//!   [`OUTLIER_GAP_PCT`] points while the peers are busy;
//! - **hot**: a device whose temperature exceeds its peers' median by [`HOT_GAP_C`] (a
//!   failing fan, a blocked airflow, a card that will throttle first).
//!
//! Each needs [`SUSTAIN`] consecutive samples, so one slow poll is not a finding.

use super::{Alert, Pattern};
use crate::model::live::Sample;
use serde::Serialize;
use std::collections::BTreeMap;

/// Consecutive samples a condition must hold.
pub const SUSTAIN: u32 = 5;
/// Utilisation at or below this is idle.
pub const IDLE_UTIL_PCT: f64 = 5.0;
/// Utilisation at or above this is busy.
pub const BUSY_UTIL_PCT: f64 = 50.0;
/// Memory held: at least this many MiB …
pub const HELD_MIB: f64 = 1024.0;
/// … or this share of the device's memory (monitors that print a percentage).
pub const HELD_PCT: f64 = 10.0;
/// A busy device whose SM clock is below this share of its highest is throttled.
pub const THROTTLE_CLOCK: f64 = 0.9;
/// Utilisation points below the peers' median that make a device the odd one out.
pub const OUTLIER_GAP_PCT: f64 = 25.0;
/// Degrees above the peers' median temperature that make a device hot.
pub const HOT_GAP_C: f64 = 8.0;
/// Utilisation samples kept per device (the device panel's history).
pub const HISTORY: usize = 256;

/// A device's identity: the source it came from, its host, its name.
pub type DeviceKey = (usize, Option<String>, String);

/// One device's state.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Device {
    /// Latest value of each metric.
    pub latest: BTreeMap<&'static str, f64>,
    /// Highest SM clock seen while busy.
    pub max_clock_mhz: f64,
    /// Was busy at some point.
    pub was_busy: bool,
    /// Utilisation samples, oldest first (the last [`HISTORY`]).
    #[serde(skip)]
    pub util: std::collections::VecDeque<f64>,
    /// Utilisation samples seen.
    pub samples: u64,
    #[serde(skip)]
    runs: [u32; 4],
}

/// The devices seen so far.
#[derive(Debug, Default)]
pub struct Devices {
    /// By (source, host, name).
    pub by: BTreeMap<DeviceKey, Device>,
}

/// The four conditions, indexing `Device::runs`.
const IDLE: usize = 0;
const THROTTLE: usize = 1;
const OUTLIER: usize = 2;
const HOT: usize = 3;

impl Devices {
    /// Takes one sample of source `source`; returns the alerts it raised.
    pub fn add(&mut self, source: usize, s: &Sample) -> Vec<Alert> {
        let key = (source, s.host.clone(), s.device.clone());
        let d = self.by.entry(key.clone()).or_default();
        for &(m, x) in &s.metrics {
            d.latest.insert(m, x);
        }
        // Exporters send one metric per line: a device is judged on its utilisation lines,
        // with the latest of everything else.
        let Some(util) = s.metrics.iter().find(|m| m.0 == "util_pct").map(|m| m.1) else {
            return Vec::new();
        };
        d.samples += 1;
        d.util.push_back(util);
        if d.util.len() > HISTORY {
            d.util.pop_front();
        }
        let busy = util >= BUSY_UTIL_PCT;
        d.was_busy |= busy;
        let clock = d.latest.get("sm_clock_mhz").copied();
        if busy {
            d.max_clock_mhz = d.max_clock_mhz.max(clock.unwrap_or(0.0));
        }
        let temp = d.latest.get("temp_c").copied();
        // Hysteresis: once told, a device stays hot until it is within half the gap, so a
        // temperature that wavers at the threshold is one episode.
        let gap = if d.runs[HOT] >= SUSTAIN {
            HOT_GAP_C / 2.0
        } else {
            HOT_GAP_C
        };
        let peers = self.peers_median(&key, "util_pct");
        let hot = temp.and_then(|t| {
            let (median, n) = self.peers_median(&key, "temp_c")?;
            (t >= median + gap).then_some(Pattern::Hot {
                temp_c: t,
                peers_temp_c: median,
                peers: n,
                samples: SUSTAIN as u64,
            })
        });
        let d = self.by.get_mut(&key).expect("inserted above");
        let name = label(&key);
        let mut out = Vec::new();
        if let Some(p) = sustain(d, IDLE, idle(d, util)) {
            out.push(alert("device_idle", &name, p));
        }
        if let Some(p) = sustain(d, THROTTLE, throttled(d, util, clock)) {
            out.push(alert("device_throttling", &name, p));
        }
        let odd = peers.and_then(|(median, n)| {
            (median >= BUSY_UTIL_PCT && util <= median - OUTLIER_GAP_PCT).then_some(
                Pattern::OddOneOut {
                    util_pct: util,
                    peers_util_pct: median,
                    peers: n,
                    samples: SUSTAIN as u64,
                },
            )
        });
        if let Some(p) = sustain(d, OUTLIER, odd) {
            out.push(alert("device_outlier", &name, p));
        }
        if let Some(p) = sustain(d, HOT, hot) {
            out.push(alert("device_hot", &name, p));
        }
        out
    }

    /// The median latest `metric` of the other devices of the same source and host, and
    /// how many there are (at least two, or no comparison).
    fn peers_median(&self, key: &DeviceKey, metric: &str) -> Option<(f64, usize)> {
        // Keys sort by (source, host, name): the peers are one contiguous range.
        let first = (key.0, key.1.clone(), String::new());
        let mut u: Vec<f64> = self
            .by
            .range(first..)
            .take_while(|(k, _)| k.0 == key.0 && k.1 == key.1)
            .filter(|(k, _)| k.2 != key.2)
            .filter_map(|(_, d)| d.latest.get(metric).copied())
            .collect();
        if u.len() < 2 {
            return None;
        }
        u.sort_by(f64::total_cmp);
        Some((crate::analysis::stats::median_f64(&u)?, u.len()))
    }
}

/// `host/GPU 3`, or the device name alone.
pub fn label(key: &DeviceKey) -> String {
    match &key.1 {
        Some(h) => format!("{h}/{}", key.2),
        None => key.2.clone(),
    }
}

/// Idle with memory held, on a device that was busy before.
fn idle(d: &Device, util: f64) -> Option<Pattern> {
    let (held, unit) = if let Some(&mib) = d.latest.get("mem_used_mib") {
        (mib >= HELD_MIB, mib)
    } else {
        let pct = d.latest.get("mem_pct").copied()?;
        (pct >= HELD_PCT, pct)
    };
    (d.was_busy && util <= IDLE_UTIL_PCT && held).then(|| Pattern::IdleMemoryHeld {
        util_pct: util,
        memory: unit,
        memory_unit: if d.latest.contains_key("mem_used_mib") {
            "MiB"
        } else {
            "%"
        },
        samples: SUSTAIN as u64,
    })
}

/// Violation time reported, or a busy device below [`THROTTLE_CLOCK`] of its highest clock.
fn throttled(d: &Device, util: f64, clock: Option<f64>) -> Option<Pattern> {
    let violation = d.latest.get("power_violation_pct").copied().unwrap_or(0.0)
        + d.latest.get("thermal_violation").copied().unwrap_or(0.0);
    let slow_clock = clock
        .filter(|&c| util >= BUSY_UTIL_PCT && c < THROTTLE_CLOCK * d.max_clock_mhz)
        .is_some();
    (violation > 0.0 || slow_clock).then(|| Pattern::Throttled {
        clock_mhz: clock.unwrap_or(0.0),
        max_clock_mhz: d.max_clock_mhz,
        violation_pct: violation,
        power_w: d.latest.get("power_w").copied(),
        temp_c: d.latest.get("temp_c").copied(),
        samples: SUSTAIN as u64,
    })
}

/// Counts consecutive samples of condition `i`; returns its pattern the moment it has held
/// for [`SUSTAIN`] samples (once per episode).
fn sustain(d: &mut Device, i: usize, now: Option<Pattern>) -> Option<Pattern> {
    match now {
        None => {
            d.runs[i] = 0;
            None
        }
        Some(p) => {
            d.runs[i] += 1;
            (d.runs[i] == SUSTAIN).then_some(p)
        }
    }
}

fn alert(rule: &'static str, device: &str, p: Pattern) -> Alert {
    Alert {
        devices: vec![device.to_string()],
        hosts: Vec::new(),
        ..Alert::about_ranks(rule, p, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(dev: &str, m: &[(&'static str, f64)]) -> Sample {
        Sample {
            device: dev.into(),
            host: None,
            at_ns: None,
            metrics: m.to_vec(),
        }
    }

    fn feed(d: &mut Devices, rounds: &[[f64; 3]], extra: &[(&'static str, f64)]) -> Vec<Alert> {
        let mut out = Vec::new();
        for r in rounds {
            for (i, &u) in r.iter().enumerate() {
                let mut m = vec![("util_pct", u), ("mem_used_mib", 30_000.0)];
                if i == 2 {
                    m.extend_from_slice(extra);
                }
                out.extend(d.add(0, &s(&format!("GPU {i}"), &m)));
            }
        }
        out
    }

    #[test]
    fn an_idle_device_holding_memory_is_alerted_once_after_five_samples() {
        let mut d = Devices::default();
        // Busy for 3 rounds, then GPU 2 drops to 0% for 6 rounds while 0 and 1 stay busy.
        let mut rounds = vec![[95.0, 96.0, 94.0]; 3];
        rounds.extend(vec![[95.0, 96.0, 0.0]; 6]);
        let a = feed(&mut d, &rounds, &[]);
        let rules: Vec<_> = a.iter().map(|x| x.rule).collect();
        // Both conditions hold from the 4th round: idle (0 ≤ 5%, 30 GB held) and odd one out
        // (0 vs the peers' 95.5); each alerted once, at its 5th sample.
        assert_eq!(rules, ["device_idle", "device_outlier"]);
        assert_eq!(a[0].devices, ["GPU 2"]);
        assert_eq!(
            a[1].pattern,
            Pattern::OddOneOut {
                util_pct: 0.0,
                peers_util_pct: 95.5,
                peers: 2,
                samples: 5
            }
        );
    }

    #[test]
    fn a_device_hotter_than_its_peers_is_one_episode_while_it_wavers() {
        let mut d = Devices::default();
        let mut a = Vec::new();
        // GPU 2 runs 10 °C over its peers, then wavers 6–9 °C over (within the hysteresis),
        // then cools to 2 °C over and heats again: two episodes.
        for gap in [
            10.0, 10.0, 10.0, 10.0, 10.0, 6.0, 9.0, 6.0, 2.0, 10.0, 10.0, 10.0, 10.0, 10.0,
        ] {
            for (i, t) in [60.0, 62.0, 61.0 + gap].iter().enumerate() {
                let m = [("util_pct", 95.0), ("temp_c", *t)];
                a.extend(d.add(0, &s(&format!("GPU {i}"), &m)));
            }
        }
        let hot: Vec<_> = a.iter().filter(|x| x.rule == "device_hot").collect();
        assert_eq!(hot.len(), 2, "{a:?}");
        assert_eq!(hot[0].devices, ["GPU 2"]);
        assert_eq!(
            hot[0].pattern,
            Pattern::Hot {
                temp_c: 71.0,
                peers_temp_c: 61.0,
                peers: 2,
                samples: 5
            }
        );
    }

    #[test]
    fn a_busy_device_below_nine_tenths_of_its_clock_is_throttled() {
        let mut d = Devices::default();
        let mut a = Vec::new();
        for clock in [
            1980.0, 1980.0, 1700.0, 1700.0, 1700.0, 1700.0, 1700.0, 1700.0,
        ] {
            a.extend(d.add(
                0,
                &s("GPU 0", &[("util_pct", 99.0), ("sm_clock_mhz", clock)]),
            ));
        }
        assert_eq!(a.len(), 1);
        let Pattern::Throttled {
            clock_mhz,
            max_clock_mhz,
            ..
        } = a[0].pattern
        else {
            panic!("{a:?}")
        };
        assert_eq!((clock_mhz, max_clock_mhz), (1700.0, 1980.0));
        // A device never busy, idle with memory: not alerted (a job starting up).
        let mut d = Devices::default();
        let quiet: Vec<Alert> = (0..8)
            .flat_map(|_| d.add(0, &s("GPU 0", &[("util_pct", 0.0), ("mem_pct", 32.0)])))
            .collect();
        assert!(quiet.is_empty());
    }
}
