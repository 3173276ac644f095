//! One analysis stage at a time, on the hand-made fixtures of testdata/gen_comm_fixtures.py
//! (the timelines are described there); every expected number is worked out in the comments.

use crate::common;

use common::{finding, report_json, testdata};
use serde_json::{Value, json};
use stepscope::analysis::comm::matching::MismatchKind;
use stepscope::model::{CollOp, RankId, StepNo};
use stepscope::session::{Session, Settings};

fn open(name: &str) -> Session {
    let mut settings = Settings::default();
    // Fixture clocks agree; aligning would only hide the hand-set arrival times.
    settings.comm.align = stepscope::analysis::comm::align::Align::None;
    Session::open(&[testdata(name)], &settings).expect("fixture loads")
}

/// Rank 0's step spans as (start, end).
fn spans_of(s: &Session) -> Vec<(i64, i64)> {
    s.analysis.spans[0]
        .iter()
        .map(|x| (x.start, x.end))
        .collect()
}

fn straggler(r: &Value, rank: u64) -> &Value {
    r["cluster"]["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["rank"] == rank)
        .unwrap_or_else(|| panic!("no straggler entry for rank {rank}"))
}

#[test]
fn step_spans_run_to_the_latest_device_end_so_far() {
    // D1 = 260 (step 1's kernel outlasts step 2's own [150, 170)), D2 = max(D1, 170) = 260:
    // B2 = max(100, D1) = 260, B3 = max(200, D2) = 260, end = max(300, D3 = 280) = 300 (µs).
    let s = open("steps_tail.json");
    let spans = spans_of(&s);
    assert_eq!(
        spans,
        [(0, 260_000), (260_000, 260_000), (260_000, 300_000)]
    );
    assert_eq!(
        s.analysis.spans[0]
            .iter()
            .map(|x| x.device_end)
            .collect::<Vec<_>>(),
        [Some(260_000), Some(260_000), Some(280_000)]
    );
    let empty: Vec<bool> = s.analysis.spans[0].iter().map(|x| x.is_empty()).collect();
    assert_eq!(empty, [false, true, false]);
}

#[test]
fn work_queued_before_the_trace_window_stretches_no_step() {
    // Kernels A [5, 80) and B [80, 120) have no launching call in the trace and run before
    // stream 7's first launched kernel: they belong to no step, and step 1 starts when the
    // device is done with them (120), as a step starts when the previous step's work ends.
    let s = open("pre_window.json");
    let rank = &s.job().ranks[0];
    assert_eq!(
        (
            rank.pre_window.events,
            rank.pre_window.busy_ns,
            rank.pre_window.end
        ),
        (2, 115_000, Some(120_000))
    );
    let spans = spans_of(&s);
    // D1 = 150 (C), D2 = 190 (D): B1 = max(0, 120), B2 = max(100, 150), B3 = max(200, 190).
    assert_eq!(
        spans,
        [(120_000, 150_000), (150_000, 200_000), (200_000, 300_000)]
    );
    // The report says what was left out.
    let r = report_json(&[&testdata("pre_window.json")], &[]);
    assert_eq!(
        r["job"]["notes"][1],
        "rank 0: 2 device events (115.0 µs) launched before the trace window are left out of the steps"
    );
}

#[test]
fn a_pause_between_steps_belongs_to_the_step_before() {
    // Host steps [0, 100) and [150, 250) µs, the kernel [10, 90) done before the pause:
    // B2 = max(150, D1 = 90) = 150, so step 1 spans [0, 150) (not [0, 100)).
    let s = open("steps_gap.json");
    let spans = spans_of(&s);
    assert_eq!(spans, [(0, 150_000), (150_000, 250_000)]);
}

#[test]
fn calls_pair_by_seq_when_every_call_has_one() {
    let s = open("seq2");
    let m = &s.analysis.comm.matching;
    // Seq 2 is the one instance: rank 1 missed Seq 1, Seq 4 has no partner. By position, step
    // 1 (2 calls against 1) would be a count mismatch and pair nothing.
    assert_eq!(m.instances.len(), 1, "{:?}", m.instances);
    let i = &m.instances[0];
    assert_eq!(
        (i.op, i.step, i.index),
        (CollOp::AllReduce, Some(StepNo(1)), 2)
    );
    assert_eq!(i.members.len(), 2);
    // Seq 3: broadcast on rank 0, all-gather on rank 1 — the same key, different operations.
    assert_eq!(m.mismatches.len(), 1, "{:?}", m.mismatches);
    assert_eq!(m.mismatches[0].kind, MismatchKind::Operation { index: 3 });
    assert_eq!(m.mismatches[0].step, Some(StepNo(2)));
}

#[test]
fn wait_and_transit_of_a_member_that_ends_before_the_last_arrival() {
    // Seq 2: rank 0 arrives at 300 and ends at 305, rank 1 arrives at 310 and ends at 400.
    // Rank 0 would wait 310 − 300 = 10 µs, but waits only inside its own 5 µs call; its
    // transit 305 − 310 < 0 clamps to 0. Rank 1: wait 0, transit 400 − 310 = 90 µs.
    let s = open("seq2");
    let (_, t) = s.analysis.comm.instances().next().expect("one instance");
    let got: Vec<(RankId, i64, i64)> = t
        .members
        .iter()
        .map(|m| (m.rank, m.wait_ns, m.transit_ns))
        .collect();
    assert_eq!(got, [(RankId(0), 5_000, 0), (RankId(1), 0, 90_000)]);
    assert_eq!(t.timing.last_arriver, RankId(1));
    assert_eq!((t.timing.skew_ns, t.timing.wait_ns), (10_000, 5_000));
    // Σ member transits: 0 + 90 µs (not 305 − 310 + 90 = 85).
    assert_eq!(t.timing.member_transit_ns, 90_000);
}

#[test]
fn persistence_at_exactly_two_thirds_of_the_steps_flags() {
    // Rank 2 is 100 µs late in steps 1 and 2, rank 1 in step 3: each instance makes two ranks
    // wait 100 µs. In step 4 all arrive together: nobody is last there. Rank 2 tops 2 of the
    // 3 steps with waiting (≥ 2/3): flagged; rank 1 tops 1 of 3: not; rank 0 never arrived
    // last and is no straggler at all.
    let r = report_json(&[&testdata("persist3")], &["--align", "none"]);
    let s2 = straggler(&r, 2);
    assert_eq!(
        (&s2["top_steps"], &s2["steps_with_wait"]),
        (&2.into(), &3.into())
    );
    assert_eq!(
        (&s2["last_arrivals"], &s2["instances"]),
        (&2.into(), &4.into())
    );
    assert_eq!(s2["imposed_wait_ns"], 400_000);
    assert_eq!(s2["flagged"], true);
    // 100 µs more compute over 4 ms of steps is no excess part (5% would be 200).
    assert_eq!(s2["excess"], json!([]));
    assert_eq!(
        s2["steps"],
        json!([
            {"step": 1, "last_arrivals": 1, "imposed_wait_ns": 200_000},
            {"step": 2, "last_arrivals": 1, "imposed_wait_ns": 200_000}
        ])
    );
    assert_eq!(straggler(&r, 1)["flagged"], false);
    let ranks: Vec<&Value> = r["cluster"]["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["rank"])
        .collect();
    assert_eq!(ranks, [&json!(2), &json!(1)]);
    // The finding's impact is the replay's saving with rank 2's work at its peers' mean:
    // never more than the 400 µs the others waited for it.
    let f = finding(&r, "straggler").expect("a straggler finding");
    assert_eq!(f["impact_ns"], f["saves_ns"]);
    let saves = f["saves_ns"].as_i64().unwrap();
    assert!((1..=400_000).contains(&saves), "{saves}");
    assert_eq!(f["evidence"]["ranks"], json!([2]));
}

#[test]
fn one_steps_stragglers_and_their_excess_parts() {
    // --step 1: only step 1's instance (rank 2 last, 2 × 100 µs of waiting). Rank 2 computed
    // 500 against the median 400: 100 > 5% of the 1000 µs mean span, an excess part.
    let r = report_json(
        &[&testdata("persist3")],
        &["--align", "none", "--step", "1"],
    );
    let s2 = straggler(&r, 2);
    assert_eq!(
        (&s2["imposed_wait_ns"], &s2["instances"]),
        (&200_000.into(), &1.into())
    );
    assert_eq!(
        s2["excess"],
        json!([{"part": "compute", "rank_ns": 500_000, "median_ns": 400_000}])
    );
    assert_eq!(r["cluster"]["stragglers"].as_array().unwrap().len(), 1);
}

#[test]
fn point_to_point_traffic_makes_no_straggler() {
    // pipe4's receivers wait for senders by design of the pipeline: that is the stage
    // analysis's business, not a straggler's.
    let r = report_json(&[&testdata("pipe4")], &["--align", "none"]);
    assert_eq!(r["cluster"]["stragglers"], json!([]));
    // A two-rank domain is judged too (seq2: rank 1 imposed all of its waiting), and its
    // parts' spread (one entry per own-work part).
    let r = report_json(&[&testdata("seq2")], &["--align", "none"]);
    assert_eq!(straggler(&r, 1)["flagged"], true);
    assert_eq!(r["cluster"]["imbalance"].as_array().unwrap().len(), 4);
}

#[test]
fn with_under_three_steps_the_share_of_waiting_decides() {
    // Step 1: rank 2 is 100 µs late (2 × 100 µs of waiting); step 2: rank 1 is 300 µs late
    // (2 × 300). Too few steps for persistence: rank 1's share 600/800 = 75% ≥ 50% flags it
    // although it topped only 1 of 2 steps; rank 2's 25% does not.
    let r = report_json(&[&testdata("share3")], &["--align", "none"]);
    let s1 = straggler(&r, 1);
    assert_eq!(
        (&s1["top_steps"], &s1["steps_with_wait"]),
        (&1.into(), &2.into())
    );
    assert_eq!(s1["share"], 0.75);
    assert_eq!(s1["flagged"], true);
    assert_eq!(straggler(&r, 2)["flagged"], false);
}

#[test]
fn a_slow_step_outside_the_scope_costs_the_shown_step_nothing() {
    // steps_tail: step 1 (260 µs against a median of 40) is slow. Under --step 3 it is not
    // shown, so no slow-step finding may claim step 3's 40 µs.
    let all = report_json(&[&testdata("steps_tail.json")], &[]);
    let f = finding(&all, "slow_step").expect("step 1 is slow");
    assert_eq!(f["evidence"]["steps"], json!([1]));
    let one = report_json(&[&testdata("steps_tail.json")], &["--step", "3"]);
    assert!(finding(&one, "slow_step").is_none(), "{}", one["findings"]);
}

#[test]
fn only_threads_that_launched_a_kernel_make_host_bound_time() {
    // Span [0, 100) µs: kernel [5, 10) → compute 5; the main thread's launch [1, 3) → host-
    // bound 2. Thread 102's work [20, 60) launched no kernel the trace has: free, not host-
    // bound (100 − 5 − 2 = 93).
    let r = report_json(&[&testdata("host_lanes.json")], &[]);
    let b = &r["breakdown"][0];
    assert_eq!(
        [&b["compute_ns"], &b["host_bound_ns"], &b["free_ns"]],
        [5_000, 2_000, 93_000]
    );
}

#[test]
fn a_slow_steps_culprit_and_its_late_arrivals() {
    // slow3: cluster times 1000, 1000, 2000, 1000, 1000 µs → median 1000, MAD 0, limit
    // 1000 + 5% = 1050: step 3 is slow. Rank 1 computed 1400 instead of 400; its own work is
    // 2000 − 350 of exposed all-reduces (100 + 150 + 100) = 1650 against its median
    // 1000 − 100 = 900: +750, of which compute +1000. It took part in 3 of the step's 4
    // instances (not group "x") and arrived last at the first only: in group "y" it arrived
    // together with rank 2, which makes nobody last.
    let r = report_json(&[&testdata("slow3")], &["--align", "none"]);
    let slow = r["cluster"]["slow_steps"].as_array().unwrap();
    assert_eq!(slow.len(), 1, "{slow:?}");
    let s = &slow[0];
    assert_eq!(
        (&s["step"], &s["time_ns"], &s["median_ns"]),
        (&3.into(), &2_000_000.into(), &1_000_000.into())
    );
    assert_eq!(s["threshold_ns"], 1_050_000);
    assert_eq!(
        (&s["culprit_rank"], &s["growth_ns"]),
        (&1.into(), &750_000.into())
    );
    assert_eq!(
        (&s["part"], &s["part_growth_ns"]),
        (&"compute".into(), &1_000_000.into())
    );
    assert_eq!(s["last_arrivals"], json!([1, 3]));
}

/// (stage, ranks, compute_ns, recv_wait_ns, flagged) of each stage.
fn stages(r: &Value) -> Vec<(i64, Value, i64, i64, bool)> {
    r["cluster"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stage"].as_i64().unwrap(),
                s["ranks"].clone(),
                s["compute_ns"].as_i64().unwrap(),
                s["recv_wait_ns"].as_i64().unwrap(),
                s["flagged"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn pipeline_stages_by_hand() {
    // pipe4: ranks 2, 3 send first (stage 0, although their ids are higher), ranks 0, 1
    // receive (stage 1). Stage 0 computes (500 + 600 + 500 + 800) / 4 = 600 µs per rank and
    // step; stage 1 300 (compute 250 + overlap 50): mean 450, excess 600/450 − 1 = 1/3
    // (flagged). Receive waits per step: stage 0 (250 + 250) × 2 / 2 = 500, stage 1
    // (490 + 590 + 490 + 790) / 2 = 1180.
    let r = report_json(&[&testdata("pipe4")], &["--align", "none"]);
    assert_eq!(
        stages(&r),
        [
            (0, json!([2, 3]), 600_000, 500_000, true),
            (1, json!([0, 1]), 300_000, 1_180_000, false)
        ]
    );
    assert_eq!(r["cluster"]["stages"][0]["excess"], 0.333333);
    // Rank 3's two extra sends in step 2 have no receive: unpaired, and no instance.
    assert_eq!(
        r["communication"]["unpaired_p2p"],
        json!([{"rank": 3, "calls": 2}])
    );
    // Step 1 alone: stage 0 (500 + 600) / 2 = 550, excess 550/425 − 1 = 0.294118; stage 1
    // waits 490 + 590.
    let one = report_json(&[&testdata("pipe4")], &["--align", "none", "--step", "1"]);
    assert_eq!(
        stages(&one),
        [
            (0, json!([2, 3]), 550_000, 500_000, true),
            (1, json!([0, 1]), 300_000, 1_080_000, false)
        ]
    );
    assert_eq!(one["cluster"]["stages"][0]["excess"], 0.294118);
}

#[test]
fn straggler_impact_is_spread_over_its_domain_not_the_scope() {
    // Under --rank 2 the scope has one rank, but the 400 µs were waited by the two others:
    // still 200 µs, against rank 2's 4 ms of steps (5%).
    let r = report_json(
        &[&testdata("persist3")],
        &["--align", "none", "--rank", "2"],
    );
    let f = finding(&r, "straggler").expect("a straggler finding");
    assert_eq!(f["impact_ns"], 200_000);
    assert_eq!(f["impact_pct"], 0.05);
}
