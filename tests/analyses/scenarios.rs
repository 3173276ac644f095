//! The demo's scenarios (`--scenario NAME`): each job carries one canonical problem, and the
//! advisor's first finding must name it — with its rank, step or stage where it has one —
//! while the healthy-but-skewed job draws no finding worth acting on.

use stepscope::analysis::advisor::{Finding, Severity};
use stepscope::model::{RankId, StepNo};
use stepscope::session::{DemoSpec, Scenario, Session, Settings};

fn open(scenario: Scenario) -> Session {
    let settings = Settings {
        scenario,
        ..Settings::default()
    };
    Session::open(&[], &settings).expect("the demo loads")
}

fn first(s: &Session) -> &Finding {
    s.analysis.findings.first().expect("a finding")
}

fn title(f: &Finding) -> String {
    stepscope::prose::claim_words(&f.claim).title
}

fn ids(v: &[u32]) -> Vec<RankId> {
    v.iter().copied().map(RankId).collect()
}

#[test]
fn every_scenario_leads_with_its_problem() {
    for sc in Scenario::ALL {
        let s = open(sc);
        match sc.expected_rule() {
            Some(rule) => assert_eq!(first(&s).rule, rule, "{}: {:#?}", sc.name(), first(&s)),
            None => assert!(
                s.analysis
                    .findings
                    .iter()
                    .all(|f| f.severity == Severity::Low),
                "{}: {:#?}",
                sc.name(),
                s.analysis.findings
            ),
        }
        // Whatever the problem, the findings never claim more than the step time.
        let total: f64 = s.analysis.findings.iter().map(|f| f.impact_pct).sum();
        assert!(total <= 1.0 + 1e-9, "{}: {total}", sc.name());
    }
}

#[test]
fn names_and_parsing_round_trip() {
    for sc in Scenario::ALL {
        assert_eq!(Scenario::parse(sc.name()), Some(sc));
    }
    assert_eq!(Scenario::parse("nope"), None);
    assert_eq!(Scenario::default(), Scenario::Default);
}

#[test]
fn a_straggler_is_named_with_its_rank() {
    let s = open(Scenario::Straggler);
    let f = first(&s);
    assert_eq!(f.evidence.ranks, ids(&[3]));
    assert!(f.evidence.steps.len() >= 5, "{:?}", f.evidence.steps);
    // No slow step: the straggler slows every step alike.
    assert!(s.analysis.slow_steps.is_empty());
}

#[test]
fn a_slow_step_of_every_rank_blames_no_rank() {
    let s = open(Scenario::SlowStep);
    let f = first(&s);
    assert_eq!(f.evidence.steps, vec![StepNo(13)]);
    assert!(f.evidence.ranks.is_empty(), "{:?}", f.evidence.ranks);
    let slow = &s.analysis.slow_steps[0];
    assert!(
        slow.shared_growth && slow.culprit_rank.is_none(),
        "{slow:?}"
    );
    assert!(
        title(f).contains("every rank's own work grew"),
        "{}",
        title(f)
    );
    // Every kernel 60% longer: the step grew by about 60% of its compute.
    assert!(slow.time_ns * 10 > slow.median_ns * 13, "{slow:?}");
}

#[test]
fn stage_imbalance_names_the_heavy_stage() {
    let s = open(Scenario::StageImbalance);
    let f = first(&s);
    assert_eq!(f.evidence.ranks, ids(&[4, 5, 6, 7]));
    let stages = s.analysis.stages.as_ref().expect("stages");
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0].ranks, ids(&[0, 1, 2, 3]));
    // 13 layers against 10: the heavy stage computes ~1.3× the light one, and the pace it
    // sets costs (1.3 − 1.15) / 1.3 ≈ 11.5% of its compute.
    let ratio = stages[1].compute_ns as f64 / stages[0].compute_ns as f64;
    assert!((1.25..1.35).contains(&ratio), "{ratio}");
    let cost = stages[1].pace_cost_ns as f64 / stages[1].compute_ns as f64;
    assert!((0.10..0.13).contains(&cost), "{cost}");
    // Independent pipelines align among themselves: every rank has a reference.
    assert!(s.analysis.comm.offsets.iter().all(|o| o.via.is_some()));
    // Activations are no "small messages", and the receives' waits are no late rank.
    let rules: Vec<&str> = s.analysis.findings.iter().map(|f| f.rule).collect();
    assert!(!rules.contains(&"small_messages") && !rules.contains(&"comm_wait_dominated"));
}

#[test]
fn small_messages_fold_in_their_poor_overlap() {
    let s = open(Scenario::SmallMessages);
    let f = first(&s);
    assert!(f.folded.iter().any(|x| x.rule == "poor_overlap"), "{f:#?}");
    assert_eq!(f.evidence.numbers["calls"].value(), 9600.0);
}

