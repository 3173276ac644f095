//! On-demand analyses a view can wait on — a step's critical path across ranks, an
//! operator's statistics over a huge rank, a step's timeline — as tasks. In the terminal UI
//! they run on the shell's background threads, so keys keep working and the view says
//! "computing…" until the result arrives; snapshots and tests compute them inline, which
//! keeps them deterministic.

use super::args::{self, Args};
use crate::analysis::critical_path::{self, CriticalPath, Window};
use crate::analysis::operator::{self, OpDetail};
use crate::analysis::timeline::{self, Timeline};
use crate::model::{RankIx, StepNo, Sym};
use crate::session::Session;

/// A piece of work, also its identity while pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// The critical path of a step.
    Critical(StepNo),
    /// An operator's detail, with the critical-path share of a step.
    Op(Sym, StepNo),
    /// A step's timeline (cluster, or one rank's lanes): prefetched for `[` and `]`.
    Timeline(Option<RankIx>, StepNo),
}

/// A finished piece of work.
pub enum Done {
    /// A step's critical path.
    Critical(StepNo, Option<CriticalPath>),
    /// An operator's detail and args.
    Op(Sym, StepNo, Box<OpDetail>, Args),
    /// A step's timeline.
    Timeline(Option<RankIx>, StepNo, Box<Timeline>),
}

impl Done {
    /// The task it finishes.
    pub fn task(&self) -> Task {
        match self {
            Done::Critical(s, _) => Task::Critical(*s),
            Done::Op(o, s, ..) => Task::Op(*o, *s),
            Done::Timeline(r, s, _) => Task::Timeline(*r, *s),
        }
    }
}

/// The timeline of a step: the cluster's, or one rank's lanes.
pub fn build_timeline(data: &Session, rank: Option<RankIx>, step: StepNo) -> Timeline {
    let (job, an) = (&data.loaded.job, &data.analysis);
    let (spans, offsets) = (&an.spans, &an.comm.offsets);
    match rank {
        Some(r) => timeline::lanes(job, spans, offsets, r, step),
        None => timeline::cluster(job, spans, offsets, step),
    }
}

/// Computes a task (on whatever thread calls it). `cp` is the step's critical path when
/// already known (operator tasks need it for the share).
pub fn compute(data: &Session, task: Task, cp: Option<Option<CriticalPath>>) -> Vec<Done> {
    let (job, an) = (&data.loaded.job, &data.analysis);
    let path = |step| critical_path::critical_path(job, &an.comm, &Window::Step(step));
    match task {
        Task::Critical(step) => vec![Done::Critical(step, path(step))],
        Task::Timeline(rank, step) => {
            let t = build_timeline(data, rank, step);
            vec![Done::Timeline(rank, step, Box::new(t))]
        }
        Task::Op(op, step) => {
            let mut out = Vec::new();
            let cp = cp.unwrap_or_else(|| {
                let p = path(step);
                out.push(Done::Critical(step, p.clone()));
                p
            });
            let d = operator::detail(job, op, None, &an.roofline, cp.as_ref());
            let args = args::read(data, d.longest);
            out.push(Done::Op(op, step, Box::new(d), args));
            out
        }
    }
}
