//! The job's parallel layout (issue 32's first part): declared by process-group names,
//! inferred from what the others leave; in the report with each straggler's position.
//! (Ascend's declared TP2×PP2×DP2 metadata: `src/ingest/ascend/info.rs`'s tests.)

use crate::common;

use common::{report_json, shared};
use serde_json::json;
use stepscope::analysis::layout::Dim;
use stepscope::model::RankId;
use stepscope::session::{Scenario, Session, Settings};

/// The stage-imbalance demo declares its pipeline pairs as `pipeline` groups: PP 2 (stride
/// 4) declared, and the rest of the 8 ranks data parallel.
#[test]
fn a_pipeline_job_is_pp2_by_dp4() {
    let settings = Settings {
        scenario: Scenario::StageImbalance,
        ..Settings::default()
    };
    let s = Session::open(&[], &settings).unwrap();
    let l = s.analysis.layout.as_ref().expect("a layout");
    assert_eq!(l.shape(), "DP 4 × PP 2");
    assert_eq!(l.coord(RankId(5), Dim::Pp), Some(1));
    assert_eq!(l.label(RankId(5)), "pp1·dp1");
}

/// The report carries the layout and each straggler's position: the default demo is plain
/// data parallel over its 8 ranks, inferred; the 4-rank CPU run likewise.
#[test]
fn the_report_names_the_layout_and_each_straggler_s_position() {
    let r = report_json(&[], &[]);
    let l = &r["cluster"]["layout"];
    assert_eq!(l["world"], 8);
    assert_eq!(
        l["axes"],
        json!([{"dim": "dp", "size": 8, "stride": 1, "source": "inferred_rest"}])
    );
    assert_eq!(l["tiles"], true);
    let s = r["cluster"]["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["rank"] == 3)
        .expect("rank 3 is a straggler");
    assert_eq!(s["position"], "dp3");
    let Some(sh) = shared() else { return };
    let r = report_json(&[&sh.join("traces/torch-cpu")], &[]);
    assert_eq!(r["cluster"]["layout"]["axes"][0]["size"], 4);
}

/// A TP 2 × DP 2 job (testdata/gen_layout_fixtures.py): declared by Megatron's group names
/// in `pg_config`, and the same job with names that say nothing, inferred from the groups its
/// all-reduces ran in (stride-1 pairs beside wider ones: tensor parallel).
#[test]
fn tp2_by_dp2_declared_by_names_or_inferred_from_collectives() {
    for (dir, source) in [
        ("megatron4", "declared_group"),
        ("groups4", "inferred_groups"),
    ] {
        let r = report_json(&[&common::testdata(dir)], &[]);
        let l = &r["cluster"]["layout"];
        assert_eq!(
            l["axes"],
            json!([
                {"dim": "dp", "size": 2, "stride": 2, "source": source},
                {"dim": "tp", "size": 2, "stride": 1, "source": source}
            ]),
            "{dir}"
        );
        assert_eq!(l["tiles"], true, "{dir}");
    }
    let s = Session::open(&[common::testdata("megatron4")], &Settings::default()).unwrap();
    let l = s.analysis.layout.as_ref().unwrap();
    let labels: Vec<String> = (0..4).map(|r| l.label(RankId(r))).collect();
    assert_eq!(labels, ["dp0·tp0", "dp0·tp1", "dp1·tp0", "dp1·tp1"]);
}
