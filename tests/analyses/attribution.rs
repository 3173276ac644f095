//! The cause first (docs/advisor.md, "Explained by", "Ranking", "Joint savings"): symptoms fold
//! under their causes by the replay's counterfactual, a fix never claims more than its own
//! evidence covers, the what-if measures the report's steps, and fixes combine as the replay
//! says — on the demo's scenarios and real traces, with hand-checked figures.

use crate::common;

use common::{finding, report_json, run, shared, testdata};
use serde_json::Value;

fn demo(scenario: &str) -> Value {
    let extra: Vec<&str> = if scenario == "default" {
        Vec::new()
    } else {
        vec!["--scenario", scenario]
    };
    report_json(&[], &extra)
}

fn ns(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn a_slow_step_folds_under_the_stall_that_made_it_slow() {
    // Rank 5's 300 ms loader stall in step 13 is why step 13 is slow: with the loader fixed
    // in the replay, the slow step's own fix saves almost nothing more (< 30% of its own).
    let r = demo("default");
    let f = &r["findings"][0];
    assert_eq!(f["rule"], "dataloader");
    assert_eq!(f["kind"], "problem");
    assert_eq!(f["evidence"]["ranks"], serde_json::json!([5]));
    assert!(finding(&r, "slow_step").is_none(), "{}", r["findings"]);
    let folded = f["folded"].as_array().unwrap();
    let slow = folded.iter().find(|x| x["rule"] == "slow_step").unwrap();
    assert!(
        ns(&slow["remains_ns"]) * 10 <= ns(&slow["impact_ns"]) * 3,
        "{slow}"
    );
    // The straggler is a cause of its own: rank 3's slower kernels, not the stall.
    assert_eq!(r["findings"][1]["rule"], "straggler");
    assert!(r["findings"][1]["folded"].as_array().unwrap().is_empty());
}

#[test]
fn fixes_combine_as_the_replay_says_not_as_a_sum() {
    // Loader 286.0 ms, straggler 80.0 ms: together 366.0 ms (the straggler's waits in step 13
    // are the stall's), at least either alone and at most their sum; every fix: more.
    let r = demo("default");
    let j = r["whatif"]["joint"].as_array().unwrap();
    assert_eq!(j.len(), 2, "{j:?}");
    assert_eq!(j[0]["rules"], serde_json::json!(["dataloader"]));
    assert_eq!(
        j[1]["rules"],
        serde_json::json!(["dataloader", "straggler"])
    );
    let (one, two) = (ns(&j[0]["saves_ns"]), ns(&j[1]["saves_ns"]));
    assert_eq!(one, ns(&r["findings"][0]["impact_ns"]));
    let straggler = ns(&r["findings"][1]["impact_ns"]);
    assert!(
        two > one && two <= one + straggler,
        "{one} {two} {straggler}"
    );
    assert!((365_500_000..366_500_000).contains(&two), "{two}");
    assert!(ns(&r["whatif"]["ideal_saves_ns"]) >= two);
    let text = String::from_utf8(run(["report"]).stdout).unwrap();
    assert!(
        text.contains("dataloader 286.0 ms (37.1%) · + straggler 366.0 ms"),
        "{text}"
    );
}

#[test]
fn a_rank_that_enters_the_step_late_is_replayed_entering_with_its_peers() {
    // testdata/late3: rank 2 enters both steps 100 µs after ranks 0 and 1, which wait for it
    // at the all-reduce. Entering with them, each step ends 100 µs sooner: 200 µs over two.
    let r = report_json(&[&testdata("late3")], &[]);
    let f = &r["findings"][0];
    assert_eq!(f["rule"], "comm_wait_dominated", "{}", r["findings"]);
    assert_eq!(f["evidence"]["ranks"], serde_json::json!([2]));
    assert_eq!(ns(&f["saves_ns"]), 200_000, "{f}");
    assert_eq!(ns(&f["impact_ns"]), 200_000);
    assert!(ns(&r["whatif"]["ideal_saves_ns"]) >= 200_000);
}

#[test]
fn a_kernel_queued_behind_the_step_before_is_not_a_launch_delay() {
    // testdata/queued.json: each 50 µs host step launches 80 µs of kernels, so from step 2
    // on the device runs a step behind and each step's first kernel waits on its stream
    // behind the kernels of the step before. No fix of the host starts it sooner: the ideal
    // step is the measured one (the release before predicted 45 and 15 µs, taking the wait
    // for a launch delay). Step 1 gains the 5 µs its first launch call took.
    let r = report_json(&[&testdata("queued.json")], &[]);
    let steps = r["whatif"]["steps"].as_array().unwrap();
    let ideal: Vec<(i64, i64)> = steps
        .iter()
        .map(|s| (ns(&s["measured_ns"]), ns(&s["ideal_ns"])))
        .collect();
    assert_eq!(
        ideal,
        [(90_000, 85_000), (80_000, 80_000), (80_000, 80_000)]
    );
    assert_eq!(ns(&r["whatif"]["ideal_saves_ns"]), 5_000);
}

#[test]
fn a_pageable_copy_is_replayed_from_pinned_memory() {
    // testdata/pageable.json (µs): `cudaMemcpyAsync` [22,138) holds the host through its
    // pageable copy [70,130); the host's next ops launch `add_kernel` and, after 100 µs of
    // `aten::sum`, `sum_kernel` [252,292); the step marker ends at 300. Pinned: the copy
    // takes 30, the call an enqueue (the median launch, 4), so `aten::copy_` ends at 28, the
    // sum at 138, its launch at 133 + 7 = 140, `sum_kernel` ends at 180, the step (its 8 µs
    // tail kept) at 188: 112 µs saved. The launch delays it removes are its symptom.
    let r = report_json(&[&testdata("pageable.json")], &[]);
    let f = &r["findings"][0];
    assert_eq!(f["rule"], "pageable_memcpy", "{f}");
    assert_eq!(ns(&f["saves_ns"]), 112_000, "{f}");
    assert_eq!(f["evidence"]["ranks"], serde_json::json!([0]));
    let folded: Vec<&str> = f["folded"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["rule"].as_str())
        .collect();
    assert_eq!(folded, ["launch_bound"], "{f}");
    assert!(ns(&r["whatif"]["ideal_saves_ns"]) >= 112_000);
}

#[test]
fn a_healthy_job_has_no_problem_and_no_high_opportunity() {
    // Clocks up to 80 ms apart, nothing else wrong: nothing above low.
    let r = demo("skewed-clocks-but-healthy");
    for f in r["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "low", "{f}");
    }
}

#[test]
fn small_collectives_are_the_cause_of_the_exposed_communication() {
    // 200 small all-reduces after backward: bucketing is the fix, the poor overlap its
    // symptom; an opportunity on a job with no problem: medium at most.
    let r = demo("small-messages");
    let f = &r["findings"][0];
    assert_eq!(f["rule"], "small_messages");
    assert_eq!(
        (f["kind"].as_str(), f["severity"].as_str()),
        (Some("opportunity"), Some("medium"))
    );
    assert!(finding(&r, "poor_overlap").is_none());
}

#[test]
fn the_launch_fix_never_claims_the_loaders_time() {
    // ResNet-50 (2021, one rank): the data loader is the first finding; the launch fix frees
    // launch gaps only — its saving (89.4 ms) within the host-bound time it is about
    // (97.3 ms), and below the loader's.
    let Some(s) = shared() else { return };
    let r = report_json(&[&s.join("traces/ext/kineto-resnet50-2021")], &[]);
    let first = &r["findings"][0];
    assert_eq!(first["rule"], "dataloader");
    let launch = finding(&r, "launch_bound").unwrap();
    let host_bound = launch["evidence"]["numbers"]["host_bound_ns"]
        .as_f64()
        .unwrap() as i64;
    assert_eq!(ns(&launch["covers_ns"]), host_bound);
    assert!(ns(&launch["impact_ns"]) <= host_bound);
    assert!(ns(&launch["impact_ns"]) < ns(&first["impact_ns"]));
    assert!(launch["impact_pct"].as_f64().unwrap() < 0.10, "{launch}");
}

#[test]
fn the_ideal_step_is_every_fix_at_once_in_every_face() {
    // The ResNet-50 trace's kernel findings (elementwise chains fused, GEMMs at their
    // attainable rate) take a parameter only their evidence gives: the ideal step applies
    // them after its own fixes, so it saves at least what each finding saves, and `whatif
    // --fix ideal` replays the same ideal as the report (one definition).
    let Some(s) = shared() else { return };
    let path = s.join("traces/ext/kineto-resnet50-2021");
    let r = report_json(&[&path], &[]);
    let ideal = ns(&r["whatif"]["ideal_saves_ns"]);
    for f in r["findings"].as_array().unwrap() {
        assert!(ns(&f["impact_ns"]) <= ideal, "{f}");
    }
    let elementwise = finding(&r, "memory_bound_elementwise").expect("elementwise");
    let loader = finding(&r, "dataloader").expect("dataloader");
    assert!(ideal > ns(&loader["saves_ns"]) + ns(&elementwise["saves_ns"]) / 2);
    let out = run([
        "whatif".as_ref(),
        path.as_os_str(),
        "--fix".as_ref(),
        "ideal".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved = ns(&w["measured_ns"]) - ns(&w["predicted_ns"]);
    assert_eq!(saved, ideal);
}

#[test]
fn whatif_measures_the_reports_steps() {
    // `whatif` and `report` show one measured step time: the report's cluster step time
    // (step 6 of the ResNet-50 trace: 175.2 ms, not the graph's longer span).
    let Some(s) = shared() else { return };
    let path = s.join("traces/ext/kineto-resnet50-2021");
    let r = report_json(&[&path], &[]);
    let out = run([
        "whatif".as_ref(),
        path.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert!(out.status.success());
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report: Vec<i64> = r["whatif"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ns(&s["measured_ns"]))
        .collect();
    let whatif: Vec<i64> = w["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ns(&s["measured_ns"]))
        .collect();
    assert_eq!(report, whatif);
    let six = w["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == 6)
        .unwrap();
    assert!(
        (175_100_000..175_200_000).contains(&ns(&six["measured_ns"])),
        "{six}"
    );
}

#[test]
fn the_readmes_sample_is_what_the_binary_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("```\nWhat to fix first")
        .expect("the README's sample")
        + 4;
    let sample = &readme[start..start + readme[start..].find("```").unwrap()];
    let out = String::from_utf8(run(["report"]).stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    for l in sample.lines() {
        assert!(lines.contains(&l), "the report no longer prints: {l}");
    }
}

/// What `whatif --fix RULE` saves over the job (measured − predicted).
fn whatif_saves(extra: &[&str]) -> i64 {
    let mut args = vec!["whatif", "--format", "json"];
    args.extend(extra);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    ns(&w["measured_ns"]) - ns(&w["predicted_ns"])
}

#[test]
fn overlap_hides_collectives_but_never_a_late_rank() {
    // Per-tensor all-reduces after backward: freeing all but the last bucket saves 43.5 ms,
    // and the cause (no buckets) absorbs it: poor_overlap folds under small_messages.
    let small = whatif_saves(&["--scenario", "small-messages", "--fix", "poor_overlap"]);
    assert!((40_000_000..47_000_000).contains(&small), "{small}");
    let r = demo("small-messages");
    assert_eq!(r["findings"][0]["rule"], "small_messages");
    assert!(finding(&r, "poor_overlap").is_none(), "{}", r["findings"]);
    // A straggler's collectives start late because its gradients are late: the overlap fix
    // keeps each rank's last collective waiting for its compute, so it saves nothing there.
    assert_eq!(
        whatif_saves(&["--scenario", "straggler", "--fix", "poor_overlap"]),
        0
    );
}

#[test]
fn kernel_findings_are_replayed_within_their_evidence() {
    let Some(shared) = shared() else { return };
    let job = shared.join("traces/ext/kineto-resnet50-2021");
    let r = report_json(&[&job], &[]);
    let f = finding(&r, "memory_bound_elementwise").expect("the elementwise finding");
    let saves = ns(&f["saves_ns"]);
    // Halving the elementwise kernels saves 56.6 ms of step time of the 92.1 ms of kernel
    // time it takes away: the rest ran under other work.
    assert!(saves > 0 && saves <= ns(&f["covers_ns"]), "{f}");
    assert_eq!(ns(&f["impact_ns"]), saves);
    let job = job.to_str().unwrap();
    assert_eq!(
        whatif_saves(&[job, "--fix", "memory_bound_elementwise"]),
        saves
    );
}
