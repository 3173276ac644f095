//! On-demand analyses a view can wait on — a step's critical path across ranks, an
//! operator's statistics over a huge rank, a step's timeline — as tasks. In the terminal UI
//! they run on the shell's background threads, so keys keep working and the view says
//! "computing…" until the result arrives; snapshots and tests compute them inline, which
//! keeps them deterministic.

use super::args::{self, Args};
use super::{Browser, KeptTimeline};
use crate::analysis::critical_path::{self, CriticalPath, Window};
use crate::analysis::operator::{self, OpDetail};
use crate::analysis::timeline::{self, Timeline};
use crate::analysis::whatif::{self, bands::StepBands};
use crate::model::{EventRef, RankIx, StepNo, Sym};
use crate::session::Session;
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;

/// A piece of work, also its identity while pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// The critical path of a step.
    Critical(StepNo),
    /// An operator's detail, with the critical-path share of a step.
    Op(Sym, StepNo),
    /// A step's timeline (cluster, or one rank's lanes): prefetched for `[` and `]`.
    Timeline(Option<RankIx>, StepNo),
    /// One event's args (read again from its input): the inspector's band.
    Args(EventRef),
    /// A step measured and replayed with a finding's fix (index), or the ideal (past them).
    Replay(StepNo, usize),
}

/// A finished piece of work.
pub enum Done {
    /// A step's critical path.
    Critical(StepNo, Option<CriticalPath>),
    /// An operator's detail and args.
    Op(Sym, StepNo, Box<OpDetail>, Args),
    /// A step's timeline.
    Timeline(Option<RankIx>, StepNo, Box<Timeline>),
    /// An event's args.
    Args(EventRef, Args),
    /// A step's replay bands.
    Replay(StepNo, usize, Option<Box<StepBands>>),
}

impl Done {
    /// The task it finishes.
    pub fn task(&self) -> Task {
        match self {
            Done::Critical(s, _) => Task::Critical(*s),
            Done::Op(o, s, ..) => Task::Op(*o, *s),
            Done::Timeline(r, s, _) => Task::Timeline(*r, *s),
            Done::Args(e, _) => Task::Args(*e),
            Done::Replay(s, k, _) => Task::Replay(*s, *k),
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
        Task::Args(e) => vec![Done::Args(e, args::read(data, Some(e)))],
        Task::Replay(step, k) => vec![Done::Replay(step, k, replay(data, step, k).map(Box::new))],
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

/// Ranks the what-if pane draws (the latest-ending first); each takes two rows.
pub const RANKS_DRAWN: usize = 32;

/// Step `step` measured and replayed with finding `k`'s fix (the ideal past the findings).
fn replay(data: &Session, step: StepNo, k: usize) -> Option<StepBands> {
    let (job, an) = (&data.loaded.job, &data.analysis);
    let fixes = match an.findings.get(k) {
        Some(f) => vec![whatif::savings::fix_for(f)?],
        None => vec![whatif::Fix::Ideal],
    };
    let cx = whatif::Context::of(job, an);
    whatif::bands::bands(job, &an.comm, &cx, step, &fixes, RANKS_DRAWN)
}

/// Timelines kept for revisits (a 1024-rank step is ~25 MB of bands).
const KEPT_TIMELINES: usize = 5;

impl Browser {
    /// Makes sure a task's result is (or will be) in the caches: started in the background
    /// when the shell runs background work, else computed here.
    pub fn need(&mut self, task: Task, ctx: &Ctx<UiMsg>) {
        let cached = match task {
            Task::Critical(s) => self.shared.critical.contains_key(&s),
            Task::Op(o, s) => self
                .panes
                .operator
                .detail
                .as_ref()
                .is_some_and(|c| (c.0, c.1) == (o, s)),
            Task::Timeline(r, s) => self
                .shared
                .timelines
                .iter()
                .any(|t| (t.rank, t.step, t.more) == (r, s, 0)),
            Task::Args(e) => self
                .panes
                .timeline
                .band_args
                .as_ref()
                .is_some_and(|a| a.0 == e),
            Task::Replay(s, k) => self.panes.whatif.replay.contains_key(&(s, k)),
        };
        if cached {
            return;
        }
        let cp = match task {
            Task::Op(_, s) => self.shared.critical.get(&s).cloned(),
            Task::Critical(_) | Task::Timeline(..) | Task::Args(_) | Task::Replay(..) => None,
        };
        match &ctx.spawner {
            Some(sp) => {
                if self.pending.insert(task) {
                    let data = self.data.clone();
                    sp.spawn(move || {
                        compute(&data, task, cp)
                            .into_iter()
                            .map(UiMsg::Work)
                            .collect()
                    });
                }
            }
            None => {
                for d in compute(&self.data, task, cp) {
                    self.store(d);
                }
            }
        }
    }

    /// Takes a finished result into the caches.
    pub(super) fn store(&mut self, d: Done) {
        match d {
            Done::Critical(s, cp) => {
                self.shared.critical.insert(s, cp);
            }
            Done::Op(o, s, detail, args) => {
                self.panes.operator.detail = Some((o, s, *detail));
                self.panes.operator.args = Some(args);
            }
            Done::Args(e, args) => self.panes.timeline.band_args = Some((e, args)),
            Done::Replay(s, k, bands) => {
                self.panes.whatif.replay.insert((s, k), bands.map(|b| *b));
            }
            Done::Timeline(rank, step, t) => {
                let kept = &mut self.shared.timelines;
                if !kept
                    .iter()
                    .any(|k| (k.rank, k.step, k.more) == (rank, step, 0))
                {
                    // Prefetched: kept at the old end, the current one stays last.
                    if kept.len() >= KEPT_TIMELINES {
                        kept.remove(0);
                    }
                    let timeline = *t;
                    kept.insert(
                        0,
                        KeptTimeline {
                            rank,
                            step,
                            more: 0,
                            timeline,
                        },
                    );
                }
            }
        }
    }

    /// True while `task` runs in the background.
    pub fn is_pending(&self, task: Task) -> bool {
        self.pending.contains(&task)
    }

    /// True while any background work runs.
    pub fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Keeps a freshly built timeline as the current one.
    pub fn keep_timeline(&mut self, rank: Option<RankIx>, step: StepNo, more: usize, t: Timeline) {
        let cached = &mut self.shared.timelines;
        if cached.len() >= KEPT_TIMELINES {
            cached.remove(0);
        }
        cached.push(KeptTimeline {
            rank,
            step,
            more,
            timeline: t,
        });
    }
}
