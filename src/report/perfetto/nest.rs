//! Tracks that nest: Perfetto's JSON importer (and chrome://tracing) drop or misdraw a slice
//! that overlaps another of its thread without nesting inside it, which real traces have
//! (device annotations across kernels, Ascend tasks, one collective's wait overlapping the
//! next). Each slice goes to the first sub-track of its track where it nests; a track needs
//! a second sub-track only where its slices really overlap, and says so in its name.

use crate::time::Ns;

/// Thread ids of a track's sub-tracks: sub-track `k` of track `tid` is `tid + k * STRIDE`
/// (above every lane and stepscope track id).
pub const STRIDE: u64 = 10_000_000;

/// The thread id of sub-track `k` of track `tid`.
pub fn sub_tid(tid: u64, k: u32) -> u64 {
    tid + u64::from(k) * STRIDE
}

/// The name of sub-track `k` of a track named `name`.
pub fn sub_name(name: &str, k: u32) -> String {
    format!("{name} (overlap {k})")
}

/// The most sub-tracks a track gets: slices that overlap deeper than this (a hostile or
/// corrupt trace: thousands of slices each overlapping all the others) go to the last one,
/// where a viewer may hide some, rather than costing time quadratic in their number.
pub const MAX_SUBTRACKS: usize = 64;

/// Places slices of one track, in order of start (a longer slice first at equal starts),
/// on sub-tracks where each nests.
#[derive(Debug, Default)]
pub struct Nester {
    /// Per sub-track, the ends of the open slices, innermost last.
    open: Vec<Vec<Ns>>,
}

impl Nester {
    /// The sub-track of the slice `[start, end]`: the first where it starts after the open
    /// slices end or ends within the innermost one still open.
    pub fn place(&mut self, start: Ns, end: Ns) -> u32 {
        for (k, stack) in self.open.iter_mut().enumerate() {
            while stack.last().is_some_and(|&e| e <= start) {
                stack.pop();
            }
            if stack.last().is_none_or(|&e| end <= e) {
                stack.push(end);
                return k as u32;
            }
        }
        if self.open.len() == MAX_SUBTRACKS {
            return (MAX_SUBTRACKS - 1) as u32;
        }
        self.open.push(vec![end]);
        (self.open.len() - 1) as u32
    }

    /// Sub-tracks used beyond the first.
    pub fn extra(&self) -> u32 {
        self.open.len().saturating_sub(1) as u32
    }
}

/// The order to place slices in (start, then longer first) and each slice's sub-track;
/// `spans` are (start, duration) of one track's slices; returns (sub-track per slice, extra
/// sub-tracks).
pub fn place_all(spans: &[(Ns, Ns)]) -> (Vec<u32>, u32) {
    let mut order: Vec<u32> = (0..spans.len() as u32).collect();
    let key = |i: u32| {
        let (s, d) = spans[i as usize];
        (s, std::cmp::Reverse(d))
    };
    if !order.is_sorted_by_key(|&i| key(i)) {
        order.sort_by_key(|&i| key(i));
    }
    let mut n = Nester::default();
    let mut sub = vec![0; spans.len()];
    for i in order {
        let (s, d) = spans[i as usize];
        sub[i as usize] = n.place(s, s.saturating_add(d.max(0)));
    }
    (sub, n.extra())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_sequential_slices_share_a_track_and_overlaps_do_not() {
        // [0,10] holds [2,5] and [5,9]; [8,12] overlaps [5,9] and [0,10] without nesting;
        // [12,13] follows everything.
        let spans = [(0, 10), (2, 3), (5, 4), (8, 4), (12, 1)];
        assert_eq!(place_all(&spans), (vec![0, 0, 0, 1, 0], 1));
        // Equal spans nest; a zero-length slice at an end is after it.
        assert_eq!(place_all(&[(0, 5), (0, 5), (5, 0)]), (vec![0, 0, 0], 0));
        // Out of order input is placed in start order.
        assert_eq!(place_all(&[(8, 4), (0, 10)]), (vec![1, 0], 1));
    }

    #[test]
    fn slices_all_overlapping_each_other_stop_at_the_last_sub_track() {
        // 10 000 slices, each starting inside every earlier one and ending after it.
        let spans: Vec<(Ns, Ns)> = (0..10_000).map(|i| (i, 20_000)).collect();
        let (sub, extra) = place_all(&spans);
        assert_eq!(extra as usize, MAX_SUBTRACKS - 1);
        assert_eq!(sub[..3], [0, 1, 2]);
        assert!(sub.iter().all(|&k| (k as usize) < MAX_SUBTRACKS));
    }
}
