//! Background work: the on-demand analyses a view can wait on (a step's critical path across
//! ranks, an operator's statistics over a huge rank) run on their own thread in the terminal
//! UI, so keys keep working; the view says "computing…" until the result arrives. Snapshots
//! and tests compute synchronously (no worker), which keeps them deterministic.

use super::app::Data;
use crate::analysis::critical_path::{self, CriticalPath, Window};
use crate::analysis::operator::{self, OpDetail};
use crate::analysis::timeline::{self, Timeline};
use crate::model::Sym;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// A piece of work, also its identity while pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// The critical path of a step.
    Critical(u32),
    /// An operator's detail, with the critical-path share of a step.
    Op(Sym, u32),
    /// A step's timeline (cluster, or one rank's lanes): prefetched for `[` and `]`.
    Timeline(Option<usize>, u32),
}

/// Args of an operator's longest occurrence, or why they are not available.
pub type Args = Result<Vec<(String, String)>, String>;

/// A finished piece of work.
pub enum Done {
    /// A step's critical path.
    Critical(u32, Option<CriticalPath>),
    /// An operator's detail and args.
    Op(Sym, u32, Box<OpDetail>, Args),
    /// A step's timeline.
    Timeline(Option<usize>, u32, Box<Timeline>),
}

/// Runs tasks on threads and hands back results.
pub struct Worker {
    tx: Sender<Done>,
    rx: Receiver<Done>,
    pending: HashSet<Task>,
}

impl Default for Worker {
    fn default() -> Self {
        let (tx, rx) = channel();
        Worker {
            tx,
            rx,
            pending: HashSet::new(),
        }
    }
}

/// Computes a task (on whatever thread calls it). `cp` is the step's critical path when
/// already known (operator tasks need it for the share).
pub fn compute(data: &Data, task: Task, cp: Option<Option<CriticalPath>>) -> Vec<Done> {
    let (job, an) = (&data.loaded.job, &data.analysis);
    let path = |step| critical_path::critical_path(job, &an.comm, &Window::Step(step));
    match task {
        Task::Critical(step) => vec![Done::Critical(step, path(step))],
        Task::Timeline(rank, step) => {
            let (spans, offsets) = (&an.spans, &an.comm.offsets);
            let t = match rank {
                Some(r) => timeline::lanes(job, spans, offsets, r, step),
                None => timeline::cluster(job, spans, offsets, step),
            };
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
            let args = super::args::read(&data.loaded, d.longest);
            out.push(Done::Op(op, step, Box::new(d), args));
            out
        }
    }
}

impl Worker {
    /// Starts `task` on a thread unless it is already running.
    pub fn start(&mut self, data: &Arc<Data>, task: Task, cp: Option<Option<CriticalPath>>) {
        if !self.pending.insert(task) {
            return;
        }
        let (data, tx) = (data.clone(), self.tx.clone());
        std::thread::spawn(move || {
            for d in compute(&data, task, cp) {
                let _ = tx.send(d);
            }
        });
    }

    /// True while `task` runs.
    pub fn is_pending(&self, task: Task) -> bool {
        self.pending.contains(&task)
    }

    /// True while anything runs.
    pub fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Results that arrived since the last call.
    pub fn finished(&mut self) -> Vec<Done> {
        let done: Vec<Done> = self.rx.try_iter().collect();
        for d in &done {
            match d {
                Done::Critical(s, _) => self.pending.remove(&Task::Critical(*s)),
                Done::Op(o, s, ..) => self.pending.remove(&Task::Op(*o, *s)),
                Done::Timeline(r, s, _) => self.pending.remove(&Task::Timeline(*r, *s)),
            };
        }
        done
    }
}
