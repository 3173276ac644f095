//! Training logs and live streams (`stepscope watch`, `reference/logs.md`): lines are
//! normalised ([`line`]), then offered to the recognisers of [`RECOGNISERS`] in order — one
//! small module per format — which turn a line into a [`Record`]: a step with its time and
//! metrics (and where the time comes from), an event (evaluation, checkpoint, skipped or NaN
//! step, restart, exit), or a straggler report.

mod comms;
mod dschat;
pub(crate) mod fields;
pub(crate) mod generic;
pub mod line;
mod maxtext;
mod megatron;
pub mod monitors;
mod others;
pub mod pattern;
pub(crate) mod rejoin;
pub(crate) mod stream;
mod tqdm;
mod wallclock;

use crate::time::Ns;

pub use crate::model::live::{
    CommRow, EventKind, Extreme, Phase, Provenance, Record, Said, Sample, Step, TimerRow,
};

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
            epoch: None,
            printed_step: None,
            of: None,
            time_ns,
            provenance,
            cumulative_ns: None,
            at_ns: fields::timestamp(text),
            // Room for a Megatron line's metrics: one allocation, not a growth series.
            metrics: Vec::with_capacity(8),
        }
    }
}

/// A line format: its name (`--format NAME`) and its parser.
pub struct Recogniser {
    /// Name.
    pub name: &'static str,
    /// Literals one of which each of its lines holds (a line with none is not offered to
    /// it); empty: every line is offered.
    pub gate: &'static [&'static str],
    /// The line (normalised text) to what it says, when it is this format's.
    pub parse: Parse,
}

/// What a line says, with the rank the line itself names (not its launcher prefix).
pub(crate) type Ranked = (Option<u32>, Said);

/// How a recogniser reads a line.
#[derive(Clone, Copy)]
pub enum Parse {
    /// Each line on its own.
    Line(fn(&str) -> Option<Said>),
    /// Lines read with what the source's earlier lines told (monitor tables under their
    /// header, DeepSpeed-Chat's four-line step-3 record).
    Stateful(fn(&str, &mut SourceState) -> Option<Said>),
    /// Lines of templates learned from the same source (the generic recogniser).
    Learned(fn(&line::Line, &mut generic::Templates) -> Option<Ranked>),
}

/// Every recogniser, most specific first (a line goes to the first that takes it).
pub const RECOGNISERS: &[Recogniser] = &[
    Recogniser {
        name: "megatron",
        gate: &["iteration"],
        parse: Parse::Line(megatron::iteration),
    },
    Recogniser {
        name: "wall-clock",
        gate: &["time (ms) |"],
        parse: Parse::Line(wallclock::breakdown),
    },
    Recogniser {
        name: "megatron-straggler",
        gate: &["/Rnk:"],
        parse: Parse::Line(megatron::straggler),
    },
    Recogniser {
        name: "nvrx-straggler",
        gate: &["Affected ranks:"],
        parse: Parse::Line(others::nvrx),
    },
    Recogniser {
        name: "torchtitan",
        gate: &["step:", "[GC] Pe"],
        parse: Parse::Line(others::torchtitan),
    },
    Recogniser {
        name: "mindformers",
        gate: &["per_step_time:"],
        parse: Parse::Line(others::mindformers),
    },
    Recogniser {
        name: "nemo",
        gate: &["Training epoch", "global_step="],
        parse: Parse::Line(others::nemo),
    },
    Recogniser {
        name: "deepspeed",
        gate: &["SamplesPerSec="],
        parse: Parse::Line(others::deepspeed),
    },
    Recogniser {
        name: "deepspeed-chat",
        gate: &["Latency: ", "|E2E latency=", "PPO Epoch:", "ppo_ep:"],
        parse: Parse::Stateful(|text, s| dschat::read(text, &mut s.dschat)),
    },
    Recogniser {
        name: "maxtext",
        gate: &["completed step:"],
        parse: Parse::Line(maxtext::completed_step),
    },
    Recogniser {
        name: "nanogpt",
        gate: &["step ", "iter ", "step_avg:"],
        parse: Parse::Line(others::nanogpt),
    },
    Recogniser {
        name: "hf-trainer",
        gate: &["{'"],
        parse: Parse::Line(others::hf_trainer),
    },
    Recogniser {
        name: "tqdm",
        gate: &[" ["],
        parse: Parse::Line(tqdm::bar),
    },
    Recogniser {
        name: "jsonl",
        gate: &[":::MLLOG ", "DLLL ", "{"],
        parse: Parse::Line(others::jsonl),
    },
    Recogniser {
        name: "monitor",
        gate: &[],
        parse: Parse::Stateful(|text, s| monitors::table(text, &mut s.table)),
    },
    Recogniser {
        name: "dcgm-exporter",
        gate: &["DCGM_"],
        parse: Parse::Line(monitors::prometheus),
    },
    Recogniser {
        name: "events",
        gate: &[],
        parse: Parse::Line(others::events),
    },
    Recogniser {
        name: "generic",
        gate: &[],
        parse: Parse::Learned(generic::learn),
    },
];

