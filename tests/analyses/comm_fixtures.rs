//! Communication and cluster analysis on hand-made fixtures (testdata/gen_comm_fixtures.py
//! describes the timelines); every expected number is computed by hand in the comments.

use crate::common;

use common::{column_i64, hist, report_json, testdata};
use serde_json::{Value, json};

fn cluster4(extra: &[&str]) -> Value {
    report_json(&[&testdata("cluster4")], extra)
}

fn find<'a>(list: &'a Value, key: &str, val: Value) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x[key] == val)
        .unwrap_or_else(|| panic!("no entry with {key} = {val} in {list}"))
}

#[test]
fn skewed_clock_is_aligned_away() {
    let r = cluster4(&["--ranks-per-node", "4"]);
    // Rank 2's clock runs 5 ms ahead; the all-reduce ends coincide after a −5 ms shift.
    assert_eq!(r["cluster"]["align"], "collective");
    let offsets = column_i64(&r["cluster"]["offsets_ns"], "offset_ns");
    assert_eq!(offsets, [0, 0, -5_000_000, 0]);
    assert_eq!(r["cluster"]["offsets_ns"][2]["via"], 0);
    assert_eq!(r["cluster"]["offsets_ns"][2]["samples"], 2);
}

#[test]
fn late_arriver_waits_transit_and_bandwidth() {
    let r = cluster4(&["--ranks-per-node", "4"]);
    let worst = r["communication"]["worst_instances"].as_array().unwrap();
    assert_eq!(worst.len(), 2);
    for (w, step) in worst.iter().zip([1, 2]) {
        // Arrivals 420, 420, 420 (rank 2 after alignment), 520 µs (rank 3); all end at 620.
        assert_eq!(w["op"], "all_reduce");
        assert_eq!(w["group"], "0");
        assert_eq!(w["step"], step);
        assert_eq!(w["skew_ns"], 100_000);
        assert_eq!(w["last_arriver"], 3);
        assert_eq!(w["wait_ns"], 300_000);
        assert_eq!(w["transit_ns"], 100_000);
        // Durations 200, 200, 200, 100: R_wait = 1 − 175/200.
        assert_eq!(w["r_wait"], 0.125);
        // 4194304 floats = 16 MiB over 100 µs; busbw × 2(n−1)/n = 1.5.
        assert_eq!(w["bytes"], 16_777_216);
        assert_eq!(w["algbw_gbps"], 167.77216);
        assert_eq!(w["busbw_gbps"], 251.65824);
        let waits = column_i64(&w["members"], "wait_ns");
        assert_eq!(waits, [100_000, 100_000, 100_000, 0]);
    }
}

#[test]
fn per_type_stats() {
    let r = cluster4(&["--ranks-per-node", "4"]);
    let t = &r["communication"]["types"][0];
    assert_eq!(t["op"], "all_reduce");
    assert_eq!(t["group_size"], 4);
    assert_eq!(t["placement"], "intra_node");
    assert_eq!(t["calls"], 8);
    assert_eq!(t["instances"], 2);
    // 2 steps × (3 × 200 + 100) µs, none of it under compute.
    assert_eq!(t["total_ns"], 1_400_000);
    assert_eq!(t["exposed_ns"], 1_400_000);
    // Spans: 4 ranks × 2 steps × 1 ms.
    assert_eq!(t["share_of_step"], 0.175);
    assert_eq!(t["wait_ns"], 600_000);
    // Member transits: 4 × 100 µs per instance.
    assert_eq!(t["transit_ns"], 800_000);
    assert_eq!(t["wait_ratio"], 0.428571);
    assert_eq!(t["wait_dominated"], true);
    assert_eq!(t["link"], "nvlink4");
    assert_eq!(t["busbw_of_peak"], 0.559241); // 251.65824 / 450
    // 16 MiB sits exactly on a class edge: it counts in [16 MiB, 256 MiB).
    assert_eq!(
        t["bytes"],
        json!({"min": 16777216, "median": 16777216, "max": 16777216, "total": 134217728,
               "histogram": hist([0, 0, 0, 8, 0])})
    );
    // 16 MiB is not under the 16 MiB intra-node threshold; multiples of 512 B.
    assert_eq!(t["small_calls"], 0);
    assert_eq!(t["misaligned_calls"], 0);
    // One node of 1 device each without the option: inter-node, and 16 MiB is not small there.
    let r = cluster4(&[]);
    assert_eq!(r["communication"]["types"][0]["placement"], "inter_node");
    assert_eq!(r["communication"]["types"][0]["link"], "ib-ndr");
    assert_eq!(r["communication"]["topology"]["ranks_per_node"], 1);
}

#[test]
fn straggler_and_imbalance() {
    let r = cluster4(&[]);
    let s = r["cluster"]["stragglers"].as_array().unwrap();
    assert_eq!(s.len(), 1, "{s:?}");
    let s = &s[0];
    assert_eq!(s["rank"], 3);
    assert_eq!(s["last_arrivals"], 2);
    assert_eq!(s["instances"], 2);
    assert_eq!(s["imposed_wait_ns"], 600_000);
    assert_eq!(s["share"], 1.0);
    // Two steps: too few to judge persistence; the share decides.
    assert_eq!(s["flagged"], true);
    assert_eq!(
        s["excess"],
        json!([{"part": "compute", "rank_ns": 1_000_000, "median_ns": 800_000}])
    );
    let c = find(&r["cluster"]["imbalance"], "part", json!("compute"));
    assert_eq!(c["max_rank"], 3);
    assert_eq!(c["spread"], 0.1);
    assert_eq!(c["flagged"], true);
    // No slow step: both steps take 1 ms.
    assert_eq!(r["cluster"]["slow_steps"], json!([]));
}

