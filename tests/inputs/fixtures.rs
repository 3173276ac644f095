//! Hand-made traces in `testdata/` with hand-computed answers (the arithmetic is in the
//! comments; times in µs).

use crate::common;
use common::*;
use stepscope::analysis::{self, ops::Scope};
use stepscope::model::{EventIx, Kind, StepNo};
use stepscope::session::{self as ingest, Input};

/// `two_streams.json`: compute on stream 7, a memcpy on stream 20 inside the GEMM, an
/// all-reduce that runs past the host step, nested cpu ops, backward launched from the
/// autograd thread.
///
/// Step 1: host [0,100); device work launched in step 1 ends at 120 (the all-reduce), so
/// B_2 = max(100, 120) = 120 and span 1 = [0,120). C = gemm [30,80); M = [70,120);
/// C∩M = [70,80) → compute 40, overlap 10, comm 40. Y = [50,60) ⊂ C → memory 0.
/// H = [10,30) ∪ [40,50) ∪ [60,62) ∪ [70,90) ∪ [105,115); outside C∪M∪Y = [30,120) only
/// [10,30) → host-bound 20. Free = 120 − 90 − 20 = 10.
///
/// Step 2: last step → [120, max(150, D_2 = 160)) = [120,160), 40. C = [125,135) ∪ [140,160)
/// = 30; Y = memset [135,138) outside C → memory 3; H = autograd [130,140) minus C∪Y →
/// [138,140) = 2; free = 40 − 33 − 2 = 5 ([120,125)).
#[test]
fn two_streams_breakdown_by_hand() {
    for file in ["two_streams.json", "two_streams.json.gz"] {
        let r = report_json(&[&testdata(file)], &[]);
        assert_eq!(
            parts(&row(&r, 1, 0)),
            ([40_000, 10_000, 40_000, 0, 20_000, 10_000], 120_000),
            "{file}"
        );
        assert_eq!(
            parts(&row(&r, 2, 0)),
            ([30_000, 0, 0, 3_000, 2_000, 5_000], 40_000),
            "{file}"
        );
        assert_partitions(&r);
        assert_eq!(r["job"]["steps"], serde_json::json!([1, 2]));
        let steps = r["steps"].as_array().unwrap();
        assert_eq!(steps[0]["time_ns"]["max"], 120_000);
        // Own work of step 1 = span − exposed comm = 120 − 40.
        assert_eq!(steps[0]["slowest_rank_work_ns"], 80_000);
    }
}

