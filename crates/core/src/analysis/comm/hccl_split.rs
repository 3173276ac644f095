//! HCCL's own split of its ops' time (docs/metrics.md, "HCCL's split"): each op's elapse and
//! the transit of its data-moving tasks, as `communication.json` / `CommAnalyzerTime` record
//! them, summed per collective type and group over the calls in scope. Set beside the split
//! measured across ranks (wait from the arrival skew), which sees only the loaded ranks: a
//! rank that is not loaded and arrives last leaves every loaded rank waiting alike, and the
//! skew between them shows none of it, while HCCL's transit still does.

use crate::model::{Job, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The two splits differ by more than this share before the report sets them side by side.
pub const DISAGREE: f64 = 0.25;

/// HCCL's split of one (type, group)'s calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HcclSplit {
    /// Calls HCCL recorded a split for.
    pub calls: u64,
    /// Σ elapse.
    pub elapse_ns: Ns,
    /// Σ transit: the time its data-moving tasks ran.
    pub transit_ns: Ns,
    /// 1 − transit / elapse: the share of the ops' time not moving data (waiting for peers,
    /// synchronising, per-op overhead).
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub not_transfer: f64,
}

impl HcclSplit {
    /// Adds one call's split.
    pub fn add(&mut self, (elapse, transit): (Ns, Ns)) {
        self.calls += 1;
        self.elapse_ns += elapse;
        self.transit_ns += transit.min(elapse);
    }

    /// The split when any call had one, its share computed.
    pub fn finish(mut self) -> Option<HcclSplit> {
        if self.calls == 0 || self.elapse_ns <= 0 {
            return None;
        }
        self.not_transfer = 1.0 - self.transit_ns as f64 / self.elapse_ns as f64;
        Some(self)
    }
}

/// One rank's HCCL ops' (elapse, transit) by (op name, step).
type RankOpTimes<'a> = FxHashMap<(&'a str, Option<StepNo>), (Ns, Ns)>;

/// Per rank (`job.ranks` order): each HCCL op's (elapse, transit) by (op name, step).
pub struct OpTimes<'a>(Vec<RankOpTimes<'a>>);

impl<'a> OpTimes<'a> {
    /// The job's recorded splits.
    pub fn of(job: &'a Job) -> OpTimes<'a> {
        let per_rank = job.ranks.iter().map(|r| {
            r.hccl_times
                .iter()
                .map(|t| ((t.op.as_str(), t.step), (t.elapse_ns, t.transit_ns)))
                .collect()
        });
        OpTimes(per_rank.collect())
    }

    /// The split of rank index `r`'s op `name` in `step`, when HCCL recorded one.
    pub fn get(&self, r: usize, name: &str, step: Option<StepNo>) -> Option<(Ns, Ns)> {
        self.0.get(r)?.get(&(name, step)).copied()
    }
}

/// The waiting share the verdicts use: the measured one, or HCCL's not-transfer share when
/// members of the group are not loaded (their lateness is invisible to the skew) and it is
/// larger by more than [`DISAGREE`] (closer, the two say the same).
pub fn waiting(measured: Option<f64>, hccl: Option<HcclSplit>, unloaded: u32) -> Option<f64> {
    let m = measured.unwrap_or(0.0);
    match hccl {
        Some(h) if unloaded > 0 && h.not_transfer > m + DISAGREE => Some(h.not_transfer),
        _ => measured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hccls_split_counts_only_where_the_skew_is_blind() {
        // Level1 rank 0 (communication.json): four all-reduces, 105.99 ms elapsed, 3.68 ms
        // of it moving data.
        let mut s = HcclSplit::default();
        for t in [
            (79_090_156, 238_685),
            (2_281_000, 1_229_000),
            (2_402_000, 2_060_000),
            (22_219_000, 156_000),
        ] {
            s.add(t);
        }
        let h = s.finish().unwrap();
        assert_eq!(
            (h.calls, h.elapse_ns, h.transit_ns),
            (4, 105_992_156, 3_683_685)
        );
        assert!(
            (h.not_transfer - 0.965246).abs() < 1e-6,
            "{}",
            h.not_transfer
        );
        assert_eq!(waiting(Some(0.03), Some(h), 6), Some(h.not_transfer));
        assert_eq!(waiting(Some(0.03), Some(h), 0), Some(0.03));
        assert_eq!(waiting(Some(0.99), Some(h), 6), Some(0.99));
        // With the trace, the measured 95.9% and HCCL's 96.5% say the same: the measured
        // one stands.
        assert_eq!(waiting(Some(0.959), Some(h), 6), Some(0.959));
        assert_eq!(waiting(None, None, 6), None);
        assert_eq!(HcclSplit::default().finish(), None);
    }
}
