//! The first finding names the real bottleneck (issue 12): on each trace of
//! `../shared/traces/ext` the one its SOURCE.md lists, and on hand-made gloo jobs with a host
//! stall, with its rank, step and operator; nothing after it contradicts it.

use crate::common;

use common::*;
use serde_json::{Value, json};

fn ext(s: &std::path::Path, name: &str) -> Value {
    report_json(&[&s.join("traces/ext").join(name)], &[])
}

fn first(r: &Value) -> &Value {
    &r["findings"][0]
}

/// No finding tells the user to adopt CUDA graphs.
fn never_advises_graphs(r: &Value) {
    for f in r["findings"].as_array().unwrap() {
        for s in f["suggestions"].as_array().unwrap() {
            let s = s.as_str().unwrap();
            assert!(
                !s.contains("capture the step in a graph") && !s.starts_with("CUDA graphs for"),
                "{}: {s}",
                f["rule"]
            );
        }
    }
}

#[test]
fn old_kineto_data_loader_is_the_first_finding() {
    let Some(s) = shared() else { return };
    let r = ext(&s, "kineto-resnet50-2021");
    // `enumerate(DataLoader)#…` is an `Operator` in 2021 Kineto: the loader stalls 5 of the 6
    // steps (the sixth loads before step 5's span), a third of the step time.
    let f = first(&r);
    assert_eq!(f["rule"], "dataloader");
    assert_eq!(f["evidence"]["ranks"], json!([0]));
    assert_eq!(f["evidence"]["steps"], json!([5, 6, 7, 8, 9]));
    assert!(f["impact_pct"].as_f64().unwrap() > 0.3, "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("the data loader stalls 5 of 6 steps"),
        "{f}"
    );
}

