//! The JSON report's schema (`stepscope.report/1`) is pinned: every key path a report can
//! carry, over inputs that fill every section, is snapshotted, and every key is documented
//! in docs/report-schema.md. A change here is a schema change: deliberate, documented, and
//! versioned (a key that readers relied on goes away only with a new `schema`).

use crate::common;

use common::{report_json, testdata};
use serde_json::Value;
use std::collections::BTreeSet;

/// Maps whose keys are data (a trace's own names), not schema.
const DATA_KEYED: &[&str] = &["job.collectives", "job.unknown_categories"];

fn paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let k = if DATA_KEYED.contains(&at) { "*" } else { k };
                let p = if at.is_empty() {
                    k.to_string()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(p.clone());
                paths(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

fn key_paths() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // The demo (every analysis), a pipeline (stages, send/recv), Seq matching (mismatches).
    let reports = [
        report_json(&[], &[]),
        report_json(&[&testdata("pipeline2")], &[]),
        report_json(&[&testdata("seq2")], &[]),
        report_json(&[&testdata("mismatch3")], &[]),
        report_json(&[&testdata("ascend/tiny")], &[]),
        report_json(&[&testdata("ascend/pp4")], &[]),
    ];
    for r in &reports {
        assert_eq!(r["schema"], "stepscope.report/1");
        paths(r, "", &mut out);
    }
    out
}

#[test]
fn the_report_schema_is_pinned() {
    let keys: Vec<String> = key_paths().into_iter().collect();
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!("report_schema_keys", keys.join("\n"));
    });
}

#[test]
fn every_report_key_is_documented() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/report-schema.md"
    ))
    .expect("docs/report-schema.md");
    let missing: BTreeSet<String> = key_paths()
        .iter()
        .filter_map(|p| p.rsplit('.').next())
        .map(|k| k.trim_end_matches("[]").to_string())
        .filter(|k| k != "*" && !doc.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "keys missing from docs/report-schema.md: {missing:?}"
    );
}
