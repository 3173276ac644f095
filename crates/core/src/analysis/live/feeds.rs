//! The records other than steps, each to the part of the live state it feeds: events,
//! straggler reports, monitor rows (placed on the step axis), timer rows (rank spread, slow
//! rank, phases) and DeepSpeed's comms rows.

use super::{Alert, Live, MAX_DEVICE_STEPS, Pattern, STRAGGLER_SPREAD};
use crate::model::live::{CommRow, EventKind, Extreme, Sample, TimerRow};
use crate::time::Ns;

impl Live {
    /// An event, at its step or the last step its rank's series saw.
    pub(super) fn event(
        &mut self,
        source: usize,
        rank: Option<u32>,
        event: EventKind,
        step: Option<u64>,
    ) -> Vec<Alert> {
        let at = step.or_else(|| {
            let last = self
                .series
                .iter()
                .filter(|(k, _)| k.source == source && k.rank == rank);
            last.filter_map(|(_, s)| s.last.map(|l| l.step)).max()
        });
        self.events.push_back((event, at));
        if self.events.len() > 256 {
            self.events.pop_front();
        }
        Vec::new()
    }

    /// A straggler report: the `MxRtt` rank when max/min exceed [`STRAGGLER_SPREAD`].
    pub(super) fn straggler(&mut self, extremes: &[Extreme]) -> Vec<Alert> {
        let rtt = |w: &str| {
            extremes
                .iter()
                .find(|e| e.metric == "Rtt" && e.which == w)
                .map(|e| (e.value, e.rank))
        };
        match (rtt("min"), rtt("max")) {
            (Some(lo), Some(hi)) if lo.0 > 0.0 && hi.0 / lo.0 - 1.0 > STRAGGLER_SPREAD => {
                self.slow_rank(hi.1)
            }
            _ => Vec::new(),
        }
    }

    /// A monitor row: device alerts, placed on the step running at the row's time, and the
    /// device's utilisation by step.
    pub(super) fn device(&mut self, source: usize, sample: &Sample) -> Vec<Alert> {
        let mut out = self.devices.add(source, sample);
        out.extend(self.dips.add(source, sample));
        let step = sample.at_ns.and_then(|at| self.clock.step_at(at));
        for a in &mut out {
            a.steps.extend(step);
        }
        let util = sample.metrics.iter().find(|m| m.0 == "util_pct");
        if let (Some(n), Some(&(_, u))) = (step, util) {
            let label = match &sample.host {
                Some(h) => format!("{h}/{}", sample.device),
                None => sample.device.clone(),
            };
            if self.device_steps.len() < MAX_DEVICE_STEPS || self.device_steps.contains_key(&label)
            {
                let idle = 1000 - (u.clamp(0.0, 100.0) * 10.0).round() as Ns;
                self.device_steps
                    .entry(label)
                    .or_default()
                    .push(n, idle, false);
            }
        }
        self.keep(&out);
        out
    }

    /// A Megatron timer row: a phase time; a `minmax` spread; an `all` block's slow rank.
    pub(super) fn timer(&mut self, source: usize, row: &TimerRow) -> Vec<Alert> {
        self.phases.observe(source, &row.name, row.max_ns);
        if let Some(s) = self.timers.spread(row) {
            let pattern = Pattern::Spread {
                timer: s.timer,
                min_ns: s.min_ns,
                spread_max_ns: s.max_ns,
                blocks: s.times,
            };
            let a = Alert::about_ranks("rank_spread", pattern, Vec::new());
            self.keep(std::slice::from_ref(&a));
            return vec![a];
        }
        match self.timers.add(row) {
            Some(rank) => self.slow_rank(rank),
            None => Vec::new(),
        }
    }

    /// A comms-logger row: the small messages it shows waiting.
    pub(super) fn comm(&mut self, row: &CommRow) -> Vec<Alert> {
        let out: Vec<Alert> = self
            .comms
            .add(row)
            .into_iter()
            .map(|w| {
                let pattern = Pattern::CommWait {
                    op: w.small.op,
                    bytes: w.small.bytes,
                    calls: w.small.calls,
                    avg_ns: w.small.avg_ns,
                    total_ns: w.small.total_ns,
                    vs_bytes: w.big.bytes,
                    vs_avg_ns: w.big.avg_ns,
                };
                Alert::about_ranks("comm_wait", pattern, Vec::new())
            })
            .collect();
        self.keep(&out);
        out
    }
}
