//! Host analyses, roofline and advisor end to end: the demo's findings, the roofline fixture
//! with hand-computed classes, `--fail-on`, and the new options' usage errors.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn demo_findings_name_the_causes_with_evidence() {
    let r = report_json(&[], &[]);
    // Cause before symptom: rank 5's data-loader stall in step 13 is the first finding, and
    // the slow step it caused is folded into it (with the step time it cost).
    let d = &r["findings"][0];
    assert_eq!(d["rule"], "dataloader");
    assert_eq!(d["category"], "io");
    assert_eq!(d["severity"], "high");
    assert_eq!(d["evidence"]["ranks"], json!([5]));
    assert_eq!(d["evidence"]["steps"], json!([13]));
    assert_eq!(d["folded"][0]["rule"], "slow_step");
    // Its impact is what the replay says removing the stall saves: about the 300 ms pause
    // (the step time it cost), never more than it.
    assert_eq!(d["impact_ns"], d["saves_ns"]);
    let saves = d["saves_ns"].as_i64().unwrap();
    assert!((280_000_000..=301_600_000).contains(&saves), "{saves}");
    assert!(finding(&r, "slow_step").is_none());
    let s = finding(&r, "straggler").expect("straggler finding");
    assert_eq!(s["evidence"]["ranks"], json!([3]));
    // One finding per cause: the all-reduce waiting is the straggler's and the slow step's.
    assert!(finding(&r, "comm_wait_dominated").is_none());
    // Sorted by impact; every finding carries a cause and suggestions.
    let impacts = column_i64(&r["findings"], "impact_ns");
    assert!(impacts.windows(2).all(|w| w[0] >= w[1]), "{impacts:?}");
    for f in r["findings"].as_array().unwrap() {
        assert!(!f["cause"].as_str().unwrap().is_empty());
        assert!(!f["suggestions"].as_array().unwrap().is_empty());
    }
    // Host: `.item()` syncs found with their cause; the longest data load is rank 5's pause.
    assert_eq!(r["host"]["syncs"][0]["caused_by"], "aten::item");
    assert_eq!(r["host"]["syncs"][0]["count"], 48);
    assert_eq!(r["host"]["data_loading"]["max_at"], json!([5, 13]));
    // Roofline over 8 ranks (shape texts interned per rank, remapped to the job): the demo's
    // projections run 2·8192·2048·6144 FLOPs in ~340 µs ≈ 60% of the H100's bf16 peak.
    let find = |op: &str| {
        r["roofline"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .unwrap()
            .clone()
    };
    let lin = find("aten::linear");
    assert_eq!(lin["class"], "under_utilized");
    // The backward GEMMs (aten::mm, shapes from the forward's) run at the same rate.
    let mm = find("aten::mm");
    let (a, b) = (
        mm["flops_of_peak"].as_f64().unwrap(),
        lin["flops_of_peak"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 0.01, "{a} {b}");
    let p = lin["flops_of_peak"].as_f64().unwrap();
    assert!((0.5..0.7).contains(&p), "{p}");
    // Text leads with the findings.
    let text = String::from_utf8(run(["report"]).stdout).unwrap();
    let first = text.find("What to fix first").unwrap();
    assert!(first < text.find("\nSteps").unwrap());
}

#[test]
fn roofline_fixture_classes() {
    // testdata/roofline.json on an H100 SXM (989.4 bf16 / 66.9 fp32 TFLOP/s, 3350 GB/s):
    // - aten::mm bf16 8192³: 2·8192³ FLOPs in 1250 µs = 879.6 TFLOP/s (88.9% of peak), AI 2731
    //   > ridge 295: compute-bound;
    // - aten::add bf16 2 × 64 Mi elements + output: 384 MiB in 140 µs = 2876 GB/s (85.9%):
    //   memory-bound;
    // - aten::mm fp32 1001³: 2.006 GFLOPs in 100 µs = 20.1 TFLOP/s (30% of 66.9), AI 167 >
    //   fp32 ridge 20: under-utilized, and 1001 is not a multiple of 8;
    // - aten::cumsum: no FLOP rule: unknown.
    let r = report_json(&[&testdata("roofline.json")], &[]);
    let ro = &r["roofline"];
    assert_eq!(ro["device"]["name"], "H100-SXM");
    assert_eq!(
        ro["classes"],
        json!({
            "compute_bound": {"kernels": 1, "time_ns": 1250000, "share": 0.811688},
            "memory_bound": {"kernels": 1, "time_ns": 140000, "share": 0.090909},
            "under_utilized": {"kernels": 1, "time_ns": 100000, "share": 0.064935},
            "unknown": {"kernels": 1, "time_ns": 50000, "share": 0.032468}
        })
    );
    let mm = &ro["ops"][0];
    assert_eq!(
        (&mm["op"], &mm["class"]),
        (&json!("aten::mm"), &json!("compute_bound"))
    );
    assert_eq!(mm["flops"], 1_099_511_627_776.0);
    assert_eq!(mm["tflops"], 879.609302);
    assert_eq!(mm["flops_of_peak"], 0.889033);
    assert_eq!(ro["ops"][1]["gbps"], 2876.094171);
    assert_eq!(ro["ops"][2]["unaligned_gemms"], 1);
    // The fp32 GEMM is one kernel: its under-use and its shape fold under the precision fix
    // (with TF32 the replay leaves them less than 30% of their own saving).
    for rule in ["fp32_gemms", "memory_bound_elementwise"] {
        assert!(finding(&r, rule).is_some(), "{rule}");
    }
    let fp32 = finding(&r, "fp32_gemms").unwrap();
    for rule in ["under_utilized_gemms", "gemm_shape_alignment"] {
        let folded = fp32["folded"].as_array().unwrap();
        assert!(folded.iter().any(|x| x["rule"] == rule), "{rule}: {fp32}");
    }
    // With U = 0.25 the fp32 GEMM's 30% of peak counts as compute-bound: nothing under-utilized.
    let r = report_json(&[&testdata("roofline.json")], &["--roofline-u", "0.25"]);
    assert_eq!(r["roofline"]["classes"]["under_utilized"]["kernels"], 0);
    // Another device's peaks: on an A100 the bf16 GEMM exceeds the peak — compute-bound.
    let r = report_json(&[&testdata("roofline.json")], &["--device", "A100-80GB"]);
    assert_eq!(r["roofline"]["device"]["name"], "A100-80GB");
    assert_eq!(r["roofline"]["ops"][0]["class"], "compute_bound");
}

#[test]
fn fail_on_gates_ci() {
    // A fixed matrix, not derived from the run: the demo's worst finding is HIGH (the slow
    // step), low_only.json's only finding is LOW (kernels the roofline cannot place), and
    // no_steps.json has none. Exit 1 when a finding is at or above the level, else 0.
    let demo: &[&str] = &[];
    let low = testdata("low_only.json");
    let none = testdata("no_steps.json");
    let low: &[&str] = &[low.to_str().unwrap()];
    let none: &[&str] = &[none.to_str().unwrap()];
    let matrix = [
        (demo, [("high", 1), ("medium", 1), ("low", 1)]),
        (low, [("high", 0), ("medium", 0), ("low", 1)]),
        (none, [("high", 0), ("medium", 0), ("low", 0)]),
    ];
    for (input, expected) in matrix {
        for (level, code) in expected {
            let mut args = vec!["report"];
            args.extend(input);
            args.extend(["--fail-on", level]);
            let out = run(&args);
            assert_eq!(out.status.code(), Some(code), "{args:?}");
            // The report is still printed in full when the gate trips.
            assert!(String::from_utf8_lossy(&out.stdout).contains("What to fix first"));
        }
    }
    assert_eq!(
        run(["report", "--fail-on", "severe"]).status.code(),
        Some(2)
    );
}

#[test]
fn roofline_and_device_usage_errors() {
    let out = run(["report", "--device", "Abacus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--device: no device `Abacus` (devices: H100-SXM"),
        "{err}"
    );
    for u in ["0", "1.5", "x"] {
        let out = run(["report", "--roofline-u", u]);
        assert_eq!(out.status.code(), Some(2), "{u}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not in (0, 1]"));
    }
}

