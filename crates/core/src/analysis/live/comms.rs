//! Collectives that wait rather than transfer, from DeepSpeed's comms-logger table
//! (docs/metrics.md "Live (watch)"). A message at least [`BYTES_RATIO`]× smaller than another
//! of the same operation should take a small fraction of its time; when it takes at least
//! [`TIME_SHARE`] of it, and its calls add up to [`MIN_TOTAL_NS`] or more, its time is not
//! transfer but waiting — for the slowest rank to arrive (skew) or on launch latency.
//! Barriers are waiting by design and are not judged.

use crate::model::live::CommRow;
use crate::time::Ns;
use std::collections::BTreeSet;

/// How much bigger the message compared against must be.
pub const BYTES_RATIO: u64 = 100;
/// The small message's average time as a share of the big one's: (1, 10) = 10%.
pub const TIME_SHARE: (Ns, Ns) = (1, 10);
/// Total time of the small message's calls worth telling.
pub const MIN_TOTAL_NS: Ns = 1_000_000_000;
/// Rows kept (a table has tens).
pub const MAX_ROWS: usize = 1024;

/// A small message that takes as long as a big one.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    /// The row judged.
    pub small: CommRow,
    /// The bigger message of the same operation it is compared with.
    pub big: CommRow,
}

/// The rows seen, and the (op, size) already told.
#[derive(Debug, Default)]
pub struct Comms {
    rows: Vec<CommRow>,
    told: BTreeSet<(String, u64)>,
}

impl Comms {
    /// Takes one row; the small messages it shows waiting (itself, or earlier smaller rows of
    /// its operation now that a big one is known), each told once.
    pub fn add(&mut self, row: &CommRow) -> Vec<Waiting> {
        if row.op.contains("barrier") || self.rows.len() >= MAX_ROWS {
            return Vec::new();
        }
        self.rows.push(row.clone());
        let same: Vec<&CommRow> = self.rows.iter().filter(|r| r.op == row.op).collect();
        let mut out = Vec::new();
        for small in &same {
            let Some(big) = same
                .iter()
                .filter(|b| b.bytes >= small.bytes.max(1).saturating_mul(BYTES_RATIO))
                // The quickest of them: the claim "as long as a message 100× bigger" is
                // made against the fairest comparison there is.
                .min_by_key(|b| b.avg_ns)
            else {
                continue;
            };
            let waits = small.avg_ns * TIME_SHARE.1 >= big.avg_ns * TIME_SHARE.0
                && small.total_ns >= MIN_TOTAL_NS;
            if waits && self.told.insert((small.op.clone(), small.bytes)) {
                out.push(Waiting {
                    small: (*small).clone(),
                    big: (*big).clone(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, bytes: u64, calls: u64, avg_ms: i64) -> CommRow {
        CommRow {
            op: op.into(),
            bytes,
            calls,
            avg_ns: avg_ms * 1_000_000,
            total_ns: avg_ms * 1_000_000 * calls as i64,
            busbw_gbps: 0.0,
        }
    }

    #[test]
    fn a_small_all_reduce_as_slow_as_a_big_one_waits() {
        let mut c = Comms::default();
        // The ALCF table's all_reduce rows (ms rounded): 4 B at 0.53 ms is 1.7% of 45.6 MB's
        // 31.96 ms; 20 B at 3.36 ms is 10.5% but only 68 calls (0.23 s); 100 KB at 26.15 ms
        // is 82% of it over 1650 calls (43 s): told, when the 45.6 MB row arrives.
        assert!(c.add(&row("all_reduce", 4, 3300, 1)).is_empty());
        assert!(c.add(&row("all_reduce", 20, 68, 3)).is_empty());
        assert!(c.add(&row("all_reduce", 102_400, 1650, 26)).is_empty());
        let w = c.add(&row("all_reduce", 47_815_065, 1650, 32));
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].small.bytes, w[0].big.bytes), (102_400, 47_815_065));
        // Told once; barriers never.
        assert!(c.add(&row("all_reduce", 916_455_424, 1650, 246)).is_empty());
        assert!(c.add(&row("barrier", 0, 68, 14)).is_empty());
    }
}
