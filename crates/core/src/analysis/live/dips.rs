//! All-device dips (docs/metrics.md "Live: devices"): the devices of one host (or of a
//! stream without hosts) read in rounds — one sample each, a round ends when a device comes
//! again or the timestamp moves — and a round whose mean utilisation falls to
//! [`DIP_SHARE`] of the usual busy level while every device took part is a dip: the job
//! paused as a whole (a data stall, a checkpoint, a hang that cleared, interference). One
//! alert per dip, when it ends, with its depth, length and time span; a dip that lasts to
//! the end of the stream is the run finishing, not a dip.

use super::devices::BUSY_UTIL_PCT;
use super::{Alert, Pattern};
use crate::analysis::stats::median_f64;
use crate::model::live::Sample;
use crate::time::Ns;
use std::collections::{BTreeMap, VecDeque};

/// A round at or below this share of the usual level is a dip.
pub(super) const DIP_SHARE: f64 = 0.5;
/// The usual level is a median over this many busy rounds …
pub(super) const USUAL_ROUNDS: usize = 64;
/// … once this many exist.
pub(super) const MIN_USUAL: usize = 8;
/// Hosts (groups) kept apart, bounded.
pub(super) const MAX_GROUPS: usize = 1024;
/// Devices of one round, bounded.
pub(super) const MAX_DEVICES: usize = 4096;

/// The dips of every group.
#[derive(Debug, Default)]
pub(super) struct Dips {
    groups: BTreeMap<(usize, Option<String>), Group>,
}

#[derive(Debug, Default)]
struct Group {
    round: BTreeMap<String, f64>,
    round_at: Option<Ns>,
    usual: VecDeque<f64>,
    /// Devices a full round holds (the most seen in one).
    width: usize,
    open: Option<Episode>,
}

#[derive(Debug, Clone)]
struct Episode {
    low: f64,
    usual: f64,
    rounds: u64,
    from: Option<Ns>,
    to: Option<Ns>,
    devices: Vec<String>,
}

impl Dips {
    /// Takes one sample of source `source`; returns the alert of a dip it ended.
    pub(super) fn add(&mut self, source: usize, s: &Sample) -> Option<Alert> {
        let util = s.metrics.iter().find(|m| m.0 == "util_pct")?.1;
        let key = (source, s.host.clone());
        if !self.groups.contains_key(&key) && self.groups.len() >= MAX_GROUPS {
            return None;
        }
        let g = self.groups.entry(key).or_default();
        let new_round = g.round.contains_key(&s.device)
            || (s.at_ns.is_some() && g.round_at.is_some() && s.at_ns != g.round_at);
        let told = if new_round { g.close_round() } else { None };
        if g.round.len() < MAX_DEVICES {
            g.round.insert(s.device.clone(), util);
        }
        g.round_at = s.at_ns;
        told.map(|p| dip_alert(p, s.host.as_deref()))
    }
}

impl Group {
    /// Judges the round that just ended; the dip it ended, if any.
    fn close_round(&mut self) -> Option<Episode> {
        let round = std::mem::take(&mut self.round);
        self.width = self.width.max(round.len());
        // A partial round (a device missing) says nothing of all devices.
        if round.len() < 2 || round.len() < self.width {
            return None;
        }
        let mean = round.values().sum::<f64>() / round.len() as f64;
        let usual = (self.usual.len() >= MIN_USUAL)
            .then(|| {
                let mut v: Vec<f64> = self.usual.iter().copied().collect();
                v.sort_by(f64::total_cmp);
                median_f64(&v)
            })
            .flatten();
        if let Some(usual) = usual.filter(|&u| mean <= u * DIP_SHARE) {
            let e = self.open.get_or_insert_with(|| Episode {
                low: mean,
                usual,
                rounds: 0,
                from: self.round_at,
                to: None,
                devices: round.keys().cloned().collect(),
            });
            e.low = e.low.min(mean);
            e.rounds += 1;
            e.to = self.round_at;
            return None;
        }
        if mean >= BUSY_UTIL_PCT {
            self.usual.push_back(mean);
            if self.usual.len() > USUAL_ROUNDS {
                self.usual.pop_front();
            }
        }
        self.open.take()
    }
}

fn dip_alert(e: Episode, host: Option<&str>) -> Alert {
    let devices = e
        .devices
        .iter()
        .map(|d| match host {
            Some(h) => format!("{h}/{d}"),
            None => d.clone(),
        })
        .collect();
    let pattern = Pattern::Dip {
        util_pct: e.low,
        usual_util_pct: e.usual,
        rounds: e.rounds,
        from_ns: e.from,
        to_ns: e.to,
    };
    Alert {
        devices,
        ..Alert::about_ranks("device_dip", pattern, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(d: &mut Dips, at: Ns, utils: &[f64]) -> Vec<Alert> {
        utils
            .iter()
            .enumerate()
            .filter_map(|(i, &u)| {
                d.add(
                    0,
                    &Sample {
                        device: format!("GPU {i}"),
                        host: None,
                        at_ns: Some(at),
                        metrics: vec![("util_pct", u)],
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_dip_of_all_devices_is_one_alert_when_it_ends_and_a_partial_one_is_none() {
        let mut d = Dips::default();
        let mut out = Vec::new();
        let mut at = 0;
        let mut go = |d: &mut Dips, u: [f64; 4], n: usize| {
            for _ in 0..n {
                at += 1_000_000_000;
                out.extend(round(d, at, &u));
            }
        };
        go(&mut d, [0.0; 4], 5); // start-up idle: no usual level yet
        go(&mut d, [98.0, 97.0, 99.0, 96.0], 20);
        go(&mut d, [98.0, 97.0, 10.0, 96.0], 2); // one device: not all
        go(&mut d, [20.0, 5.0, 10.0, 25.0], 2); // all: a dip of 2 rounds
        go(&mut d, [98.0, 97.0, 99.0, 96.0], 3);
        go(&mut d, [0.0; 4], 6); // the idle tail: the run ending, never told
        assert_eq!(out.len(), 1, "{out:?}");
        let Pattern::Dip {
            util_pct,
            usual_util_pct,
            rounds,
            from_ns,
            to_ns,
        } = out[0].pattern
        else {
            panic!("{out:?}")
        };
        // Mean 15 against a usual 97.5; rounds at 28 s and 29 s (each round's time is
        // known when the next starts).
        assert_eq!((util_pct, usual_util_pct, rounds), (15.0, 97.5, 2));
        assert_eq!(
            (from_ns, to_ns),
            (Some(28_000_000_000), Some(29_000_000_000))
        );
        assert_eq!(out[0].devices.len(), 4);
    }
}