#[test]
fn dlrm_all_to_all_carried_by_sendrecv_waits_for_a_late_rank() {
    let Some(s) = shared() else { return };
    let r = ext(&s, "param-dlrm8");
    // The SendRecv kernels launched under `nccl:all_to_all` are all-to-alls, matched across
    // the 8 ranks: 5 instances of 40 calls; the all-reduce 3 of 24.
    let types: Vec<(&str, i64, i64)> = r["communication"]["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["op"].as_str().unwrap(),
                t["calls"].as_i64().unwrap(),
                t["instances"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(types, [("all_to_all", 40, 5), ("all_reduce", 24, 3)]);
    assert_eq!(r["communication"]["unpaired_p2p"], json!([]));
    // The all-to-all, 99% waiting for rank 7, which entered step 10 late; the wait and
    // transfer split is in the evidence. Replayed with rank 7 entering with its peers (and
    // its work at theirs), the 18.7 ms step is 0.85 ms shorter — the members' summed wait
    // (10.1 ms) is no saving — so the host-bound launches (3.4 ms) lead.
    assert_eq!(first(&r)["rule"], "launch_bound");
    let f = finding(&r, "comm_wait_dominated").expect("the late rank's finding");
    let saves = f["saves_ns"].as_i64().expect("replayed");
    assert!((700_000..1_000_000).contains(&saves), "{f}");
    assert_eq!(f["evidence"]["ops"][0], "all_to_all (world)");
    assert_eq!(f["evidence"]["ranks"], json!([7]));
    let n = &f["evidence"]["numbers"];
    assert!(n["wait_ns"].as_f64().unwrap() > 50.0 * n["transit_ns"].as_f64().unwrap());
    let title = f["title"].as_str().unwrap();
    assert!(title.contains("mostly for rank 7"), "{title}");
    assert!(title.contains("entered the step late"), "{title}");
    // Rank 7 is no straggler: its delay is older than the profiled step.
    assert!(finding(&r, "straggler").is_none());
}

#[test]
fn allocator_churn_fills_a_trace_without_steps() {
    let Some(s) = shared() else { return };
    let r = ext(&s, "tracelens-mi300-ddp-resnet18");
    // One synthetic step: every hipMalloc/hipFree counts; the device idles 3.0 s inside them.
    let f = first(&r);
    assert_eq!(f["rule"], "allocator_churn");
    // The replay without the allocator calls gives back 77% of the step.
    assert!(f["impact_pct"].as_f64().unwrap() > 0.7, "{f}");
    assert!(finding(&r, "launch_bound").is_none());
}

#[test]
fn graph_capture_is_named_and_graphs_are_never_advised() {
    let Some(s) = shared() else { return };
    let r = ext(&s, "tracelens-mi300-sglang-decode");
    let f = first(&r);
    assert_eq!(f["rule"], "graph_capture");
    assert_eq!(f["evidence"]["steps"], json!([134]));
    assert_eq!(r["host"]["graphs"]["captures"], 1);
    assert_eq!(r["host"]["graphs"]["captured_launches"], 544);
    never_advises_graphs(&r);
    // A blocking call outside every operator is worded as such, never "from -".
    let text = String::from_utf8(
        run([
            "report",
            s.join("traces/ext/tracelens-mi300-sglang-decode")
                .to_str()
                .unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        !text.contains("from -") && !text.contains(" in -"),
        "{text}"
    );
}

#[test]
fn work_queued_before_the_window_makes_no_step_slow() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&hta(&s, "negative_queue_length_values_check")], &[]);
    // 872 kernels on stream 7 ran before its first launched one: left out, step 550 no
    // longer stretched (371.6 ms with them), no false slow step.
    assert_eq!(
        r["job"]["notes"],
        json!([
            "rank 0: 872 device events (59.5 ms) launched before the trace window are left out of the steps"
        ])
    );
    assert_eq!(r["steps"][0]["time_ns"]["max"], 216_286_000);
    assert_eq!(r["cluster"]["slow_steps"], json!([]));
    assert!(finding(&r, "slow_step").is_none());
    // A single-rank step is never worded in collectives it did not join.
    let text = String::from_utf8(
        run([
            "report",
            hta(&s, "negative_queue_length_values_check")
                .to_str()
                .unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    assert!(!text.contains("0 of 0 collectives"), "{text}");
}

#[test]
fn a_gloo_rank_that_stalls_is_the_cause_and_on_the_critical_path() {
    // gloo_stall3 (testdata/gen_gloo_fixtures.py): rank 1 runs nothing for 300 ms inside
    // DistributedDataParallel.forward in step 3; the others wait 300 ms each in the all-reduce.
    let r = report_json(&[&testdata("gloo_stall3")], &[]);
    let f = first(&r);
    assert_eq!(f["rule"], "host_gap");
    assert_eq!(f["evidence"]["ranks"], json!([1]));
    assert_eq!(f["evidence"]["steps"], json!([3]));
    assert_eq!(
        f["evidence"]["ops"],
        json!(["DistributedDataParallel.forward"])
    );
    assert_eq!(f["evidence"]["numbers"]["longest_ns"], 300_000_000.0);
    // The slow step is its symptom: folded, with the 300 ms it cost.
    assert_eq!(f["folded"][0]["rule"], "slow_step");
    assert_eq!(f["impact_ns"], 300_000_000);
    assert_eq!(
        f["title"],
        "rank 1 stalled 300.0 ms in step 3: nothing ran on it, its main thread inside \
         DistributedDataParallel.forward; the others waited 300.0 ms each for it"
    );
    // The critical path of step 3 crosses to rank 1 through the gloo all-reduce and carries
    // the stall: forward mm 200 + gap 300 + mm 200 on rank 1, transfer 20, rank 0's main
    // thread waking 0.5 after it, optimizer 50.
    let c = &r["critical_path"];
    assert_eq!(c["window"], "step 3");
    assert_eq!(c["by_category"]["host_gap"], 300_500_000);
    assert_eq!(c["by_category"]["communication"], 20_000_000);
    assert_eq!(c["by_category"]["wait"], 0);
    let gap = c["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["category"] == "host_gap")
        .unwrap();
    assert_eq!(
        (&gap["rank"], &gap["name"]),
        (&json!(1), &json!("DistributedDataParallel.forward"))
    );
}

#[test]
fn a_stall_the_others_absorbed_still_names_its_rank_and_step() {
    // gloo_absorb3: steps of 481/581 ms, none an outlier; in step 3 rank 1 stalls 300 ms and
    // the others, done 100 ms sooner, wait 100 ms each for it.
    let r = report_json(&[&testdata("gloo_absorb3")], &[]);
    assert_eq!(r["cluster"]["slow_steps"], json!([]));
    let f = first(&r);
    assert_eq!(f["rule"], "host_gap");
    assert_eq!(
        (&f["evidence"]["ranks"], &f["evidence"]["steps"]),
        (&json!([1]), &json!([3]))
    );
    // The straggler finding for rank 1 (last only in step 3) is the same cause: folded.
    assert_eq!(f["folded"][0]["rule"], "straggler");
    assert!(finding(&r, "straggler").is_none());
    // Replayed without the pause, rank 1 ends 200 ms before the others, which were 100 ms
    // ahead of it: the step shortens by those 100 ms (the rule's estimate, 300 ms + 2 ×
    // 100 ms waited over 3 ranks = 166.7 ms, claimed more than the fix gives).
    assert!(f["saves_ns"].is_number(), "{f}");
    assert_eq!(f["impact_ns"], 100_000_000);
}

#[test]
fn communication_kernels_that_are_not_nccl_are_communication() {
    // deepep.json: a GEMM [100, 400) µs, DeepEP dispatch [400, 700) and combine [700, 800).
    let r = report_json(&[&testdata("deepep.json")], &[]);
    let b = &r["breakdown"][0];
    assert_eq!(
        (&b["compute_ns"], &b["comm_ns"]),
        (&json!(300_000), &json!(400_000))
    );
    assert_eq!(r["job"]["events"]["comm"], 2);
    // Expert-parallel dispatch/combine is an all-to-all.
    assert_eq!(r["communication"]["types"][0]["op"], "all_to_all");
    assert_eq!(r["communication"]["types"][0]["calls"], 2);
}

/// Unknown share of compute-kernel time on the roofline.
fn unknown_share(r: &Value) -> f64 {
    let classes = r["roofline"]["classes"].as_object().unwrap();
    let total: i64 = classes
        .values()
        .map(|c| c["time_ns"].as_i64().unwrap())
        .sum();
    classes["unknown"]["time_ns"].as_i64().unwrap() as f64 / total as f64
}

#[test]
fn the_roofline_places_the_ext_traces_that_record_shapes() {
    let Some(s) = shared() else { return };
    // ResNet-50 (2021): cuDNN's backward launches through `…_backward_input/_weight`, whose
    // parent `cudnn_convolution_backward` carries the shapes; ReLU's backward and clamp are
    // elementwise. 55% unknown before, ~1% now.
    let r = ext(&s, "kineto-resnet50-2021");
    assert!(unknown_share(&r) < 0.3, "{}", unknown_share(&r));
    let ops: Vec<&str> = r["roofline"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["op"].as_str().unwrap())
        .collect();
    assert!(ops.contains(&"aten::cudnn_convolution_backward"), "{ops:?}");
    assert!(ops.contains(&"aten::threshold_backward"), "{ops:?}");
    let r = ext(&s, "tracelens-mi300-ddp-resnet18");
    assert!(unknown_share(&r) < 0.3, "{}", unknown_share(&r));
    // DLRM's kernels have no launching operator with shapes: the finding says so.
    let r = ext(&s, "param-dlrm8");
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "roofline_unknown")
        .expect("roofline_unknown");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .ends_with("most of it has no launching operator"),
        "{}",
        f["title"]
    );
}

#[test]
fn a_sync_the_device_was_idle_through_costs_nothing() {
    let Some(s) = shared() else { return };
    // HTA's nccl_data: 24 cudaEventSynchronize of 2-9 µs, the device idle throughout each
    // (the launch-bound host was behind already). The idle after them is the host's
    // dispatch, not theirs: no sync finding, and launch-bound leads.
    let r = report_json(&[&hta(&s, "nccl_parser_config/nccl_data.json.gz")], &[]);
    let syncs = r["host"]["syncs"].as_array().unwrap();
    let event = syncs
        .iter()
        .find(|x| x["call"] == "cudaEventSynchronize")
        .expect("the event syncs");
    assert_eq!(event["count"], 24);
    assert_eq!(event["device_idle_after_ns"], 0, "{event}");
    assert!(finding(&r, "sync_points").is_none(), "{}", r["findings"]);
    assert_eq!(first(&r)["rule"], "launch_bound");
}

#[test]
fn a_pause_before_the_first_op_is_replayed() {
    let Some(s) = shared() else { return };
    // backward_thread: step 552's window opens 331.1 ms before its first op. The pause lies
    // outside the step's recorded nodes: the replay's bounds (entry) carry it, and the pause
    // fix gives it back in full — a replayed saving, not the rule's estimate.
    let rel = "call_stack/backward_thread.json";
    let r = report_json(&[&hta(&s, rel)], &[]);
    let f = first(&r);
    assert_eq!(f["rule"], "host_gap", "{rel}");
    assert_eq!(f["evidence"]["steps"], json!([552]), "{rel}");
    let saves = f["saves_ns"].as_i64().expect("replayed");
    assert!(
        (331_000_000..331_200_000).contains(&saves),
        "{rel}: {saves}"
    );
}

#[test]
fn a_step_ends_where_the_profiler_stopped_recording() {
    let Some(s) = shared() else { return };
    // triton_example: ProfilerStep#1 lasts 13.3 s, but `Record Window End` comes 1 837.333 µs
    // after its start, after the last host call (cudaDeviceSynchronize): the rest of the step
    // was never observed, so it is no stall.
    let r = report_json(&[&hta(&s, "triton_example/triton_example.json.gz")], &[]);
    assert_eq!(r["steps"][0]["time_ns"]["max"], 1_837_333, "{}", r["steps"]);
    let warnings = r["job"]["warnings"].to_string();
    assert!(warnings.contains("stopped recording"), "{warnings}");
    assert!(finding(&r, "host_gap").is_none(), "{}", r["findings"]);
}

#[test]
fn the_record_window_end_is_read_in_any_key_order_and_time_base() {
    // Step 2 ends 1 s after the window end at 3 000 µs (relative to the base); its last host
    // op ends at 2 500 µs, so it ends at the stop: 1 000 µs. Step 1 ends before the stop and
    // keeps its end. Phase before name (the fast path skips instants it does not need).
    let trace = r#"{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1100, "dur": 800},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 2000, "dur": 1000000},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 2100, "dur": 400},
{"ph": "i", "s": "t", "pid": 1, "tid": 1, "ts": 2200, "name": "[memory]"},
{"ph": "i", "s": "g", "pid": "", "tid": "", "ts": 3000, "name": "Record Window End"}
]}"#;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rank0.json");
    std::fs::write(&p, trace).unwrap();
    let r = report_json(&[&p], &[]);
    let spans: Vec<&Value> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["time_ns"]["max"])
        .collect();
    assert_eq!(
        spans,
        [&json!(1_000_000), &json!(1_000_000)],
        "{}",
        r["steps"]
    );
    // The same window end, name first and a host op after the stop's instant in the file.
    let named_first = trace.replace(
        r#"{"ph": "i", "s": "g", "pid": "", "tid": "", "ts": 3000, "name": "Record Window End"}"#,
        r#"{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 2400}"#,
    );
    std::fs::write(&p, named_first).unwrap();
    let r = report_json(&[&p], &[]);
    // Stop at 2 400 µs, but the op started before it runs to 2 500 µs: the step ends there.
    assert_eq!(r["steps"][1]["time_ns"]["max"], 500_000, "{}", r["steps"]);
    // A window end before recorded host work (2 100 µs) is no stop: nothing is cut.
    let early = trace.replace(
        r#""ts": 3000, "name": "Record Window End""#,
        r#""ts": 1500, "name": "Record Window End""#,
    );
    std::fs::write(&p, early).unwrap();
    let r = report_json(&[&p], &[]);
    assert_eq!(
        r["steps"][1]["time_ns"]["max"], 1_000_000_000,
        "{}",
        r["steps"]
    );
}
