//! Where msprof-analyze (the tool Ascend users run today, `../shared/reference/methods.md`)
//! reads a job wrongly, and stepscope reads it right.

use crate::common;

use common::{ascend_levels, finding, report_json, shared, testdata};
use serde_json::Value;

/// msprof-analyze's slow-rank rule over per-rank step columns (`slow_rank`, methods.md rule 3):
/// a column whose (max − min) / mean over the ranks of a step exceeds 5% names a slow rank.
/// Its Computing is the union of compute (stepscope's compute + overlap).
fn msprof_slow_rank(rows: &[Value], step: u64) -> Option<(u64, f64)> {
    let computing: Vec<(u64, f64)> = rows
        .iter()
        .filter(|r| r["step"] == step)
        .map(|r| {
            let c = r["compute_ns"].as_f64().unwrap() + r["overlap_ns"].as_f64().unwrap();
            (r["rank"].as_u64().unwrap(), c)
        })
        .collect();
    let mean = computing.iter().map(|c| c.1).sum::<f64>() / computing.len() as f64;
    let (lo, hi) = computing
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), c| (lo.min(c.1), hi.max(c.1)));
    let slowest = computing
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap()
        .0;
    ((hi - lo) / mean > 0.05).then_some((slowest, hi - lo))
}

/// A two-stage pipeline (testdata/pipe4, described in gen_comm_fixtures.py): stage 0 (ranks 2,
/// 3) computes 500–800 µs per step, stage 1 (ranks 0, 1) 300 µs — by design, not by a fault.
/// msprof-analyze's rule compares every rank with every other and calls rank 3 slow: in step
/// 1 Computing is 300, 300, 500 and 600 µs, a spread of 300 µs, 71% of the 425 µs mean. stepscope compares
/// ranks within a stage and stages with each other: the verdict is a stage imbalance (stage 0
/// sets the pace), and no rank is a straggler.
#[test]
fn a_pipeline_is_not_a_slow_rank() {
    let r = report_json(&[&testdata("pipe4")], &[]);
    let rows = r["breakdown"].as_array().unwrap();
    let (rank, spread) = msprof_slow_rank(rows, 1).expect("msprof-analyze's rule fires");
    assert_eq!((rank, spread), (3, 300_000.0));
    assert!(finding(&r, "stage_imbalance").is_some());
    assert!(finding(&r, "straggler").is_none());
    assert_eq!(r["cluster"]["stragglers"].as_array().unwrap().len(), 0);
    let stages = r["cluster"]["stages"].as_array().unwrap();
    let flagged: Vec<&Value> = stages.iter().filter(|s| s["flagged"] == true).collect();
    assert_eq!(flagged.len(), 1);
    assert_eq!(flagged[0]["ranks"], serde_json::json!([2, 3]));
}

/// msprof-analyze 26.2.0 (`msprof-analyze advisor all -d <text/level1>`, run on 2026-11-23;
/// BENCHMARKS.md "third part") prints a slow-link table with, for step 50, rank 0: SDMA
/// 855.19 MB in 54.63 ms (15.65 GB/s), rank 1: 855.19 MB in 55.17 ms (15.5 GB/s). It adds
/// the `Total Op Info` pseudo-op, which repeats the sums, to the per-op entries
/// (reference ascend.md): twice the traffic. The ranks' own communication.json moves
/// 427.596096 MB in 27.315706 ms (rank 0) and 27.583971 ms (rank 1) — exactly half — and that
/// is what stepscope reports; only the bandwidth, a ratio, is the same in both.
#[test]
fn the_slow_link_volume_is_not_doubled() {
    let Some(s) = shared() else { return };
    let r = report_json(&[&ascend_levels(&s, "text")[1]], &[]);
    let sdma = |rank: u64| {
        r["transports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["rank"] == rank && t["transport"] == "SDMA")
            .unwrap()
            .clone()
    };
    // msprof-analyze's figures, as it printed them (MB, ms).
    let msprof = [(0, 855.19, 54.63, 15.65), (1, 855.19, 55.17, 15.5)];
    for (rank, mb, ms, gbps) in msprof {
        let t = sdma(rank);
        let (bytes, ns) = (t["bytes"].as_f64().unwrap(), t["time_ns"].as_f64().unwrap());
        assert_eq!(bytes, 427_596_096.0);
        // Twice ours, to msprof-analyze's printed precision.
        assert!(
            (2.0 * bytes / 1e6 - mb).abs() < 0.01,
            "rank {rank}: {bytes} B"
        );
        assert!((2.0 * ns / 1e6 - ms).abs() < 0.01, "rank {rank}: {ns} ns");
        let ours = t["gbps"].as_f64().unwrap();
        assert!((ours - gbps).abs() < 0.01, "rank {rank}: {ours} GB/s");
    }
    assert_eq!(sdma(0)["time_ns"], 27_315_706);
    assert_eq!(sdma(1)["time_ns"], 27_583_971);
}
