//! Ascend profiler output: the hand-made two-rank export in `testdata/ascend/tiny` (answers
//! computed by hand), and the real torch_npu exports in `../shared/traces/ascend`.

use crate::common;

use common::{
    ascend_levels, assert_partitions, one_line_error, report_json, report_leaving_input_unchanged,
    row, run, shared, testdata,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn tiny() -> PathBuf {
    testdata("ascend/tiny")
}

fn rank_dir(r: u32) -> PathBuf {
    tiny().join(format!("host_{}_20250101000000000_ascend_pt", 100 + r))
}

/// The profiler's row and ours for (rank, step).
fn check(r: &Value, rank: u64) -> &Value {
    r["profiler_checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rank"] == rank)
        .unwrap_or_else(|| panic!("no check for rank {rank}: {}", r["profiler_checks"]))
}

#[test]
fn tiny_breakdown_by_hand() {
    let r = report_json(&[&tiny()], &[]);
    assert_eq!(r["job"]["ranks"], 2);
    assert_eq!(r["job"]["steps"], json!([3]));
    // Rank 0, step 3 = host step [1000, 1100] µs. C = [1020,1050] ∪ [1080,1090],
    // M = [1040,1070] (the HCCL op; its Notify Wait on stream 4 is its part, not counted
    // again), Y = [1010,1015], H = [1004,1015] ∪ [1030,1033] (the CANN thread launches).
    let b = row(&r, 3, 0);
    assert_eq!(b["span_ns"], 100_000);
    assert_eq!(b["compute_ns"], 30_000);
    assert_eq!(b["overlap_ns"], 10_000);
    assert_eq!(b["comm_ns"], 20_000);
    assert_eq!(b["memory_ns"], 5_000);
    assert_eq!(b["host_bound_ns"], 6_000);
    assert_eq!(b["free_ns"], 29_000);
    // Rank 1 arrives 5 µs later at the all-reduce: it is the one waited for.
    assert_eq!(row(&r, 3, 1)["overlap_ns"], 5_000);
    assert_partitions(&r);
    // The HCCL op's own args give its size: 1024 FP32 = 4 KiB.
    let events = &r["job"]["events"];
    assert_eq!(
        (events["comm"].as_u64(), events["compute"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(
        r["job"]["dropped"]["derived"], 4,
        "Overlap Analysis is not stored"
    );
}

#[test]
fn tiny_profiler_summary_matches_the_events() {
    let r = report_json(&[&tiny()], &[]);
    for rank in [0, 1] {
        let c = check(&r, rank);
        assert_eq!(c["ours"], c["theirs"], "rank {rank}");
    }
    let c = check(&r, 1);
    // Hand-computed: C = 40 µs, M = [1045,1070] = 25, C∩M = 5, window [1020,1090] = 70.
    assert_eq!(c["theirs"]["Computing"], 40_000);
    assert_eq!(c["theirs"]["Overlapped"], 5_000);
    assert_eq!(c["theirs"]["Free"], 10_000);
    assert_eq!(c["theirs"]["Preparing"], 20_000);
}

#[test]
fn tiny_lanes_ranks_and_devices() {
    let r = report_json(&[&tiny()], &[]);
    let sources = r["job"]["sources"].as_array().unwrap();
    // rank_id is an int in one profiler_info and a string in the other.
    assert_eq!(sources[0]["rank"], 0);
    assert_eq!(sources[1]["rank"], 1);
    assert!(
        sources[1]["path"]
            .as_str()
            .unwrap()
            .ends_with("host_101_20250101000000000_ascend_pt")
    );
    assert_eq!(
        r["job"]["devices"],
        json!([{"name": "Ascend NPU", "ranks": 2}])
    );
}

/// Every way of naming the same job loads the same two ranks.
#[test]
fn rank_directories_are_recognised_by_their_files() {
    let want = report_json(&[&tiny()], &[]);
    let out = |p: &[&Path]| report_json(p, &[]);
    let r0 = rank_dir(0);
    let r1 = rank_dir(1);
    for got in [
        out(&[&r0, &r1]),
        out(&[
            &r0.join("ASCEND_PROFILER_OUTPUT"),
            &r1.join("profiler_info_1.json"),
        ]),
        out(&[
            &r0.join("ASCEND_PROFILER_OUTPUT/trace_view.json"),
            &r0.join("ASCEND_PROFILER_OUTPUT/step_trace_time.csv"),
            &r1.join("ASCEND_PROFILER_OUTPUT/trace_view.json"),
        ]),
    ] {
        assert_eq!(got["breakdown"], want["breakdown"]);
        assert_eq!(got["profiler_checks"], want["profiler_checks"]);
    }
}

#[test]
fn a_renamed_trace_view_is_read_by_its_content() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("npu_rank0.json");
    std::fs::copy(
        rank_dir(0).join("ASCEND_PROFILER_OUTPUT/trace_view.json"),
        &f,
    )
    .unwrap();
    let r = report_json(&[&f], &[]);
    assert_eq!(row(&r, 3, 0)["compute_ns"], 30_000);
    assert!(r["job"]["unknown_categories"]["(no category)"].is_null());
}

#[test]
fn kineto_and_ascend_inputs_do_not_mix() {
    let out = run([
        Path::new("report"),
        &rank_dir(0),
        &testdata("pipeline2").join("rank-0.json"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("Ascend profiler output"), "{err}");
    // A trace_view.json under another name is only known once read: still refused.
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("npu.json");
    std::fs::copy(
        rank_dir(0).join("ASCEND_PROFILER_OUTPUT/trace_view.json"),
        &f,
    )
    .unwrap();
    let kineto = testdata("pipeline2").join("rank-0.json");
    let out = run([Path::new("report"), &f, &kineto]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("load the two kinds separately"), "{err}");
}

/// A copy of the tiny job with one file replaced.
fn broken(rel: &str, text: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r0_ascend_pt");
    let out = root.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    let src = rank_dir(0);
    for f in ["profiler_info_0.json", "profiler_metadata.json"] {
        std::fs::copy(src.join(f), root.join(f)).unwrap();
    }
    for f in [
        "trace_view.json",
        "step_trace_time.csv",
        "kernel_details.csv",
    ] {
        let from = src.join("ASCEND_PROFILER_OUTPUT").join(f);
        std::fs::copy(from, out.join(f)).unwrap();
    }
    std::fs::write(root.join(rel), text).unwrap();
    (t, root)
}

#[test]
fn bad_inputs_name_the_file_and_position() {
    let csv = "ASCEND_PROFILER_OUTPUT/step_trace_time.csv";
    let good = std::fs::read_to_string(rank_dir(0).join(csv)).unwrap();
    let (_t, d) = broken(csv, &good.as_bytes()[..good.len() - 12]);
    let e = one_line_error(&d);
    assert!(e.contains("step_trace_time.csv: line 2:"), "{e}");
    let (_t, d) = broken(csv, good.replace("Stage,", "Stadium,").as_bytes());
    let e = one_line_error(&d);
    assert!(e.contains("line 1") && e.contains("`Stage`"), "{e}");
    let tv = "ASCEND_PROFILER_OUTPUT/trace_view.json";
    let text = std::fs::read(rank_dir(0).join(tv)).unwrap();
    let (_t, d) = broken(tv, &text[..text.len() / 2]);
    let e = one_line_error(&d);
    assert!(e.contains("trace_view.json: byte"), "{e}");
    let (_t, d) = broken("profiler_info_0.json", b"{\"rank_id\": ");
    let e = one_line_error(&d);
    assert!(e.contains("profiler_info_0.json: line 1"), "{e}");
    let comm = "ASCEND_PROFILER_OUTPUT/communication.json";
    let (_t, d) = broken(comm, b"{\n\"step1\": {\"collective\": {\n\"x\": 3}}\n}");
    let e = one_line_error(&d);
    assert!(e.contains("communication.json: line 3:"), "{e}");
    // A kernel table cut mid-row, and one with a ratio that is not a number.
    let kernels = "ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    let good = std::fs::read_to_string(rank_dir(0).join(kernels)).unwrap();
    let (_t, d) = broken(kernels, &good.as_bytes()[..good.len() - 30]);
    let e = one_line_error(&d);
    assert!(e.contains("kernel_details.csv: line 4:"), "{e}");
    let (_t, d) = broken(kernels, good.replace(",0.85,", ",x,").as_bytes());
    let e = one_line_error(&d);
    assert!(
        e.contains("kernel_details.csv: line 2:") && e.contains("aic_mac_ratio"),
        "{e}"
    );
}

#[test]
fn a_job_with_an_unreadable_rank_loads_the_rest() {
    let (t, d) = broken("ASCEND_PROFILER_OUTPUT/step_trace_time.csv", b"Step\n1,2\n");
    let other = t.path().join("r1_ascend_pt");
    copy_dir(&rank_dir(1), &other);
    let out = run([Path::new("report"), &d, &other]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 rank(s)"), "{text}");
    assert!(text.contains("step_trace_time.csv: line"), "{text}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn real_exports_reproduce_the_profilers_step_summary() {
    let Some(s) = shared() else { return };
    for dir in ascend_levels(&s, "text") {
        let r = report_leaving_input_unchanged(&dir);
        assert_eq!(r["job"]["ranks"], 2, "{}", dir.display());
        assert_partitions(&r);
        for rank in [0, 1] {
            let c = check(&r, rank);
            let (ours, theirs) = (&c["ours"], &c["theirs"]);
            let span = theirs["Stage"].as_i64().unwrap() + theirs["Bubble"].as_i64().unwrap();
            for (k, v) in theirs.as_object().unwrap() {
                let d = (ours[k].as_i64().unwrap() - v.as_i64().unwrap()).abs();
                // torch_npu sums float µs; the events agree to well under a µs.
                assert!(
                    d < 1_000,
                    "{} rank {rank} {k}: {ours} vs {theirs}",
                    dir.display()
                );
                assert!((d as f64) < span as f64 * 0.01);
            }
            // The breakdown's parts are the same sets: compute + overlap is Computing,
            // comm is Communication(Not Overlapped).
            let b = row(&r, 50, rank);
            let computing = b["compute_ns"].as_i64().unwrap() + b["overlap_ns"].as_i64().unwrap();
            let within = |a: i64, b: &Value| (a - b.as_i64().unwrap()).abs() < span / 100;
            assert!(within(computing, &theirs["Computing"]), "{b} vs {theirs}");
            assert!(within(
                b["comm_ns"].as_i64().unwrap(),
                &theirs["Communication(Not Overlapped)"]
            ));
        }
    }
}

#[test]
fn every_shared_ascend_sample_loads_or_fails_in_one_line() {
    let Some(s) = shared() else { return };
    let mut dirs = Vec::new();
    find_rank_dirs(&s.join("traces/ascend"), &mut dirs);
    assert!(dirs.len() >= 14, "{dirs:?}");
    for d in dirs {
        common::loads_or_fails_in_one_line(&d);
    }
}

/// Directories holding `ASCEND_PROFILER_OUTPUT/` or a `trace_view.json`.
fn find_rank_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    if entries.iter().any(|e| {
        let n = e.file_name();
        n == "ASCEND_PROFILER_OUTPUT" || n == "trace_view.json"
    }) {
        out.push(dir.to_path_buf());
        return;
    }
    for e in entries {
        if e.path().is_dir() {
            find_rank_dirs(&e.path(), out);
        }
    }
}

/// The level1 and level2 samples ship 2 of 8 ranks. Both loaded ranks wait inside the first
/// all-reduce for rank 5, which is not loaded: HCCL's `Notify_Wait` for peer 5 on rank 0's
/// plane 5 ends 78 776 734 ns after rank 0's call starts (level1: the call starts at
/// 1736408883732241.564 µs; the wait starts at …253.684 µs and lasts 78764.61375 µs).
/// That is the first finding; msprof-analyze 26.2.0 says "no slow rank" on the same files.
#[test]
fn a_rank_that_is_not_loaded_is_found_by_its_peers_waits() {
    let Some(s) = shared() else { return };
    let dirs = ascend_levels(&s, "text");
    for (dir, op, wait0) in [
        (&dirs[1], "hcom_allReduce__586_0_1", 78_776_734),
        (&dirs[2], "hcom_allReduce__271_0_1", 0),
    ] {
        let r = report_json(&[dir], &[]);
        let f = &r["findings"][0];
        assert_eq!(f["rule"], "straggler", "{}: {f}", dir.display());
        assert_eq!(f["evidence"]["ranks"], json!([5]));
        assert_eq!(f["evidence"]["steps"], json!([50]));
        assert_eq!(f["evidence"]["ops"][0], op);
        assert!(f["title"].as_str().unwrap().contains("rank 5 (not loaded)"));
        assert!(f["impact_pct"].as_f64().unwrap() <= 1.0);
        let w = &r["communication"]["worst_instances"][0];
        assert_eq!(
            (&w["last_arriver"], &w["last_arriver_measured"]),
            (&json!(5), &json!(true))
        );
        if wait0 > 0 {
            // Rank 0 waited at least its own measured wait; rank 1's (aligned) can date the
            // arrival a little later.
            let w0 = w["members"][0]["wait_ns"].as_i64().unwrap();
            assert!((wait0..wait0 + 100_000).contains(&w0), "{w0}");
        }
        // The peers make the world 8 ranks, 6 of them not loaded.
        let g = &r["communication"]["groups"][0];
        assert_eq!(g["ranks"], json!([0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(g["missing_ranks"], json!([2, 3, 4, 5, 6, 7]));
        let s = &r["cluster"]["stragglers"][0];
        assert_eq!((&s["rank"], &s["loaded"]), (&json!(5), &json!(false)));
    }
    // Level0 records no HCCL plane tasks: nothing measures rank 5, and no finding invents
    // it. Small messages cannot claim the waiting inside the first all-reduce: each small
    // call loses at most the fastest call's time to its size.
    let r = report_json(&[&dirs[0]], &[]);
    let fs = r["findings"].as_array().unwrap();
    assert!(fs.iter().all(|f| f["evidence"]["ranks"] != json!([5])));
    // Listed, or folded under the stall that explains it: what it still saves once the
    // stall is fixed.
    let listed = fs.iter().find(|f| f["rule"] == "small_messages");
    let folded = fs
        .iter()
        .flat_map(|f| f["folded"].as_array().unwrap())
        .find(|f| f["rule"] == "small_messages");
    let left = match (listed, folded) {
        (Some(f), _) => f["impact_ns"].as_i64().unwrap(),
        (None, Some(f)) => f["remains_ns"].as_i64().unwrap(),
        (None, None) => panic!("small messages are found"),
    };
    assert!(left < 5_000_000, "{listed:?} {folded:?}");
}

/// Level0 shows no peer waits, but the first all-reduce of step 50 still took 56 083 721 ns
/// after both loaded ranks had arrived: 16 388 000 B at the best all-reduce busbw of the
/// same job (call 2: 151 011 328 B in 2 489 530 ns, 60.66 GB/s; factor 2(n−1)/n = 1 for
/// n = 2) needs 270 167 ns. That stall — the same unseen rank as level1's — is the first
/// finding on both exports, replayed (its transfers at the expected time), with low bandwidth
/// folded into it and poor overlap folded or left under 1% of the step.
#[test]
fn level0_leads_with_the_stalled_all_reduce() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&ascend_levels(&s, "text")[0]], &[]);
    let st = &r["communication"]["stalls"];
    assert_eq!(st.as_array().unwrap().len(), 2, "{st}");
    assert_eq!(st[0]["name"], "hcom_allReduce__868_0_1");
    assert_eq!(st[0]["transit_ns"], 56_083_721);
    assert_eq!(st[0]["bytes"], 16_388_000);
    assert_eq!(st[0]["expected_ns"], 270_167);
    for kind in ["text", "db"] {
        let r = report_json(&[&ascend_levels(&s, kind)[0]], &[]);
        let f = &r["findings"][0];
        assert_eq!(f["rule"], "stalled_transfer", "{kind}: {f}");
        assert_eq!(f["evidence"]["ranks"], json!([0, 1]));
        assert_eq!(f["evidence"]["steps"], json!([50]));
        assert!(f["evidence"]["ops"][0].as_str().unwrap().ends_with("_0_1"));
        let folded: Vec<&str> = f["folded"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["rule"].as_str().unwrap())
            .collect();
        assert!(folded.contains(&"low_bandwidth"), "{kind}: {folded:?}");
        assert!(f["saves_ns"].as_i64().unwrap() > 50_000_000, "{kind}: {f}");
        let fs = r["findings"].as_array().unwrap();
        assert!(fs.iter().all(|x| x["rule"] != "low_bandwidth"));
        let overlap = fs.iter().find(|x| x["rule"] == "poor_overlap");
        assert!(overlap.is_none_or(|x| x["impact_pct"].as_f64().unwrap() < 0.01));
    }
}

/// The level1 kernel tables classify every compute task but four by its PMU counters. By
/// hand from both ranks' kernel_details.csv: MatMulV2 runs 1869.057 µs; its
/// duration-weighted MTE2 ratio is 0.887661 (mac 0.188540), so MTE2 bounds it (memory-bound
/// at U = 0.8). Every recorded task ran dynamic, and TransData (no pipe above 35%) leads the
/// operators no pipe bounds; the db export (another run, no `OP State`) classifies the same
/// operator types alike.
#[test]
fn kernel_tables_classify_tasks_by_their_counters() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&ascend_levels(&s, "text")[1]], &[]);
    let ops = r["roofline"]["pmu_ops"].as_array().unwrap();
    let mm = ops.iter().find(|o| o["op"] == "MatMulV2").unwrap();
    assert_eq!(mm["time_ns"], 1_869_057);
    assert_eq!(
        (&mm["class"], &mm["bound_pipe"]),
        (&json!("memory_bound"), &json!("mte2"))
    );
    assert_eq!(mm["bound_ratio"], 0.887661);
    assert_eq!(mm["cube"]["mac"], 0.18854);
    assert_eq!(mm["core"], "AI_CORE");
    assert_eq!(r["roofline"]["classes"]["unknown"]["kernels"], 4);
    assert_eq!(r["tasks"]["dynamic"], 374);
    assert_eq!(r["tasks"]["with_state"], 374);
    let rule = |r: &serde_json::Value, id: &str| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == id)
            .cloned()
    };
    let unbound = rule(&r, "unbound_operators").unwrap();
    assert_eq!(unbound["evidence"]["ops"][0], "TransData");
    // Replayed: its tasks at the share their busiest pipe leaves, never more than the
    // rule's Σ over ranks of what those tasks could lose.
    let saves = unbound["saves_ns"].as_i64().expect("replayed");
    assert!(saves <= unbound["covers_ns"].as_i64().unwrap(), "{unbound}");
    assert!(rule(&r, "dynamic_shapes").is_some());
    assert!(rule(&r, "roofline_unknown").is_none());
    let db = report_json(&[&ascend_levels(&s, "db")[1]], &[]);
    let class = |r: &serde_json::Value, op: &str| {
        r["roofline"]["pmu_ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .unwrap()["class"]
            .clone()
    };
    for op in ["MatMulV2", "TransData", "Conv2D", "ForeachAddList"] {
        assert_eq!(class(&r, op), class(&db, op), "{op}");
    }
    assert!(rule(&db, "unbound_operators").is_some());
    assert_eq!(db["tasks"]["with_state"], 0);
    assert!(rule(&db, "dynamic_shapes").is_none());
}

/// HCCL's link matrix and its transport totals are two sums of the same traffic: on level1,
/// rank 0's links (0->1 … 0->7) add up to its HCCS bytes in communication.json, 427 596 096 B
/// in 27 315 706 ns, on the text export; the db export (another run) to its own HCCS bytes,
/// its time within 1 ns (each row rounded once). No link is slow on these healthy links.
#[test]
fn the_link_matrix_adds_up_to_the_transports() {
    let Some(s) = shared() else { return };
    for kind in ["text", "db"] {
        let r = report_json(&[&ascend_levels(&s, kind)[1]], &[]);
        let links = r["link_matrix"].as_array().unwrap();
        assert_eq!(links.len(), 14, "{kind}");
        for rank in [0, 1] {
            let of = |key: &str| -> i64 {
                links
                    .iter()
                    .filter(|l| l["src"] == rank)
                    .map(|l| l[key].as_i64().unwrap())
                    .sum()
            };
            let t = r["transports"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["rank"] == rank && t["transport"] == "HCCS")
                .unwrap();
            assert_eq!(of("bytes"), t["bytes"].as_i64().unwrap(), "{kind} {rank}");
            assert!(
                (of("time_ns") - t["time_ns"].as_i64().unwrap()).abs() <= 1,
                "{kind} {rank}"
            );
        }
        if kind == "text" {
            assert_eq!(
                links
                    .iter()
                    .filter(|l| l["src"] == 0)
                    .map(|l| l["bytes"].as_i64().unwrap())
                    .sum::<i64>(),
                427_596_096
            );
        }
        assert!(links.iter().all(|l| l["slow"] == false));
        assert!(
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["rule"] != "slow_transport_link")
        );
    }
}

