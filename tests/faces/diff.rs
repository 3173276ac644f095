//! `stepscope diff` (issue 33): two runs compared. Hand-computed answers on a renamed-kernel
//! pair (testdata/gen_diff_fixtures.py), the demo against its clean twin (a known delta), a
//! real CPU pair (clean vs slow rank), HTA's real pairs, the regression gate's exit codes and
//! the JSON schema's pinned keys.

use crate::common;

use serde_json::Value;
use stepscope::analysis::diff::{DiffOptions, Matched, Status, StepAlign};
use stepscope::session::diff::{DiffPair, compare};
use stepscope::session::{self, DemoSpec, Session, Settings};

fn demo(spec: DemoSpec) -> Session {
    let settings = Settings::default();
    let inputs = session::demo_inputs(spec);
    let loaded = session::load(&inputs, &settings.load_options().unwrap()).unwrap();
    Session::analyse(
        loaded,
        settings.analysis_options().unwrap(),
        "demo".into(),
        inputs,
    )
    .unwrap()
}

/// The row named `name` in `rows`.
fn row<'a>(
    rows: &'a [stepscope::analysis::diff::OpRow],
    name: &str,
) -> &'a stepscope::analysis::diff::OpRow {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

fn open(before: &std::path::Path, after: &std::path::Path, opts: &DiffOptions) -> DiffPair {
    session::diff::open(before, after, &Settings::default(), opts).expect("diff")
}

/// Two paths under `testdata/`.
fn testdata_pair(before: &str, after: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    (common::testdata(before), common::testdata(after))
}

fn diff_json(args: &[&str]) -> (Value, std::process::Output) {
    let mut all = vec!["diff", "--format", "json"];
    all.extend(args);
    let out = common::run(&all);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (v, out)
}

#[test]
fn a_renamed_kernel_lines_up_through_its_operator() {
    let (b, a) = testdata_pair("diff/renamed/before", "diff/renamed/after");
    let p = open(&b, &a, &DiffOptions::default());
    let d = &p.diff;
    let gemm = row(&d.ops.kernels, "Cijk_Ailk_Bljk_HHS_BH");
    assert_eq!(gemm.renamed_to.as_deref(), Some("sm90_xmma_gemm_bf16"));
    assert_eq!(gemm.matched, Matched::Parent);
    assert_eq!((gemm.count_before, gemm.count_after), (2, 2));
    assert_eq!(
        (gemm.total.before_ns, gemm.total.after_ns),
        (200_000, 160_000)
    );
    let linear = row(&d.ops.operators, "aten::linear");
    assert_eq!(
        (linear.matched, linear.total.delta_ns()),
        (Matched::Shapes, -40_000)
    );
    let drop = row(&d.ops.operators, "aten::dropout");
    assert_eq!(
        (drop.matched, drop.count_after, drop.total.after_ns),
        (Matched::OnlyAfter, 2, 10_000)
    );
    let relu = row(&d.ops.kernels, "relu_kernel");
    assert_eq!((relu.matched, relu.total.delta_ns()), (Matched::Name, 0));
    assert_eq!((d.ops.matched.by_shapes, d.ops.matched.only_after), (4, 2));
    // The parts partition the span in every row, so their changes add up to the span's.
    let sum: i64 = d.parts.parts.iter().map(|x| x.time.delta_ns()).sum();
    assert_eq!(sum, d.parts.span.delta_ns());
    // --op-map names the rename itself.
    let map = DiffOptions {
        op_map: vec![("Cijk_Ailk_Bljk_HHS_BH".into(), "sm90_xmma_gemm_bf16".into())],
        ..Default::default()
    };
    let p = open(&b, &a, &map);
    let gemm = row(&p.diff.ops.kernels, "Cijk_Ailk_Bljk_HHS_BH");
    assert_eq!(
        (gemm.matched, gemm.total.delta_ns()),
        (Matched::Map, -40_000)
    );
}

