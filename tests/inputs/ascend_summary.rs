//! Ascend ranks that kept only the profiler's summaries (issue 32): the trimmed TP 1 × PP 2 ×
//! DP 2 job of `testdata/ascend/pp4` (ranks 1 and 3 summary only: one from `analysis.db`,
//! one from `step_trace_time.csv` + `communication.json`; testdata/gen_ascend_pp.py) loads
//! all four ranks, and its first finding is the pipeline-stage imbalance, not a straggler;
//! the multi-device `analysis.db` of `testdata/ascend/multidev` is one rank per device.

use crate::common;

use common::{assert_partitions, report_json_and_stderr, row, testdata};
use stepscope::analysis::cluster::StagesFrom;
use stepscope::model::RankId;
use stepscope::session::{Session, Settings};

fn pp4() -> Session {
    Session::open(&[testdata("ascend/pp4")], &Settings::default()).expect("pp4 loads")
}

/// Every rank loads; the trimmed ones are summary only, with the profiler's steps.
#[test]
fn the_trimmed_ranks_load_summary_only() {
    let s = pp4();
    let job = &s.loaded.job;
    assert!(s.loaded.skipped.is_empty(), "{:?}", s.loaded.skipped);
    let ids: Vec<u32> = job.ranks.iter().map(|r| r.id.0).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    let summary: Vec<bool> = job.ranks.iter().map(|r| r.summary_only).collect();
    assert_eq!(summary, [false, true, false, true]);
    for r in job.ranks.iter().filter(|r| r.summary_only) {
        let steps: Vec<u32> = r.steps.iter().map(|s| s.number.0).collect();
        assert_eq!(steps, [5, 6, 7], "rank {}", r.id);
        // 3 steps × (4 sends, 4 receives, the DP and the model-parallel all-reduce).
        assert_eq!(r.collectives.len(), 30, "rank {}", r.id);
        assert!(r.collectives.iter().all(|c| c.group.is_some()));
    }
    assert!(
        s.loaded.warnings.iter().any(|w| w.contains("summary only")),
        "{:?}",
        s.loaded.warnings
    );
}

/// A summary-only rank's breakdown is its profiler's step summary: rank 3's
/// step_trace_time.csv says step 5 computed 67 172 µs with 16 148 µs of communication not
/// overlapped and nothing overlapped; rank 1's analysis.db 48 056 and 35 264 µs. The span is
/// the step's (84.32 ms with the 1 ms gap before step 6), free the rest.
#[test]
fn a_summary_rank_s_breakdown_is_the_profiler_s() {
    let (r, _) = report_json_and_stderr(&[&testdata("ascend/pp4")], &[]);
    assert_partitions(&r);
    let b = row(&r, 5, 3);
    assert_eq!(b["compute_ns"], 67_172_000);
    assert_eq!(b["overlap_ns"], 0);
    assert_eq!(b["comm_ns"], 16_148_000);
    assert_eq!(b["span_ns"], 84_320_000);
    assert_eq!(b["free_ns"], 84_320_000 - 67_172_000 - 16_148_000);
    assert_eq!(b["summary_only"], true);
    let b = row(&r, 5, 1);
    assert_eq!(
        (b["compute_ns"].as_i64(), b["comm_ns"].as_i64()),
        (Some(48_056_000), Some(35_264_000))
    );
    assert!(row(&r, 5, 0).get("summary_only").is_none());
}

/// The first finding is the stage imbalance: stage 1 (ranks 2, 3) computes 1.4× stage 0,
/// named with the operators that make it heavier; no rank is called a straggler for
/// waiting on it in the pipeline's groups, and the layout is the declared DP 2 × PP 2.
#[test]
fn the_first_finding_is_the_stage_imbalance_not_a_straggler() {
    let s = pp4();
    let a = &s.analysis;
    let first = &a.findings[0];
    assert_eq!(
        first.rule,
        "stage_imbalance",
        "{:?}",
        a.findings.iter().map(|f| f.rule).collect::<Vec<_>>()
    );
    assert_eq!(first.evidence.ranks, [RankId(2), RankId(3)]);
    assert!(
        first
            .evidence
            .ops
            .iter()
            .any(|o| o == "aclnnFlashAttention_Backward"),
        "{:?}",
        first.evidence.ops
    );
    let stages = a.stages.as_ref().expect("stages");
    assert_eq!(stages.len(), 2);
    assert!(stages[1].flagged);
    assert_eq!(stages[1].ranks, [RankId(2), RankId(3)]);
    assert!(matches!(
        stages[0].from,
        StagesFrom::SendRecv | StagesFrom::Layout
    ));
    // Stage vs worker: within each stage the two workers are within 0.1% of each other.
    for st in stages {
        for w in &st.workers {
            assert!(w.excess_ns.abs() * 1000 < w.compute_ns, "{w:?}");
        }
    }
    // The pipeline's groups ({0, 2}, {1, 3}) span both stages: nobody straggles there, and
    // no finding blames a stage-0 rank.
    let pipeline_groups: Vec<&str> = a
        .group_health
        .iter()
        .filter(|h| h.dim == Some(stepscope::analysis::layout::Dim::Pp))
        .map(|h| h.group.as_str())
        .collect();
    assert_eq!(pipeline_groups.len(), 2);
    assert!(
        a.stragglers
            .iter()
            .all(|s| !pipeline_groups.contains(&s.group.as_str()))
    );
    assert!(
        a.imbalance
            .iter()
            .all(|i| !pipeline_groups.contains(&i.group.as_str()))
    );
    let l = a.layout.as_ref().expect("layout");
    assert_eq!(l.shape(), "DP 2 × PP 2");
    assert_eq!(l.label(RankId(3)), "pp1·dp1");
    // The replay would treat a summary rank's ops as rigid waits: not replayed, said why.
    assert!(a.whatif.steps.is_empty());
    assert!(
        a.whatif
            .not_replayed
            .as_deref()
            .is_some_and(|w| w.contains("1, 3"))
    );
}