/// msprof-analyze's byte-alignment rule, measured. By hand from level1 rank 0's
/// trace_view.json: hcom_allReduce__586_0_1 moves 14 SDMA tasks over HCCS of more than
/// 512 B, 28 647 232 B in all; two of them (Reduce_Inline on plane 7, Memcpy on plane 1) carry
/// 1 937 312 B (= 3783 × 512 + 416), 136.0826875 + 101.86203125 µs = 237 944.71875 ns (ours
/// 237 945: each task's end is kept to the ns). msprof-analyze prints the same op, size and
/// "abnormal duration" (237.9447 µs). Both unaligned tasks ended before the aligned tasks
/// beside them (136.08 µs against 136.70–137.54; 101.86 against 125.2–126.4), so aligning them
/// gains nothing: stepscope says so, with impact 0; the db export of the same job agrees.
#[test]
fn unaligned_transfers_are_msprofs_and_cost_nothing_here() {
    let Some(s) = shared() else { return };
    for kind in ["text", "db"] {
        let r = report_json(&[&ascend_levels(&s, kind)[1]], &[]);
        let u = &r["unaligned_transfers"];
        let ops = u["ops"].as_array().unwrap();
        assert_eq!(ops.len(), 4, "{kind}: two ops on each of two ranks");
        for o in ops {
            assert_eq!((&o["transfers"], &o["unaligned"]), (&json!(14), &json!(2)));
            assert_eq!(o["tail_ns"], 0, "{kind}: {o}");
            let name = o["name"].as_str().unwrap();
            let size = if name.ends_with("_0_1") {
                1_937_312
            } else {
                1_162_496
            };
            assert_eq!(o["sizes"], json!([size]));
        }
        let f = common::finding(&r, "misaligned_sizes").expect("misaligned_sizes");
        assert_eq!(f["impact_ns"], 0);
        assert!(f["title"].as_str().unwrap().contains("no measured cost"));
        assert_eq!(f["evidence"]["ranks"], json!([0, 1]));
    }
    let r = report_json(&[&ascend_levels(&s, "text")[1]], &[]);
    let ops = r["unaligned_transfers"]["ops"].as_array().unwrap();
    let o = ops
        .iter()
        .find(|o| o["rank"] == 0 && o["name"] == "hcom_allReduce__586_0_1")
        .unwrap();
    assert_eq!(
        (&o["bytes"], &o["unaligned_ns"]),
        (&json!(28_647_232), &json!(237_945))
    );
    // Level0 records no sizes: the rule falls back to the collectives' own sizes.
    let r = report_json(&[&ascend_levels(&s, "text")[0]], &[]);
    assert!(r.get("unaligned_transfers").is_none());
    let f = common::finding(&r, "misaligned_sizes").expect("misaligned_sizes");
    assert!(f["title"].as_str().unwrap().contains("call(s) in group"));
}

