//! The what-if over the steps shown: each step replayed as measured, with every finding's
//! fix, with the ideal, and with each op type and candidate worker made ideal; summed into
//! per-step predictions and the slowdown decomposition.

use super::MAX_REPLAY_ERROR;
use super::fix::{Context, Fix};
use super::slowdown::{self, Part, Slowdown};
use super::step::StepReplay;
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::graph::Graph;
use crate::model::{Job, RankId, StepNo};
use crate::time::Ns;
use rayon::prelude::*;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// One step's replays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepWhatIf {
    /// The step.
    pub step: StepNo,
    /// Its time measured on the graph (latest node − earliest, over ranks).
    pub measured_ns: Ns,
    /// The same, replayed with the measured durations.
    pub replayed_ns: Ns,
    /// The largest |replayed − measured| rank end over the step time.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub replay_error: f64,
    /// The step time with every fix ([`Fix::Ideal`]): measured − what the ideal replay saves.
    pub ideal_ns: Ns,
    /// Per fix asked for (in order): measured − what its replay saves (`measured_ns` when
    /// the graph does not explain the step).
    #[serde(skip)]
    pub predicted_ns: Vec<Ns>,
    /// Per fix: whether it changed any of the step's durations (a fix of a rank that is not
    /// loaded, or of a collective the step lacks, changes none: the replay says nothing).
    #[serde(skip)]
    pub touched: Vec<bool>,
}

impl StepWhatIf {
    /// The graph explains the step: its replay error is at most [`MAX_REPLAY_ERROR`].
    pub fn explains(&self) -> bool {
        self.replay_error <= MAX_REPLAY_ERROR
    }

    /// What fix `k` saves in this step (0 when the graph does not explain it; never below 0:
    /// a fix that would slow the step down saves nothing).
    pub fn saves(&self, k: usize) -> Ns {
        self.predicted_ns
            .get(k)
            .map_or(0, |p| self.measured_ns.saturating_sub(*p).max(0))
    }
}

/// The what-if of a job over its steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WhatIf {
    /// Per step replayed, in step order.
    pub steps: Vec<StepWhatIf>,
    /// The decomposition over the steps the graph explains (`None`: none does).
    pub slowdown: Option<Slowdown>,
    /// Why no step was replayed, when the job cannot be ([`unreplayable`]).
    pub not_replayed: Option<String>,
}

impl WhatIf {
    /// The largest replay error over the steps.
    pub fn replay_error(&self) -> f64 {
        self.steps
            .iter()
            .map(|s| s.replay_error)
            .fold(0.0, f64::max)
    }

    /// Whether some step's graph explains it, so that savings are claimed.
    pub fn explains(&self) -> bool {
        self.steps.iter().any(StepWhatIf::explains)
    }

    /// What fix `k` saves over the steps the graph explains; `None` when it changed no
    /// duration of any explained step (the replay cannot judge it).
    pub fn saves(&self, k: usize) -> Option<Ns> {
        let judged = self
            .steps
            .iter()
            .any(|s| s.explains() && s.touched.get(k).copied().unwrap_or(false));
        judged.then(|| self.steps.iter().map(|s| s.saves(k)).sum())
    }
}

