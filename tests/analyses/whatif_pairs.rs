//! The what-if held to real re-runs (issue 31): pairs of real PyTorch CPU (gloo) runs recorded
//! by `scripts/record_pairs.py` (testdata/pairs), each with an injected problem and clean, same
//! model, seed and data. The fix of the problem's finding, replayed on the faulty run, must
//! help and must not predict below the clean run. How close it lands is recorded in
//! docs/metrics.md ("Slowdown", accuracy) — on gloo it is not within 5% yet: the table there
//! says why.

use crate::common;

use stepscope::analysis::whatif::choice::Choice;
use stepscope::report::whatif_cmd;
use stepscope::session::{Session, Settings};

/// Σ measured and Σ predicted over the steps of `dir` with `choice`.
fn predict(dir: &str, choice: &Choice) -> (i64, i64) {
    let path = common::testdata(&format!("pairs/{dir}"));
    let s = Session::open(&[path], &Settings::default()).expect(dir);
    let run = whatif_cmd::run(&s.loaded.job, &s.analysis, choice).expect(dir);
    let explained = run.steps.iter().filter(|x| x.explains).count();
    assert!(explained > 0, "{dir}: the graph explains some step");
    (run.measured_ns, run.predicted_ns)
}

/// Each pair's fix, and how far from the clean run its prediction may land (a share of the
/// clean run's time): the accuracy docs/metrics.md records, held so that it cannot regress.
/// Small buckets stay far off: on a 2-core VM the transfers compete with compute for the
/// cores, which the replay does not model (docs/metrics.md, "Slowdown").
const PAIRS: [(&str, &str, f64); 3] = [
    ("slow-rank", "straggler", 0.20),
    ("loader-stall", "dataloader", 0.15),
    ("small-buckets", "small_messages", 0.45),
];

#[test]
fn every_real_pair_predicts_near_the_clean_run() {
    for (problem, rule, off) in PAIRS {
        let choice = Choice::Rule(rule.into());
        let (faulty, predicted) = predict(&format!("{problem}/faulty"), &choice);
        let (clean, _) = predict(&format!("{problem}/clean"), &Choice::Ideal);
        assert!(
            faulty as f64 > 1.2 * clean as f64,
            "{problem}: the problem is there"
        );
        assert!(
            predicted < faulty,
            "{problem}: fixing {rule} helps ({predicted} vs {faulty})"
        );
        let miss = (predicted - clean).abs() as f64 / clean as f64;
        assert!(
            miss <= off,
            "{problem}: predicted {predicted} is {:.0}% off the clean run's {clean}",
            miss * 100.0
        );
    }
}

/// Replaying the measured durations reproduces every real pair's steps (the self-check
/// holds on gloo's run-loop threads, whose records may end after the waiting thread woke).
#[test]
fn every_real_pair_replays_within_2_percent() {
    for (problem, _, _) in PAIRS {
        for run in ["faulty", "clean"] {
            let path = common::testdata(&format!("pairs/{problem}/{run}"));
            let s = Session::open(&[path], &Settings::default()).expect(problem);
            let w = &s.analysis.whatif;
            for st in &w.steps {
                let err = st.replay_error;
                assert!(err <= 0.02, "{problem}/{run} step {}: {err}", st.step.0);
            }
        }
    }
}

/// The loader stall's finding names rank 1, the rank that sleeps in its loader.
#[test]
fn the_real_loader_stall_is_found_on_its_rank() {
    let path = common::testdata("pairs/loader-stall/faulty");
    let s = Session::open(&[path], &Settings::default()).unwrap();
    let f = s
        .analysis
        .findings
        .iter()
        .find(|f| f.rule == "dataloader")
        .expect("a dataloader finding");
    assert_eq!(f.evidence.ranks, vec![stepscope::model::RankId(1)]);
    assert!(f.saves_ns.is_some_and(|x| x > 0));
}
