//! Property tests (proptest) of the time arithmetic on extreme values: the interval sets
//! every breakdown is made of, and rank step spans, over instants anywhere in the range the
//! readers accept (`stepscope::time`: from 2^60 ns before to 2^62 ns after the clock's zero).
//! Debug builds check overflow, so an operation that overflows fails here. The timeline's
//! layout (ruler, raster, zoom) has its own in its modules.

use proptest::prelude::*;
use stepscope::analysis::intervals::IntervalSet;
use stepscope::analysis::steps::rank_spans;
use stepscope::model::{EventIx, HostStep, Kind, NO_STEP, Rank, RawSpan, StepNo};
use stepscope::time::{MAX_NS, MAX_RANK_EXTENT_NS, MIN_NS, Ns};

/// Instants of the range, biased to its ends and to zero.
fn instant() -> impl Strategy<Value = Ns> {
    prop_oneof![
        MIN_NS..=MAX_NS,
        MIN_NS..=MIN_NS + 1_000,
        MAX_NS - 1_000..=MAX_NS,
        -1_000i64..=1_000,
    ]
}

fn interval() -> impl Strategy<Value = (Ns, Ns)> {
    (instant(), instant()).prop_map(|(a, b)| (a.min(b), a.max(b)))
}

fn set() -> impl Strategy<Value = (Vec<(Ns, Ns)>, IntervalSet)> {
    proptest::collection::vec(interval(), 0..30).prop_map(|v| {
        let s = IntervalSet::from_intervals(v.clone());
        (v, s)
    })
}

proptest! {
    /// Union and intersection bound each other's totals; a window is exactly its measure
    /// plus its gaps; the whole range measures the total.
    #[test]
    fn interval_sets_partition_any_window((_, a) in set(), (_, b) in set(), w in interval()) {
        let (u, i) = (a.union(&b), a.intersect(&b));
        let wide = |s: &IntervalSet| i128::from(s.total());
        prop_assert!(u.total() >= a.total().max(b.total()));
        prop_assert!(wide(&u) <= wide(&a) + wide(&b));
        prop_assert!(i.total() <= a.total().min(b.total()));
        prop_assert_eq!(wide(&u) + wide(&i), wide(&a) + wide(&b));
        let (lo, hi) = w;
        let gaps: Ns = a.gaps_within(lo, hi).iter().map(|(s, e)| e - s).sum();
        prop_assert_eq!(a.measure_within(lo, hi) + gaps, hi - lo);
        prop_assert_eq!(a.measure_within(MIN_NS, MAX_NS), a.total());
    }

    /// A set's intervals are disjoint, sorted, and cover exactly what its inputs cover.
    #[test]
    fn interval_sets_are_disjoint_and_sorted((v, a) in set()) {
        let spans: Vec<(Ns, Ns)> = a.iter().collect();
        for w in spans.windows(2) {
            prop_assert!(w[0].1 < w[1].0, "{:?}", w);
        }
        for &(s, e) in &v {
            if e > s {
                prop_assert_eq!(a.measure_within(s, e), e - s);
            }
        }
    }

    /// Step spans of any rank whose events keep the range abut, never run backwards, and
    /// contain their host steps' starts.
    #[test]
    fn step_spans_abut(
        base in prop_oneof![Just(MIN_NS), Just(0), Just(MAX_NS - MAX_RANK_EXTENT_NS)],
        marks in proptest::collection::vec((0..MAX_RANK_EXTENT_NS, 0..MAX_RANK_EXTENT_NS), 1..8),
        work in proptest::collection::vec((0..MAX_RANK_EXTENT_NS, 0..MAX_RANK_EXTENT_NS, 0usize..9), 0..40),
        pre in proptest::option::of(0..MAX_RANK_EXTENT_NS),
    ) {
        let mut starts: Vec<Ns> = marks.iter().map(|m| m.0).collect();
        starts.sort_unstable();
        let steps = starts
            .iter()
            .zip(&marks)
            .enumerate()
            .map(|(k, (&s, m))| HostStep {
                number: StepNo(k as u32),
                start: base + s,
                end: base + s + m.1.min(MAX_RANK_EXTENT_NS - s),
                synthetic: false,
            })
            .collect();
        let mut rank = Rank { steps, ..Rank::default() };
        for &(s, d, step) in &work {
            let e = &mut rank.events;
            e.start.push(base + s);
            e.dur.push(d.min(MAX_RANK_EXTENT_NS - s));
            e.name.push(0);
            e.lane.push(0);
            e.kind.push(Kind::Compute);
            e.step.push(if step < rank.steps.len() { step as u32 } else { NO_STEP });
            e.link.push(EventIx::NONE);
            e.op.push(EventIx::NONE);
            e.raw.push(RawSpan::default());
        }
        rank.pre_window.end = pre.map(|p| base + p);
        let spans = rank_spans(&rank);
        prop_assert_eq!(spans.len(), rank.steps.len());
        for (k, s) in spans.iter().enumerate() {
            prop_assert!(s.start <= s.end);
            prop_assert!(s.len() >= 0 && s.len() <= MAX_RANK_EXTENT_NS);
            if let Some(next) = spans.get(k + 1) {
                prop_assert_eq!(s.end, next.start);
            }
        }
    }
}
