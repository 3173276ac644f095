//! Training logs and live streams (`stepscope watch`, `reference/logs.md`): lines are
//! normalised ([`line`]), then offered to the recognisers of [`RECOGNISERS`] in order — one
//! small module per format — which turn a line into a [`Record`]: a step with its time and
//! metrics (and where the time comes from), an event (evaluation, checkpoint, skipped or NaN
//! step, restart, exit), or a straggler report.

pub mod fields;
pub mod line;
mod megatron;
mod others;
pub mod stream;

use crate::time::Ns;
use serde::Serialize;

/// Where a step time comes from (values keep their provenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// The framework printed this step's own time.
    PerStep,
    /// The framework printed an average over its logging window (Megatron's
    /// `elapsed time per iteration`, torchtitan's window metrics).
    WindowAverage,
    /// stepscope derived it from the timestamps of consecutive step lines.
    FromTimestamps,
}

/// A step line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Step (iteration) number, when printed (HF Trainer's dicts print only the epoch).
    pub step: Option<u64>,
    /// Total steps, when printed (`iteration 43/100`).
    pub of: Option<u64>,
    /// Step time, when printed.
    pub time_ns: Option<Ns>,
    /// Where `time_ns` comes from.
    pub provenance: Provenance,
    /// The line's wall-clock timestamp (ns since the epoch, the log's clock).
    pub at_ns: Option<Ns>,
    /// Named metrics: `loss`, `lr`, `grad_norm`, `tflops`, `mfu_pct`, `tokens_per_s`,
    /// `samples_per_s`, `memory_gib`, …
    pub metrics: Vec<(&'static str, f64)>,
}

impl Step {
    /// A step line without metrics yet, timestamped from `text`.
    pub(super) fn at(
        step: Option<u64>,
        time_ns: Option<Ns>,
        provenance: Provenance,
        text: &str,
    ) -> Step {
        Step {
            step,
            of: None,
            time_ns,
            provenance,
            at_ns: fields::timestamp(text),
            metrics: Vec::new(),
        }
    }
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
}

/// A recognised line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// The format that recognised it.
    pub format: &'static str,
    /// The rank from a launcher prefix.
    pub rank: Option<u32>,
    /// What it says.
    #[serde(flatten)]
    pub said: Said,
}

/// A line format: its name (`--format NAME`) and its parser.
pub struct Recogniser {
    /// Name.
    pub name: &'static str,
    /// The line (normalised text) to what it says, when it is this format's.
    pub parse: fn(&str) -> Option<Said>,
}

/// Every recogniser, most specific first (a line goes to the first that takes it).
pub const RECOGNISERS: &[Recogniser] = &[
    Recogniser {
        name: "megatron",
        parse: megatron::iteration,
    },
    Recogniser {
        name: "megatron-straggler",
        parse: megatron::straggler,
    },
    Recogniser {
        name: "nvrx-straggler",
        parse: others::nvrx,
    },
    Recogniser {
        name: "torchtitan",
        parse: others::torchtitan,
    },
    Recogniser {
        name: "mindformers",
        parse: others::mindformers,
    },
    Recogniser {
        name: "nemo",
        parse: others::nemo,
    },
    Recogniser {
        name: "deepspeed",
        parse: others::deepspeed,
    },
    Recogniser {
        name: "nanogpt",
        parse: others::nanogpt,
    },
    Recogniser {
        name: "hf-trainer",
        parse: others::hf_trainer,
    },
    Recogniser {
        name: "jsonl",
        parse: others::jsonl,
    },
    Recogniser {
        name: "events",
        parse: others::events,
    },
];

/// The recogniser called `name`.
pub fn recogniser(name: &str) -> Option<&'static Recogniser> {
    RECOGNISERS.iter().find(|r| r.name == name)
}

/// Recognises one normalised line with every recogniser (or only `only`).
pub fn recognise(l: &line::Line, only: Option<&Recogniser>) -> Option<Record> {
    let try_one = |r: &Recogniser| {
        (r.parse)(&l.text).map(|said| Record {
            format: r.name,
            rank: l.rank,
            said,
        })
    };
    match only {
        Some(r) => try_one(r),
        None => RECOGNISERS.iter().find_map(try_one),
    }
}
