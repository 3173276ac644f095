//! The what-if over the steps shown: each step replayed as measured, with every finding's
//! fix, with the ideal, and with each op type and candidate worker made ideal; summed into
//! per-step predictions and the slowdown decomposition.

use super::MAX_REPLAY_ERROR;
use super::fix::{Context, Fix};
use super::slowdown::{self, Part, Slowdown};
use super::step::StepReplay;
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::graph::Graph;
use crate::analysis::step_times::StepTime;
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
    /// Per fix: how many of the step's edge weights it changes (how narrow the fix is).
    #[serde(skip)]
    pub changed: Vec<u64>,
    /// Predicted step time with two fixes applied together, `(a, b, ns)` with a < b, for
    /// the pairs among the [`PAIR_CANDIDATES`] fixes that save the most in this step.
    #[serde(skip)]
    pub pairs: Vec<(usize, usize, Ns)>,
}

/// How many of a step's fixes (those that save the most in it, each at least 0.5% of the
/// step) are replayed in pairs, for the counterfactual attribution (`attribution.rs`): 8
/// fixes are 28 pairs.
pub const PAIR_CANDIDATES: usize = 8;

impl StepWhatIf {
    /// Takes `measured` (the report's step time) as the measured step: each prediction is
    /// it less what the replay saves (never below 0), the self-check's replay it plus the
    /// replay's own difference.
    fn measure_as(&mut self, measured: Ns) {
        let graph = self.measured_ns;
        self.replayed_ns = measured
            .saturating_add(self.replayed_ns.saturating_sub(graph))
            .max(0);
        let at = |p: Ns| measured.saturating_sub(graph.saturating_sub(p)).max(0);
        self.predicted_ns.iter_mut().for_each(|p| *p = at(*p));
        self.pairs.iter_mut().for_each(|p| p.2 = at(p.2));
        self.ideal_ns = at(self.ideal_ns);
        self.measured_ns = measured;
    }

    /// The graph explains the step: its replay error is at most [`MAX_REPLAY_ERROR`].
    pub fn explains(&self) -> bool {
        self.replay_error <= MAX_REPLAY_ERROR
    }

    /// What every fix at once saves in this step (measured − ideal, never below 0).
    pub fn ideal_saves(&self) -> Ns {
        self.measured_ns.saturating_sub(self.ideal_ns).max(0)
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
    /// Why no step was replayed, when the job cannot be ([`unreplayable`](super::unreplayable)).
    pub not_replayed: Option<String>,
    /// The first findings' fixes together: 1, 1+2, 1+2+3 … ([`joint`](super::joint)).
    pub joint: Vec<JointSaving>,
    /// The findings' fixes whose parameter the job gives, which the ideal step applies
    /// after its own ([`Context::with_extras`]); kept so every face replays the same ideal.
    #[serde(skip)]
    pub ideal_extras: Vec<Fix>,
}

/// The first k findings' fixes applied together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JointSaving {
    /// The rules of the findings whose fixes are applied (the report's first k replayed
    /// findings, in its order).
    pub rules: Vec<&'static str>,
    /// What they save together over the steps the graph explains: the replay, kept between
    /// what the fixes before this one saved together and that plus this finding's impact
    /// (a fix adds at most its own saving; one fix saves its finding's impact).
    pub saves_ns: Ns,
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