#[test]
fn without_alignment_the_skewed_rank_looks_late() {
    let r = cluster4(&["--align", "none"]);
    assert_eq!(r["cluster"]["align"], "none");
    let s = &r["cluster"]["stragglers"][0];
    // Raw arrivals 420, 420, 5420, 520 µs: the others would wait 5000 + 5000 + 4900, but a
    // rank waits only inside its own call ([420, 620), [420, 620), [520, 620)): 200 + 200 +
    // 100 µs per instance, two steps.
    assert_eq!(s["rank"], 2);
    assert_eq!(s["imposed_wait_ns"], 1_000_000);
}

#[test]
fn pipeline_pair() {
    let r = report_json(&[&testdata("pipeline2")], &[]);
    let m = &r["communication"]["p2p_matrix"];
    // 2 MiB bf16 each way: 0→1 over 100 µs (620 − 520), 1→0 over 80 µs (1000 − 920).
    assert_eq!(
        *m,
        json!([
            {"src": 0, "dst": 1, "transfers": 1, "bytes": 2097152, "time_ns": 100000, "gbps": 20.97152},
            {"src": 1, "dst": 0, "transfers": 1, "bytes": 2097152, "time_ns": 80000, "gbps": 26.2144}
        ])
    );
    let st = r["cluster"]["stages"].as_array().unwrap();
    assert_eq!(st.len(), 2);
    // Stage 0 (rank 0) computes 500 µs, stage 1 (rank 1) 300 µs: mean 400, +25% / −25%.
    assert_eq!(st[0]["ranks"], json!([0]));
    assert_eq!(st[0]["compute_ns"], 500_000);
    assert_eq!(st[0]["flagged"], true);
    assert_eq!(st[0]["excess"], 0.25);
    assert_eq!(st[1]["ranks"], json!([1]));
    assert_eq!(st[1]["compute_ns"], 300_000);
    assert_eq!(st[1]["flagged"], false);
    // Rank 1 waited 490 µs in its receive (posted at 30, data from 520); rank 0 300 µs.
    assert_eq!(st[1]["recv_wait_ns"], 490_000);
    assert_eq!(st[0]["recv_wait_ns"], 300_000);
    let t = &r["communication"]["types"][0];
    assert_eq!(t["op"], "send_recv");
    assert_eq!(t["group"], "1");
    // Rank 0: 100 + 380 µs, rank 1: 590 + 80 µs, none under compute.
    assert_eq!(t["exposed_ns"], 1_150_000);
    // Waits 490 + 300; transits 2 × 100 + 2 × 80.
    assert_eq!(t["wait_ratio"], 0.686957);
    let g = find(&r["communication"]["groups"], "name", json!("1"));
    assert_eq!(g["source"], "args");
    assert_eq!(g["ranks"], json!([0, 1]));
}

#[test]
fn text_and_markdown_show_the_cluster_sections() {
    let out = common::run(["report", testdata("cluster4").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Stragglers (ranks the others waited for, per group)",
        "rank 3 (0): last to arrive at 2 of 2 collectives",
        "Communication (per type and group",
        "Worst collective instances",
        "clocks aligned on collective ends: 1 rank(s) shifted, largest offset 5.00 ms",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 100));
    let out = common::run([
        "report",
        testdata("pipeline2").to_str().unwrap(),
        "--format",
        "md",
    ]);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## Pipeline stages"), "{md}");
    assert!(
        md.contains("| 0 | 1 | 1 | 2.0 MiB | 100.0 µs | 21.0 |"),
        "{md}"
    );
}

#[test]
fn mismatched_counts_are_reported_not_guessed() {
    let r = report_json(&[&testdata("mismatch3")], &[]);
    // Step 2: rank 0 all-reduced once, rank 1 never; rank 2 did not profile step 2.
    assert_eq!(
        r["communication"]["mismatches"],
        json!([{"group": "0", "step": 2, "calls": [[0, 1], [1, 0]],
                "reason": "member ranks made different numbers of calls"}])
    );
    // Step 1 still forms its instance over all three ranks.
    let g = find(&r["communication"]["groups"], "name", json!("0"));
    assert_eq!(g["instances"], 1);
    assert_eq!(g["calls"], 4);
    assert_eq!(r["communication"]["types"][0]["instances"], 1);
}

#[test]
fn clocks_align_through_a_chain_of_groups() {
    // chain3: rank 1 (5 ms ahead) shares group "a" with rank 0: −5 ms. Rank 2 (8 ms ahead)
    // shares only group "b" with rank 1: its anchor is rank 1's end on the aligned clock,
    // 5600 − 5000 = 600 µs, against its own 8600: −8 ms, via rank 1.
    let r = report_json(&[&testdata("chain3")], &[]);
    let offsets = column_i64(&r["cluster"]["offsets_ns"], "offset_ns");
    assert_eq!(offsets, [0, -5_000_000, -8_000_000]);
    let via = column_i64(&r["cluster"]["offsets_ns"], "via");
    assert_eq!(via, [0, 0, 1]);
}

#[test]
fn collectives_are_not_point_to_point_calls() {
    // cluster4 has only all-reduces: nothing is an unpaired send or receive.
    let r = cluster4(&[]);
    assert_eq!(r["communication"]["unpaired_p2p"], json!([]));
}
