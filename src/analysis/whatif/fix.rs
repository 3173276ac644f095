//! Fixes as transforms of the replay's weights (docs/metrics.md, "Replay"): the cause a
//! finding names taken away, the step replayed, the step time it would take. Only the
//! data-loader transform is built so far.

use super::replay::Baseline;
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::{Window, build_graph};
use crate::model::{Job, StepNo};
use crate::time::Ns;

/// A change to the measured step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    /// Data-loader ranges (`enumerate(DataLoader)#…`) take no time: batches are ready.
    DataLoader,
}

/// A step's time measured and predicted with a fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prediction {
    /// The step.
    pub step: StepNo,
    /// Its time on the graph (latest node − earliest, over ranks), as measured.
    pub measured_ns: Ns,
    /// The same, replayed with the fix.
    pub predicted_ns: Ns,
}

/// Step `step` replayed with `fix` applied.
pub fn predict(job: &Job, comm: &Comm, step: StepNo, fix: Fix) -> Option<Prediction> {
    let (g, _) = build_graph(job, comm, &Window::Step(step))?;
    let base = Baseline::of(&g, job, comm);
    let mut w = base.w.clone();
    for (k, e) in g.edges.iter().enumerate() {
        let name = job.rank(e.rank).events.name.get(e.event.index()).copied();
        let hit = match fix {
            Fix::DataLoader => name.is_some_and(|n| job.role(n).data_loader),
        };
        if hit {
            if let Some(x) = w[k].as_mut() {
                *x = 0;
            }
        }
    }
    let replayed = base.replay(&g, &w)?;
    let start = base.at.iter().copied().min()?;
    Some(Prediction {
        step,
        measured_ns: base.at.iter().copied().max()?.saturating_sub(start),
        predicted_ns: replayed.iter().copied().max()?.saturating_sub(start),
    })
}