#[test]
fn every_rank_stalling_on_data_is_said_so() {
    let s = open(Scenario::Dataloader);
    let f = first(&s);
    assert!(
        title(f).contains("every step of every rank"),
        "{}",
        title(f)
    );
    assert!(f.impact_pct > 0.2, "{}", f.impact_pct);
}

#[test]
fn host_bound_scenarios_name_their_own_cause() {
    let s = open(Scenario::LaunchBound);
    assert!(first(&s).folded.iter().any(|x| x.rule == "tiny_kernels"));
    let s = open(Scenario::AllocatorChurn);
    // Two calls per forward layer (12) per step after the first (5) on 8 ranks.
    assert_eq!(first(&s).evidence.numbers["calls"].value(), 960.0);
    // A sum over 8 ranks says so (it stands beside a 445 ms step).
    let title = stepscope::prose::claim_words(&first(&s).claim).title;
    assert!(
        title.starts_with("960 device malloc/free calls on 8 ranks take 1.04 s summed"),
        "{title}"
    );
    let s = open(Scenario::GraphCapture);
    let rules: Vec<&str> = s.analysis.findings.iter().map(|f| f.rule).collect();
    assert!(!rules.contains(&"launch_bound"), "{rules:?}");
    // The replayed kernels carry no operator: the roofline says so rather than guessing.
    assert!(!rules.contains(&"under_utilized_gemms"), "{rules:?}");
}

#[test]
fn skewed_clocks_are_recovered_exactly() {
    let spec = DemoSpec {
        scenario: Scenario::SkewedClocksButHealthy,
        ..DemoSpec::default()
    };
    let s = open(spec.scenario);
    for o in &s.analysis.comm.offsets {
        let want = spec.clock_offset(0) - spec.clock_offset(o.rank.0);
        assert_eq!(o.offset_ns, want, "rank {}", o.rank);
    }
    // Up to 80 ms apart: far more than a step's waiting, yet nobody is a straggler.
    let spread = (0..8).map(|r| spec.clock_offset(r)).max().unwrap()
        - (0..8).map(|r| spec.clock_offset(r)).min().unwrap();
    assert!(spread > 100_000_000, "{spread}");
    assert!(s.analysis.stragglers.iter().all(|x| !x.flagged));
    assert!(s.analysis.slow_steps.is_empty());
}

#[test]
fn overlapping_buckets_charge_their_common_wait_once() {
    let s = open(Scenario::OverlappingBuckets);
    let f = first(&s);
    assert_eq!(f.evidence.ranks, ids(&[3]));
    // The straggler is flagged in both gradient groups; its cost is the union, so it matches
    // the plain straggler job's within a few percent instead of doubling.
    let plain = open(Scenario::Straggler);
    let (a, b) = (f.impact_pct, first(&plain).impact_pct);
    assert!((a - b).abs() < 0.05 * b, "{a} vs {b}");
    let flagged: Vec<_> = s.analysis.stragglers.iter().filter(|x| x.flagged).collect();
    assert_eq!(flagged.len(), 2, "{flagged:?}");
}

use crate::common;

#[test]
fn the_command_line_opens_writes_and_refuses_scenarios() {
    // `--scenario` opens the demo job of that scenario (the report off a terminal).
    let out = common::run(["report", "--scenario", "graph-capture", "--format", "json"]);
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["findings"][0]["rule"], "graph_capture");
    // The TUI opens it too, titled by its scenario.
    let out = common::run([
        "snapshot",
        "--scenario",
        "stage-imbalance",
        "--view",
        "advisor",
    ]);
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("demo: stage-imbalance"), "{screen}");
    assert!(screen.contains("pipeline stage 1 (ranks 4-7)"), "{screen}");
    // `demo --scenario` writes that job; its files lead with the same finding.
    let dir = tempfile::tempdir().unwrap();
    let out = common::run([
        "demo",
        "--scenario",
        "stage-imbalance",
        "--ranks",
        "4",
        "--steps",
        "3",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("scenario stage-imbalance: two pipeline stages"),
        "{msg}"
    );
    let r = common::report_json(&[dir.path()], &[]);
    assert_eq!(r["findings"][0]["rule"], "stage_imbalance");
    // A pipeline pairs ranks; a scenario with paths would be ignored: both are usage errors.
    let odd = common::run([
        "demo",
        "--scenario",
        "stage-imbalance",
        "--ranks",
        "3",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(odd.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&odd.stderr).contains("--ranks must be even"));
    let with_path = common::run([
        "report",
        "--scenario",
        "straggler",
        common::testdata("two_streams.json").to_str().unwrap(),
    ]);
    assert_eq!(with_path.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&with_path.stderr).contains("--scenario"));
    let unknown = common::run(["report", "--scenario", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
}
