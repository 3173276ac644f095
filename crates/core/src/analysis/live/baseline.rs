//! The rolling baseline of a live series: step times in arrival order and sorted.

use super::{MIN_BASELINE, WINDOW};
use crate::time::Ns;
use std::collections::VecDeque;

/// The baseline: step times in arrival order, and the same sorted, so that the median is an
/// index and the MAD a merge of the deviations on either side (this runs every step).
#[derive(Debug, Default)]
pub(super) struct Baseline {
    order: VecDeque<Ns>,
    sorted: Vec<Ns>,
    /// (median, limit) of `sorted`, kept with it: read every step and every watchdog tick.
    cached: Option<(Ns, Ns)>,
    /// Times pushed so far (to tell which of the recent points are in `order`).
    pushes: u64,
    /// The times alternate between two levels: the IQR counts from 4 times on.
    two_levels: bool,
}

impl Baseline {
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    pub(super) fn push(&mut self, ns: Ns) {
        self.pushes += 1;
        self.order.push_back(ns);
        let at = self.sorted.partition_point(|&x| x < ns);
        self.sorted.insert(at, ns);
        if self.order.len() > WINDOW {
            let old = self.order.pop_front().expect("over the window");
            let at = self.sorted.partition_point(|&x| x < old);
            self.sorted.remove(at);
        }
        self.cached = self.compute();
    }

    /// Keeps the times `keep` accepts.
    pub(super) fn retain(&mut self, keep: impl Fn(Ns) -> bool) {
        self.order.retain(|&x| keep(x));
        self.sorted.retain(|&x| keep(x));
        self.cached = self.compute();
    }

    /// Starts again from `times`.
    pub(super) fn reset(&mut self, times: impl Iterator<Item = Ns>) {
        *self = Baseline::default();
        for t in times {
            self.push(t);
        }
    }

    /// [`crate::analysis::cluster::threshold`] of the baseline: (median, limit).
    pub(super) fn limits(&self) -> Option<(Ns, Ns)> {
        self.cached
    }

    /// Starts again from `times`, which alternate between two levels (see [`iqr`]).
    pub(super) fn reset_two_levels(&mut self, times: impl Iterator<Item = Ns>) {
        self.reset(times);
        self.two_levels = true;
        self.cached = self.compute();
    }

    /// Times pushed so far.
    pub(super) fn pushes(&self) -> u64 {
        self.pushes
    }

    /// The level (interquartile mean) and MAD of the times but the `newest` ones, when
    /// [`MIN_BASELINE`] remain: what a recent window is compared with.
    pub(super) fn before(&self, newest: usize) -> Option<(Ns, Ns)> {
        let n = self.order.len().checked_sub(newest)?;
        if n < MIN_BASELINE {
            return None;
        }
        let mut v: Vec<Ns> = self.order.iter().take(n).copied().collect();
        v.sort_unstable();
        let median = crate::analysis::stats::median_sorted(&v);
        Some((level(&v), kth_deviations(&v, median)))
    }

    fn compute(&self) -> Option<(Ns, Ns)> {
        let v = &self.sorted;
        if v.is_empty() {
            return None;
        }
        let median = crate::analysis::stats::median_sorted(v);
        let mad = kth_deviations(v, median);
        // Saturating: step times come from logs, which can print anything.
        let excess = (mad.saturating_mul(crate::analysis::cluster::MAD_FACTOR_E4) / 10_000)
            .max(iqr(v, self.two_levels).saturating_mul(IQR_FACTOR_E4) / 10_000)
            .max(median.saturating_mul(crate::analysis::cluster::MIN_EXCESS_PCT) / 100);
        Some((median, median.saturating_add(excess)))
    }
}

/// 3σ in interquartile ranges, × 10⁴ (σ = IQR / 1.349 for normal times, as σ = 1.4826·MAD):
/// the same limit as the MAD's on one mode, but one that stays wide when the times alternate
/// between two modes — the MAD of a bimodal window collapses onto whichever holds the median,
/// and every step of the other would be slow.
pub(super) const IQR_FACTOR_E4: i64 = 22_239;

