//! The profiler's own per-step summary against the same numbers recomputed from the events
//! (docs/metrics.md, "Ascend step summary"): Ascend's `step_trace_time.csv` columns, by
//! torch_npu's definitions, from each step's device work — so a user sees whether stepscope
//! read the trace as the profiler did, and the Stage/Bubble/Preparing the breakdown has no
//! part for.

use super::intervals::IntervalSet;
use crate::model::{Job, Kind, ProfilerStep, Rank, RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;

/// One (rank, step): the profiler's row and the row recomputed from the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepCheck {
    /// The rank.
    pub rank: RankId,
    /// The step.
    pub step: StepNo,
    /// Recomputed from the step's device work.
    #[serde(serialize_with = "ser_row")]
    pub ours: ProfilerStep,
    /// As the profiler wrote it.
    #[serde(serialize_with = "ser_row")]
    pub theirs: ProfilerStep,
}

impl StepCheck {
    /// The largest difference of any column, as a share of the profiler's device span
    /// (`Stage + Bubble`, what Computing, Communication(Not Overlapped) and Free partition).
    pub fn worst_deviation(&self) -> f64 {
        let span = (self.theirs.stage + self.theirs.bubble).max(1) as f64;
        columns(&self.ours)
            .iter()
            .zip(columns(&self.theirs))
            .map(|(a, b)| a.1.abs_diff(b.1) as f64 / span)
            .fold(0.0, f64::max)
    }
}

/// The compared columns, by their CSV names.
pub fn columns(r: &ProfilerStep) -> [(&'static str, Ns); 7] {
    [
        ("Computing", r.computing),
        ("Communication(Not Overlapped)", r.comm_not_overlapped),
        ("Overlapped", r.overlapped),
        ("Communication", r.communication),
        ("Free", r.free),
        ("Stage", r.stage),
        ("Bubble", r.bubble),
    ]
}

/// Every (rank, step) the profiler summarised, in (rank, step) order; a row without a step
/// number pairs with a rank's only step.
pub fn step_checks(job: &Job) -> Vec<StepCheck> {
    let mut out = Vec::new();
    for rank in job
        .ranks
        .iter()
        .filter(|r| !r.profiler_steps.is_empty() && !r.summary_only)
    {
        let ours = recompute(job, rank);
        for theirs in &rank.profiler_steps {
            let ix = match theirs.step {
                Some(n) => rank.steps.iter().position(|s| s.number == n),
                None => (rank.steps.len() == 1).then_some(0),
            };
            if let Some(ix) = ix {
                out.push(StepCheck {
                    rank: rank.id,
                    step: rank.steps[ix].number,
                    ours: ours[ix],
                    theirs: *theirs,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.rank, c.step));
    out
}

/// One step's device work as it is gathered.
#[derive(Default)]
struct StepWork {
    compute: Vec<(Ns, Ns)>,
    comm: Vec<(Ns, Ns)>,
    window: Option<(Ns, Ns)>,
    bubble: Ns,
}

/// torch_npu's columns for every step of a rank, from its device work: C and M the unions of
/// the step's compute and communication tasks, W their window (first start to last end).
fn recompute(job: &Job, rank: &Rank) -> Vec<ProfilerStep> {
    let ev = &rank.events;
    let mut work: Vec<StepWork> = (0..rank.steps.len()).map(|_| StepWork::default()).collect();
    for i in 0..ev.len() {
        let Some(w) = work.get_mut(ev.step[i] as usize) else {
            continue;
        };
        // torch_npu's window is the step's compute and communication; copies do not open it.
        if !matches!(ev.kind[i], Kind::Compute | Kind::Comm) {
            continue;
        }
        let iv = (ev.start[i], ev.end(i));
        w.window = Some(w.window.map_or(iv, |(a, b)| (a.min(iv.0), b.max(iv.1))));
        match ev.kind[i] {
            Kind::Compute => w.compute.push(iv),
            Kind::Comm => {
                w.comm.push(iv);
                if job.strings.resolve(ev.name[i]).starts_with("hcom_receive") {
                    w.bubble += ev.dur[i];
                }
            }
            _ => {}
        }
    }
    // Preparing is the device's start after the host step's; a rank with no host side (a
    // kernel table alone) has no host step to measure from.
    let host = rank.stepping_lane.is_some();
    work.into_iter()
        .zip(&rank.steps)
        .map(|(w, s)| row(w, s.number, host.then_some(s.start)))
        .collect()
}

/// The columns of one step's gathered work.
fn row(w: StepWork, step: StepNo, host_start: Option<Ns>) -> ProfilerStep {
    let Some((lo, hi)) = w.window else {
        return ProfilerStep {
            step: Some(step),
            ..ProfilerStep::default()
        };
    };
    let c = IntervalSet::from_intervals(w.compute);
    let m = IntervalSet::from_intervals(w.comm);
    let both = c.intersect(&m).total();
    let busy = c.total() + m.total() - both;
    let exposed = m.total() - both;
    ProfilerStep {
        step: Some(step),
        computing: c.total(),
        comm_not_overlapped: exposed,
        overlapped: both,
        communication: m.total(),
        free: (hi - lo) - busy,
        stage: (hi - lo) - w.bubble,
        bubble: w.bubble,
        comm_not_overlapped_excl_receive: Some(exposed.saturating_sub(w.bubble)),
        preparing: host_start.map(|h| lo - h),
        device: None,
    }
}

fn ser_row<S: serde::Serializer>(r: &ProfilerStep, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(None)?;
    for (k, v) in columns(r) {
        m.serialize_entry(k, &v)?;
    }
    if let Some(p) = r.preparing {
        m.serialize_entry("Preparing", &p)?;
    }
    m.end()
}
