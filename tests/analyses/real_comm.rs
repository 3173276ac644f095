//! Communication and cluster analysis on real traces (`../shared/traces`). Exact figures were
//! cross-checked by an independent Python reading of the JSON (Decimal timestamps, its own
//! pairing and alignment), not by stepscope.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn gloo_transfers_pair_with_their_enqueues_and_match_across_ranks() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&s.join("traces/torch-cpu/clean4")], &[]);
    let c = &r["communication"];
    // 4 DDP buckets × 5 steps per rank; every c10d::allreduce_ paired with its gloo transfer.
    assert_eq!(
        c["groups"],
        json!([{"name": "0", "description": "default_pg", "source": "declared",
                "ranks": [0, 1, 2, 3], "missing_ranks": [], "calls": 80, "instances": 20}])
    );
    assert_eq!(c["unpaired_enqueues"], json!([]));
    assert_eq!(c["mismatches"], json!([]));
    assert_eq!(c["topology"]["host_only"], true);
    // One host: offsets are the scheduling noise of the gloo ends (median of 8 instances).
    let offsets = column_i64(&r["cluster"]["offsets_ns"], "offset_ns");
    assert_eq!(offsets, [0, 52_499, 54_785, 191_336]);
    let t = &c["types"][0];
    assert_eq!(t["op"], "all_reduce");
    assert_eq!(t["placement"], "host");
    assert_eq!(t["link"], json!(null));
    // DDP buckets overlap in flight on a rank: waits are unions per (rank, step), not sums
    // (the Σ of member waits is 3_672_622_684; `scripts/crosscheck_gloo_waits.py
    // DIR 0 52499 54785 191336` gives these figures independently).
    assert_eq!(t["wait_ns"], 2_777_801_971_i64);
    assert_eq!(t["transit_ns"], 1_206_520_229_i64);
    assert_eq!(t["wait_ratio"], 0.697183);
    // Bucket sizes from the gloo annotations' Input Dims (float32).
    assert_eq!(
        t["bytes"],
        json!({"min": 3235840, "median": 4314624, "max": 5000192, "total": 337305600,
               "histogram": hist([0, 0, 80, 0, 0])})
    );
    let w = &c["worst_instances"][0];
    assert_eq!(
        [
            &w["wait_ns"],
            &w["step"],
            &w["index"],
            &w["last_arriver"],
            &w["transit_ns"],
            &w["skew_ns"]
        ],
        [
            &json!(431_374_447),
            &json!(4),
            &json!(0),
            &json!(3),
            &json!(8_372_832),
            &json!(292_562_951)
        ]
    );
    let imposed: Vec<(u64, i64)> = r["cluster"]["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["rank"].as_u64().unwrap(),
                s["imposed_wait_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        imposed,
        [
            (0, 1_505_585_901),
            (3, 1_070_451_801),
            (1, 411_769_382),
            (2, 131_607_269)
        ]
    );
    // A clean run (SOURCE.md: no persistent slow rank): nobody is flagged, no step is slow.
    assert!(
        r["cluster"]["stragglers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["flagged"] == false)
    );
    assert_eq!(r["cluster"]["slow_steps"], json!([]));
}

#[test]
fn nccl_args_give_sizes_on_a_single_rank() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&hta(&s, "nccl_parser_config")], &[]);
    let c = &r["communication"];
    // Rank 0 of a 2-rank group: nothing to match, but sizes and flags come from the args.
    assert_eq!(c["groups"][0]["missing_ranks"], json!([1]));
    assert_eq!(c["groups"][0]["instances"], 0);
    let ar = &c["types"][0];
    assert_eq!(ar["op"], "all_reduce");
    assert_eq!(ar["calls"], 15);
    assert_eq!(ar["placement"], "intra_node"); // 8 devices listed: one node
    assert_eq!(ar["link"], "nvlink3"); // A100
    // In msg nelems × 4 B, three calls each: 2049000 → 8196000, 2431040 → 9724160,
    // 6563840 → 26255360 (the 8th of 15), 6637568 → 26550272, 7875584 → 31502336.
    assert_eq!(
        ar["bytes"],
        json!({"min": 8196000, "median": 26255360, "max": 31502336, "total": 306684384,
               "histogram": hist([0, 0, 6, 9, 0])})
    );
    // 8196000 and 9724160 B (3 calls each) are under 16 MiB and not multiples of 512.
    assert_eq!(ar["small_calls"], 6);
    assert_eq!(ar["small_flag"], true);
    assert_eq!(ar["misaligned_calls"], 6);
    let bc = &c["types"][1];
    assert_eq!(bc["op"], "broadcast");
    // 53120 Float and 53 Long: 212480 and 424 B.
    assert_eq!(bc["bytes"]["min"], 424);
    assert_eq!(bc["bytes"]["max"], 212_480);
    assert_eq!(bc["misaligned_calls"], 0);
}

#[test]
fn sendrecv_kernels_take_their_collective_from_the_host_call() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&hta(&s, "trace_filter")], &[]);
    let c = &r["communication"];
    // Old kernels without args: world group (128 by world_size), two ranks loaded.
    let g = &c["groups"][0];
    assert_eq!(g["name"], "world");
    assert_eq!(g["source"], "world");
    assert_eq!(g["missing_ranks"].as_array().unwrap().len(), 126);
    // Ten SendRecv kernels per rank, each launched inside `nccl:all_to_all`,
    // `nccl:all_reduce` or `nccl:_all_gather_base` (NCCL before 2.19 runs them all as
    // SendRecv): 4 + 4 + 2 per rank, matched per operation (rank 1 interleaves its all-to-all
    // and all-reduce differently in step 552: unnamed groups, each in its own order).
    let types: Vec<(String, i64, i64)> = c["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["op"].as_str().unwrap().to_string(),
                t["calls"].as_i64().unwrap(),
                t["instances"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut types = types;
    types.sort();
    assert_eq!(
        types,
        [
            ("all_gather".to_string(), 4, 2),
            ("all_reduce".to_string(), 8, 4),
            ("all_to_all".to_string(), 8, 4)
        ]
    );
    assert_eq!(c["unpaired_p2p"], json!([]));
    assert_eq!(c["p2p_matrix"], json!([]));
    assert_eq!(c["mismatches"], json!([]));
}