#[test]
fn two_streams_counts_and_top_ops() {
    let r = report_json(&[&testdata("two_streams.json")], &[]);
    let ev = &r["job"]["events"];
    // 3 compute kernels, 1 NCCL kernel, memcpy, memset, a sync record, 5 cpu ops,
    // 6 runtime calls, 2 step annotations + data loader + the GPU annotation, the Trace span.
    let want = [
        ("compute", 3),
        ("comm", 1),
        ("memcpy", 1),
        ("memset", 1),
        ("sync", 1),
        ("host_op", 5),
        ("launch", 6),
        ("annotation", 4),
        ("other", 1),
    ];
    for (k, n) in want {
        assert_eq!(ev[k], n, "{k}");
    }
    let d = &r["job"]["dropped"];
    assert_eq!(
        (
            d["flow"].as_u64(),
            d["python_function"].as_u64(),
            d["instant"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert_eq!(r["top_ops_basis"], "device");
    let ops = r["top_ops"].as_array().unwrap();
    // gemm and the all-reduce tie at 50 µs: ties sort by name.
    let names = top_op_names(&r);
    assert_eq!(
        &names[..3],
        [
            "gemm",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            "mul_backward_kernel"
        ]
    );
    assert_eq!(ops[0]["total_ns"], 50_000);
    // Device total = 50 + 50 + 20 + 10 + 10 + 3 = 143 µs; 50/143.
    assert_eq!(ops[0]["share"], 0.34965);
    assert_eq!(ops[1]["kind"], "comm");
}

#[test]
fn python_frames_are_kept_only_when_asked() {
    let r = report_json(&[&testdata("two_streams.json")], &["--python-stacks"]);
    assert_eq!(r["job"]["dropped"]["python_function"], 0);
    // The profiler span and the python frame.
    assert_eq!(r["job"]["events"]["other"], 2);
    // Kept frames do not change the breakdown: they are neither device nor host work.
    assert_eq!(
        parts(&row(&r, 1, 0)),
        ([40_000, 10_000, 40_000, 0, 20_000, 10_000], 120_000)
    );
}

#[test]
fn two_streams_links_and_step_attribution() {
    let loaded = ingest::load(
        &[Input::file(testdata("two_streams.json"))],
        &Default::default(),
    )
    .unwrap();
    let job = &loaded.job;
    let rank = &job.ranks[0];
    let ev = &rank.events;
    let find = |name: &str| {
        (0..ev.len())
            .find(|&i| job.strings.resolve(ev.name[i]) == name)
            .unwrap()
    };
    let gemm = find("gemm");
    let launch = ev.link[gemm].index();
    assert_eq!(job.strings.resolve(ev.name[launch]), "cudaLaunchKernel");
    assert_eq!(ev.start[launch], 20_000);
    assert_eq!(
        ev.link[launch].index(),
        gemm,
        "the runtime call links back to its kernel"
    );
    // External id 2 is aten::addmm, the innermost op (aten::linear has id 1).
    assert_eq!(
        job.strings.resolve(ev.name[ev.op[gemm].index()]),
        "aten::addmm"
    );
    // The all-reduce runs until 120 µs, during host step 2, but belongs to step 1 (index 0).
    let nccl = (0..ev.len()).find(|&i| ev.kind[i] == Kind::Comm).unwrap();
    assert_eq!(ev.step[nccl], 0);
    assert_eq!(ev.op[nccl], EventIx::NONE, "launched outside any cpu_op");
    // Backward launched from the autograd thread belongs to step 2 (index 1).
    assert_eq!(ev.step[find("mul_backward_kernel")], 1);
    // Lanes: two device streams, two threads, the profiler span.
    let names: Vec<&str> = rank
        .lanes
        .iter()
        .map(|l| job.strings.resolve(l.name))
        .collect();
    assert!(names.contains(&"device 0 stream 7"), "{names:?}");
    assert!(names.contains(&"thread 101 (pt_autograd_0)"), "{names:?}");
    // Events are sorted by start within each lane.
    for l in 0..rank.lanes.len() as u16 {
        let r = rank.lane_events(l);
        assert!(ev.start[r].windows(2).all(|w| w[0] <= w[1]));
    }
}

/// `cpu_only.json` (no device): C = aten::mm [10,40) ∪ aten::add [60,70) (relative to 1000);
/// M = c10d::allreduce_ [40,45) ∪ gloo:all_reduce [42,80) = [40,80). compute = 30, overlap =
/// 10 (add inside M), comm = 40 − 10 = 30. H = the main thread: "## forward ##" [5,50),
/// mm, allreduce_, add → outside C∪M only [5,10) = 5. Free = 100 − 70 − 5 = 25.
#[test]
fn cpu_only_fallback_by_hand() {
    let r = report_json(&[&testdata("cpu_only.json")], &[]);
    assert_eq!(
        parts(&row(&r, 7, 2)),
        ([30_000, 10_000, 30_000, 0, 5_000, 25_000], 100_000)
    );
    assert_eq!(r["job"]["rank_ids"], serde_json::json!([2]));
    assert_eq!(r["top_ops_basis"], "host_self");
    let ops = r["top_ops"].as_array().unwrap();
    assert_eq!(
        (ops[0]["name"].as_str(), ops[0]["total_ns"].as_i64()),
        (Some("aten::mm"), Some(30_000))
    );
}

#[test]
fn no_step_markers_give_one_step_over_the_trace() {
    let r = report_json(&[&testdata("no_steps.json")], &[]);
    assert_eq!(r["job"]["steps"], serde_json::json!([0]));
    assert_eq!(parts(&row(&r, 0, 0)), ([5_000, 0, 0, 0, 0, 0], 5_000));
    let notes: Vec<&str> = r["job"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("no ProfilerStep markers")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("discovery order")),
        "{notes:?}"
    );
}

#[test]
fn analysis_scope_filters_rows() {
    let loaded = ingest::load(
        &[Input::file(testdata("two_streams.json"))],
        &Default::default(),
    )
    .unwrap();
    let a = analysis::analyze(
        &loaded.job,
        &analysis::Options {
            scope: Scope {
                step: Some(StepNo(2)),
                rank: None,
            },
            ..Default::default()
        },
    );
    assert_eq!(a.breakdown.len(), 1);
    assert_eq!(a.breakdown[0].step, StepNo(2));
    // Device ops launched in step 2 only: mul_backward 20 + mul 10 + memset 3.
    let total: i64 = a.top_ops.iter().map(|o| o.total_ns).sum();
    assert_eq!(total, 33_000);
}

/// `sync_then_compile.json`: `gemm_a` runs [10,480); `aten::item` [300,490) syncs
/// [305,485); the device then idles until `add_b` at 700, while the host works through
/// `aten::add` [495,695), which compiles its operator at run time [500,680). The sync's cost
/// is the host-busy part of the catch-up gap [485,700): [485,490) + [495,695) = 205. The
/// compile lies inside that gap: the sync's time, not the compile's (without the sync the
/// queue would have run ahead of it), so op_dispatch claims no idle and does not fire —
/// the two findings never count the same idle twice.
#[test]
fn a_compile_in_a_syncs_catch_up_is_the_syncs_cost() {
    let r = report_json(&[&testdata("sync_then_compile.json")], &[]);
    let sync = &r["host"]["syncs"][0];
    assert_eq!(
        (&sync["caused_by"], &sync["device_idle_after_ns"]),
        (
            &serde_json::json!("aten::item"),
            &serde_json::json!(205_000)
        )
    );
    let d = &r["host"]["op_dispatch"];
    assert_eq!((&d["count"], &d["total_ns"]), (&1.into(), &180_000.into()));
    assert_eq!(d["device_idle_ns"], 0);
    // Its impact is the replay's saving without the sync: the 175 µs the step shortens,
    // never more than the 205 µs of idle it claims.
    let f = finding(&r, "sync_points").unwrap();
    assert_eq!(
        (&f["impact_ns"], &f["saves_ns"]),
        (&175_000.into(), &175_000.into())
    );
    assert!(finding(&r, "op_dispatch").is_none());
}

/// `step_range.json`: one `ProfilerStep#7` [0, 300) µs around three `train_step` ranges of
/// 100, 120 and 80 µs. By default one step of 300 µs; `--step-range train_step`: steps 1, 2,
/// 3 of exactly those lengths; a name no range has: the whole trace, and a note saying so.
#[test]
fn a_named_range_is_the_step_numbered_by_occurrence() {
    let times = |extra: &[&str]| -> Vec<(i64, i64)> {
        let r = report_json(&[&testdata("step_range.json")], extra);
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["step"].as_i64().unwrap(),
                    s["time_ns"]["max"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(times(&[]), [(7, 300_000)]);
    assert_eq!(
        times(&["--step-range", "train_step"]),
        [(1, 100_000), (2, 120_000), (3, 80_000)]
    );
    let r = report_json(&[&testdata("step_range.json")], &["--step-range", "nope"]);
    assert!(r.to_string().contains("no range named `nope`"));
}
