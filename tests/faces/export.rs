//! `stepscope export --perfetto` (issue 33): the file follows the Trace Event Format (every
//! event's fields and phases checked, tracks and slices counted against the analysis), and
//! a one-rank export reads back through stepscope's own Chrome reader to the same breakdown
//! (a hand-made trace and real HTA traces).

use crate::common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;

fn export(inputs: &[&Path], out: &Path) -> std::process::Output {
    let mut args: Vec<std::ffi::OsString> = vec!["export".into()];
    args.extend(inputs.iter().map(|p| p.as_os_str().to_owned()));
    args.extend(["--perfetto".into(), out.as_os_str().to_owned()]);
    common::run(&args)
}

fn read(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    };
    serde_json::from_str(&text).expect("the export is JSON")
}

/// Every event's phase and fields as the Trace Event Format states them; returns the X
/// slices by category and the (pid, tid) tracks named by metadata.
fn validate(doc: &Value) -> (BTreeMap<String, u64>, BTreeMap<(u64, u64), String>) {
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut slices: BTreeMap<String, u64> = BTreeMap::new();
    let mut tracks: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut flows: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_u64().expect("pid: an unsigned integer");
        let tid = e["tid"].as_u64().expect("tid: an unsigned integer");
        match e["ph"].as_str().expect("ph") {
            "X" => {
                assert!(e["name"].is_string() && e["cat"].is_string(), "{e}");
                assert!(e["ts"].is_number(), "{e}");
                assert!(e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}");
                assert!(e["args"].is_object(), "{e}");
                *slices
                    .entry(e["cat"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
            "M" => {
                let name = e["name"].as_str().unwrap();
                match name {
                    "process_name" | "thread_name" => {
                        let n = e["args"]["name"].as_str().expect("a name").to_string();
                        if name == "thread_name" {
                            tracks.insert((pid, tid), n);
                        }
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        assert!(e["args"]["sort_index"].is_u64(), "{e}")
                    }
                    other => panic!("metadata {other}"),
                }
            }
            ph @ ("s" | "f") => {
                let id = e["id"].as_u64().expect("a flow id");
                assert!(e["ts"].is_number());
                let c = flows.entry(id).or_default();
                if ph == "s" {
                    c.0 += 1
                } else {
                    assert_eq!(e["bp"], "e");
                    c.1 += 1
                }
            }
            other => panic!("phase {other}: {e}"),
        }
    }
    assert!(
        flows.values().all(|&c| c == (1, 1)),
        "each flow starts and finishes once"
    );
    slices.insert("flows".into(), flows.len() as u64);
    (slices, tracks)
}

#[test]
fn the_demo_export_is_valid_and_carries_the_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.json.gz");
    let o = export(&[], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (slices, tracks) = validate(&read(&out));
    let report = common::report_json(&[], &[]);
    // The job's own events, all of them.
    let own: u64 = [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "cuda_sync",
        "cpu_op",
        "cuda_runtime",
        "user_annotation",
        "gpu_user_annotation",
        "stepscope_other",
    ]
    .iter()
    .map(|c| slices.get(*c).copied().unwrap_or(0))
    .sum();
    let total: u64 = report["job"]["events"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(own, total);
    // Five stepscope tracks in each of the 8 ranks' processes (and sub-tracks where their
    // slices overlap: the ideal timeline's bands of several lanes).
    let ours = tracks
        .values()
        .filter(|n| n.starts_with("stepscope: ") && !n.contains("(overlap "))
        .count();
    assert_eq!(ours, 5 * 8);
    // A finding slice per (rank, step) of its evidence.
    let ranks = report["job"]["rank_ids"].as_array().unwrap().len() as u64;
    let steps = report["steps"].as_array().unwrap().len() as u64;
    let expected: u64 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let r = f["evidence"]["ranks"]
                .as_array()
                .map_or(0, |v| v.len() as u64);
            let s = f["evidence"]["steps"]
                .as_array()
                .map_or(0, |v| v.len() as u64);
            (if r == 0 { ranks } else { r }) * (if s == 0 { steps } else { s })
        })
        .sum();
    assert_eq!(slices["stepscope.finding"], expected);
    assert_eq!(
        slices["stepscope.critical_path"],
        report["critical_path"]["ops_total"].as_u64().unwrap()
    );
    assert!(slices["stepscope.wait"] > 0 && slices["stepscope.transit"] > 0);
    assert!(slices["stepscope.ideal"] > 0, "the ideal timeline");
}

/// A one-rank export read back gives the same breakdown and step times, to the ns.
fn round_trip(input: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rank.json");
    let o = export(&[input], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    validate(&read(&out));
    let (a, b) = (
        common::report_json(&[input], &[]),
        common::report_json(&[&out], &[]),
    );
    assert_eq!(a["breakdown"], b["breakdown"], "{}", input.display());
    assert_eq!(a["steps"], b["steps"], "{}", input.display());
    assert_eq!(a["job"]["rank_ids"], b["job"]["rank_ids"]);
}

#[test]
fn a_one_rank_export_reads_back_to_the_same_breakdown() {
    round_trip(&common::testdata("diff/renamed/before"));
    round_trip(&common::testdata("host_lanes.json"));
    let Some(shared) = common::shared() else {
        return;
    };
    for rel in [
        "trace_compare/base",
        "trace_diff/control",
        "trace_diff/test",
    ] {
        round_trip(&common::hta(&shared, rel));
    }
}

#[test]
fn the_export_is_never_written_into_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("run");
    std::fs::create_dir(&input).unwrap();
    std::fs::copy(
        common::testdata("host_lanes.json"),
        input.join("rank-0.json"),
    )
    .unwrap();
    let o = export(&[&input], &input.join("out.json"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("in the folder of the input"));
    let names: BTreeSet<_> = std::fs::read_dir(&input)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "nothing written: {names:?}");
}

/// Issue 44, class 1: an output never destroys an input — not through a symbolic link
/// (dangling: never creating its target), not onto a hard-linked file, not beside an input
/// given as a file; `-` is stdout, not a file named `-`. The input is intact after each.
#[test]
fn an_output_cannot_clobber_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let (run, out) = (dir.path().join("run"), dir.path().join("out"));
    std::fs::create_dir_all(&run).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let rank = run.join("rank-0.json");
    std::fs::copy(common::testdata("host_lanes.json"), &rank).unwrap();
    let before = std::fs::read(&rank).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&rank, out.join("link.json")).unwrap();
        std::os::unix::fs::symlink(out.join("nowhere.json"), out.join("dangling.json")).unwrap();
    }
    std::fs::hard_link(&rank, out.join("hard.json")).unwrap();
    let cases = [
        (vec![&run], out.join("link.json"), "symbolic link"),
        (vec![&run], out.join("dangling.json"), "symbolic link"),
        (vec![&run], out.join("hard.json"), "hard links"),
        (
            vec![&rank],
            run.join("x.json"),
            "in the folder of the input",
        ),
        (vec![&run], out.clone(), "not a regular file"),
    ];
    for (inputs, target, why) in cases {
        let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
        let o = export(&paths, &target);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{target:?}: {err}");
        assert!(
            err.contains(why) && err.lines().count() == 1,
            "{target:?}: {err}"
        );
        assert_eq!(std::fs::read(&rank).unwrap(), before, "{target:?}");
    }
    assert!(!out.join("nowhere.json").exists());
    // `-` is stdout; a fine target is written whole, with no temporary file left.
    let o = export(&[&run], Path::new("-"));
    assert!(o.status.success() && o.stdout.starts_with(b"{"));
    assert!(!Path::new("-").exists());
    let good = out.join("good.json");
    assert!(export(&[&run], &good).status.success());
    read(&good);
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Decimal microseconds as written (`1694128201545123.456`) in integer nanoseconds, exactly
/// (an f64 of today's epoch µs cannot hold the ns).
fn ns(raw: &serde_json::value::RawValue) -> i128 {
    let t = raw.get();
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac = format!("{frac:0<3}");
    assert!(frac.len() == 3, "at most ns: {t}");
    let sign = if int.starts_with('-') { -1 } else { 1 };
    int.parse::<i128>().unwrap() * 1000 + sign * frac.parse::<i128>().unwrap()
}

