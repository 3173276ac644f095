//! What the faces say about results: the sentences of findings (title, cause, what to
//! change) and of slow steps, stragglers, unmatched calls and roofline notes. Analyses return
//! typed results; the text and markdown reports, the JSON report's prose fields and the TUI
//! all word them here, the same way.

mod findings;
mod proof;

pub use findings::{Words, claim_words, words};
pub use proof::landing;

use crate::analysis::cluster::{SlowStep, Straggler};
use crate::analysis::comm::matching::{Mismatch, MismatchKind};
use crate::analysis::roofline::RooflineNote;
use crate::format::{human, signed};

/// Why a step is slow: its culprit's growth, every rank's growth, or that every rank waited
/// alike.
pub fn slow_step_reason(s: &SlowStep) -> String {
    if s.shared_growth {
        return format!(
            "every rank's own work grew about {} over its median step ({} {}): the step's work grew, not one rank's",
            human(s.growth_ns),
            s.part.map_or("compute", |p| p.as_str()),
            signed(s.part_growth_ns),
        );
    }
    match (s.culprit_rank, s.part) {
        (Some(r), part) => {
            // A step without collectives (one rank, or no matched instance) has no arrivals.
            let arrivals = if s.last_arrivals.of > 0 {
                format!(
                    "; last to arrive at {} of {} collectives",
                    s.last_arrivals.last, s.last_arrivals.of
                )
            } else {
                String::new()
            };
            format!(
                "rank {r}'s own work grew {} over its median step ({} {}){arrivals}",
                human(s.growth_ns),
                part.map_or("compute", |p| p.as_str()),
                signed(s.part_growth_ns),
            )
        }
        (None, _) => "no rank's own work grew: every rank waited alike".to_string(),
    }
}

/// A straggler's evidence: arrivals, persistence, imposed wait and the parts above median.
pub fn straggler_evidence(s: &Straggler) -> String {
    let parts = s
        .excess
        .iter()
        .map(|e| {
            format!(
                "{} {} vs median {}",
                e.part.as_str(),
                human(e.rank_ns),
                human(e.median_ns)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "last to arrive at {} of {} collectives, the most waited-for rank in {} of {} steps; the others waited {} for it ({:.0}% of the domain's waiting){}",
        s.last_arrivals,
        s.instances,
        s.top_steps,
        s.steps_with_wait,
        human(s.imposed_wait_ns),
        s.share * 100.0,
        if parts.is_empty() {
            String::new()
        } else {
            format!("; {parts}")
        }
    )
}

/// Why calls could not be matched.
pub fn mismatch_reason(m: &Mismatch) -> String {
    match m.kind {
        MismatchKind::Counts => "member ranks made different numbers of calls".to_string(),
        MismatchKind::Operation { index } => {
            format!("call {index} is not the same operation on every rank")
        }
    }
}

/// Why the roofline could not place kernels.
pub fn roofline_note(n: &RooflineNote) -> String {
    match n {
        RooflineNote::NoSuchDevice(d) => format!("no device `{d}` in the table"),
        RooflineNote::NoPeaks(d) => format!("no peaks for `{d}`: pass --device NAME"),
        RooflineNote::NoDevice => "the traces name no device: pass --device NAME".to_string(),
        RooflineNote::KernelsWithoutShapes => "kernels without shapes (record_shapes=True) or of operators without a FLOP rule are unknown".to_string(),
    }
}

/// An evidence number as a reader says it: its key in words, without the unit suffix the
/// value now carries (`device_idle_ns` → `device idle`, `372.0 ms`), and the value with its
/// unit (a ratio as a percentage, GB/s, TFLOP/s).
pub fn evidence_number(key: &str, q: crate::analysis::advisor::Quantity) -> (String, String) {
    use crate::analysis::advisor::Quantity as Q;
    let stem = ["_ns", "_gbps", "_pct"]
        .iter()
        .find_map(|u| key.strip_suffix(u))
        .unwrap_or(key);
    let label = match stem {
        "gbps" => "bandwidth".to_string(),
        "tflops" => "compute rate".to_string(),
        "z" => "z-score".to_string(),
        s => s.replace('_', " "),
    };
    let value = match q {
        Q::Ns(ns) => human(ns),
        Q::Count(n) => n.to_string(),
        Q::Ratio(r) => crate::format::pct(r),
        Q::Gbps(g) => format!("{} GB/s", crate::format::plain(g)),
        Q::Tflops(t) => format!("{} TFLOP/s", crate::format::plain(t)),
        Q::FlopPerByte(x) => format!("{} FLOP/B", crate::format::plain(x)),
        Q::Z(z) => crate::format::plain(z),
    };
    (label, value)
}