#[test]
fn real_traces_host_and_findings() {
    let Some(s) = shared() else { return };
    // ns_resolution_trace: 57% of 6095 kernels are shorter than their launch (3498).
    let r = report_json(&[&hta(&s, "ns_resolution_trace")], &[]);
    assert_eq!(r["host"]["launch"]["launched"], 6095);
    assert_eq!(r["host"]["launch"]["shorter_than_launch"], 3498);
    // The device (A100-PG509) is in the table; without shapes the roofline is unknown.
    let r = report_json(&[&hta(&s, "nccl_parser_config")], &[]);
    assert_eq!(r["roofline"]["device"]["name"], "A100-40GB");
    // CPU-only gloo: no device findings, and the clean run has no high-severity finding.
    let r = report_json(&[&s.join("traces/torch-cpu/clean4")], &[]);
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] != "high"),
        "{}",
        r["findings"]
    );
    assert!(finding(&r, "small_messages").is_some());
}

#[test]
fn markdown_nests_each_findings_evidence_under_it() {
    // A PR comment renders one numbered item per finding with its evidence, cause and advice
    // as a nested list: the item opens with `k. `, its lines are indented `    - `.
    let out = run(["report", "--format", "md"]);
    let md = String::from_utf8_lossy(&out.stdout);
    let section: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("## What to fix first"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    let items: Vec<&&str> = section.iter().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(items.len(), 4, "{section:#?}");
    for (k, item) in items.iter().enumerate() {
        assert!(item.starts_with(&format!("{}. [", k + 1)), "{item}");
    }
    for l in section.iter().filter(|l| l.starts_with(' ')) {
        assert!(
            [
                "    - evidence: ",
                "    - also explains: ",
                "    - cause: ",
                "    - try: "
            ]
            .iter()
            .any(|p| l.starts_with(p)),
            "{l}"
        );
    }
    // Each finding: its line, evidence, cause, try; the first also the slow step it explains.
    assert_eq!(section.len(), 4 * 4 + 1, "{section:#?}");
    assert!(section[2].starts_with("    - also explains: step 13 took"));
}
