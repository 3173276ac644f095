//! Interval-union arithmetic on integer nanoseconds: the exact set algebra behind every
//! breakdown (C\M, C∩M, ...), so the parts of a span add up to the span to the nanosecond.

use crate::time::Ns;

/// A union of half-open intervals `[start, end)`, stored sorted and disjoint, with prefix sums
/// so the measure inside any window costs two binary searches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntervalSet {
    starts: Vec<Ns>,
    ends: Vec<Ns>,
    /// `cum[i]` = total length of intervals `0..i`.
    cum: Vec<Ns>,
}

impl IntervalSet {
    /// The union of arbitrary intervals (any order, overlapping, empty ones ignored).
    pub fn from_intervals(mut v: Vec<(Ns, Ns)>) -> Self {
        v.retain(|&(s, e)| e > s);
        v.sort_unstable();
        let mut out = Builder::default();
        for (s, e) in v {
            out.push(s, e);
        }
        out.finish()
    }

    /// The union of intervals given in order of start (as events of one lane are): linear,
    /// no sort.
    pub fn from_sorted(v: impl IntoIterator<Item = (Ns, Ns)>) -> Self {
        let mut out = Builder::default();
        let mut last = Ns::MIN;
        for (s, e) in v {
            debug_assert!(s >= last, "intervals must come in start order");
            last = s;
            if e > s {
                out.push(s, e);
            }
        }
        out.finish()
    }

    /// Number of disjoint intervals.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The disjoint intervals in order.
    pub fn iter(&self) -> impl Iterator<Item = (Ns, Ns)> + '_ {
        self.starts.iter().copied().zip(self.ends.iter().copied())
    }

    /// Total covered length.
    pub fn total(&self) -> Ns {
        self.cum.last().copied().unwrap_or(0)
    }

    /// Covered length inside `[lo, hi)`.
    pub fn measure_within(&self, lo: Ns, hi: Ns) -> Ns {
        if hi <= lo {
            return 0;
        }
        let first = self.ends.partition_point(|&e| e <= lo);
        let last = self.starts.partition_point(|&s| s < hi);
        if first >= last {
            return 0;
        }
        let full = self.cum[last] - self.cum[first];
        full - (lo - self.starts[first]).max(0) - (self.ends[last - 1] - hi).max(0)
    }

    /// The uncovered stretches of `[lo, hi)`, in order.
    pub fn gaps_within(&self, lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
        let mut out = Vec::new();
        let mut at = lo;
        let first = self.ends.partition_point(|&e| e <= lo);
        for k in first..self.starts.len() {
            if self.starts[k] >= hi {
                break;
            }
            if self.starts[k] > at {
                out.push((at, self.starts[k]));
            }
            at = at.max(self.ends[k]);
        }
        if at < hi {
            out.push((at, hi));
        }
        out
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &IntervalSet) -> IntervalSet {
        let mut out = Builder::default();
        let (mut i, mut j) = (0, 0);
        while i < self.len() || j < other.len() {
            let take_self =
                j >= other.len() || (i < self.len() && self.starts[i] <= other.starts[j]);
            if take_self {
                out.push(self.starts[i], self.ends[i]);
                i += 1;
            } else {
                out.push(other.starts[j], other.ends[j]);
                j += 1;
            }
        }
        out.finish()
    }

    /// `self ∩ other`.
    pub fn intersect(&self, other: &IntervalSet) -> IntervalSet {
        let mut out = Builder::default();
        let (mut i, mut j) = (0, 0);
        while i < self.len() && j < other.len() {
            let s = self.starts[i].max(other.starts[j]);
            let e = self.ends[i].min(other.ends[j]);
            if s < e {
                out.push(s, e);
            }
            if self.ends[i] < other.ends[j] {
                i += 1;
            } else {
                j += 1;
            }
        }
        out.finish()
    }
}

/// Appends intervals in start order, merging overlapping and touching ones.
#[derive(Default)]
struct Builder {
    set: IntervalSet,
}

impl Builder {
    fn push(&mut self, s: Ns, e: Ns) {
        let set = &mut self.set;
        if let Some(last) = set.ends.last_mut() {
            if s <= *last {
                *last = (*last).max(e);
                return;
            }
        }
        set.starts.push(s);
        set.ends.push(e);
    }

    fn finish(mut self) -> IntervalSet {
        let mut acc = 0;
        self.set.cum.reserve(self.set.starts.len() + 1);
        self.set.cum.push(0);
        for (s, e) in self.set.starts.iter().zip(&self.set.ends) {
            acc += e - s;
            self.set.cum.push(acc);
        }
        self.set
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn gaps_inside_a_window() {
        let s = IntervalSet::from_intervals(vec![(10, 20), (30, 40)]);
        assert_eq!(s.gaps_within(0, 50), vec![(0, 10), (20, 30), (40, 50)]);
        assert_eq!(s.gaps_within(15, 35), vec![(20, 30)]);
        assert_eq!(s.gaps_within(12, 18), vec![]);
        // A window that starts or ends on an interval's edge has no empty gap there.
        assert_eq!(s.gaps_within(10, 35), vec![(20, 30)]);
        assert_eq!(s.gaps_within(10, 20), vec![]);
        assert_eq!(IntervalSet::default().gaps_within(1, 4), vec![(1, 4)]);
    }

    use super::*;

    fn set(v: &[(Ns, Ns)]) -> IntervalSet {
        IntervalSet::from_intervals(v.to_vec())
    }

    #[test]
    fn union_merges_overlap_and_touching() {
        let s = set(&[(5, 10), (0, 3), (3, 4), (8, 12), (20, 20)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(0, 4), (5, 12)]);
        assert_eq!(s.total(), 11);
        // Nested intervals vanish into the one around them.
        let s = set(&[(0, 10), (2, 3), (4, 9), (10, 12)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(0, 12)]);
    }

    #[test]
    fn sorted_input_needs_no_sort() {
        let s = IntervalSet::from_sorted([(0, 3), (2, 5), (5, 5), (7, 9), (11, 11)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(0, 5), (7, 9)]);
        // An empty interval is no interval, even on its own.
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn measure_clips_to_window() {
        let s = set(&[(0, 10), (20, 30), (40, 50)]);
        assert_eq!(s.measure_within(5, 45), 5 + 10 + 5);
        assert_eq!(s.measure_within(10, 20), 0);
        assert_eq!(s.measure_within(22, 28), 6);
        assert_eq!(s.measure_within(-100, 100), 30);
        assert_eq!(s.measure_within(50, 40), 0);
        // An interval starting at the window's end adds nothing (equivalent either side of
        // `<`: its clipped length is 0).
        assert_eq!(s.measure_within(5, 20), 5);
    }

    #[test]
    fn set_algebra() {
        let a = set(&[(0, 10), (20, 30)]);
        let b = set(&[(5, 25)]);
        assert_eq!(
            a.intersect(&b).iter().collect::<Vec<_>>(),
            vec![(5, 10), (20, 25)]
        );
        assert_eq!(a.union(&b).iter().collect::<Vec<_>>(), vec![(0, 30)]);
        assert_eq!(a.intersect(&IntervalSet::default()).total(), 0);
        assert!(IntervalSet::default().is_empty() && !a.is_empty());
        // Touching intervals share no time: no empty interval in the intersection.
        assert!(set(&[(0, 10)]).intersect(&set(&[(10, 20)])).is_empty());
    }
}
