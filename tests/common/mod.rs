#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod replay;
pub mod twins;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The shared folder: `$STEPSCOPE_SHARED`, else `../shared` beside the checkout (mutation
/// testing builds a copy of the tree elsewhere and points here). Under CI (`CI=true`) its
/// absence is a failure, not a skip: the real-trace tests must run there.
pub fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("STEPSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    if p.join("traces").is_dir() {
        return Some(p);
    }
    skip("../shared/traces not found: no real trace was tested");
    None
}

/// Under CI a missing prerequisite fails the test; elsewhere the test is skipped with a
/// warning written past the test harness's capture, so that a green run on a bare clone
/// does not look like a full one.
pub fn skip(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}, and CI=true: this test must not be skipped");
    }
    use std::io::Write;
    // `eprintln!` is captured for passing tests; the stderr handle itself is not.
    let _ = writeln!(std::io::stderr(), "warning: test skipped: {why}");
}

/// A path under `../shared/traces/hta/tests/data`.
pub fn hta(shared: &Path, rel: &str) -> PathBuf {
    shared.join("traces/hta/tests/data").join(rel)
}

/// An insta snapshot of a screen's text under `snapshots/`, named `name`.
pub fn snap(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!(name, text);
    });
}

/// Trace files (one job each) and folders holding several traces (one job) below `dir`,
/// appended to `out` in path order.
pub fn trace_jobs(dir: &Path, out: &mut Vec<Vec<PathBuf>>) {
    let is_trace = |p: &Path| stepscope::input::is_trace_name(&p.to_string_lossy());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    if entries.iter().filter(|p| is_trace(p)).count() > 1 {
        out.push(vec![dir.to_path_buf()]);
    }
    for p in entries {
        if p.is_dir() {
            trace_jobs(&p, out);
        } else if is_trace(&p) {
            out.push(vec![p]);
        }
    }
}

/// A file under `testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// Runs the stepscope binary.
pub fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(args)
        .output()
        .expect("run stepscope")
}

/// `stepscope report PATH... --format json` parsed; panics on a non-zero exit.
pub fn report_json(paths: &[&Path], extra: &[&str]) -> serde_json::Value {
    report_json_and_stderr(paths, extra).0
}

/// The JSON report of `paths` and what the run wrote to stderr (warnings, skipped ranks).
pub fn report_json_and_stderr(paths: &[&Path], extra: &[&str]) -> (serde_json::Value, String) {
    let mut args: Vec<std::ffi::OsString> = vec!["report".into()];
    args.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    args.extend(["--format".into(), "json".into()]);
    args.extend(extra.iter().map(|s| (*s).into()));
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "stepscope failed: {err}");
    let json = serde_json::from_slice(&out.stdout).expect("valid JSON report");
    (json, err)
}

/// The breakdown row of (step, rank).
pub fn row(report: &serde_json::Value, step: u64, rank: u64) -> serde_json::Value {
    report["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["step"] == step && b["rank"] == rank)
        .unwrap_or_else(|| panic!("no breakdown row for step {step} rank {rank}"))
        .clone()
}

/// The report's finding of a rule, if it fired.
pub fn finding<'a>(report: &'a serde_json::Value, rule: &str) -> Option<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule)
}

/// The names in `top_ops`, in order.
pub fn top_op_names(report: &serde_json::Value) -> Vec<String> {
    report["top_ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

/// The six parts of a breakdown row, in order, and its span.
pub fn parts(row: &serde_json::Value) -> ([i64; 6], i64) {
    let g = |k: &str| row[k].as_i64().unwrap();
    (
        [
            g("compute_ns"),
            g("overlap_ns"),
            g("comm_ns"),
            g("memory_ns"),
            g("host_bound_ns"),
            g("free_ns"),
        ],
        g("span_ns"),
    )
}

/// Every breakdown row partitions its span exactly, with no negative part.
pub fn assert_partitions(report: &serde_json::Value) {
    for b in report["breakdown"].as_array().unwrap() {
        let (p, span) = parts(b);
        assert!(p.iter().all(|&x| x >= 0), "negative part in {b}");
        assert_eq!(
            p.iter().sum::<i64>(),
            span,
            "parts do not sum to the span in {b}"
        );
    }
}

/// One integer field of every object in a JSON array (`offset_ns` of each rank, ...).
pub fn column_i64(list: &serde_json::Value, key: &str) -> Vec<i64> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|o| {
            o[key]
                .as_i64()
                .unwrap_or_else(|| panic!("no integer {key} in {o}"))
        })
        .collect()
}

/// A size histogram over the classes below 64 KiB, 1 MiB, 16 MiB, 256 MiB, and above.
pub fn hist(calls: [u64; 5]) -> serde_json::Value {
    let below = [
        serde_json::json!(65536),
        serde_json::json!(1048576),
        serde_json::json!(16777216),
        serde_json::json!(268435456),
        serde_json::json!(null),
    ];
    serde_json::Value::Array(
        below
            .into_iter()
            .zip(calls)
            .map(|(b, c)| serde_json::json!({"below": b, "calls": c}))
            .collect(),
    )
}

/// `report --format json` on `path` exits 0 with a report whose breakdowns partition their
/// spans, or 2 with a one-line error — never a panic.
pub fn loads_or_fails_in_one_line(path: &Path) {
    let out = run([
        Path::new("report"),
        path,
        Path::new("--format"),
        Path::new("json"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{}: {err}", path.display());
    match out.status.code() {
        Some(0) => assert_partitions(&serde_json::from_slice(&out.stdout).unwrap()),
        Some(2) => assert_eq!(err.lines().count(), 1, "{}: {err}", path.display()),
        c => panic!("{}: exit {c:?}: {err}", path.display()),
    }
}

/// `report PATH` fails with exit 2 and one line (no panic); that line.
pub fn one_line_error(path: &Path) -> String {
    let out = run([Path::new("report"), path]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// (path, length, modification time) of every file under `dir`: compared before and after
/// a run, it shows nothing was written into an input directory.
pub fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.extend(listing(&e.path()));
        } else {
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// The shared torch_npu exports of one job at Level0/1/2 (`kind`: `text` or `db`).
pub fn ascend_levels(shared: &Path, kind: &str) -> Vec<PathBuf> {
    (0..3)
        .map(|l| {
            shared.join(format!(
                "traces/ascend/msinsight/test/data/pytorch/{kind}/level{l}"
            ))
        })
        .collect()
}

/// The JSON report of `dir`, checking that nothing under it changed (path, size, mtime).
pub fn report_leaving_input_unchanged(dir: &Path) -> serde_json::Value {
    let before = listing(dir);
    let r = report_json(&[dir], &[]);
    assert_eq!(listing(dir), before, "{}: the input changed", dir.display());
    r
}

/// A rank directory holding the hand-made Ascend databases of `testdata/ascend/tiny-db`
/// (built from their SQL), with `sql` then run on the profiler database (to spoil it).
pub fn tiny_db_with(sql: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r2_ascend_pt");
    let out = root.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    for (file, db) in [
        ("profiler.sql", "ascend_pytorch_profiler_2.db"),
        ("analysis.sql", "analysis.db"),
    ] {
        let text = std::fs::read_to_string(testdata("ascend/tiny-db").join(file)).unwrap();
        let c = rusqlite::Connection::open(out.join(db)).unwrap();
        c.execute_batch(&text).unwrap();
        if file == "profiler.sql" {
            c.execute_batch(sql).unwrap();
        }
    }
    (t, root)
}
