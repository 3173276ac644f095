//! The replay's self-check (issue 31's first part): replaying each step's measured durations
//! over its dependency graph gives back every rank's measured end of the step, within 2% of
//! the step time, on every demo scenario and every whole real job in `../shared/traces`.

mod common;

use stepscope::analysis::whatif::check;
use stepscope::session::{Scenario, Session, Settings};

/// The largest replay error over the job's steps, and how many steps were replayed.
fn worst(s: &Session) -> (f64, usize) {
    let (job, an) = (&s.loaded.job, &s.analysis);
    let checks: Vec<_> = job
        .steps
        .iter()
        .filter_map(|&st| check(job, &an.comm, st))
        .collect();
    let worst = checks.iter().map(|c| c.error).fold(0.0, f64::max);
    (worst, checks.len())
}

#[test]
fn every_scenario_replays_within_2_percent() {
    for sc in Scenario::ALL {
        let settings = Settings {
            scenario: sc,
            ..Settings::default()
        };
        let s = Session::open(&[], &settings).expect("the demo loads");
        let (err, steps) = worst(&s);
        assert_eq!(steps, s.loaded.job.steps.len(), "{}", sc.name());
        assert!(
            err <= 0.02,
            "{}: replay error {:.2}%",
            sc.name(),
            err * 100.0
        );
    }
}

#[test]
fn every_real_job_replays_within_2_percent() {
    let Some(shared) = common::shared() else {
        return;
    };
    let jobs = [
        "ext/param-dlrm8",
        "ext/kineto-resnet50-2021",
        "ext/tracelens-mi300-ddp-resnet18",
        "ext/tracelens-mi300-sglang-decode",
        "torch-cpu",
        "ascend/msinsight/test/data/pytorch/text/level1",
    ];
    for j in jobs {
        let s = Session::open(&[shared.join("traces").join(j)], &Settings::default()).expect(j);
        let (err, steps) = worst(&s);
        assert!(steps > 0, "{j}: no step replayed");
        assert!(err <= 0.02, "{j}: replay error {:.2}%", err * 100.0);
    }
}

/// A pipeline's sends may complete before their receives are posted: the replay does not
/// make a send wait for its receive (before that rule, the stage-imbalance demo replayed 38%
/// long).
#[test]
fn a_pipeline_replays_without_making_sends_wait_for_receives() {
    let settings = Settings {
        scenario: Scenario::StageImbalance,
        ..Settings::default()
    };
    let s = Session::open(&[], &settings).expect("the demo loads");
    let (job, an) = (&s.loaded.job, &s.analysis);
    let c = check(job, &an.comm, job.steps[0]).expect("a replay");
    assert_eq!(c.ranks.len(), 8);
    for (rank, measured, replayed) in &c.ranks {
        assert!(
            (replayed - measured).abs() <= c.measured_ns / 50,
            "rank {rank}"
        );
    }
}

/// The data-loader fix, held to the run without the problem: the default demo is the
/// straggler scenario plus one 300 ms loader stall on rank 5 in step 13, and the dataloader
/// scenario a healthy job whose every rank waits for its loader; replaying each without the
/// loader must land within 5% of its twin's measured step.
#[test]
fn removing_the_loader_stall_predicts_the_run_without_it() {
    use stepscope::analysis::whatif::{Fix, predict};
    let open = |sc| {
        let settings = Settings {
            scenario: sc,
            ..Settings::default()
        };
        Session::open(&[], &settings).expect("the demo loads")
    };
    // (faulty scenario, its clean twin, step, how much slower the faulty step is at least).
    let pairs = [
        (Scenario::Default, Scenario::Straggler, 13, 4.0),
        // Every rank waits ~25 ms for its loader in every step; the twin loads in time.
        (
            Scenario::Dataloader,
            Scenario::SkewedClocksButHealthy,
            12,
            1.3,
        ),
    ];
    for (bad, good, step, slower) in pairs {
        let (faulty, clean) = (open(bad), open(good));
        let step = stepscope::model::StepNo(step);
        let p = predict(
            &faulty.loaded.job,
            &faulty.analysis.comm,
            step,
            Fix::DataLoader,
        )
        .expect("a prediction");
        let truth = check(&clean.loaded.job, &clean.analysis.comm, step)
            .expect("a replay")
            .measured_ns;
        let off = (p.predicted_ns - truth).abs() as f64 / truth as f64;
        let what = format!("{} step {step}", bad.name());
        assert!(
            p.measured_ns as f64 > slower * truth as f64 * 0.9,
            "{what}: the stall is there"
        );
        assert!(
            off <= 0.05,
            "{what}: predicted {} vs measured {truth}: {:.1}% off",
            p.predicted_ns,
            off * 100.0
        );
    }
}