/// By hand (testdata/ascend/tiny, rank 0): the all-reduce's plane tasks are a 4096 B copy over
/// HCCS [1066, 1069) µs, a 4000 B one [1064, 1070) µs (4000 = 7 × 512 + 416) and an on-chip
/// 1000 B reduce (not link traffic). The unaligned copy ran on 1 µs after the aligned one
/// ended: a 1 µs tail, 0.5 µs per rank of the two.
#[test]
fn tiny_unaligned_transfer_by_hand() {
    let r = report_json(&[&tiny()], &[]);
    let o = &r["unaligned_transfers"]["ops"][0];
    assert_eq!((&o["rank"], &o["step"]), (&json!(0), &json!(3)));
    assert_eq!(
        (&o["transfers"], &o["bytes"], &o["time_ns"]),
        (&json!(2), &json!(8096), &json!(9000))
    );
    assert_eq!(
        (&o["unaligned_bytes"], &o["unaligned_ns"], &o["tail_ns"]),
        (&json!(4000), &json!(6000), &json!(1000))
    );
    let f = common::finding(&r, "misaligned_sizes").expect("misaligned_sizes");
    assert_eq!(f["impact_ns"], 500);
    assert_eq!(f["evidence"]["ops"], json!(["hcom_allReduce__1_0_1"]));
}