    /// What every fix at once saves over the steps the graph explains (the ideal step's
    /// saving every face shows: no finding's fix saves more).
    pub fn ideal_saves(&self) -> Ns {
        self.steps
            .iter()
            .filter(|s| s.explains())
            .map(StepWhatIf::ideal_saves)
            .sum()
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

    /// What fix `b` still saves once fix `a` is applied, over the steps the graph explains:
    /// Σ max(0, predicted(a) − predicted(a and b)). Where the pair was not replayed in a step,
    /// `b`'s own saving there (the replay did not judge it).
    pub fn saves_after(&self, b: usize, a: usize) -> Ns {
        let (lo, hi) = (a.min(b), a.max(b));
        self.steps
            .iter()
            .filter(|s| s.explains())
            .map(|s| {
                let joint = s.pairs.iter().find(|p| (p.0, p.1) == (lo, hi));
                match (joint, s.predicted_ns.get(a)) {
                    (Some(&(_, _, both)), Some(&alone)) => alone.saturating_sub(both).max(0),
                    _ => s.saves(b),
                }
            })
            .sum()
    }

    /// What fix list `with` saves beyond fix list `without` (a list holding it and more),
    /// over the steps the graph explains: Σ max(0, predicted(without) − predicted(with)).
    pub fn gain(&self, without: usize, with: usize) -> Ns {
        self.steps
            .iter()
            .filter(|s| s.explains())
            .map(
                |s| match (s.predicted_ns.get(without), s.predicted_ns.get(with)) {
                    (Some(&a), Some(&b)) => a.saturating_sub(b).max(0),
                    _ => 0,
                },
            )
            .sum()
    }

    /// How many edge weights fix `k` changes over the steps the graph explains.
    pub fn changed(&self, k: usize) -> u64 {
        self.steps
            .iter()
            .filter(|s| s.explains())
            .filter_map(|s| s.changed.get(k))
            .sum()
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

/// Replays `steps` (a prebuilt graph may be passed for one of them) with each of `fixes`,
/// and the pairs among the first `pairable` of them ([`StepWhatIf::pairs`]). Each step's
/// measured time is the report's cluster step time (`max_ns`); the replay's savings are
/// taken from it, so every face shows one measured step.
pub fn run(
    job: &Job,
    comm: &Comm,
    cx: &Context,
    steps: &[StepTime],
    prebuilt: Option<(StepNo, Graph)>,
    fixes: &[Vec<Fix>],
    pairable: usize,
) -> WhatIf {
    if let Some(why) = super::step::unreplayable(job) {
        return WhatIf {
            not_replayed: Some(why),
            ..WhatIf::default()
        };
    }
    let mut prebuilt = prebuilt;
    let jobs: Vec<(StepNo, Ns, Option<Graph>)> = steps
        .iter()
        .map(|st| {
            let g = prebuilt.take_if(|p| p.0 == st.step).map(|p| p.1);
            (st.step, st.max_ns, g)
        })
        .collect();
    let out: Vec<(StepWhatIf, Option<StepParts>)> = jobs
        .into_par_iter()
        .filter_map(|(s, measured, g)| {
            let replay = match g {
                Some(g) => StepReplay::of_graph(job, comm, g, s),
                None => StepReplay::new(job, comm, s),
            }?;
            let (mut row, mut parts) = one_step(&replay, cx, fixes, pairable);
            row.measure_as(measured);
            if let Some(p) = &mut parts {
                // The decomposition's actual step is the table's too (one step time).
                p.ideal = measured
                    .saturating_sub(p.actual.saturating_sub(p.ideal))
                    .max(0);
                p.actual = measured;
            }
            Some((row, parts))
        })
        .collect();
    let (steps, parts): (Vec<StepWhatIf>, Vec<Option<StepParts>>) = out.into_iter().unzip();
    let parts: Vec<StepParts> = parts.into_iter().flatten().collect();
    WhatIf {
        steps,
        slowdown: decompose(&parts),
        not_replayed: None,
        joint: Vec::new(),
        ideal_extras: cx.extras().to_vec(),
    }
}

/// One step: its self-check, its predictions, and (when the graph explains it) its parts.
fn one_step(
    s: &StepReplay,
    cx: &Context,
    fixes: &[Vec<Fix>],
    pairable: usize,
) -> (StepWhatIf, Option<StepParts>) {
    let error = s.check().error;
    let explains = error <= MAX_REPLAY_ERROR;
    // Measured − what the replay with weights `w` saves (measured when the graph does not
    // explain the step).
    // Each list of fixes is replayed once (a finding's fix may also be a part's), and not
    // at all when it changes no weight.
    let memo: RefCell<Vec<(Vec<Fix>, Ns, u64)>> = RefCell::default();
    // The weights and node times of one replay, their memory reused by the next.
    let scratch: RefCell<(Vec<Option<Ns>>, Vec<Ns>)> = RefCell::default();
    let replayed = |f: &[Fix]| -> (Ns, u64) {
        if !explains {
            return (s.measured_ns, 0);
        }
        if let Some(x) = memo.borrow().iter().find(|x| x.0 == f) {
            return (x.1, x.2);
        }
        let (w, t) = &mut *scratch.borrow_mut();
        s.weights_into(cx, f, w);
        let changed = s.changed(w);
        let touched = changed > 0;
        let time = if touched {
            s.time_with_in(w, t)
        } else {
            s.replayed_ns
        };
        let saved = s.replayed_ns.saturating_sub(time);
        let out = (s.measured_ns.saturating_sub(saved), changed);
        memo.borrow_mut().push((f.to_vec(), out.0, out.1));
        out
    };
    let predicted = |f: &[Fix]| replayed(f).0;
    let ideal = predicted(&[Fix::Ideal]);
    // Each finding's fix: its prediction and how many weights it changed.
    let (predicted_ns, changed): (Vec<Ns>, Vec<u64>) = fixes.iter().map(|f| replayed(f)).unzip();
    let pairable = &predicted_ns[..pairable.min(predicted_ns.len())];
    let pairs = pairs(pairable, s.measured_ns, |a, b| {
        replayed(&[fixes[a].as_slice(), fixes[b].as_slice()].concat()).0
    });
    let row = StepWhatIf {
        step: s.step,
        measured_ns: s.measured_ns,
        replayed_ns: s.replayed_ns,
        replay_error: error,
        ideal_ns: ideal,
        touched: changed.iter().map(|&c| c > 0).collect(),
        predicted_ns,
        changed,
        pairs,
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

/// The pairs among the [`PAIR_CANDIDATES`] fixes that save the most in a step (given their
/// predictions, each alone), each replayed together by `both`.
fn pairs(
    predicted: &[Ns],
    measured: Ns,
    mut both: impl FnMut(usize, usize) -> Ns,
) -> Vec<(usize, usize, Ns)> {
    // A fix saving under 0.5% of the step in it is not paired there: the attribution reads
    // its own saving in that step instead (the replay's noise would decide nothing).
    let floor = measured / 200;
    let mut top: Vec<usize> = (0..predicted.len())
        .filter(|&k| predicted[k] < measured.saturating_sub(floor))
        .collect();
    top.sort_by_key(|&k| (predicted[k], k));
    top.truncate(PAIR_CANDIDATES);
    top.sort_unstable();
    let mut out = Vec::new();
    for (i, &a) in top.iter().enumerate() {
        for &b in &top[i + 1..] {
            out.push((a, b, both(a, b)));
        }
    }
    out
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