#[test]
fn the_demo_against_its_clean_twin_shows_the_stall_and_only_it() {
    let spec = DemoSpec::default();
    let stall = spec.slow_step().expect("the default demo stalls a step");
    let culprit = spec.culprit().expect("and names its rank");
    let p = compare(
        demo(spec),
        demo(DemoSpec {
            clean: true,
            ..spec
        }),
        &DiffOptions::default(),
    )
    .unwrap();
    let d = &p.diff;
    assert_eq!(d.aligned_by, "number");
    for pair in &d.pairs {
        if pair.before.0 == stall {
            assert!(
                pair.delta_ns() < -100_000_000,
                "the stalled step got >100 ms faster: {pair:?}"
            );
        } else {
            assert_eq!(pair.delta_ns(), 0, "step {} is the same job", pair.before);
        }
    }
    // The rank whose own work shrank is the culprit, in its host-bound time.
    let r = d
        .parts
        .ranks
        .iter()
        .min_by_key(|r| r.own_work.delta_ns())
        .unwrap();
    assert_eq!(r.rank.0, culprit);
    assert_eq!(r.top_part.as_str(), "host_bound");
    let loader = d
        .findings
        .iter()
        .find(|f| f.rule == "dataloader")
        .expect("dataloader finding");
    assert_eq!(loader.status, Status::Resolved);
    // The replay's prediction lands within 10% of the measured change.
    let [mb, ma] = d.mean_step_ns();
    let measured = mb - ma;
    let predicted = loader.predicted_ns.expect("replayed") as f64;
    assert!(
        (predicted - measured).abs() <= 0.1 * measured,
        "predicted {predicted} vs measured {measured}"
    );
}

