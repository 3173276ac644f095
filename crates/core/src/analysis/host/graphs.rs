//! CUDA / HIP graphs (docs/metrics.md, "Graph capture"): a capture window runs from a
//! thread's `BeginCapture` to its `EndCapture`; kernel launches inside it are recorded into
//! a graph, not run, so the device idles there by design — that idle time is capture, not a
//! host that is too slow to launch. Graph launches are replays.

use super::RankStep;
use crate::model::{GraphCall, Job, Kind, LaneSide, Rank};
use crate::time::Ns;
use serde::Serialize;

/// Graph capture and replay over the ranks and steps in scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Graphs {
    /// Capture windows (BeginCapture … EndCapture on one thread).
    pub captures: u64,
    /// Σ capture window lengths.
    pub capture_ns: Ns,
    /// Σ over ranks of the time inside capture windows with every device lane idle.
    pub capture_idle_ns: Ns,
    /// Kernel launch calls inside capture windows (recorded, not run).
    pub captured_launches: u64,
    /// Graph launches (replays).
    pub replays: u64,
    /// Where captures happened (rank order, then step). Not in the JSON.
    #[serde(skip)]
    pub at: Vec<RankStep>,
}

impl Graphs {
    /// True when the trace captures or replays graphs: advice to adopt graphs does not apply.
    pub fn in_use(&self) -> bool {
        self.captures > 0 || self.replays > 0
    }

    /// Adds another rank's counts.
    pub fn merge(&mut self, o: Graphs) {
        self.captures += o.captures;
        self.capture_ns += o.capture_ns;
        self.capture_idle_ns += o.capture_idle_ns;
        self.captured_launches += o.captured_launches;
        self.replays += o.replays;
        self.at.extend(o.at);
    }
}

/// One rank's graph calls among the events `ok` accepts, and its capture windows.
pub fn scan(job: &Job, rank: &Rank, ok: &dyn Fn(usize) -> bool) -> (Graphs, Vec<(Ns, Ns)>) {
    let ev = &rank.events;
    let mut g = Graphs::default();
    let mut windows = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut open: Option<usize> = None;
        for i in rank.lane_events(l as u16) {
            if ev.kind[i] != Kind::Launch || !ok(i) {
                continue;
            }
            let role = job.role(ev.name[i]);
            match (role.graph, open) {
                (Some(GraphCall::BeginCapture), _) => open = Some(i),
                (Some(GraphCall::EndCapture), Some(b)) => {
                    windows.push((ev.start[b], ev.end(i)));
                    g.captures += 1;
                    g.capture_ns += ev.end(i) - ev.start[b];
                    if let Some(step) = rank.step_of(b) {
                        g.at.push(RankStep {
                            rank: rank.id,
                            step,
                        });
                    }
                    open = None;
                }
                (Some(GraphCall::Launch), _) => g.replays += 1,
                (None, Some(_)) if role.kernel_launch => g.captured_launches += 1,
                _ => {}
            }
        }
    }
    g.at.sort_unstable_by_key(|x| x.step);
    g.at.dedup();
    (g, windows)
}