/// Times a baseline needs before its IQR counts: a few slow times among five would widen
/// it (the IQR tolerates a quarter of outliers, the MAD half), two modes need many.
pub(super) const IQR_MIN_TIMES: usize = 16;

/// Q3 − Q1 of sorted `v` (nearest rank: the ⌈p·n⌉-th time; 0 under [`IQR_MIN_TIMES`], or
/// under 4 when the times are known to alternate between two levels).
fn iqr(v: &[Ns], two_levels: bool) -> Ns {
    let n = v.len();
    if n < 4 || (n < IQR_MIN_TIMES && !two_levels) {
        return 0;
    }
    v[(3 * n).div_ceil(4) - 1].saturating_sub(v[n.div_ceil(4) - 1])
}

/// The interquartile mean of sorted `v` (0 when empty): a level that, unlike the median,
/// stays put when the times alternate between two values (a median jumps between them).
pub(super) fn level(v: &[Ns]) -> Ns {
    let q = v.len() / 4;
    let mid = &v[q..v.len() - q];
    if mid.is_empty() {
        return 0;
    }
    let sum: i128 = mid.iter().map(|&x| i128::from(x)).sum();
    Ns::try_from(sum / mid.len() as i128).unwrap_or(Ns::MAX)
}

/// The median of |x − m| over sorted `v`: deviations grow walking left from `m`'s position
/// and walking right, so the k-th smallest comes from merging the two walks.
fn kth_deviations(v: &[Ns], m: Ns) -> Ns {
    let n = v.len();
    let split = v.partition_point(|&x| x < m);
    let (mut l, mut r) = (split, split);
    let mut next = || {
        let dl = (l > 0).then(|| m - v[l - 1]);
        let dr = (r < n).then(|| v[r] - m);
        match (dl, dr) {
            (Some(a), Some(b)) if a <= b => {
                l -= 1;
                a
            }
            (Some(a), None) => {
                l -= 1;
                a
            }
            (_, Some(b)) => {
                r += 1;
                b
            }
            (None, None) => 0,
        }
    };
    let mut last = 0;
    for _ in 0..n / 2 {
        last = next();
    }
    let hi = next();
    if n % 2 == 1 {
        hi
    } else {
        (last + hi).div_euclid(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cluster::threshold;

    #[test]
    fn the_baseline_gives_the_threshold_of_sorting() {
        let cases = [
            vec![100, 98, 102, 150, 100],
            vec![1000, 1000, 1000, 1300],
            vec![10, 11],
            vec![7],
        ];
        for v in cases {
            let mut b = Baseline::default();
            b.reset(v.iter().copied());
            assert_eq!(b.limits(), threshold(&v), "{v:?}");
        }
        // Where the IQR is the wider spread, it sets the limit: twice [1 2 3 3 5 8 9 40] has
        // median 4, MAD 2.5 (excess 11.1) and IQR 8 − 2 = 6 (excess 13.3). Under 16 times
        // only the MAD counts.
        let mut b = Baseline::default();
        b.reset([5, 1, 9, 3, 3, 8, 2, 40].repeat(2).into_iter());
        assert_eq!(b.limits(), Some((4, 4 + 13)));
        b.reset([5, 1, 9, 3, 3, 8, 2, 40].into_iter());
        assert_eq!(b.limits(), threshold(&[5, 1, 9, 3, 3, 8, 2, 40]));
        // Two alternating modes (18 times): the MAD (4) would put the limit at 122 and call
        // every 300 slow; the IQR (300 − 100) keeps it at 104 + 2.2239·200 = 548.8.
        let mut b = Baseline::default();
        let modes = [100, 300, 96, 304, 100, 300, 104, 296, 100];
        b.reset(modes.repeat(2).into_iter());
        assert_eq!(b.limits(), Some((104, 104 + 200 * IQR_FACTOR_E4 / 10_000)));
        // Past the window the oldest time leaves.
        let mut b = Baseline::default();
        b.reset((0..WINDOW as Ns + 10).map(|x| x * 7 % 13));
        let kept: Vec<Ns> = (10..WINDOW as Ns + 10).map(|x| x * 7 % 13).collect();
        assert_eq!(b.limits(), threshold(&kept));
    }
}
