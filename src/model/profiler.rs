//! What a profiler says about its own run, kept beside the events so that analyses can
//! cross-check their numbers against it (Ascend's `step_trace_time.csv`).

use super::StepNo;
use crate::time::Ns;

/// One row of Ascend's per-step summary (`step_trace_time.csv`, `analysis.db`
/// `StepTraceTime`), in integer ns. Definitions (torch_npu's `_trace_step_time_parser.py`, and
/// how they map to stepscope's breakdown) are in docs/metrics.md, "Ascend step summary".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfilerStep {
    /// The step (`None`: the profile had no schedule, one row for the whole run).
    pub step: Option<StepNo>,
    /// Σ `Overlap Analysis` Computing: the union of compute tasks.
    pub computing: Ns,
    /// Communication not hidden behind compute.
    pub comm_not_overlapped: Ns,
    /// Communication hidden behind compute.
    pub overlapped: Ns,
    /// The union of communication.
    pub communication: Ns,
    /// Device time in the step with neither compute nor communication.
    pub free: Ns,
    /// The device span of the step less `bubble`.
    pub stage: Ns,
    /// Pipeline receive waits (`hcom_receive`).
    pub bubble: Ns,
    /// `comm_not_overlapped` less `bubble`, when written.
    pub comm_not_overlapped_excl_receive: Option<Ns>,
    /// From the host step's start to the first device task (newer exports).
    pub preparing: Option<Ns>,
}

/// A rank waiting inside a collective for one named peer's signal, as the collective library
/// itself recorded it (HCCL's `Notify_Wait` plane tasks): a measured wait, where the arrival
/// skew between loaded ranks can only see the ranks that were loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerWait {
    /// The wait task (kept as an `other` event on its plane lane).
    pub event: super::EventIx,
    /// The peer waited for, as its rank in the collective's communicator.
    pub peer: u32,
}
