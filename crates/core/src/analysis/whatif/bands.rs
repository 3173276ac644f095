//! A step as measured and as replayed with a fix, as bands per rank on one time axis (the
//! what-if pane draws them one above the other): each rank's device and host work, merged
//! per category where it touches.

use super::fix::{Context, Fix};
use super::step::StepReplay;
use crate::analysis::comm::Comm;
use crate::analysis::critical_path::Category;
use crate::model::{Job, RankId, StepNo};
use crate::time::Ns;

/// A stretch of one category, on the aligned clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// Start.
    pub start: Ns,
    /// End.
    pub end: Ns,
    /// What it is spent on.
    pub cat: Category,
}

/// One rank's bands, measured and replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct RankBands {
    /// The rank.
    pub rank: RankId,
    /// As measured.
    pub measured: Vec<Band>,
    /// As replayed with the fix.
    pub replayed: Vec<Band>,
    /// Its latest node, measured and replayed.
    pub ends: (Ns, Ns),
}

/// A step measured and replayed with a fix.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBands {
    /// The step.
    pub step: StepNo,
    /// The earliest measured node: the axis starts here.
    pub start: Ns,
    /// The step time measured and predicted (measured − what the fix saves).
    pub measured_ns: Ns,
    /// See `measured_ns`.
    pub predicted_ns: Ns,
    /// The ranks with the latest measured end first, at most `max_ranks`.
    pub ranks: Vec<RankBands>,
}

impl StepBands {
    /// What the fix saves of the step: measured − predicted (negative where the replay
    /// with the fix runs longer).
    pub fn saves_ns(&self) -> Ns {
        self.measured_ns.saturating_sub(self.predicted_ns)
    }

    /// `step_ns` (the step's time as every face measures it, the report's) less that
    /// saving, never below zero: the step's time with the fix.
    pub fn replayed_step_ns(&self, step_ns: Ns) -> Ns {
        step_ns.saturating_sub(self.saves_ns()).max(0)
    }
}

/// Step `step` measured and replayed with `fixes`, the `max_ranks` latest-ending ranks.
pub fn bands(
    job: &Job,
    comm: &Comm,
    cx: &Context,
    step: StepNo,
    fixes: &[Fix],
    max_ranks: usize,
) -> Option<StepBands> {
    let s = StepReplay::new(job, comm, step)?;
    let w = s.weights(cx, fixes);
    let replayed = s.replay(&w);
    let end = replayed.iter().copied().max().unwrap_or(s.start);
    let saved = s.replayed_ns.saturating_sub(end.saturating_sub(s.start));
    let n = job.ranks.len();
    let mut per: Vec<(Vec<Band>, Vec<Band>, Ns, Ns)> =
        vec![(Vec::new(), Vec::new(), Ns::MIN, Ns::MIN); n];
    for (v, &(r, _)) in s.g.nodes.iter().enumerate() {
        let p = &mut per[r.get()];
        p.2 = p.2.max(s.base.at[v]);
        p.3 = p.3.max(replayed[v]);
    }
    let collective_waits: std::collections::BTreeSet<usize> = s.g.waits.values().copied().collect();
    for (k, e) in s.g.edges.iter().enumerate() {
        let Some(cat) = e.cat.filter(|c| *c != Category::KernelGap) else {
            continue;
        };
        // A collective's wait is drawn from its transfer (the join carries its time).
        if collective_waits.contains(&k) {
            continue;
        }
        let p = &mut per[e.rank.get()];
        p.0.extend(edge_bands(&s, k, cat, s.base.w[k], &s.base.at));
        p.1.extend(edge_bands(&s, k, cat, w[k], &replayed));
    }
    let mut ranks: Vec<RankBands> = per
        .into_iter()
        .enumerate()
        .filter(|(_, p)| p.2 > Ns::MIN)
        .map(|(i, (m, r, me, re))| RankBands {
            rank: job.ranks[i].id,
            measured: merge(m),
            replayed: merge(r),
            ends: (me, re),
        })
        .collect();
    ranks.sort_by_key(|r| (std::cmp::Reverse(r.ends.0), r.rank));
    ranks.truncate(max_ranks);
    Some(StepBands {
        step,
        start: s.start,
        measured_ns: s.measured_ns,
        predicted_ns: s.measured_ns.saturating_sub(saved),
        ranks,
    })
}

/// The bands of edge `k` of category `cat` with weight `x`, nodes at times `t`: its weight
/// from its source's time; for a collective's transfer, the transfer ending where its end
/// node is reached and, before it, the wait from the kernel's start (the members waited for
/// the last arrival there: drawn apart from idle).
fn edge_bands(s: &StepReplay, k: usize, cat: Category, x: Option<Ns>, t: &[Ns]) -> Vec<Band> {
    let Some(x) = x else { return Vec::new() };
    let e = &s.g.edges[k];
    let from = e.from as usize;
    if cat != Category::Communication {
        let b = Band {
            start: t[from],
            end: t[from] + x,
            cat,
        };
        return if x > 0 { vec![b] } else { Vec::new() };
    }
    let start =
        s.g.waits
            .get(&(e.rank, e.event))
            .map_or(t[from], |&wk| t[s.g.edges[wk].from as usize]);
    let end = t[e.to as usize];
    let transfer = end.saturating_sub(x).max(start);
    [(start, transfer, Category::Wait), (transfer, end, cat)]
        .into_iter()
        .filter(|b| b.1 > b.0)
        .map(|(start, end, cat)| Band { start, end, cat })
        .collect()
}

/// Bands sorted, touching or overlapping ones of one category merged.
fn merge(mut v: Vec<Band>) -> Vec<Band> {
    v.sort_by_key(|b| (b.cat, b.start, b.end));
    let mut out: Vec<Band> = Vec::with_capacity(v.len());
    for b in v {
        match out.last_mut() {
            Some(l) if l.cat == b.cat && b.start <= l.end => l.end = l.end.max(b.end),
            _ => out.push(b),
        }
    }
    out.sort_by_key(|b| (b.start, b.cat));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_bands_of_one_category_merge() {
        let b = |start, end, cat| Band { start, end, cat };
        let v = merge(vec![
            b(10, 20, Category::Cpu),
            b(0, 10, Category::Cpu),
            b(5, 30, Category::GpuCompute),
            b(25, 40, Category::Cpu),
        ]);
        assert_eq!(
            v,
            vec![
                b(0, 20, Category::Cpu),
                b(5, 30, Category::GpuCompute),
                b(25, 40, Category::Cpu)
            ]
        );
    }
}
