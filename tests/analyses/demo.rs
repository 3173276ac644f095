//! The embedded demo cluster: the report must name the straggler and the slow step's
//! culprit, be deterministic, and equal what `stepscope demo --out` writes.

use crate::common;
use common::*;
use stepscope::input::{self as synth, DemoSpec};

fn demo_report() -> serde_json::Value {
    let out = run(["report", "--format", "json"]);
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn demo_names_the_straggler_and_the_slow_step_culprit() {
    let spec = DemoSpec::default();
    let r = demo_report();
    assert_eq!(r["job"]["ranks"], 8);
    assert_eq!(r["job"]["devices"][0]["name"], "NVIDIA H100 80GB HBM3");
    // 6 steps × 4 gradient buckets × 8 ranks, each with NCCL metadata on the kernel.
    assert_eq!(
        r["job"]["collectives"],
        serde_json::json!({"allreduce": 192})
    );
    // Every rank declares the default group; the job lists it once.
    assert_eq!(
        r["job"]["process_groups"],
        serde_json::json!([{"name": "0", "description": "default_pg", "size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6, 7]}])
    );
    assert_eq!(
        r["job"]["steps"],
        serde_json::json!([10, 11, 12, 13, 14, 15])
    );
    let steps = r["steps"].as_array().unwrap();
    let slow = steps
        .iter()
        .max_by_key(|s| s["time_ns"]["max"].as_i64().unwrap())
        .unwrap();
    assert_eq!(slow["step"], spec.slow_step().unwrap());
    assert_eq!(
        slow["slowest_rank"],
        spec.culprit().unwrap(),
        "the slow step's culprit"
    );
    // The pause is 300 ms: the slow step is that much longer than the median of the others.
    let normal: Vec<i64> = steps
        .iter()
        .filter(|s| s["step"] != spec.slow_step().unwrap())
        .map(|s| s["time_ns"]["max"].as_i64().unwrap())
        .collect();
    let extra =
        slow["time_ns"]["max"].as_i64().unwrap() - normal.iter().sum::<i64>() / normal.len() as i64;
    assert!(
        (synth::PAUSE_NS - 20_000_000..synth::PAUSE_NS + 20_000_000).contains(&extra),
        "{extra}"
    );
    for s in steps
        .iter()
        .filter(|s| s["step"] != spec.slow_step().unwrap())
    {
        assert_eq!(
            s["slowest_rank"],
            spec.straggler().unwrap(),
            "straggler in step {}",
            s["step"]
        );
    }
    // Evidence in the breakdown: the culprit's pause is host-bound time, the others wait in
    // communication; the straggler computes ~25% longer than its peers.
    let culprit = row(
        &r,
        spec.slow_step().unwrap().into(),
        spec.culprit().unwrap().into(),
    );
    assert!(culprit["host_bound_ns"].as_i64().unwrap() > synth::PAUSE_NS);
    let peer = row(&r, spec.slow_step().unwrap().into(), 0);
    assert!(peer["comm_ns"].as_i64().unwrap() > synth::PAUSE_NS - 10_000_000);
    let busy = |b: &serde_json::Value| {
        b["compute_ns"].as_i64().unwrap() + b["overlap_ns"].as_i64().unwrap()
    };
    let (s, p) = (
        busy(&row(&r, 10, spec.straggler().unwrap().into())),
        busy(&row(&r, 10, 0)),
    );
    assert!(
        s * 100 > p * 120 && s * 100 < p * 130,
        "straggler {s} vs peer {p}"
    );
    assert_partitions(&r);
}

#[test]
fn reports_are_deterministic_apart_from_timings() {
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("timings");
        v
    };
    assert_eq!(strip(demo_report()), strip(demo_report()));
    let text = |()| {
        let out = run(["report"]);
        let s = String::from_utf8(out.stdout).unwrap();
        s.lines()
            .filter(|l| !l.starts_with("timings:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(text(()), text(()));
}

#[test]
fn default_command_prints_the_text_report_when_piped() {
    let out = run(Vec::<&str>::new());
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.starts_with("stepscope report: 8 rank(s) of world 8, 6 step(s)"),
        "{s}"
    );
}

#[test]
fn demo_out_writes_real_kineto_files_that_load_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out = run([
        "demo",
        "--out",
        dir.path().to_str().unwrap(),
        "--ranks",
        "3",
        "--steps",
        "2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "rank-0.pt.trace.json.gz",
            "rank-1.pt.trace.json.gz",
            "rank-2.pt.trace.json.gz"
        ]
    );
    let from_files = report_json(&[dir.path()], &[]);
    assert_eq!(from_files["job"]["rank_ids"], serde_json::json!([0, 1, 2]));
    // The in-memory sources of the same spec give the same numbers.
    let spec = DemoSpec {
        ranks: 3,
        steps: 2,
        scale: 1,
        split: 1,
        ..DemoSpec::default()
    };
    let loaded =
        stepscope::session::load(&stepscope::session::demo_inputs(spec), &Default::default())
            .unwrap();
    let a = stepscope::analysis::analyze(&loaded.job, &Default::default());
    let rows = from_files["breakdown"].as_array().unwrap();
    assert_eq!(rows.len(), a.breakdown.len());
    for (j, b) in rows.iter().zip(&a.breakdown) {
        assert_eq!(
            parts(j),
            (
                [
                    b.compute_ns,
                    b.overlap_ns,
                    b.comm_ns,
                    b.memory_ns,
                    b.host_bound_ns,
                    b.free_ns
                ],
                b.span_ns
            )
        );
    }
    // The files are what other Kineto readers expect: gzip JSON with traceEvents and
    // distributedInfo, timestamps as decimal µs.
    let gz = std::fs::read(dir.path().join("rank-1.pt.trace.json.gz")).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["distributedInfo"]["rank"], 1);
    assert!(v["traceEvents"].as_array().unwrap().len() > 1000);
}

#[test]
fn scale_multiplies_events() {
    let count = |scale| {
        let spec = DemoSpec {
            ranks: 1,
            steps: 1,
            scale,
            split: 1,
            ..DemoSpec::default()
        };
        let loaded =
            stepscope::session::load(&stepscope::session::demo_inputs(spec), &Default::default())
                .unwrap();
        loaded.job.ranks[0].events.len()
    };
    let (one, three) = (count(1), count(3));
    assert!(three > 2 * one + one / 2, "{one} → {three}");
}

#[test]
fn demo_cluster_and_communication() {
    let spec = DemoSpec::default();
    let r = demo_report();
    // Every rank's clock offset is recovered exactly: all-reduces end together in true time.
    for o in r["cluster"]["offsets_ns"].as_array().unwrap() {
        let rank = o["rank"].as_u64().unwrap() as u32;
        assert_eq!(
            o["offset_ns"].as_i64().unwrap(),
            spec.clock_offset(0) - spec.clock_offset(rank),
            "rank {rank}"
        );
    }
    // The slow step is flagged, its culprit named with the part that grew: the pause.
    let slow = r["cluster"]["slow_steps"].as_array().unwrap();
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(slow[0]["step"], spec.slow_step().unwrap());
    assert_eq!(slow[0]["culprit_rank"], spec.culprit().unwrap());
    assert_eq!(slow[0]["part"], "host_bound");
    let grew = slow[0]["part_growth_ns"].as_i64().unwrap();
    assert!(
        (synth::PAUSE_NS - 1_000_000..=synth::PAUSE_NS + 1_000_000).contains(&grew),
        "{grew}"
    );
    // It arrived last at every all-reduce of that step (4 buckets).
    assert_eq!(slow[0]["last_arrivals"], serde_json::json!([4, 4]));
    // The persistent straggler: rank 3, last in every other step, computing more.
    let flagged: Vec<&serde_json::Value> = r["cluster"]["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["flagged"] == true)
        .collect();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    let s = flagged[0];
    assert_eq!(s["rank"], spec.straggler().unwrap());
    assert_eq!(s["group"], "0");
    assert_eq!(s["top_steps"], 5);
    assert_eq!(s["steps_with_wait"], 6);
    assert_eq!(s["excess"][0]["part"], "compute");
    // All-reduces: wait-dominated, at the simulated bus bandwidth, intra-node on NVLink 4.
    let t = &r["communication"]["types"][0];
    assert_eq!(t["op"], "all_reduce");
    assert_eq!(t["instances"], 6 * 4);
    assert_eq!(t["placement"], "intra_node");
    assert_eq!(t["wait_dominated"], true);
    let busbw = t["busbw_gbps"].as_f64().unwrap();
    assert!((busbw - synth::BUSBW_GBPS as f64).abs() < 0.1, "{busbw}");
    assert_eq!(r["communication"]["mismatches"], serde_json::json!([]));
}

#[test]
fn split_buckets_multiplies_collectives() {
    let spec = DemoSpec {
        ranks: 2,
        steps: 2,
        scale: 1,
        split: 5,
        ..DemoSpec::default()
    };
    let loaded =
        stepscope::session::load(&stepscope::session::demo_inputs(spec), &Default::default())
            .unwrap();
    let a = stepscope::analysis::analyze(&loaded.job, &Default::default());
    // 4 buckets × 5 splits × 2 steps, matched across the 2 ranks; each a fifth of 48 MiB.
    let t = &a.comm.types[0];
    assert_eq!((t.calls, t.instances), (2 * 40, 40));
    assert_eq!(t.bytes.as_ref().unwrap().max, 25_165_824 / 5 * 2);
    assert!(a.comm.matching.mismatches.is_empty());
}
