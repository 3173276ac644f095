//! Host gaps: stretches of a step in which nothing ran on a rank — no op or runtime call on
//! any thread, no device work — named by the annotation the main thread was in.

use super::{GC_GAP_NS, GcPause, Host, RankScan};
use crate::analysis::intervals::IntervalSet;
use crate::model::{Kind, RankId, StepNo};
use crate::time::Ns;

impl<F: Fn(RankId, StepNo) -> bool> RankScan<'_, F> {
    /// The innermost user annotation (not a step marker) on the main thread that covers
    /// `[a, b)`.
    fn annotation_at(&self, a: Ns, b: Ns) -> Option<String> {
        let (job, rank) = (self.job, self.rank);
        let ev = &rank.events;
        let lane = rank.stepping_lane?;
        rank.lane_events(lane)
            .take_while(|&i| ev.start[i] <= a)
            .filter(|&i| {
                ev.kind[i] == Kind::Annotation
                    && ev.end(i) >= b
                    && !job.role(ev.name[i]).is_step_marker()
            })
            .last()
            .map(|i| job.strings.resolve(ev.name[i]).to_string())
    }

    /// Host gaps (conjectured pauses): stretches of a step of at least [`GC_GAP_NS`] in which
    /// nothing ran on the rank — no op or runtime call on any thread, no device work (the
    /// trace's own GC events win when it has any).
    pub(super) fn host_gaps(&self, h: &mut Host, worked: &IntervalSet) {
        let rank = self.rank;
        for sp in self
            .spans
            .iter()
            .filter(|s| (self.in_scope)(rank.id, s.number))
        {
            for (a, b) in worked.gaps_within(sp.start, sp.end) {
                if b - a >= GC_GAP_NS {
                    h.gaps_in_host_bound_ns += self.busy.busy.measure_within(a, b);
                    h.gc.push(GcPause {
                        rank: rank.id,
                        step: sp.number,
                        start_ns: a,
                        dur_ns: b - a,
                        recorded: false,
                        within: self.annotation_at(a, b),
                    });
                }
            }
        }
    }
}