/// What one step gives the decomposition.
struct StepParts {
    actual: Ns,
    ideal: Ns,
    types: Vec<(&'static str, Ns)>,
    workers: Vec<(RankId, Ns)>,
    stages: Option<Ns>,
    balance: Ns,
}

/// Replays `steps` (a prebuilt graph may be passed for one of them) with each of `fixes`.
pub fn run(
    job: &Job,
    comm: &Comm,
    cx: &Context,
    steps: &[StepNo],
    prebuilt: Option<(StepNo, Graph)>,
    fixes: &[Vec<Fix>],
) -> WhatIf {
    if let Some(why) = super::step::unreplayable(job) {
        return WhatIf {
            not_replayed: Some(why),
            ..WhatIf::default()
        };
    }
    let mut prebuilt = prebuilt;
    let jobs: Vec<(StepNo, Option<Graph>)> = steps
        .iter()
        .map(|&s| {
            let g = prebuilt.take_if(|p| p.0 == s).map(|p| p.1);
            (s, g)
        })
        .collect();
    let out: Vec<(StepWhatIf, Option<StepParts>)> = jobs
        .into_par_iter()
        .filter_map(|(s, g)| {
            let replay = match g {
                Some(g) => StepReplay::of_graph(job, comm, g, s),
                None => StepReplay::new(job, comm, s),
            }?;
            Some(one_step(&replay, cx, fixes))
        })
        .collect();
    let (steps, parts): (Vec<StepWhatIf>, Vec<Option<StepParts>>) = out.into_iter().unzip();
    let parts: Vec<StepParts> = parts.into_iter().flatten().collect();
    WhatIf {
        steps,
        slowdown: decompose(&parts),
        not_replayed: None,
    }
}

/// One step: its self-check, its predictions, and (when the graph explains it) its parts.
fn one_step(s: &StepReplay, cx: &Context, fixes: &[Vec<Fix>]) -> (StepWhatIf, Option<StepParts>) {
    let error = s.check().error;
    let explains = error <= MAX_REPLAY_ERROR;
    // Measured − what the replay with weights `w` saves (measured when the graph does not
    // explain the step).
    // Each list of fixes is replayed once (a finding's fix may also be a part's), and not
    // at all when it changes no weight.
    let memo: RefCell<Vec<(Vec<Fix>, Ns, bool)>> = RefCell::default();
    // The weights and node times of one replay, their memory reused by the next.
    let scratch: RefCell<(Vec<Option<Ns>>, Vec<Ns>)> = RefCell::default();
    let replayed = |f: &[Fix]| -> (Ns, bool) {
        if !explains {
            return (s.measured_ns, false);
        }
        if let Some(x) = memo.borrow().iter().find(|x| x.0 == f) {
            return (x.1, x.2);
        }
        let (w, t) = &mut *scratch.borrow_mut();
        s.weights_into(cx, f, w);
        let touched = *w != s.base.w;
        let time = if touched {
            s.time_with_in(w, t)
        } else {
            s.replayed_ns
        };
        let saved = s.replayed_ns.saturating_sub(time);
        let out = (s.measured_ns.saturating_sub(saved), touched);
        memo.borrow_mut().push((f.to_vec(), out.0, out.1));
        out
    };
    let predicted = |f: &[Fix]| replayed(f).0;
    let ideal = predicted(&[Fix::Ideal]);
    // Each finding's fix: its prediction and whether it changed anything.
    let (predicted_ns, touched): (Vec<Ns>, Vec<bool>) = fixes.iter().map(|f| replayed(f)).unzip();
    let row = StepWhatIf {
        step: s.step,
        measured_ns: s.measured_ns,
        replayed_ns: s.replayed_ns,
        replay_error: error,
        ideal_ns: ideal,
        predicted_ns,
        touched,
    };
    if !explains {
        return (row, None);
    }
    let saves = |f: &[Fix]| s.measured_ns.saturating_sub(predicted(f)).max(0);
    let types = slowdown::op_types(s)
        .into_iter()
        .map(|t| (t.name, saves(&t.fixes)))
        .collect();
    let workers = slowdown::candidates(s)
        .into_iter()
        .map(|r| (r, saves(&[Fix::Ranks(vec![r]), Fix::Links(vec![r])])))
        .collect();
    let parts = StepParts {
        actual: s.measured_ns,
        ideal,
        types,
        workers,
        stages: cx.has_stages().then(|| saves(&[Fix::Stages])),
        balance: saves(&[Fix::Balance]),
    };
    (row, Some(parts))
}

/// The decomposition summed over the steps' parts.
fn decompose(parts: &[StepParts]) -> Option<Slowdown> {
    if parts.is_empty() {
        return None;
    }
    let actual: Ns = parts.iter().map(|p| p.actual).sum();
    let ideal: Ns = parts.iter().map(|p| p.ideal).sum();
    let mut types: BTreeMap<&'static str, Ns> = BTreeMap::new();
    let mut workers: BTreeMap<RankId, Ns> = BTreeMap::new();
    for p in parts {
        for &(t, x) in &p.types {
            *types.entry(t).or_default() += x;
        }
        for &(r, x) in &p.workers {
            *workers.entry(r).or_default() += x;
        }
    }
    let by_type = ranked(types, actual);
    let mut by_worker = ranked(workers, actual);
    by_worker.truncate(slowdown::WORKERS);
    let stages = parts.iter().map(|p| p.stages).sum::<Option<Ns>>();
    let balance: Ns = parts.iter().map(|p| p.balance).sum();
    Some(Slowdown {
        actual_ns: actual,
        ideal_ns: ideal,
        s: slowdown::ratio(actual, ideal.max(1)),
        verdict: slowdown::verdict(actual, balance, by_worker.first(), stages),
        by_type,
        by_worker,
        stages_saves_ns: stages,
    })
}

/// Parts from their savings over `actual`, the largest saving first (ties: by key).
fn ranked<K: Ord + Copy>(saves: BTreeMap<K, Ns>, actual: Ns) -> Vec<Part<K>> {
    let mut v: Vec<Part<K>> = saves
        .into_iter()
        .map(|(of, saves_ns)| Part {
            of,
            s: slowdown::ratio(actual, actual.saturating_sub(saves_ns).max(1)),
            saves_ns,
        })
        .collect();
    v.sort_by(|a, b| b.saves_ns.cmp(&a.saves_ns).then(a.of.cmp(&b.of)));
    v
}
