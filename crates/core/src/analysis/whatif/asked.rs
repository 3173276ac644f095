//! The fix a user asks for (`stepscope whatif --fix`), replayed over the analysed steps: per
//! step its measured and predicted time, and their sums (docs/metrics.md, "Replay"). Defined
//! here so that the command only words it.

use super::choice::{Choice, NoFix};
use super::{Context, run};
use crate::analysis::Analysis;
use crate::model::{Job, StepNo};
use crate::time::Ns;
use serde::Serialize;

/// The steps replayed with one choice of fixes.
#[derive(Debug)]
pub struct Asked {
    /// Per step replayed, in step order.
    pub steps: Vec<Predicted>,
    /// Σ measured over the steps.
    pub measured_ns: Ns,
    /// Σ predicted.
    pub predicted_ns: Ns,
    /// Why no step was replayed, when the job cannot be.
    pub not_replayed: Option<String>,
}

/// One step: measured and predicted with the fix (max over ranks).
#[derive(Debug, Serialize)]
pub struct Predicted {
    /// The step.
    pub step: StepNo,
    /// Its time measured (the report's cluster step time: max over ranks).
    pub measured_ns: Ns,
    /// The same with the fix applied.
    pub predicted_ns: Ns,
    /// The replay's self-check error (a fraction of the step).
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub replay_error: f64,
    /// The graph explains the step (error ≤ 2%); else predicted = measured.
    pub explains: bool,
}

/// Replays the analysed steps with `choice`'s fixes together.
pub fn replay(job: &Job, a: &Analysis, choice: &Choice) -> Result<Asked, NoFix> {
    let fixes = choice.fixes(&a.findings)?;
    let cx = Context::of(job, a);
    let w = run(job, &a.comm, &cx, &a.step_times, None, &[fixes], 0);
    let steps: Vec<Predicted> = w
        .steps
        .iter()
        .map(|s| Predicted {
            step: s.step,
            measured_ns: s.measured_ns,
            predicted_ns: s.predicted_ns[0],
            replay_error: s.replay_error,
            explains: s.explains(),
        })
        .collect();
    Ok(Asked {
        measured_ns: steps.iter().map(|s| s.measured_ns).sum(),
        predicted_ns: steps.iter().map(|s| s.predicted_ns).sum(),
        steps,
        not_replayed: w.not_replayed,
    })
}
