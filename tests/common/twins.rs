//! Demo scenarios against their clean twins (issue 31): the expected finding's fix, replayed
//! on the faulty job, predicts the twin's measured step time.

use stepscope::analysis::whatif::choice::Choice;
use stepscope::report::whatif_cmd;
use stepscope::session::{self, DemoSpec, Scenario, Session, Settings};

/// A demo job of `ranks` ranks and `steps` steps, faulty or its clean twin.
pub fn demo(sc: Scenario, ranks: u32, steps: u32, clean: bool) -> Session {
    let spec = DemoSpec {
        ranks,
        steps,
        scenario: sc,
        clean,
        ..DemoSpec::default()
    };
    analyse(spec, sc.name())
}

/// The demo job of `spec`, loaded and analysed with the default settings.
pub fn analyse(spec: DemoSpec, title: &str) -> Session {
    let settings = Settings::default();
    let loaded = session::load(
        &session::demo_inputs(spec),
        &settings.load_options().unwrap(),
    )
    .expect("the demo loads");
    let opts = settings.analysis_options().unwrap();
    Session::analyse(loaded, opts, title.into(), Vec::new()).expect("it analyses")
}

/// Every scenario's expected finding, fixed by the replay, predicts its clean twin: per step,
/// the predicted step time lands within 5% of the twin's measured one, and the problem was
/// there (the faulty run is slower than its twin in some step). Also: the first finding is
/// the expected one at this size, and its saving is what the what-if says its fix saves.
pub fn twins_at(ranks: u32, steps: u32) {
    for sc in Scenario::ALL {
        twin_at(sc, ranks, steps);
    }
}

/// [`twins_at`] for one scenario (a test per scenario runs them in parallel at scale).
pub fn twin_at(sc: Scenario, ranks: u32, steps: u32) {
    let Some(rule) = sc.expected_rule() else {
        return;
    };
    let faulty = demo(sc, ranks, steps, false);
    let first = &faulty.analysis.findings[0];
    assert_eq!(first.rule, rule, "{} at {ranks} ranks", sc.name());
    // From 64 ranks on the small-messages fusion changes no transfer (each call already
    // moves its bytes as fast as the fitted line allows): the rule's estimate stays.
    if first.saves_ns.is_none() {
        assert!(
            sc == Scenario::SmallMessages && ranks >= 64,
            "{} at {ranks} ranks is replayed",
            sc.name()
        );
        return;
    }
    if sc == Scenario::LaunchBound {
        // No launch-free twin to simulate: the saving is checked against the measured
        // host dispatch below instead (tests/whatif.rs, launch_bound_…).
        return;
    }
    let clean = demo(sc, ranks, steps, true);
    let choice = Choice::Rule(rule.into());
    let run = whatif_cmd::run(&faulty.loaded.job, &faulty.analysis, &choice).unwrap();
    // The twin's measured step times, as its analysis's what-if measured them.
    let truth = &clean.analysis.whatif;
    let mut slower = false;
    let mut worst = (0.0f64, 0u32);
    for (p, t) in run.steps.iter().zip(&truth.steps) {
        assert_eq!(p.step, t.step);
        let off = (p.predicted_ns - t.measured_ns).abs() as f64 / t.measured_ns as f64;
        assert!(
            off <= 0.05,
            "{} at {ranks} ranks, step {}: predicted {} vs clean {} ({:+.1}%)",
            sc.name(),
            p.step,
            p.predicted_ns,
            t.measured_ns,
            off * 100.0
        );
        slower |= p.measured_ns as f64 > 1.04 * t.measured_ns as f64;
        let signed = (p.predicted_ns - t.measured_ns) as f64 / t.measured_ns as f64;
        if signed.abs() >= worst.0.abs() {
            worst = (signed, p.step.0);
        }
    }
    // The figures docs/metrics.md records (`--nocapture` prints them).
    println!(
        "twin {} at {ranks} ranks: worst step {} {:+.1}%",
        sc.name(),
        worst.1,
        worst.0 * 100.0
    );
    assert!(slower, "{}: the problem is there", sc.name());
}
