//! Rank step spans (docs/metrics.md, "Step window"): contiguous, non-overlapping windows that end when the device
//! has finished the step's work (device-bound) or when the host starts the next step
//! (host-bound), like a synchronous step timer.
//!
//! With D_N the latest end of device work launched in steps ≤ N, the boundary of step N is
//! B_N = max(host start of N, D_{N−1}) (first step: max(its host start, the end of device work
//! launched before the trace window)). Span N = [B_N, B_{N+1}); the last step:
//! [B_N, max(host end of N, D_N)].

use crate::model::{NO_STEP, Rank, StepNo};
use crate::time::Ns;

/// One step of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSpan {
    /// Index into `Rank::steps`.
    pub index: u32,
    /// The step number (`ProfilerStep#N`).
    pub number: StepNo,
    /// B_N, the span's start (docs/metrics.md, "Step span").
    pub start: Ns,
    /// B_{N+1}, or the end of the last step.
    pub end: Ns,
    /// D_N: latest end of device work launched in steps ≤ N (`None` without device work).
    pub device_end: Option<Ns>,
}

impl StepSpan {
    /// Length of the span.
    pub fn len(&self) -> Ns {
        self.end - self.start
    }

    /// True for a zero-length span.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The step spans of a rank, in step order.
pub fn rank_spans(rank: &Rank) -> Vec<StepSpan> {
    let n = rank.steps.len();
    // Latest end of device work per launching step, then the running maximum (D_N).
    let mut dmax: Vec<Option<Ns>> = vec![None; n];
    let ev = &rank.events;
    for i in 0..ev.len() {
        let s = ev.step[i];
        if s != NO_STEP && ev.kind[i].is_device_work() {
            let e = ev.end(i);
            let slot = &mut dmax[s as usize];
            *slot = Some(slot.map_or(e, |m| m.max(e)));
        }
    }
    let mut d: Vec<Option<Ns>> = Vec::with_capacity(n);
    let mut running: Option<Ns> = None;
    for m in dmax {
        running = match (running, m) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        d.push(running);
    }
    // Work queued before the trace window is the unprofiled previous step's tail: the first
    // step starts when the device has finished it, as every later step starts when the
    // device has finished the step before.
    let pre = rank.pre_window.end;
    let boundary = |k: usize| -> Ns {
        let host = rank.steps[k].start;
        let before = if k == 0 { pre } else { d[k - 1] };
        before.map_or(host, |dv| dv.max(host))
    };
    (0..n)
        .map(|k| {
            let start = boundary(k);
            let end = if k + 1 < n {
                boundary(k + 1)
            } else {
                let host_end = rank.steps[k].end;
                d[k].map_or(host_end, |dv| dv.max(host_end))
            };
            StepSpan {
                index: k as u32,
                number: rank.steps[k].number,
                // The pre-window tail can outlast a first step with no device work.
                start: start.min(end),
                end,
                device_end: d[k],
            }
        })
        .collect()
}