#[test]
fn a_real_cpu_pair_names_the_slow_rank_and_trips_the_gate() {
    let (clean, faulty) = testdata_pair("pairs/slow-rank/clean", "pairs/slow-rank/faulty");
    let p = open(&clean, &faulty, &DiffOptions::default());
    let grown = p
        .diff
        .parts
        .ranks
        .iter()
        .max_by_key(|r| r.own_work.delta_ns())
        .unwrap();
    assert_eq!((grown.rank.0, grown.top_part.as_str()), (1, "compute"));
    let s = p
        .diff
        .findings
        .iter()
        .find(|f| f.rule == "straggler")
        .expect("straggler");
    assert_eq!(
        (s.status, s.ranks.iter().map(|r| r.0).collect::<Vec<_>>()),
        (Status::Appeared, vec![1])
    );
    let (c, f) = (clean.to_str().unwrap(), faulty.to_str().unwrap());
    let (v, out) = diff_json(&[c, f, "--fail-on-regression", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("regression: step time") && err.contains("rank 1's own work"),
        "{err}"
    );
    assert!(v["step"]["delta_pct"].as_f64().unwrap() > 5.0);
    // Under the limit, and the other way round (faster), it passes.
    let (_, out) = diff_json(&[c, f, "--fail-on-regression", "90"]);
    assert_eq!(out.status.code(), Some(0));
    let (_, out) = diff_json(&[f, c, "--fail-on-regression", "0"]);
    assert_eq!(out.status.code(), Some(0));
    let out = common::run(["diff", c, f, "--fail-on-regression", "-3"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn htas_real_pairs_compare_and_refuse_to_merge() {
    let Some(shared) = common::shared() else {
        return;
    };
    let (ctl, test) = (
        common::hta(&shared, "trace_diff/control"),
        common::hta(&shared, "trace_diff/test"),
    );
    let p = open(&ctl, &test, &DiffOptions::default());
    let d = &p.diff;
    // One rank each, numbered 3 and 1: paired by position; an A100 run against a V100 one.
    assert_eq!(d.ranks_by, "order");
    assert_eq!(d.pairs.len(), 6);
    assert!(d.step_ratio().unwrap() > 0.3, "the V100 run is slower");
    // Kernels renamed across GPU generations line up through their operators.
    assert!(
        d.ops.kernels.iter().any(|k| k.matched == Matched::Parent),
        "a parent-matched kernel"
    );
    assert!(d.ops.matched.by_shapes > 1000);
    let sum: i64 = d.parts.parts.iter().map(|x| x.time.delta_ns()).sum();
    assert_eq!(sum, d.parts.span.delta_ns());
    // trace_compare: the same rank twice.
    let (base, t) = (
        common::hta(&shared, "trace_compare/base"),
        common::hta(&shared, "trace_compare/test"),
    );
    let p = open(
        &base,
        &t,
        &DiffOptions {
            steps: StepAlign::parse("1010:1010").unwrap(),
            ..Default::default()
        },
    );
    assert_eq!((p.diff.ranks_by, p.diff.pairs.len()), ("id", 1));
    assert_eq!(
        p.diff.critical_path.as_ref().unwrap().windows[0].to_string(),
        "step 1010"
    );
    // Loading both as one job is refused, suggesting the diff.
    for dir in ["trace_diff", "trace_compare"] {
        let out = common::run([common::hta(&shared, dir)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("stepscope diff") && err.lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn steps_that_do_not_line_up_are_a_usage_error() {
    let b = common::testdata("diff/renamed/before");
    let b = b.to_str().unwrap();
    let out = common::run(["diff", b, b, "--steps", "1:9"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the second run has no step 9 (steps: 1, 2)"),
        "{err}"
    );
    let out = common::run(["diff", "demo", "demo:nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no demo scenario `nope` (scenarios: default,")
    );
}

/// The JSON's keys are the schema (docs/report-schema.md, `stepscope.diff/1`): pinned.
#[test]
fn the_json_key_set_is_pinned() {
    let (b, a) = testdata_pair("diff/renamed/before", "diff/renamed/after");
    let (v, out) = diff_json(&[b.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(out.status.success());
    let keys = |x: &Value| -> Vec<String> {
        let mut k: Vec<String> = x.as_object().expect("an object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(v["schema"], "stepscope.diff/1");
    assert_eq!(
        keys(&v),
        [
            "after",
            "aligned_by",
            "before",
            "breakdown",
            "collectives",
            "critical_path",
            "findings",
            "host",
            "ops",
            "ops_basis",
            "pairs",
            "ranks_by",
            "schema",
            "step",
            "timings"
        ]
    );
    assert_eq!(keys(&v["before"]), ["devices", "ranks", "steps", "title"]);
    assert_eq!(
        keys(&v["step"]),
        ["after_ns", "before_ns", "delta_ns", "delta_pct", "mean_ns"]
    );
    assert_eq!(
        keys(&v["pairs"][0]),
        ["after", "after_ns", "before", "before_ns"]
    );
    assert_eq!(
        keys(&v["breakdown"]),
        [
            "only_after",
            "only_before",
            "parts",
            "ranks",
            "rows",
            "span"
        ]
    );
    assert_eq!(keys(&v["breakdown"]["parts"][0]), ["part", "time"]);
    assert_eq!(
        keys(&v["breakdown"]["ranks"][0]),
        ["own_work", "rank", "span", "top_part", "top_part_delta_ns"]
    );
    assert_eq!(keys(&v["ops"]), ["kernels", "matched", "operators"]);
    assert_eq!(
        keys(&v["ops"]["matched"]),
        ["by_name", "by_shapes", "only_after", "only_before"]
    );
    assert_eq!(
        keys(&v["ops"]["kernels"][0]),
        [
            "count_after",
            "count_before",
            "matched",
            "name",
            "renamed_to",
            "total"
        ]
    );
    assert_eq!(
        keys(&v["ops"]["kernels"][0]["total"]),
        ["after_ns", "before_ns", "delta_ns"]
    );
    assert_eq!(
        keys(&v["critical_path"]),
        ["categories", "total", "windows"]
    );
    assert_eq!(keys(&v["timings"]), ["analysis_ns", "diff_ns", "load_ns"]);
    assert_eq!(
        keys(&v["findings"][0]),
        [
            "impact",
            "index",
            "measured_ns",
            "predicted_ns",
            "ranks",
            "rule",
            "status",
            "title"
        ]
    );
    // The CPU pair has collectives.
    let (c, f) = testdata_pair("pairs/slow-rank/clean", "pairs/slow-rank/faulty");
    let (v, _) = diff_json(&[c.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(
        keys(&v["collectives"][0]),
        [
            "busbw_gbps",
            "calls",
            "group",
            "op",
            "time",
            "transit",
            "wait"
        ]
    );
}

/// Two runs under one folder are two jobs: refused naming both and the diff, or `--job N`
/// picks one; a folder of one job takes `--job 1` and refuses `--job 2`.
#[test]
fn two_runs_under_one_folder_are_refused_or_picked_with_job() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["before", "after"] {
        let to = dir.path().join(side);
        std::fs::create_dir(&to).unwrap();
        std::fs::copy(
            common::testdata(&format!("diff/renamed/{side}/rank-0.json")),
            to.join("rank-0.json"),
        )
        .unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let out = common::run(["report", root]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for want in [
        "2 jobs, one per directory",
        "1 ",
        "/after (1 rank(s))",
        "stepscope diff",
        "--job N",
        "rank 0 is claimed by both",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Discovery sorts paths: `after` is job 1, `before` job 2. The after run has a dropout.
    let events = |job: &str| -> String {
        let out = common::run(["report", root, "--job", job, "--format", "json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["top_ops"].to_string()
    };
    assert!(events("1").contains("dropout_kernel"));
    assert!(!events("2").contains("dropout_kernel"));
    let out = common::run(["report", root, "--job", "3"]);
    assert_eq!(out.status.code(), Some(2));
    let one = common::testdata("diff/renamed/before");
    let out = common::run(["report", one.to_str().unwrap(), "--job", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one job"));
    assert!(
        common::run(["report", one.to_str().unwrap(), "--job", "1"])
            .status
            .success()
    );
}

/// A run against itself changes nothing, on every real trace job and the Ascend fixtures:
/// every step, part, operator, kernel, collective and finding the same, every call matched
/// by name and shapes. (Analyses are deterministic, and the matching finds every call.)
#[test]
fn every_real_job_against_itself_changes_nothing() {
    let mut jobs: Vec<Vec<std::path::PathBuf>> = vec![
        vec![common::testdata("ascend/pp4")],
        vec![common::testdata("cluster4")],
        vec![common::testdata("cpu_only.json")],
    ];
    if let Some(s) = common::shared() {
        for sub in ["hta", "ext", "torch-cpu"] {
            common::trace_jobs(&s.join("traces").join(sub), &mut jobs);
        }
    }
    let mut compared = 0;
    for paths in jobs {
        let what = paths[0].display().to_string();
        let open = || Session::open(&paths, &Settings::default()).ok();
        let (Some(b), Some(a)) = (open(), open()) else {
            continue;
        };
        let Ok(p) = compare(b, a, &DiffOptions::default()) else {
            continue;
        };
        let d = &p.diff;
        compared += 1;
        assert!(d.pairs.iter().all(|x| x.delta_ns() == 0), "{what}: steps");
        assert!(
            d.parts.parts.iter().all(|x| x.time.delta_ns() == 0),
            "{what}: parts"
        );
        let m = &d.ops.matched;
        assert_eq!(
            (m.only_before, m.only_after, m.by_name),
            (0, 0, 0),
            "{what}: every call by shapes"
        );
        for r in d.ops.operators.iter().chain(&d.ops.kernels) {
            assert_eq!(r.total.delta_ns(), 0, "{what}: {}", r.name);
            assert_eq!(r.count_before, r.count_after, "{what}: {}", r.name);
            assert!(r.renamed_to.is_none(), "{what}: {}", r.name);
        }
        assert!(
            d.collectives
                .iter()
                .all(|c| c.time.delta_ns() == 0 && c.wait.delta_ns() == 0),
            "{what}: collectives"
        );
        assert!(
            d.host
                .iter()
                .all(|h| h.host.delta_ns() == 0 && h.device_idle.delta_ns() == 0),
            "{what}: host work"
        );
        for f in &d.findings {
            assert_eq!(
                (f.status, f.impact.delta_ns()),
                (Status::Persists, 0),
                "{what}: {}",
                f.rule
            );
        }
        if let Some(cp) = &d.critical_path {
            assert_eq!(cp.total.delta_ns(), 0, "{what}: critical path");
        }
    }
    assert!(compared >= 3, "compared {compared} jobs");
}

/// A real GPU pair (testdata/diff/gpu-precision, recorded on an H100): the same model in fp32
/// and under bf16 autocast. cuBLAS's fp32 GEMM kernels are renamed to bf16 ones and line up
/// through their operators — GEMM with GEMM, not with the casts autocast adds — and get about
/// 5× faster; the step still gets slower, host-bound, and the gate says so.
#[test]
fn a_real_gpu_precision_change_lines_up_renamed_gemms_and_names_the_host() {
    let (b, a) = testdata_pair("diff/gpu-precision/fp32", "diff/gpu-precision/bf16");
    let p = open(&b, &a, &DiffOptions::default());
    let d = &p.diff;
    let renamed: Vec<(&str, &str)> = d
        .ops
        .kernels
        .iter()
        .filter_map(|k| Some((k.name.as_str(), k.renamed_to.as_deref()?)))
        .collect();
    let gemm = |n: &str| n.contains("gemm") || n.starts_with("nvjet");
    // Every fp32 GEMM that has a bf16 counterpart pairs with a GEMM.
    let gemms: Vec<&(&str, &str)> = renamed.iter().filter(|(x, _)| gemm(x)).collect();
    assert_eq!(gemms.len(), 3, "{renamed:#?}");
    assert!(
        gemms.iter().all(|(_, y)| y.starts_with("nvjet_sm90")),
        "{gemms:#?}"
    );
    assert!(
        renamed.iter().all(|(x, y)| gemm(x) == gemm(y)),
        "{renamed:#?}"
    );
    let linear = row(&d.ops.operators, "aten::linear");
    assert!(
        linear.total.after_ns * 3 < linear.total.before_ns,
        "GEMMs several times faster: {linear:?}"
    );
    let casts = d
        .ops
        .operators
        .iter()
        .find(|o| o.name.ends_with("ToCopyBackward0"))
        .unwrap();
    assert_eq!((casts.matched, casts.count_before), (Matched::OnlyAfter, 0));
    let part = |name: &str| {
        d.parts
            .parts
            .iter()
            .find(|x| x.part.as_str() == name)
            .unwrap()
            .time
            .delta_ns()
    };
    assert!(
        part("compute") < 0 && part("host_bound") > -part("compute"),
        "faster kernels, a host-bound step"
    );
    assert!(d.step_ratio().unwrap() > 0.05, "the step got slower");
    let out = common::run([
        "diff",
        b.to_str().unwrap(),
        a.to_str().unwrap(),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("host_bound"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_critical_path_compares_the_step_pair_that_changed_most() {
    // The slow-step scenario slows step 13 by 60%; the straggler run's slowest step is not
    // necessarily 13: both paths are walked for step 13, the pair that changed most.
    let (d, out) = diff_json(&["demo:straggler", "demo:slow-step"]);
    assert!(out.status.success());
    let pairs = d["pairs"].as_array().unwrap();
    let most = pairs
        .iter()
        .max_by_key(|p| (p["after_ns"].as_i64().unwrap() - p["before_ns"].as_i64().unwrap()).abs())
        .unwrap();
    assert_eq!(most["before"], 13);
    assert_eq!(
        d["critical_path"]["windows"],
        serde_json::json!(["step 13", "step 13"])
    );
    // A named pair is that pair.
    let (d, _) = diff_json(&["demo:straggler", "demo:slow-step", "--steps", "11:11"]);
    assert_eq!(
        d["critical_path"]["windows"],
        serde_json::json!(["step 11", "step 11"])
    );
}

#[test]
fn the_headline_names_what_explains_the_change() {
    // The default demo against the straggler scenario: the same job without its loader
    // stall — the loader finding resolved is most of the change. Against itself: nothing.
    let out = common::run(["diff", "demo:default", "demo:straggler", "--format", "text"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text.lines().next().unwrap();
    assert!(
        head.contains("(-36.9%), mostly dataloader resolved,"),
        "{head}"
    );
    let out = common::run(["diff", "demo", "demo", "--format", "text"]);
    let head = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(!head.contains("mostly"), "{head}");
}
