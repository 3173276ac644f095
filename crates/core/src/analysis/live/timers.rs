//! Ranks that differ, from Megatron's timer block (docs/metrics.md "Live (watch)"). In the
//! `all` layout (`--timing-log-option all`) each block lists every rank's time per timer; a
//! block whose slowest rank exceeds its fastest by more than [`super::STRAGGLER_SPREAD`]
//! names the slowest. The default `minmax` layout gives only the fastest and slowest time: a
//! spread beyond [`super::STRAGGLER_SPREAD`] of the step's `forward-backward` time says ranks
//! differ, and plainly that the layout cannot say which. The `max` layout tells neither.

use crate::model::live::TimerRow;
use crate::time::Ns;
use std::collections::BTreeMap;

/// The timer that spans the step: the reference a spread is measured against.
pub(super) const STEP_TIMER: &str = "forward-backward";

/// The current block's times per timer, by rank, and the `minmax` spreads seen.
#[derive(Debug, Default)]
pub(super) struct Timers {
    block: BTreeMap<String, BTreeMap<u32, Ns>>,
    /// The last `forward-backward` time (slowest rank).
    step_ns: Option<Ns>,
    /// Blocks in which each timer's ranks spread (bounded by the timers printed).
    spreads: BTreeMap<String, u64>,
}

/// A `minmax` row whose ranks spread: alerted the first time and when it becomes chronic.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Spread {
    /// The timer.
    pub timer: String,
    /// The fastest rank's time.
    pub min_ns: Ns,
    /// The slowest rank's time.
    pub max_ns: Ns,
    /// Blocks it spread in so far.
    pub times: u64,
}

impl Timers {
    /// Takes one timer row; a rank seen again for the same timer starts a new block, and
    /// the finished one is judged: the rank it names slow, if any.
    pub(super) fn add(&mut self, row: &TimerRow) -> Option<u32> {
        let rank = row.rank?;
        let times = self.block.entry(row.name.clone()).or_default();
        let named = if times.contains_key(&rank) {
            let named = slowest(times);
            times.clear();
            named
        } else {
            None
        };
        times.insert(rank, row.max_ns);
        named
    }

    /// Takes one `minmax` row: the spread to alert, if its ranks differ beyond
    /// [`super::STRAGGLER_SPREAD`] of the step for the first time, or for the
    /// [`super::PERIODIC_EPISODES`]-th (chronic).
    pub(super) fn spread(&mut self, row: &TimerRow) -> Option<Spread> {
        let min_ns = row.min_ns?;
        if row.name == STEP_TIMER {
            self.step_ns = Some(row.max_ns);
        }
        let reference = self.step_ns.unwrap_or(min_ns);
        let gap = row.max_ns - min_ns;
        if reference <= 0 || (gap as f64) <= reference as f64 * super::STRAGGLER_SPREAD {
            return None;
        }
        if !self.spreads.contains_key(&row.name) && self.spreads.len() >= 256 {
            return None;
        }
        let n = self.spreads.entry(row.name.clone()).or_default();
        *n += 1;
        (*n == 1 || *n == super::PERIODIC_EPISODES as u64).then(|| Spread {
            timer: row.name.clone(),
            min_ns,
            max_ns: row.max_ns,
            times: *n,
        })
    }

    /// Judges the open blocks (end of input).
    pub(super) fn finish(&mut self) -> Vec<u32> {
        let named = self.block.values().filter_map(slowest).collect();
        self.block.clear();
        named
    }
}

/// The slowest rank of a block, when it exceeds the fastest by more than the spread.
fn slowest(times: &BTreeMap<u32, Ns>) -> Option<u32> {
    let (&lo_rank, &lo) = times.iter().min_by_key(|x| x.1)?;
    let (&hi_rank, &hi) = times.iter().max_by_key(|x| x.1)?;
    (hi_rank != lo_rank && lo > 0 && hi as f64 / lo as f64 - 1.0 > super::STRAGGLER_SPREAD)
        .then_some(hi_rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: u32, ms: i64) -> TimerRow {
        TimerRow {
            name: "forward-backward".into(),
            min_ns: None,
            max_ns: ms * 1_000_000,
            rank: Some(rank),
        }
    }

    #[test]
    fn a_minmax_spread_beyond_five_percent_of_the_step_is_told_first_and_when_chronic() {
        let mut t = Timers::default();
        let mm = |name: &str, lo: i64, hi: i64| TimerRow {
            name: name.into(),
            min_ns: Some(lo),
            max_ns: hi,
            rank: None,
        };
        // forward-backward 3198.27–3199.53 (0.04%); optimizer 158.53–166.36: 7.83 ms is 0.2%
        // of the 3199.53 ms step, not 5% — the ALCF blocks: nothing.
        assert_eq!(t.spread(&mm(STEP_TIMER, 3_198_270, 3_199_530)), None);
        assert_eq!(t.spread(&mm("optimizer", 158_530, 166_360)), None);
        // batch-generator 1–400 ms against a 3199.53 ms step: 12.5% → told, then chronic at
        // the third block, silent in between.
        let told: Vec<u64> = (0..4)
            .filter_map(|_| t.spread(&mm("batch-generator", 1_000, 400_000)))
            .map(|s| s.times)
            .collect();
        assert_eq!(told, [1, 3]);
    }

    #[test]
    fn a_block_names_its_slowest_rank_beyond_five_percent() {
        let mut t = Timers::default();
        // Block 1: ranks 0–3 at 1000, 1010, 1080, 1000 ms: 1080/1000 − 1 = 8% > 5% → rank 2,
        // known when rank 0 opens block 2. Block 2: 1000, 1020, 1030, 1000: 3% → nobody.
        let mut named = Vec::new();
        for (r, ms) in [(0, 1000), (1, 1010), (2, 1080), (3, 1000)] {
            named.extend(t.add(&row(r, ms)));
        }
        for (r, ms) in [(0, 1000), (1, 1020), (2, 1030), (3, 1000)] {
            named.extend(t.add(&row(r, ms)));
        }
        named.extend(t.finish());
        assert_eq!(named, [2]);
    }
}
