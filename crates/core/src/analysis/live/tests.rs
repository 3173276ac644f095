//! Unit tests of the live analysis: patterns of slow steps, restarts, repeats, evidence.

use super::*;
use crate::model::live::Provenance;

fn rec(step: u64, ms: i64) -> Record {
    Record {
        format: "test",
        rank: None,
        host: None,
        said: Said::Step(Step {
            step: Some(step),
            epoch: None,
            printed_step: None,
            of: None,
            time_ns: Some(ms * 1_000_000),
            provenance: Provenance::PerStep,
            cumulative_ns: None,
            at_ns: None,
            metrics: Vec::new(),
        }),
    }
}

fn run(times: &[(u64, i64)]) -> Vec<Alert> {
    let mut l = Live::default();
    for &(s, ms) in times {
        l.add(0, &rec(s, ms));
    }
    l.finish();
    l.alerts
}

#[test]
fn times_no_step_takes_are_not_judged_and_huge_step_gaps_saturate() {
    // 13-day-plus and negative "step times" are no step's: not judged, no alert. A jump of
    // 2^48 step numbers covers that many steps: goodput's sums saturate, never overflow;
    // numbers past 2^48 are none (the step after the last).
    let mut t: Vec<(u64, i64)> = (1..=12).map(|s| (s, 100)).collect();
    t.push((13, i64::MAX / 1_000_000));
    t.push((14, -5));
    t.extend([(MAX_STEP, 900), (MAX_STEP + 1, 100), (u64::MAX, 100)]);
    let mut l = Live::default();
    for &(s, ms) in &t {
        l.add(0, &rec(s, ms));
    }
    l.finish();
    assert_eq!(
        l.counts.timed_steps, 15,
        "two of seventeen had no step's time"
    );
    let share = l.series.values().next().unwrap().goodput.share().unwrap();
    assert!((0.0..=1.0).contains(&share), "{share}");
}

#[test]
fn start_up_is_never_slow_and_a_one_off_is_one_alert() {
    // Step 1 (start-up) takes 10 s; then 100 ms steps and one 200 ms step at 8: the
    // baseline median is 100, the limit 105 (5% floor): step 8 is slow, alone.
    let mut t = vec![(1, 10_000)];
    t.extend((2..=12).map(|s| (s, if s == 8 { 200 } else { 100 })));
    let a = run(&t);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        (a[0].pattern.clone(), a[0].steps.clone()),
        (Pattern::OneOff, vec![8])
    );
    assert_eq!(
        (a[0].median_ns, a[0].threshold_ns),
        (100_000_000, 105_000_000)
    );
}

#[test]
fn bursts_periods_and_regime_changes() {
    // Steps 8 and 9 slow: one burst alert.
    let t: Vec<_> = (1..=14)
        .map(|s| (s, if s == 8 || s == 9 { 300 } else { 100 }))
        .collect();
    let a = run(&t);
    assert_eq!(a.len(), 1);
    assert_eq!(
        (a[0].pattern.clone(), a[0].steps.clone()),
        (Pattern::Burst, vec![8, 9])
    );
    // A stall every 10 steps (10, 20, 30, 40): two one-offs, then the period is
    // recognised at the third, and the fourth raises nothing.
    let t: Vec<_> = (1..=45)
        .map(|s| (s, if s % 10 == 0 { 300 } else { 100 }))
        .collect();
    let a = run(&t);
    let patterns: Vec<_> = a.iter().map(|x| x.pattern.clone()).collect();
    assert_eq!(
        patterns,
        [
            Pattern::OneOff,
            Pattern::OneOff,
            Pattern::Periodic { period: 10 }
        ]
    );
    // From step 10 on every step takes 150 ms: one regime change, then quiet.
    let t: Vec<_> = (1..=40)
        .map(|s| (s, if s >= 10 { 150 } else { 100 }))
        .collect();
    let a = run(&t);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        a[0].pattern,
        Pattern::RegimeChange {
            from_ns: 100_000_000,
            to_ns: 150_000_000
        }
    );
}

#[test]
fn an_alternating_series_that_steps_up_is_one_regime_change() {
    // 100/60 ms on odd/even steps, then 200/120 from step 41: the alternation is no slow
    // step; the step up is one regime change (level 80 → 160 ms), no one-offs before it.
    let t: Vec<_> = (1..=100)
        .map(|s| {
            let base = if s % 2 == 1 { 100 } else { 60 };
            (s, if s > 40 { 2 * base } else { base })
        })
        .collect();
    let a = run(&t);
    assert_eq!(a.len(), 1, "{a:?}");
    let Pattern::RegimeChange { from_ns, to_ns } = a[0].pattern else {
        panic!("{a:?}");
    };
    // The baseline before the window is mostly 100/60 pairs (its interquartile mean
    // within them); the later half of the window is all 200/120.
    assert!((75_000_000..=85_000_000).contains(&from_ns), "{from_ns}");
    assert_eq!(to_ns, 160_000_000);
    assert!(a[0].steps.contains(&41), "{:?}", a[0].steps);
}

#[test]
fn the_same_step_again_is_counted_once_and_is_no_restart() {
    // Every rank prints step N (the times differ in the last digit); step 8 is slow.
    let mut l = Live::default();
    for s in 1..=12 {
        for ms in [100, 101, 100] {
            l.add(0, &rec(s, if s == 8 { 3 * ms } else { ms }));
        }
    }
    l.finish();
    assert_eq!(l.counts.repeats, 24);
    assert!(!l.events().any(|e| e.0 == EventKind::Restart));
    assert_eq!(l.alerts.len(), 1, "{:?}", l.alerts);
    assert_eq!(l.alerts[0].steps, [8]);
}

#[test]
fn a_step_number_going_back_is_a_restart_whose_first_step_is_start_up() {
    let mut t: Vec<_> = (1..=8).map(|s| (s, 100)).collect();
    t.push((1, 5_000));
    t.extend((2..=8).map(|s| (s, 100)));
    assert!(run(&t).is_empty());
}

#[test]
fn steps_without_a_time_take_it_from_timestamps() {
    let mut l = Live::default();
    for (s, at) in [(10, 0), (20, 10_000), (30, 20_000)] {
        l.add(
            0,
            &Record {
                format: "t",
                rank: Some(0),
                host: None,
                said: Said::Step(Step {
                    step: Some(s),
                    epoch: None,
                    printed_step: None,
                    of: None,
                    time_ns: None,
                    provenance: Provenance::FromTimestamps,
                    cumulative_ns: None,
                    at_ns: Some(at * 1_000_000),
                    metrics: Vec::new(),
                }),
            },
        );
    }
    // 10 s over 10 steps: 1 s each, from the second line on.
    assert_eq!(l.counts.timed_steps, 2);
}
