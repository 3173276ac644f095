//! Step-time history in bounded memory for a stream that runs for days: at most
//! [`BUCKETS`] buckets per series, each holding the min and max of the steps it covers; when
//! full, neighbours merge pairwise (each bucket then covers twice the steps), so a spike
//! survives any amount of downsampling as its bucket's max.

use crate::time::Ns;
use serde::Serialize;

/// Buckets kept per series.
pub const BUCKETS: usize = 256;

/// Steps of one series, summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// First step covered.
    pub first: u64,
    /// Last step covered.
    pub last: u64,
    /// Fastest step time in it.
    pub min_ns: Ns,
    /// Slowest step time in it.
    pub max_ns: Ns,
    /// A step in it was judged slow.
    pub slow: bool,
    /// Step times it holds.
    pub n: u32,
}

/// One series' history.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Oldest first.
    pub buckets: Vec<Bucket>,
    /// Step times per full bucket (a power of two).
    per: u32,
}

impl History {
    /// Adds one step time.
    pub fn push(&mut self, step: u64, ns: Ns, slow: bool) {
        self.per = self.per.max(1);
        match self.buckets.last_mut() {
            Some(b) if b.n < self.per => {
                b.last = step;
                b.min_ns = b.min_ns.min(ns);
                b.max_ns = b.max_ns.max(ns);
                b.slow |= slow;
                b.n += 1;
            }
            _ => {
                self.buckets.push(Bucket {
                    first: step,
                    last: step,
                    min_ns: ns,
                    max_ns: ns,
                    slow,
                    n: 1,
                });
                if self.buckets.len() > BUCKETS {
                    self.halve();
                }
            }
        }
    }

    /// Marks the bucket holding `step` slow (a step judged after it was kept).
    pub fn mark_slow(&mut self, step: u64) {
        if let Some(b) = self
            .buckets
            .iter_mut()
            .rev()
            .find(|b| b.first <= step && step <= b.last)
        {
            b.slow = true;
        }
    }

    /// Merges neighbours pairwise.
    fn halve(&mut self) {
        let merged: Vec<Bucket> = self.buckets.chunks(2).map(merge).collect();
        self.buckets = merged;
        self.per *= 2;
    }
}

/// One bucket covering `bs` (in order).
pub fn merge(bs: &[Bucket]) -> Bucket {
    let mut out = bs[0];
    for b in &bs[1..] {
        out.last = b.last;
        out.min_ns = out.min_ns.min(b.min_ns);
        out.max_ns = out.max_ns.max(b.max_ns);
        out.slow |= b.slow;
        out.n += b.n;
    }
    out
}

/// `bs` merged down to at most `width` buckets (a strip as wide as the screen), min/max kept.
pub fn fit(bs: &[Bucket], width: usize) -> Vec<Bucket> {
    if width == 0 || bs.is_empty() {
        return Vec::new();
    }
    let per = bs.len().div_ceil(width);
    bs.chunks(per).map(merge).collect()
}

/// The rank × step grid of a heat map: `columns` equal step ranges over the steps every row
/// covers; each cell the slowest step time of that rank in that range (`None`: no step
/// there), so one rank's spike is never averaged away.
pub fn grid(rows: &[&[Bucket]], columns: usize) -> Vec<Vec<Option<Ns>>> {
    let lo = rows.iter().filter_map(|r| r.first()).map(|b| b.first).min();
    let hi = rows.iter().filter_map(|r| r.last()).map(|b| b.last).max();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return rows.iter().map(|_| vec![None; columns]).collect();
    };
    let span = u128::from(hi.saturating_sub(lo)) + 1;
    let col = |step: u64| (u128::from(step.saturating_sub(lo)) * columns as u128 / span) as usize;
    rows.iter()
        .map(|r| {
            let mut cells: Vec<Option<Ns>> = vec![None; columns];
            for b in *r {
                let (a, z) = (col(b.first), col(b.last).min(columns.saturating_sub(1)));
                for cell in cells.iter_mut().take(z + 1).skip(a) {
                    *cell = Some(cell.map_or(b.max_ns, |x| x.max(b.max_ns)));
                }
            }
            cells
        })
        .collect()
}

