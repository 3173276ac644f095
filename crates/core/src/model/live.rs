//! What a training log or live stream says (`stepscope watch`, `reference/logs.md`): steps
//! with their time and its evidence, events, straggler reports, device samples, timer and
//! comms rows. Built by `ingest::logs`, read by `analysis::live`.

use crate::time::Ns;
use serde::Serialize;

/// Where a step time comes from, best evidence first (docs/metrics.md "Step time evidence"):
/// a log can print several; the live analysis judges the best one a line (and the line
/// before it) gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// The framework printed this step's own time.
    PerStep,
    /// The framework printed the mean over exactly the steps since its last line (Megatron's
    /// `elapsed time per iteration`): each of those steps, compared per step.
    WindowAverage,
    /// The delta of a cumulative timer the framework printed (`train_time`, elapsed) over the
    /// steps since the last line.
    Cumulative,
    /// stepscope derived it from the timestamps of consecutive step lines.
    FromTimestamps,
    /// A running or smoothed average (modded-nanoGPT's `step_avg`, an EMA): it hides the slow
    /// steps it averages in, so it is read only when nothing else exists.
    RunningAverage,
}

/// A step line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Step (iteration) number, when printed (HF Trainer's dicts print only the epoch); once
    /// the live analysis has ordered it (`analysis::live::order`), the step's place in its
    /// series: a counter that restarts each epoch continues from the epoch before.
    pub step: Option<u64>,
    /// The counter the step restarts within (`epoch 3 batch 40`, `[3][40/500]`), as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// The step counter as printed, when ordering gave the step another number (a counter
    /// restarted within a later epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub printed_step: Option<u64>,
    /// Total steps, when printed (`iteration 43/100`).
    pub of: Option<u64>,
    /// Step time, when printed.
    pub time_ns: Option<Ns>,
    /// What `time_ns` is (per step, a window's mean, a running average); `from_timestamps`
    /// when the line prints no step time.
    pub provenance: Provenance,
    /// A cumulative training timer, when printed (modded-nanoGPT's `train_time`): its delta
    /// over the steps since the last line is the step time when no per-step figure exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cumulative_ns: Option<Ns>,
    /// The line's wall-clock timestamp (ns since the epoch, the log's clock).
    pub at_ns: Option<Ns>,
    /// Named metrics: `loss`, `lr`, `grad_norm`, `tflops`, `mfu_pct`, `tokens_per_s`,
    /// `samples_per_s`, `memory_gib`, …
    pub metrics: Vec<(&'static str, f64)>,
}

/// What happened besides steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Evaluation / validation.
    Eval,
    /// A checkpoint save.
    Checkpoint,
    /// Skipped (overflow) iterations.
    Skipped,
    /// A NaN or infinite loss.
    NanLoss,
    /// A garbage-collection pause.
    Gc,
    /// The job restarted or resumed.
    Restart,
    /// The job ended (or crashed).
    Exit,
}

impl EventKind {
    /// The event's name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Eval => "eval",
            EventKind::Checkpoint => "checkpoint",
            EventKind::Skipped => "skipped",
            EventKind::NanLoss => "nan_loss",
            EventKind::Gc => "gc",
            EventKind::Restart => "restart",
            EventKind::Exit => "exit",
        }
    }
}

/// One rank's value in a straggler report (min or max of a metric).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extreme {
    /// The metric (`Rtt`, `Etpt`, …).
    pub metric: String,
    /// `min` or `max`.
    pub which: &'static str,
    /// Its value, in the printed unit.
    pub value: f64,
    /// The rank.
    pub rank: u32,
}

/// What a line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Said {
    /// A training step (or a logging window ending at it).
    Step(Step),
    /// An event, at a step when known.
    Event {
        /// What.
        event: EventKind,
        /// The step it refers to.
        step: Option<u64>,
    },
    /// A straggler detector's min/max ranks.
    Straggler {
        /// The extremes it names.
        extremes: Vec<Extreme>,
    },
    /// Ranks a straggler detector flagged as slow (NVRx).
    SlowRanks {
        /// The ranks.
        ranks: Vec<u32>,
    },
    /// One device's monitor row (or exporter metric).
    Device(Sample),
    /// A monitor's (or timer block's) header line: it sets what the rows that follow hold.
    Header,
    /// A row of Megatron's timer block.
    Timer(TimerRow),
    /// A row of DeepSpeed's comms-logger table.
    Comm(CommRow),
    /// A one-line breakdown of the step into timed phases (DeepSpeed wall-clock breakdown,
    /// Megatron's legacy `time (ms) |` line).
    Phases {
        /// The phases, in printed order.
        phases: Vec<Phase>,
    },
}

/// One row of DeepSpeed's comms-logger table: one operation at one message size, over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommRow {
    /// The operation (`all_reduce`, `all_gather_into_tensor`, `barrier`, …).
    pub op: String,
    /// The message size (DeepSpeed prints it rounded, in powers of 1024).
    pub bytes: u64,
    /// Calls at this size.
    pub calls: u64,
    /// Average latency per call, exact from the printed ms.
    pub avg_ns: Ns,
    /// calls × average (the printed total can overflow negative).
    pub total_ns: Ns,
    /// Bus bandwidth as printed (Gbit/s).
    pub busbw_gbps: f64,
}

/// One timed phase of a step, exact from the printed ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phase {
    /// As printed (`fwd`, `bwd_allreduce`, `forward-compute`, …).
    pub name: String,
    /// Its time.
    pub ns: Ns,
}

/// One timer of Megatron's timer block (`reference/logs.md` §3.2): per-iteration time across
/// ranks, exact from the printed ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimerRow {
    /// The timer (`forward-backward`, `optimizer`, …).
    pub name: String,
    /// The fastest rank's time (`minmax` layout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<Ns>,
    /// The slowest rank's time (or, with `rank`, that rank's time).
    pub max_ns: Ns,
    /// The rank (`all` layout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// One device's readings at one moment, from a GPU/NPU monitor (`reference/logs.md` §11).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// The device as the monitor names it (`GPU 3`, `GPU-I 29`, `NPU 0 chip 0`).
    pub device: String,
    /// The host, when the monitor or a pdsh prefix names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The row's timestamp (ns since the epoch), when the monitor prints one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<Ns>,
    /// Readings under canonical names: `util_pct`, `power_w`, `temp_c`, `sm_clock_mhz`,
    /// `mem_used_mib`, `mem_pct`, `power_violation_pct`, … (monitors::metric).
    pub metrics: Vec<(&'static str, f64)>,
}

/// A recognised line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// The format that recognised it.
    pub format: &'static str,
    /// The rank from a launcher prefix.
    pub rank: Option<u32>,
    /// The host from a launcher prefix (pdsh, DeepSpeed `worker-3: `), when the line names
    /// no rank: hosts interleaved in one stream are kept apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// What it says.
    #[serde(flatten)]
    pub said: Said,
}