/// What a source's recognisers remember between its lines.
#[derive(Debug, Default)]
pub struct SourceState {
    /// The monitor table under the last header line.
    pub table: monitors::Table,
    /// The templates the generic recogniser learned.
    pub learned: generic::Templates,
    /// The step DeepSpeed-Chat's last PPO line named.
    pub dschat: dschat::Pending,
    /// The user's `--step-pattern`: it alone makes step records.
    pub pattern: Option<std::sync::Arc<pattern::StepPattern>>,
}

/// The recogniser called `name`.
pub(crate) fn recogniser(name: &str) -> Option<&'static Recogniser> {
    RECOGNISERS.iter().find(|r| r.name == name)
}

/// Recognises one normalised line of a source with every recogniser (or only `only`);
/// `state` is what the source's recognisers remember.
pub fn recognise(
    l: &line::Line,
    only: Option<&Recogniser>,
    state: &mut SourceState,
) -> Option<Record> {
    recognise_as(l, only, state, true)
}

/// [`recognise`], with the generic recogniser only when `learn` (a trial join of two lines
/// in `rejoin` must not teach it a template of two lines).
pub(crate) fn recognise_as(
    l: &line::Line,
    only: Option<&Recogniser>,
    state: &mut SourceState,
    learn: bool,
) -> Option<Record> {
    if let Some(p) = &state.pattern {
        if let Some((rank, said)) = p.read(&l.text) {
            return Some(record(l, PATTERN, rank.or(l.rank), said));
        }
    }
    let pattern = state.pattern.is_some();
    let mut try_one = |r: &Recogniser| {
        let (rank, said) = match r.parse {
            Parse::Line(f) => (None, f(&l.text)?),
            Parse::Stateful(f) => (None, f(&l.text, state)?),
            Parse::Learned(_) if !learn || pattern => return None,
            Parse::Learned(f) => f(l, &mut state.learned)?,
        };
        if matches!(said, Said::Step(_)) {
            // The user's pattern defines the steps: the recognisers keep only their events.
            if pattern {
                return None;
            }
            // A dedicated recogniser reads this source's steps: the generic one stands aside.
            if !matches!(r.parse, Parse::Learned(_)) {
                state.learned.dedicated = true;
            }
        }
        Some(record(l, r.name, rank.or(l.rank), said))
    };
    match only {
        Some(r) => try_one(r),
        None => RECOGNISERS
            .iter()
            .zip(GATES.iter())
            .filter(|(_, gate)| {
                gate.is_empty() || gate.iter().any(|f| f.find(l.text.as_bytes()).is_some())
            })
            .find_map(|(r, _)| try_one(r)),
    }
}

/// Each recogniser's gate literals, as prebuilt SIMD finders: a line is offered to a
/// recogniser only when it holds one of them (a search each, instead of the recogniser's own
/// searches, which cost more to set up than to run).
static GATES: std::sync::LazyLock<Vec<Vec<memchr::memmem::Finder<'static>>>> =
    std::sync::LazyLock::new(|| {
        RECOGNISERS
            .iter()
            .map(|r| r.gate.iter().map(memchr::memmem::Finder::new).collect())
            .collect()
    });

/// The format name of records made by `--step-pattern`.
pub(crate) const PATTERN: &str = "step-pattern";

/// `said` of line `l` as a record of `format` from `rank`: a record without a rank carries
/// the line's host (a device sample carries it in itself).
pub(crate) fn record(
    l: &line::Line,
    format: &'static str,
    rank: Option<u32>,
    mut said: Said,
) -> Record {
    let mut host = None;
    match &mut said {
        Said::Device(s) if s.host.is_none() => s.host.clone_from(&l.host),
        Said::Device(_) => {}
        _ if rank.is_none() => host.clone_from(&l.host),
        _ => {}
    }
    Record {
        format,
        rank,
        host,
        said,
    }
}