/// The heat map's cells: [`grid`]'s, each as its deviation from its column's median across
/// the rows — `x / median − 1` (`None`: no step there, or a column whose median is not
/// positive), what the screen shades.
pub fn heat(rows: &[&[Bucket]], columns: usize) -> Vec<Vec<Option<f64>>> {
    let grid = grid(rows, columns);
    let medians: Vec<Option<Ns>> = (0..columns)
        .map(|c| {
            let mut col: Vec<Ns> = grid.iter().filter_map(|r| r[c]).collect();
            col.sort_unstable();
            (!col.is_empty()).then(|| crate::analysis::stats::median_sorted(&col))
        })
        .collect();
    grid.iter()
        .map(|cells| {
            cells
                .iter()
                .zip(&medians)
                .map(|(cell, m)| match (cell, m) {
                    (Some(x), Some(m)) if *m > 0 => Some(*x as f64 / *m as f64 - 1.0),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// A device's utilisation (%) per step column, from its idleness buckets (1000 − utilisation
/// in ‰, `Live::device_steps`): each column the least busy sample of its step range, so an
/// idle device is never averaged away (`None`: no sample placed there).
pub fn utilisation(rows: &[&[Bucket]], columns: usize) -> Vec<Vec<Option<f64>>> {
    grid(rows, columns)
        .into_iter()
        .map(|cells| {
            cells
                .into_iter()
                .map(|c| c.map(|idle| 100.0 - idle as f64 / 10.0))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_cells_are_deviations_from_their_columns_median() {
        let b = |first, last, max_ns| Bucket {
            first,
            last,
            min_ns: max_ns,
            max_ns,
            slow: false,
            n: 1,
        };
        // Two columns over steps 0..=3; the median of three ranks' 100, 100, 150 is 100.
        let r0 = [b(0, 1, 100), b(2, 3, 200)];
        let r1 = [b(0, 1, 100), b(2, 3, 200)];
        let r2 = [b(0, 1, 150), b(2, 3, 100)];
        let rows: Vec<&[Bucket]> = vec![&r0, &r1, &r2];
        let h = heat(&rows, 2);
        assert_eq!(h[0], [Some(0.0), Some(0.0)]);
        assert_eq!(h[2], [Some(0.5), Some(-0.5)]);
        // A rank with no step in a column has no cell there.
        let r3 = [b(0, 1, 100)];
        let rows: Vec<&[Bucket]> = vec![&r0, &r3];
        assert_eq!(heat(&rows, 2)[1], [Some(0.0), None]);
    }

    #[test]
    fn a_spike_survives_downsampling_and_memory_stays_bounded() {
        let mut h = History::default();
        // 10 000 steps of 100 ns with one 5 000 ns spike at step 7777.
        for s in 0..10_000u64 {
            h.push(s, if s == 7777 { 5_000 } else { 100 }, s == 7777);
        }
        assert!(h.buckets.len() <= BUCKETS);
        // 10 000 steps need buckets of 64 (128 of 64 = 8192 < 10 000 ≤ 256 × 64).
        assert_eq!(h.per, 64);
        let spike: Vec<&Bucket> = h.buckets.iter().filter(|b| b.max_ns == 5_000).collect();
        assert_eq!(spike.len(), 1);
        assert!(spike[0].slow && spike[0].first <= 7777 && 7777 <= spike[0].last);
        assert_eq!(h.buckets.iter().map(|b| b.n).sum::<u32>(), 10_000);
        // Fitted to 10 columns, the spike is still the max of its column.
        let f = fit(&h.buckets, 10);
        assert!(f.len() <= 10);
        assert_eq!(f.iter().map(|b| b.max_ns).max(), Some(5_000));
        assert_eq!(f.iter().map(|b| b.min_ns).min(), Some(100));
    }

    #[test]
    fn the_grid_puts_each_rank_on_one_step_axis() {
        let b = |first, last, max_ns| Bucket {
            first,
            last,
            min_ns: 1,
            max_ns,
            slow: false,
            n: 1,
        };
        let r0 = [b(0, 4, 10), b(5, 9, 20)];
        let r1 = [b(5, 9, 30)];
        // Steps 0..=9 over 2 columns: 0–4 and 5–9.
        let g = grid(&[&r0, &r1], 2);
        assert_eq!(g, [vec![Some(10), Some(20)], vec![None, Some(30)]]);
    }
}
