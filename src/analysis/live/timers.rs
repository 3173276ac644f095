//! Slow ranks from Megatron's timer block in the `all` layout (`--timing-log-option all`):
//! each block lists every rank's time per timer; a block whose slowest rank exceeds its
//! fastest by more than [`super::STRAGGLER_SPREAD`] names the slowest (docs/metrics.md
//! "Live (watch)"). The `minmax` and `max` layouts name no rank and are only recorded.

use crate::ingest::logs::TimerRow;
use crate::time::Ns;
use std::collections::BTreeMap;

/// The current block's times per timer, by rank.
#[derive(Debug, Default)]
pub struct Timers {
    block: BTreeMap<String, BTreeMap<u32, Ns>>,
}

impl Timers {
    /// Takes one timer row; a rank seen again for the same timer starts a new block, and
    /// the finished one is judged: the rank it names slow, if any.
    pub fn add(&mut self, row: &TimerRow) -> Option<u32> {
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

    /// Judges the open blocks (end of input).
    pub fn finish(&mut self) -> Vec<u32> {
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
