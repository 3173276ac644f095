//! Clock alignment (docs/metrics.md, "Clock alignment"). Ranks on different hosts have different clocks; the ends of
//! one collective are simultaneous to within its transfer time, so each rank is shifted to
//! make the ends of the collectives it shares with the reference rank (the lowest rank id)
//! coincide. Ranks that share nothing with the reference align through a rank already
//! aligned (pipeline stages through their send/recv partner). Ranks that share nothing,
//! directly or through others, with any aligned rank (independent pipelines, a job profiled
//! in disjoint groups) align among themselves to their lowest rank, whose clock is theirs.
//!
//! The offset is the median, over the first [`SAMPLES`] shared instances, of the end
//! difference — not the first instance alone: one collective's end can lag by a scheduling
//! hiccup (gloo's run-loop threads on a busy host end hundreds of µs apart), and the median
//! of a few is robust to that while equal to the first whenever the ends agree.

use super::calls::Calls;
use super::matching::{Instance, Member};
use crate::analysis::stats::median_sorted;
use crate::model::{Job, RankId};
use crate::time::Ns;

/// Shared instances an offset is estimated from.
pub const SAMPLES: usize = 8;

/// How clocks are aligned (`--align`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    /// Shift ranks so shared collectives end together.
    #[default]
    Collective,
    /// Keep each rank's raw clock.
    None,
}

/// A rank's clock offset: add it to the rank's times to get aligned time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Offset {
    /// Rank id.
    pub rank: RankId,
    /// Offset, ns.
    pub offset_ns: Ns,
    /// The rank it was aligned to (itself for the reference; `None`: no shared collective,
    /// left unshifted).
    pub via: Option<RankId>,
    /// Instances the offset was estimated from.
    pub samples: u32,
}

/// Offsets of every rank, in `job.ranks` order.
pub fn offsets(job: &Job, calls: &Calls, instances: &[Instance], align: Align) -> Vec<Offset> {
    let mut out = estimated(job, calls, instances, align);
    keep_in_range(job, &mut out);
    out
}

/// A rank whose shifted events would leave the time range (`crate::time`) keeps its own
/// clock: every aligned time then lies in the range, so no difference of two overflows. Only
/// corrupt or hostile clocks get here (offsets of a real job are seconds to months).
fn keep_in_range(job: &Job, out: &mut [Offset]) {
    use crate::time::{MAX_NS, MIN_NS};
    for (o, r) in out.iter_mut().zip(&job.ranks) {
        if o.offset_ns == 0 {
            continue;
        }
        let (lo, hi) = r.window.unwrap_or((0, 0));
        let off = i128::from(o.offset_ns);
        let range = i128::from(MIN_NS)..=i128::from(MAX_NS);
        if !range.contains(&(i128::from(lo) + off)) || !range.contains(&(i128::from(hi) + off)) {
            *o = Offset {
                rank: o.rank,
                offset_ns: 0,
                via: None,
                samples: 0,
            };
        }
    }
}

/// Offsets as the shared collectives give them.
fn estimated(job: &Job, calls: &Calls, instances: &[Instance], align: Align) -> Vec<Offset> {
    let n = job.ranks.len();
    let mut out: Vec<Offset> = job
        .ranks
        .iter()
        .map(|r| Offset {
            rank: r.id,
            offset_ns: 0,
            via: None,
            samples: 0,
        })
        .collect();
    if n == 0 || align == Align::None {
        return out;
    }
    out[0].via = Some(out[0].rank);
    let end = |m: &Member| {
        let call = &calls.per_rank[m.rank.get()][m.call as usize];
        job.rank(m.rank).events.end(call.event.0 as usize)
    };
    // Earliest instances first, on the clock of each instance's first member.
    let mut order: Vec<&Instance> = instances.iter().filter(|i| i.members.len() >= 2).collect();
    order.sort_by_key(|i| (i.step, end(&i.members[0])));
    let mut aligned = vec![false; n];
    aligned[0] = true;
    loop {
        let mut samples: Vec<Vec<Ns>> = vec![Vec::new(); n];
        let mut via: Vec<Option<usize>> = vec![None; n];
        for inst in &order {
            // The anchor: the reference rank when it takes part, else the lowest aligned.
            let Some(anchor) = inst.members.iter().find(|m| aligned[m.rank.get()]) else {
                continue;
            };
            let a = anchor.rank.get();
            let anchor_end = end(anchor).saturating_add(out[a].offset_ns);
            for m in &inst.members {
                let r = m.rank.get();
                if aligned[r] || samples[r].len() >= SAMPLES {
                    continue;
                }
                if via[r].is_some_and(|v| v != a) {
                    continue;
                }
                via[r] = Some(a);
                samples[r].push(anchor_end.saturating_sub(end(m)));
            }
        }
        let mut progress = false;
        for r in 0..n {
            if aligned[r] || samples[r].is_empty() {
                continue;
            }
            let s = &mut samples[r];
            s.sort_unstable();
            out[r].offset_ns = median_sorted(s);
            out[r].via = via[r].map(|a| job.ranks[a].id);
            out[r].samples = s.len() as u32;
            aligned[r] = true;
            progress = true;
        }
        if !progress {
            // A component unreachable from the aligned ranks: its lowest rank is its reference.
            let Some(r) = order
                .iter()
                .flat_map(|i| i.members.iter().map(|m| m.rank.get()))
                .filter(|&r| !aligned[r])
                .min()
            else {
                return out;
            };
            aligned[r] = true;
            out[r].via = Some(out[r].rank);
        }
    }
}
