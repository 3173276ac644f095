//! The one-line "why" shown when a finding's proof opens: what is selected and what to look
//! at beside it.

use crate::analysis::advisor::proof::Target;
use crate::analysis::advisor::{HostCall, View};
use crate::format::{bytes, fit_name, human};
use crate::model::{EventIx, Job, RankIx};

/// Longest name the line quotes (a long kernel signature keeps its ends).
const NAME: usize = 40;

/// What the view opened for `t` shows, in one line.
pub fn landing(job: &Job, t: &Target) -> String {
    match *t {
        Target::RankLanes {
            rank,
            step,
            band,
            call,
        } => match band {
            Some(e) => format!(
                "rank {}, step {step}: {} — {}",
                job.rank(rank).id,
                event(job, rank, e),
                call.map_or("its streams below on the same clock", look_at),
            ),
            None => format!(
                "rank {}, step {step}: host threads over streams — a stream gap under a busy host is host cost",
                job.rank(rank).id
            ),
        },
        Target::Cluster {
            rank: Some(r),
            gap: Some((a, z)),
            step,
            ..
        } => format!(
            "step {step}: rank {}'s device idles {} here — the inspector says what its host did",
            job.rank(r).id,
            human(z - a)
        ),
        Target::Cluster {
            step, rank, band, ..
        } => match (rank, band) {
            (Some(r), Some(e)) => format!(
                "step {step}: rank {} is last at {} — the slant of the edges is the others' wait",
                job.rank(r).id,
                event(job, r, e),
            ),
            (Some(r), None) => format!(
                "step {step}: rank {}'s row, against every rank's on one clock",
                job.rank(r).id
            ),
            _ => format!("step {step}: every rank on one clock"),
        },
        Target::Comm { max_bytes, .. } => match max_bytes {
            Some(m) => format!("collectives of at most {} per rank", bytes(m)),
            None => "each rank's wait for the last arriver and its transfer time".into(),
        },
        Target::Critical { .. } => "the step's critical path, longest stretches first".into(),
        Target::Operator { name, .. } => format!(
            "{} on every rank: who is slow at it",
            fit_name(job.strings.resolve(name), NAME)
        ),
        Target::Device { rank, .. } => format!("rank {}'s operators", job.rank(rank).id),
        Target::View(View::Roofline) => "the roofline: where each operator sits".into(),
        Target::View(View::Overview) => "the overview".into(),
    }
}

/// What the streams under a host call show about its cost.
fn look_at(call: HostCall) -> &'static str {
    match call {
        HostCall::DataLoader => "the streams below idle while it loads",
        HostCall::Blocking => "the host waits on the device; the streams idle after it",
        HostCall::Allocator => "the host blocks in the allocator; the streams idle around it",
        HostCall::Graph => "capturing launches nothing: the streams idle until the replay",
        HostCall::Gc => "the interpreter paused; the streams idle once their queue drains",
        HostCall::OnlineCompile => "compiled at run time: the streams wait for it",
        HostCall::Pageable => "a copy through pageable memory: the host blocks until it is done",
    }
}

/// An event as `name (duration)`.
fn event(job: &Job, r: RankIx, e: EventIx) -> String {
    let ev = &job.rank(r).events;
    let i = e.index();
    format!(
        "{} ({})",
        fit_name(job.strings.resolve(ev.name[i]), NAME),
        human(ev.dur[i])
    )
}