/// msprof-analyze's affinity-API rule. On the shared level1 job (both exports) it finds what
/// msprof-analyze finds, `torch_npu.optim.NpuFusedSGD` for `Optimizer.step#SGD.step`, once per
/// rank. On the tiny job with a permute → contiguous → view run added to the main thread (an
/// `aten::empty` nested inside the permute is not a run of its own), the same run under a
/// nested operator does not count twice, and an AdamW step: two APIs.
#[test]
fn affinity_apis_are_msprofs() {
    let Some(s) = shared() else { return };
    for kind in ["text", "db"] {
        let r = report_json(&[&ascend_levels(&s, kind)[1]], &[]);
        let a = &r["affinity"];
        assert_eq!(a.as_array().unwrap().len(), 1, "{kind}: {a}");
        assert_eq!(a[0]["api"], "torch_npu.optim.NpuFusedSGD");
        assert_eq!(a[0]["replaces"], "Optimizer.step#SGD.step");
        assert_eq!(
            (&a[0]["count"], &a[0]["ranks"]),
            (&json!(2), &json!([0, 1]))
        );
        let f = common::finding(&r, "affinity_apis").expect("affinity_apis");
        assert_eq!(f["impact_ns"], 0);
        assert_eq!(f["evidence"]["ops"], json!(["torch_npu.optim.NpuFusedSGD"]));
    }
    let trace = std::fs::read_to_string(rank_dir(0).join("ASCEND_PROFILER_OUTPUT/trace_view.json"))
        .unwrap();
    let op = |name: &str, ts: &str, dur: u32| {
        format!(
            r#"{{"ph": "X", "name": "{name}", "pid": 100, "tid": 100, "ts": "{ts}", "dur": {dur}, "cat": "cpu_op", "args": {{}}}},"#
        )
    };
    let added = [
        op("aten::permute", "1016.000", 1),
        op("aten::empty", "1016.200", 0),
        op("aten::contiguous", "1017.000", 1),
        op("aten::view", "1018.000", 1),
        op("Optimizer.step#AdamW.step", "1090.000", 5),
    ]
    .concat();
    let text = trace.replacen("[", &format!("[{added}\n"), 1);
    let (_t, root) = broken("ASCEND_PROFILER_OUTPUT/trace_view.json", text.as_bytes());
    let r = report_json(&[&root], &[]);
    let a = r["affinity"].as_array().unwrap();
    let apis: Vec<(&str, &str, u64)> = a
        .iter()
        .map(|m| {
            (
                m["api"].as_str().unwrap(),
                m["replaces"].as_str().unwrap(),
                m["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        apis,
        [
            (
                "torch_npu.optim.NpuFusedAdamW",
                "Optimizer.step#AdamW.step",
                1
            ),
            (
                "torch_npu.npu_confusion_transpose",
                "permute-contiguous-view",
                1
            ),
        ]
    );
    assert_eq!(a[1]["host_ns"], 3000);
}

/// A MindSpeed-style job declares its parallel groups in `profiler_metadata.json`
/// (`parallel_group_info`, keyed by HCCL group ids) while communication.json names each op's
/// group by HCCL's hash of the id (`…@<double_hash>`). With the tiny job's metadata declaring a
/// world of 4 and a `dp` group of ranks 0 and 1, and its all-reduce named in that group, the
/// all-reduce is matched in `dp` — both its members loaded — not in a world with ranks 2 and
/// 3 missing. Undeclared, the group's size comes from the link matrix.
#[test]
fn hccl_ops_join_the_declared_parallel_groups() {
    let dp = "10.0.0.1%eth0_60000_0_1";
    // msprof-analyze's double_hash of that id (cluster_analyse/recipes/hccl_sum.py).
    let dp_hash = "8557218874045301532";
    let meta = format!(
        r#"{{"distributed_args": {{"world_size": 4}},
            "parallel_group_info": {{
              "{dp}": {{"group_name": "dp", "group_rank": 0, "global_ranks": [0, 1]}},
              "10.0.0.1%eth0_60000_0_0": {{"group_name": "default_group", "group_rank": 0, "global_ranks": [0, 1, 2, 3]}}}}}}"#
    );
    // The tiny job with that metadata; its all-reduce named in `dp`, or in a group (`99`)
    // the metadata does not declare, with or without the link matrix.
    let job = |group: &str, matrix: bool| {
        let t = tempfile::tempdir().unwrap();
        let job = t.path().join("job");
        copy_dir(&tiny(), &job);
        for r in [0, 1] {
            let dir = job.join(format!("host_{}_20250101000000000_ascend_pt", 100 + r));
            std::fs::write(dir.join("profiler_metadata.json"), &meta).unwrap();
            let comm = dir.join("ASCEND_PROFILER_OUTPUT/communication.json");
            let text = std::fs::read_to_string(&comm).unwrap();
            std::fs::write(&comm, text.replace("@99", &format!("@{group}"))).unwrap();
            if !matrix {
                std::fs::remove_file(dir.join("ASCEND_PROFILER_OUTPUT/communication_matrix.json"))
                    .unwrap();
            }
        }
        let r = report_json(&[&job], &[]);
        r["communication"]["groups"].as_array().unwrap().clone()
    };
    let groups = job(dp_hash, true);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let g = &groups[0];
    assert_eq!(g["name"], dp_hash);
    assert_eq!(
        (&g["description"], &g["source"]),
        (&json!("dp"), &json!("declared"))
    );
    assert_eq!(
        (&g["ranks"], &g["missing_ranks"]),
        (&json!([0, 1]), &json!([]))
    );
    // An undeclared group: the link matrix names communicator ranks 0 and 1 alone, so it is
    // no world of 4 but a group of the ranks calling it, none missing.
    let groups = job("99", true);
    let g = &groups[0];
    assert_eq!((&g["name"], &g["ranks"]), (&json!("99"), &json!([0, 1])));
    assert_eq!(g["missing_ranks"], json!([]));
    // Of unknown size (no matrix), it is taken for the world: ranks 2 and 3 unseen.
    let groups = job("99", false);
    let w = &groups[0];
    assert_eq!(
        (&w["ranks"], &w["missing_ranks"]),
        (&json!([0, 1, 2, 3]), &json!([2, 3]))
    );
}

/// The `AI Core Freq` counter: the tiny job's ranks hold 1800 MHz; with rank 1 dropping to
/// 1200 MHz at 1050 µs, its step [1000, 1100) µs averages (1800·50 + 1200·50) / 100 = 1500
/// MHz, 16.7% below the job's top 1800. Its 40 µs of compute (35 alone, 5 under
/// communication) would have taken 1500/1800 of that at the top clock: 6 666 ns lost, 3 333
/// per rank of the two. Replayed (its kernels at 1500/1800 of their time) it saves nothing:
/// no host call waits for them, and the step ends with the host step at 1100 µs, after the
/// last kernel (1090).
#[test]
fn a_dropped_device_clock_is_found_by_hand() {
    let t = tempfile::tempdir().unwrap();
    let job = t.path().join("job");
    copy_dir(&tiny(), &job);
    let trace =
        job.join("host_101_20250101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let text = std::fs::read_to_string(&trace).unwrap();
    let drop = r#", {"name": "AI Core Freq", "ts": "1050.000", "pid": 600, "tid": 0, "args": {"MHz": 1200}, "ph": "C"}]"#;
    let text = format!("{}{drop}", text.trim_end().strip_suffix(']').unwrap());
    std::fs::write(&trace, text).unwrap();
    let r = report_json(&[&job], &[]);
    let c = &r["clocks"];
    assert_eq!(c["top_mhz"], 1800);
    let d = &c["drops"][0];
    assert_eq!(
        (&d["rank"], &d["step"], &d["mean_mhz"]),
        (&json!(1), &json!(3), &json!(1500.0))
    );
    assert_eq!(
        (&d["min_mhz"], &d["compute_ns"], &d["lost_ns"]),
        (&json!(1200), &json!(40_000), &json!(6_666))
    );
    let f = common::finding(&r, "clock_drop").expect("clock_drop");
    assert_eq!(
        (&f["saves_ns"], &f["impact_ns"], &f["covers_ns"]),
        (&json!(0), &json!(0), &json!(6_666))
    );
    assert_eq!(f["evidence"]["ranks"], json!([1]));
    // The unchanged job holds its clock: nothing to say.
    let r = report_json(&[&tiny()], &[]);
    assert_eq!(r["clocks"]["drops"], json!([]));
    assert!(common::finding(&r, "clock_drop").is_none());
}

/// `op_statistic.csv` is the profiler's own sum of its kernel table per operator type and
/// unit. On the shared level1 and level2 text exports the tasks stepscope read (durations
/// from trace_view.json, each to the ns) reproduce every one of its 33 rows on both ranks:
/// the same count, the same total within 1 ns per task. A row that does not agree is named.
#[test]
fn the_kernel_table_reproduces_op_statistic() {
    if let Some(s) = shared() {
        for dir in &ascend_levels(&s, "text")[1..] {
            let r = report_json(&[dir], &[]);
            let checks = r["op_stat_checks"].as_array().unwrap();
            assert_eq!(checks.len(), 2, "{}", dir.display());
            for c in checks {
                assert_eq!((&c["rows"], &c["agree"]), (&json!(33), &json!(33)), "{c}");
            }
        }
    }
    // Tiny rank 0 ran one MatMulV2 of 30 µs and one Add of 10 µs; a table claiming two Adds
    // disagrees on that row alone.
    let table = "OP Type,Core Type,Count,Total Time(us)\nMatMulV2,AI_CORE,1,30.000\n\
                 Add,AI_VECTOR_CORE,2,20.000\n";
    let (_t, root) = broken("ASCEND_PROFILER_OUTPUT/op_statistic.csv", table.as_bytes());
    let r = report_json(&[&root], &[]);
    let c = &r["op_stat_checks"][0];
    assert_eq!((&c["rows"], &c["agree"]), (&json!(2), &json!(1)));
    let d = &c["differ"][0];
    assert_eq!(
        (&d["op"], &d["core"]),
        (&json!("Add"), &json!("AI_VECTOR_CORE"))
    );
    assert_eq!(
        (&d["count"], &d["time_ns"]),
        (&json!([2, 1]), &json!([20_000, 10_000]))
    );
}

/// A rank that kept its kernel table but not `trace_view.json` (the trace is the export's
/// largest file): level1's text export with the traces removed. The device timeline comes
/// from `kernel_details.csv` — the same 374 compute tasks and 8 HCCL ops as with the trace —
/// and torch_npu's step summary is reproduced from it to under a µs, as from the trace. Without the HCCL planes the skew between the two
/// loaded ranks cannot see rank 5 arriving late; HCCL's own split (7.54 ms of 206.4 ms moving
/// data) still says the all-reduces wait, so the verdict is the trace's: waiting for a rank
/// that is not loaded, not poor overlap.
#[test]
fn a_kernel_table_alone_gives_the_device_timeline_and_the_same_verdict() {
    let Some(s) = shared() else { return };
    let t = tempfile::tempdir().unwrap();
    copy_dir(&ascend_levels(&s, "text")[1], t.path());
    for r in 0..2 {
        let out = t
            .path()
            .join(format!("rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::remove_file(out.join("trace_view.json")).unwrap();
    }
    let r = report_json(&[t.path()], &[]);
    let warnings = r["job"]["warnings"].to_string();
    assert!(warnings.contains("no trace_view.json"), "{warnings}");
    assert_eq!(r["job"]["events"]["compute"], 374);
    assert_eq!(r["job"]["events"]["comm"], 8);
    assert_eq!(r["job"]["events"]["launch"], 0);
    assert_partitions(&r);
    for rank in [0, 1] {
        let c = check(&r, rank);
        for (k, v) in c["theirs"].as_object().unwrap() {
            if k == "Preparing" {
                // Device start − host step start: no host step here.
                assert!(c["ours"].get(k).is_none(), "{c}");
                continue;
            }
            // As with the trace: under a µs (torch_npu writes Stage rounded to 0.5 µs).
            let d = (c["ours"][k].as_i64().unwrap() - v.as_i64().unwrap()).abs();
            assert!(d < 1_000, "rank {rank} {k}: {c}");
        }
    }
    let ty = &r["communication"]["types"][0];
    assert_eq!(
        (&ty["op"], &ty["group"], &ty["unloaded_members"]),
        (&json!("all_reduce"), &json!("world"), &json!(6))
    );
    assert_eq!(ty["hccl"]["calls"], 8);
    assert!(ty["wait_ratio"].as_f64().unwrap() < 0.05, "{ty}");
    assert!(ty["waiting_ratio"].as_f64().unwrap() > 0.95, "{ty}");
    let first = &r["findings"][0];
    assert_eq!(first["rule"], "comm_wait_dominated", "{first}");
    assert!(first["title"].as_str().unwrap().contains("not loaded"));
    assert_eq!(first["evidence"]["ranks"], json!([]));
    let free = common::finding(&r, "free_time").expect("free_time");
    assert!(free["title"].as_str().unwrap().contains("no host thread"));
    assert!(common::finding(&r, "launch_bound").is_none());
    // The text report marks the wait% that HCCL's split set, and says so.
    let out = common::run([Path::new("report"), t.path()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("96.3%*"), "{text}");
    assert!(
        text.contains("HCCL's own split (the starred wait%)"),
        "{text}"
    );
}

/// The GPT-3 sample's ranks kept no trace: rank 1 loads from its kernel table (20 tasks and
/// two broadcasts); rank 0's table has a row one field short (line 17), and is skipped with
/// that line named.
#[test]
fn the_gpt3_kernel_tables_load_or_name_their_bad_line() {
    let Some(s) = shared() else { return };
    let d = s.join("traces/ascend/msinsight/server/src/test/test_data");
    let (r, err) =
        common::report_json_and_stderr(&[&d.join("test_rank_0"), &d.join("test_rank_1")], &[]);
    assert!(
        err.contains("test_rank_0/ASCEND_PROFILER_OUTPUT/kernel_details.csv: line 17:"),
        "{err}"
    );
    assert_eq!(r["job"]["ranks"], 1);
    assert_eq!(r["job"]["events"]["compute"], 20);
    assert_eq!(r["job"]["events"]["comm"], 2);
    // Its HCCS links move ~100 B per op: latency, never a slow link.
    assert!(common::finding(&r, "slow_transport_link").is_none());
}

/// Ascend writes a thread's AscendCL calls under the CANN process, apart from its operators:
/// the stream syncs are blamed on the operator of the same thread id around them. Level1,
/// both ranks: ten syncs inside `aten::item` (177.6 ms blocked: the step's `.item()` waits
/// out the all-reduce that waits for rank 5) and four inside `aten::to`.
#[test]
fn ascend_syncs_are_blamed_on_their_threads_operator() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&ascend_levels(&s, "text")[1]], &[]);
    let syncs: Vec<(String, u64, i64)> = r["host"]["syncs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["caused_by"].as_str().unwrap().to_string(),
                x["count"].as_u64().unwrap(),
                x["blocked_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(syncs[0], ("aten::item".to_string(), 10, 177_631_250));
    assert_eq!((syncs[1].0.as_str(), syncs[1].1), ("aten::to", 4));
    let f = common::finding(&r, "sync_points").expect("sync_points");
    assert!(
        f["title"].as_str().unwrap().contains("from aten::to"),
        "{f}"
    );
}

/// Level1 dispatches 19 operators per rank through `aclopCompileAndExecute` (one short of
/// msprof-analyze's 20, which stays silent): 28.7 ms of host time over both ranks, 10.3 ms of
/// it with the device idle. 1.7 ms of that idle is in the catch-up after the `aten::item` /
/// `aten::to` syncs that waited, which `sync_points` counts (after a sync the device was idle
/// through, the idle is no sync's); the other 8.7 ms — 2.8% of each rank's step — is a cost of
/// its own, taken out of launch-bound's share.
#[test]
fn run_time_compiles_are_measured_by_the_idle_they_cause() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&ascend_levels(&s, "text")[1]], &[]);
    let d = &r["host"]["op_dispatch"];
    assert_eq!(
        (&d["count"], &d["total_ns"], &d["device_idle_ns"]),
        (&json!(38), &json!(28_692_600), &json!(8_664_448))
    );
    // Replayed (compiled once): the loaded ranks then reach each all-reduce sooner and wait
    // longer for rank 6, which is not loaded and arrives late to every one — alone the fix
    // saves nothing; after the straggler's it saves 6.7 ms (the ideal step takes both).
    let f = common::finding(&r, "op_dispatch").expect("op_dispatch");
    assert_eq!((&f["saves_ns"], &f["impact_ns"]), (&json!(0), &json!(0)));
    let launch = common::finding(&r, "launch_bound").unwrap();
    let host_bound = r["host"]["launch"]["host_bound_ns"].as_i64().unwrap();
    let named = launch["evidence"]["numbers"]["host_bound_ns"]
        .as_f64()
        .unwrap() as i64;
    assert!(named <= host_bound - 8_664_448, "{named} of {host_bound}");
}

/// A rank whose raw data was never parsed (`analyse_flag=False`, common on large jobs) holds
/// only `PROF_*` folders: the error says to parse it first, and how.
#[test]
fn an_unparsed_rank_says_how_to_parse_it() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("node1_123_ascend_pt");
    std::fs::create_dir_all(root.join("PROF_000001_20250101_abc/device_0/data")).unwrap();
    std::fs::write(root.join("profiler_info_3.json"), r#"{"rank_id": 3}"#).unwrap();
    let e = one_line_error(&root);
    assert!(e.contains("node1_123_ascend_pt"), "{e}");
    assert!(
        e.contains("PROF_*") && e.contains("profiler.analyse"),
        "{e}"
    );
}