#[derive(serde::Deserialize)]
struct Ev<'a> {
    ph: &'a str,
    pid: u64,
    tid: u64,
    #[serde(default)]
    cat: Option<&'a str>,
    #[serde(borrow, default)]
    ts: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<Ev<'a>>,
}

/// Every track's slices nest (Perfetto's JSON importer hides those that overlap without
/// nesting); returns the launch arrows.
fn assert_nested(text: &str, what: &str) -> usize {
    let doc: Doc = serde_json::from_str(text).unwrap();
    let mut tracks: BTreeMap<(u64, u64), Vec<(i128, i128)>> = BTreeMap::new();
    for e in doc.events.iter().filter(|e| e.ph == "X") {
        let start = ns(e.ts.unwrap());
        let end = start + ns(e.dur.unwrap());
        tracks.entry((e.pid, e.tid)).or_default().push((start, end));
    }
    for (key, mut slices) in tracks {
        slices.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut open: Vec<i128> = Vec::new();
        for (s, e) in slices {
            while open.last().is_some_and(|&top| top <= s) {
                open.pop();
            }
            if let Some(&top) = open.last() {
                assert!(
                    e <= top,
                    "{what}: track {key:?}: [{s}, {e}] overlaps one ending {top}"
                );
            }
            open.push(e);
        }
    }
    doc.events
        .iter()
        .filter(|e| e.ph == "s" && e.cat == Some("ac2g"))
        .count()
}

