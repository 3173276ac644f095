//! The rolling baseline of a live series: step times in arrival order and sorted.

use super::WINDOW;
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
}

impl Baseline {
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    pub(super) fn push(&mut self, ns: Ns) {
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

    fn compute(&self) -> Option<(Ns, Ns)> {
        let v = &self.sorted;
        if v.is_empty() {
            return None;
        }
        let median = crate::analysis::stats::median_sorted(v);
        let mad = kth_deviations(v, median);
        // Saturating: step times come from logs, which can print anything.
        let excess = (mad.saturating_mul(crate::analysis::cluster::MAD_FACTOR_E4) / 10_000)
            .max(median.saturating_mul(crate::analysis::cluster::MIN_EXCESS_PCT) / 100);
        Some((median, median.saturating_add(excess)))
    }
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
            vec![5, 1, 9, 3, 3, 8, 2, 40],
        ];
        for v in cases {
            let mut b = Baseline::default();
            b.reset(v.iter().copied());
            assert_eq!(b.limits(), threshold(&v), "{v:?}");
        }
        // Past the window the oldest time leaves.
        let mut b = Baseline::default();
        b.reset((0..WINDOW as Ns + 10).map(|x| x * 7 % 13));
        let kept: Vec<Ns> = (10..WINDOW as Ns + 10).map(|x| x * 7 % 13).collect();
        assert_eq!(b.limits(), threshold(&kept));
    }
}