/// Without the summary-only ranks (their directories left out) the job is the two full
/// ranks, and the stage imbalance is still the first finding.
#[test]
fn the_full_ranks_alone_tell_the_same_story() {
    let dir = testdata("ascend/pp4");
    let full: Vec<std::path::PathBuf> = [
        "node0_1000_20250109000000000_ascend_pt",
        "node0_1002_20250109000000000_ascend_pt",
    ]
    .iter()
    .map(|d| dir.join(d))
    .collect();
    let s = Session::open(&full, &Settings::default()).unwrap();
    assert_eq!(s.loaded.job.ranks.len(), 2);
    assert_eq!(s.analysis.findings[0].rule, "stage_imbalance");
}

/// The report marks the summary-only ranks, and the text says what `*` means.
#[test]
fn the_report_marks_summary_only_ranks() {
    let out = common::run(["report", testdata("ascend/pp4").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("     3*  "), "{text}");
    assert!(text.contains("* summary only"), "{text}");
    assert!(
        text.contains("not replayed: rank(s) 1, 3 are summary only"),
        "{text}"
    );
    assert!(text.contains("Group health"), "{text}");
}

/// One process that profiled four devices (a WAL-mode analysis.db, its StepTraceTime rows
/// per deviceId with a NULL step): four ranks, one step over the trace each, breakdowns by
/// hand from the rows — device 2: 78 ms computing of which 5 ms overlapped, 20 ms
/// communication not overlapped, 2 ms free, a 100 ms step.
#[test]
fn a_multi_device_summary_is_one_rank_per_device() {
    let db = testdata("ascend/multidev")
        .join("PROF_000001_20250109000000000_ABCDEF/mindstudio_profiler_output/analysis.db");
    let header = std::fs::read(&db).unwrap();
    assert_eq!(
        (header[18], header[19]),
        (2, 2),
        "the fixture is in WAL mode"
    );
    let s = Session::open(&[testdata("ascend/multidev")], &Settings::default()).unwrap();
    let job = &s.loaded.job;
    let ids: Vec<u32> = job.ranks.iter().map(|r| r.id.0).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    assert!(
        job.ranks
            .iter()
            .all(|r| r.summary_only && r.steps.len() == 1 && r.steps[0].synthetic)
    );
    assert!(
        job.ranks[2].source.path.ends_with("(device 2)"),
        "{}",
        job.ranks[2].source.path
    );
    let b = s
        .analysis
        .breakdown
        .iter()
        .find(|b| b.rank == RankId(2))
        .expect("device 2's row");
    assert_eq!(
        (b.span_ns, b.compute_ns, b.overlap_ns, b.comm_ns, b.free_ns),
        (100_000_000, 73_000_000, 5_000_000, 20_000_000, 2_000_000)
    );
}

/// A step summary whose rows mix numbered and unnumbered steps cannot place its rows: the
/// rank is skipped with one line naming it; the others load.
#[test]
fn unplaceable_rows_skip_the_rank_in_one_line() {
    let t = tempfile::tempdir().unwrap();
    let src = testdata("ascend/pp4");
    for d in [
        "node0_1002_20250109000000000_ascend_pt",
        "node0_1003_20250109000000000_ascend_pt",
    ] {
        copy_dir(&src.join(d), &t.path().join(d));
    }
    let csv = t
        .path()
        .join("node0_1003_20250109000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
    let text = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen("\n5,", "\n,", 1);
    std::fs::write(&csv, text).unwrap();
    let s = Session::open(&[t.path().to_path_buf()], &Settings::default()).unwrap();
    assert_eq!(s.loaded.job.ranks.len(), 1);
    let e = s.loaded.skipped[0].to_string();
    assert!(
        e.contains("node0_1003") && e.contains("no step number") && !e.contains('\n'),
        "{e}"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}