/// The `ac2g` arrows a Kineto trace file holds (its launch → kernel flows): ids with both
/// ends (profilers leave some starts without a finish).
fn input_arrows(path: &Path) -> usize {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| stepscope::input::is_trace_name(&p.to_string_lossy()))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    files
        .iter()
        .map(|f| {
            let v = read(f);
            let events = v.get("traceEvents").unwrap_or(&v).as_array().cloned();
            let ends = |ph: &str| -> BTreeSet<String> {
                events
                    .iter()
                    .flatten()
                    .filter(|e| e["ph"] == ph && e["cat"] == "ac2g")
                    .map(|e| e["id"].to_string())
                    .collect()
            };
            ends("s").intersection(&ends("f")).count()
        })
        .sum()
}

/// The export of every shared job (and the demo): every track nests, and the input's own
/// launch → kernel arrows are all kept (the 8-rank DLRM job's 2 116 became 0 before).
#[test]
fn every_track_nests_and_launch_arrows_are_kept_on_every_shared_trace() {
    let Some(shared) = common::shared() else {
        return common::skip("../shared");
    };
    let mut jobs: Vec<Vec<std::path::PathBuf>> = vec![vec![]];
    for sub in ["hta", "ext", "torch-cpu"] {
        common::trace_jobs(&shared.join("traces").join(sub), &mut jobs);
    }
    jobs.extend(
        common::ascend_levels(&shared, "text")
            .into_iter()
            .map(|p| vec![p]),
    );
    let settings = stepscope::session::Settings::default();
    let (mut checked, mut arrows) = (0, 0);
    for paths in &jobs {
        let what = format!("{paths:?}");
        let Ok(s) = stepscope::session::Session::open(paths, &settings) else {
            continue;
        };
        let mut out = Vec::new();
        stepscope::report::perfetto::write(&s.loaded.job, &s.analysis, &mut out).unwrap();
        let kept = assert_nested(std::str::from_utf8(&out).unwrap(), &what);
        // Arrows join what the model reads: a trace whose runtime calls it does not know
        // (MTIA's `mtia_runtime`, kind other) has none to keep.
        let launch = stepscope::model::Kind::Launch;
        let reads_launches = s
            .loaded
            .job
            .ranks
            .iter()
            .any(|r| r.events.kind.contains(&launch));
        if let ([p], true) = (paths.as_slice(), reads_launches) {
            if p.starts_with(shared.join("traces/ext")) || p.starts_with(shared.join("traces/hta"))
            {
                // Every arrow the input draws; more where it links by correlation only.
                assert!(kept >= input_arrows(p), "{what}: {kept} launch arrows");
            }
        }
        checked += 1;
        arrows += kept;
    }
    assert!(checked >= 20, "{checked} jobs");
    assert!(arrows > 10_000, "{arrows} launch arrows in all");
}
