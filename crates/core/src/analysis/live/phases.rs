//! Which timed phase a slow step's time went to (docs/metrics.md "Live (watch)"): Megatron
//! timer rows (the slowest rank's time) and one-line breakdowns (DeepSpeed wall-clock) are
//! kept per source, tagged with the step records seen before them; a run of slow steps is
//! compared phase by phase — the largest time of each phase around the run against the
//! phase's median elsewhere — and the phases whose growth explains at least
//! [`EXPLAINS`] of the run's excess over the median step are named, largest first.

use crate::analysis::stats::median_sorted;
use crate::time::Ns;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Observations kept per phase (and step records remembered per source).
pub const KEEP: usize = 64;
/// Phases tracked per source (a stream of ever-new names stays bounded).
pub const MAX_PHASES: usize = 64;
/// A phase is named when its growth is at least this share of the excess (¼).
pub const EXPLAINS: (Ns, Ns) = (1, 4);
/// Observations outside the run needed for a phase's median.
pub const MIN_OUTSIDE: usize = 3;

/// A phase that grew in a run of slow steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseGrowth {
    /// The phase (timer) as printed.
    pub name: String,
    /// Its largest time around the run.
    pub ns: Ns,
    /// Its median elsewhere.
    pub median_ns: Ns,
}

/// One source's phase times.
#[derive(Debug, Default)]
struct Log {
    /// Step records seen (the tag of what follows).
    seq: u64,
    /// Recent step records: format, step number, sequence number.
    steps: VecDeque<(&'static str, u64, u64)>,
    /// Per phase: (tag, time).
    seen: BTreeMap<String, VecDeque<(u64, Ns)>>,
}

/// Phase times of every source.
#[derive(Debug, Default)]
pub struct Phases {
    logs: BTreeMap<usize, Log>,
}

impl Phases {
    /// A step record of `source` in `format`.
    pub fn step(&mut self, source: usize, format: &'static str, step: u64) {
        let log = self.logs.entry(source).or_default();
        log.seq += 1;
        log.steps.push_back((format, step, log.seq));
        if log.steps.len() > KEEP {
            log.steps.pop_front();
        }
    }

    /// A phase time of `source`.
    pub fn observe(&mut self, source: usize, name: &str, ns: Ns) {
        let log = self.logs.entry(source).or_default();
        if !log.seen.contains_key(name) && log.seen.len() >= MAX_PHASES {
            return;
        }
        let times = log.seen.entry(name.to_string()).or_default();
        times.push_back((log.seq, ns));
        if times.len() > KEEP {
            times.pop_front();
        }
    }

    /// The phases of `source` that grew over the steps `run` of `format`, whose slowest
    /// step exceeded the median step by `excess`.
    pub fn grown(
        &self,
        source: usize,
        format: &str,
        run: std::ops::RangeInclusive<u64>,
        excess: Ns,
    ) -> Vec<PhaseGrowth> {
        let Some(log) = self.logs.get(&source) else {
            return Vec::new();
        };
        let seq_of = |n: u64| {
            let mut recent = log.steps.iter().rev();
            recent.find(|s| s.0 == format && s.1 == n).map(|s| s.2)
        };
        let (Some(a), Some(b)) = (seq_of(*run.start()), seq_of(*run.end())) else {
            return Vec::new();
        };
        // A breakdown printed before its step's record is tagged with the record before.
        let during = a.saturating_sub(1)..=b;
        let mut out: Vec<PhaseGrowth> = log
            .seen
            .iter()
            .filter_map(|(name, times)| {
                let ns = times
                    .iter()
                    .filter(|t| during.contains(&t.0))
                    .map(|t| t.1)
                    .max()?;
                let mut outside: Vec<Ns> = times
                    .iter()
                    .filter(|t| !during.contains(&t.0))
                    .map(|t| t.1)
                    .collect();
                if outside.len() < MIN_OUTSIDE {
                    return None;
                }
                outside.sort_unstable();
                let median_ns = median_sorted(&outside);
                let grew = ns - median_ns;
                let explains = i128::from(grew) * i128::from(EXPLAINS.1)
                    >= i128::from(excess) * i128::from(EXPLAINS.0);
                (grew > 0 && explains).then(|| PhaseGrowth {
                    name: name.clone(),
                    ns,
                    median_ns,
                })
            })
            .collect();
        out.sort_by_key(|g| std::cmp::Reverse(g.ns - g.median_ns));
        out.truncate(3);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_that_grew_is_named_and_the_others_are_not() {
        // Steps 1–6; each step's breakdown is printed before its record, a timer after.
        // Step 4 is slow (6000 vs 3000 ms): forward-backward 3000 → 6000, fwd unchanged.
        let mut p = Phases::default();
        for n in 1..=6u64 {
            p.observe(0, "fwd", 700);
            p.step(0, "megatron", n);
            p.observe(0, "forward-backward", if n == 4 { 6000 } else { 3000 });
        }
        let g = p.grown(0, "megatron", 4..=4, 3000);
        assert_eq!(
            g,
            [PhaseGrowth {
                name: "forward-backward".into(),
                ns: 6000,
                median_ns: 3000
            }]
        );
        // Another source, or steps not seen: nothing.
        assert!(p.grown(1, "megatron", 4..=4, 3000).is_empty());
        assert!(p.grown(0, "megatron", 40..=40, 3000).is_empty());
        assert!(p.grown(0, "deepspeed", 4..=4, 3000).is_empty());
    }
}
