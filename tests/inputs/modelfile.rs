//! Summaries and the warm cache (docs/cache.md): a job read from the summaries `stepscope
//! summarize` wrote reports exactly as the traces do, on every real job in `../shared/traces`;
//! a second open reads the cache and reports the same; a changed trace is read again; a
//! corrupt, truncated or foreign entry is ignored with a note; the cache keeps its bound.

use crate::common;

use common::run;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The JSON report (timings removed: they are the only thing that may differ) and stderr.
fn report(paths: &[&Path], env: &[(&str, &Path)], extra: &[&str]) -> (Value, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stepscope"));
    cmd.arg("report")
        .args(paths)
        .args(["--format", "json"])
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{paths:?}: {err}");
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    untimed(&mut v);
    (v, err)
}

/// `v` without its wall-clock timings.
fn untimed(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("load_ns");
            m.remove("analysis_ns");
            m.values_mut().for_each(untimed);
        }
        Value::Array(a) => a.iter_mut().for_each(untimed),
        _ => {}
    }
}

/// `stepscope summarize PATHS --out OUT`, which must succeed; its stdout.
fn summarize(paths: &[PathBuf], out: &Path) -> String {
    let mut args: Vec<std::ffi::OsString> = vec!["summarize".into()];
    args.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    args.extend(["--out".into(), out.as_os_str().to_owned()]);
    let o = run(&args);
    assert!(
        o.status.success(),
        "summarize {paths:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Every job the real-trace tests load, as a list of paths.
fn real_jobs() -> Vec<Vec<PathBuf>> {
    let Some(shared) = common::shared() else {
        return Vec::new();
    };
    let mut jobs = Vec::new();
    for dir in ["hta", "torch-cpu", "ext", "nsys"] {
        common::trace_jobs(&shared.join("traces").join(dir), &mut jobs);
    }
    for dir in ["tiny", "pp4"] {
        jobs.push(vec![common::testdata("ascend").join(dir)]);
    }
    jobs
}

#[test]
fn summaries_report_as_the_traces_they_were_made_from() {
    let mut compared = 0;
    for job in real_jobs()
        .into_iter()
        .chain([vec![common::testdata("cluster4")]])
    {
        let refs: Vec<&Path> = job.iter().map(PathBuf::as_path).collect();
        let o = run(["report", "--format", "json"]
            .iter()
            .map(std::ffi::OsStr::new)
            .chain(refs.iter().map(|p| p.as_os_str())));
        if !o.status.success() {
            continue; // a job the traces refuse is not a job to compare
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("sums");
        let mut args: Vec<&std::ffi::OsStr> = vec!["summarize".as_ref()];
        args.extend(refs.iter().map(|p| p.as_os_str()));
        args.extend(["--out".as_ref(), out.as_os_str()]);
        if !run(&args).status.success() {
            continue; // an input the traces' report skips: the summaries cannot say it
        }
        let (want, want_err) = report(&refs, &[], &["--no-cache"]);
        let (got, got_err) = report(&[&out], &[], &["--no-cache"]);
        assert_eq!(got, want, "{job:?}: the summaries' report differs");
        assert_eq!(got_err, want_err, "{job:?}");
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} real jobs compared");
}

#[test]
fn a_summary_names_its_trace_and_two_files_of_one_name_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sums");
    let said = summarize(&[common::testdata("cluster4").join("rank-2.json")], &out);
    assert!(said.contains("rank-2.json -> "), "{said}");
    assert!(said.contains("rank-2.json.stepscope ("), "{said}");
    // The same name from another folder into the same --out: never replaced.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(
        common::testdata("cluster4/rank-3.json"),
        other.join("rank-2.json"),
    )
    .unwrap();
    let o = run([
        "summarize".as_ref(),
        other.join("rank-2.json").as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("already holds the summary of"), "{err}");
    // Never into an input's folder.
    let near = run([
        "summarize".as_ref(),
        common::testdata("cluster4").as_os_str(),
        "--out".as_ref(),
        common::testdata("cluster4").join("s").as_os_str(),
    ]);
    assert_eq!(near.status.code(), Some(2));
    assert!(!common::testdata("cluster4/s").exists());
    // Shards split the inputs: task 1 of 2 takes inputs 1 and 3.
    let half = dir.path().join("half");
    let o = run([
        "summarize".as_ref(),
        common::testdata("cluster4").as_os_str(),
        "--out".as_ref(),
        half.as_os_str(),
        "--shard".as_ref(),
        "1/2".as_ref(),
    ]);
    assert!(o.status.success());
    let mut names: Vec<String> = std::fs::read_dir(&half)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["rank-1.json.stepscope", "rank-3.json.stepscope"]);
}

/// A private copy of the 4-rank fixture (the tests change its files) and a cache folder.
fn job_and_cache() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    std::fs::create_dir(&job).unwrap();
    for r in 0..4 {
        let name = format!("rank-{r}.json");
        std::fs::copy(common::testdata("cluster4").join(&name), job.join(&name)).unwrap();
    }
    let cache = dir.path().join("cache");
    (dir, job, cache)
}

/// The report of `job` read through `cache` (every input cached, whatever its size).
fn cached(job: &Path, cache: &Path, max: &str) -> (Value, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stepscope"));
    cmd.args(["report", "--format", "json"]).arg(job);
    cmd.env("STEPSCOPE_CACHE_DIR", cache)
        .env("STEPSCOPE_CACHE_MIN", "1")
        .env("STEPSCOPE_CACHE_MAX", max);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    untimed(&mut v);
    (v, String::from_utf8_lossy(&out.stderr).to_string())
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_second_open_reads_the_cache_and_reports_the_same() {
    let (_d, job, cache) = job_and_cache();
    let (want, _) = report(&[&job], &[], &["--no-cache"]);
    assert!(entries(&cache).is_empty(), "--no-cache writes nothing");
    let (first, _) = cached(&job, &cache, "1G");
    assert_eq!(entries(&cache).len(), 4);
    let (second, _) = cached(&job, &cache, "1G");
    assert_eq!(first, want);
    assert_eq!(second, want);
    // A changed trace is read again: one of rank 1's events lasts longer.
    let text = std::fs::read_to_string(job.join("rank-1.json")).unwrap();
    let at = text.find("\"dur\": ").unwrap() + 7;
    std::fs::write(
        job.join("rank-1.json"),
        format!("{}9{}", &text[..at], &text[at..]),
    )
    .unwrap();
    let (changed, _) = cached(&job, &cache, "1G");
    let (fresh, _) = report(&[&job], &[], &["--no-cache"]);
    assert_ne!(fresh, want);
    assert_eq!(changed, fresh);
    // Small traces are not cached by default.
    let plain = tempfile::tempdir().unwrap();
    report(&[&job], &[("STEPSCOPE_CACHE_DIR", plain.path())], &[]);
    assert!(entries(plain.path()).is_empty());
}

/// A way to spoil an entry's bytes.
type Spoil<'a> = &'a dyn Fn(&mut Vec<u8>);

#[test]
fn a_corrupt_truncated_or_foreign_entry_is_ignored_with_a_note() {
    let (_d, job, cache) = job_and_cache();
    let (want, _) = report(&[&job], &[], &["--no-cache"]);
    cached(&job, &cache, "1G");
    let spoil: [(&str, Spoil); 4] = [
        ("its checksum does not match", &|b| {
            let k = b.len() - 3;
            b[k] ^= 1;
        }),
        ("cut short", &|b| b.truncate(b.len() / 2)),
        ("not a stepscope model file", &|b| {
            *b = b"{\"traceEvents\": []}".to_vec()
        }),
        ("a model file of layout version 100", &|b| b[20] = 100),
    ];
    for (why, f) in spoil {
        for e in entries(&cache) {
            let mut bytes = std::fs::read(&e).unwrap();
            f(&mut bytes);
            std::fs::write(&e, bytes).unwrap();
        }
        let (got, _) = cached(&job, &cache, "1G");
        let warnings = got["job"]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 4, "{why}: {warnings:?}");
        for w in warnings {
            let w = w.as_str().unwrap();
            assert!(w.contains("cache entry") && w.contains(why), "{why}: {w}");
        }
        let mut without = got.clone();
        without["job"]["warnings"] = Value::Array(Vec::new());
        assert_eq!(without, want, "{why}");
        // Written again whole: the next open reads it without a note.
        assert_eq!(cached(&job, &cache, "1G").0, want, "{why}");
    }
}

#[test]
fn the_cache_keeps_its_bound_dropping_the_least_recently_used() {
    let (_d, job, cache) = job_and_cache();
    cached(&job.join("rank-0.json"), &cache, "1G");
    let one = std::fs::metadata(&entries(&cache)[0]).unwrap().len();
    let max = (one * 5 / 2).to_string();
    for r in 1..4 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        cached(&job.join(format!("rank-{r}.json")), &cache, &max);
    }
    let left = entries(&cache);
    let total: u64 = left
        .iter()
        .map(|e| std::fs::metadata(e).unwrap().len())
        .sum();
    assert!(total <= one * 5 / 2, "{total} > {max}");
    assert_eq!(left.len(), 2);
    // The two kept are the last two written: rank 3's reads from the cache.
    let (a, _) = cached(&job.join("rank-3.json"), &cache, &max);
    assert_eq!(entries(&cache), left);
    assert_eq!(
        a,
        report(&[&job.join("rank-3.json")], &[], &["--no-cache"]).0
    );
}

/// Under a real single-node Slurm (scripts/slurm-local.sh starts munged, slurmctld and
/// slurmd, installing them with apt when missing): `srun -n 4 stepscope summarize` over a
/// demo job, each task taking its share of the ranks, and the report from the summaries
/// equals the report from the traces, field for field. Skipped, with the reason, only where
/// Slurm cannot start (not root, no apt, daemons refused).
#[test]
fn srun_summarizes_a_job_whose_report_is_the_traces() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh");
    let started = Command::new("bash")
        .arg(&script)
        .arg("start")
        .output()
        .unwrap();
    if !started.status.success() {
        let why = String::from_utf8_lossy(&started.stderr);
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "warning: test skipped: Slurm cannot start here: {}\n",
                why.trim()
            )
            .as_bytes(),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (traces, sums) = (dir.path().join("traces"), dir.path().join("sums"));
    let demo = run([
        "demo".as_ref(),
        "--out".as_ref(),
        traces.as_os_str(),
        "--scenario".as_ref(),
        "pipeline-straggler".as_ref(),
    ]);
    assert!(demo.status.success());
    let srun = Command::new("timeout")
        .args(["120", "srun", "--overcommit", "-n", "4"])
        .arg(env!("CARGO_BIN_EXE_stepscope"))
        .arg("summarize")
        .arg(&traces)
        .arg("--out")
        .arg(&sums)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&srun.stderr);
    assert!(srun.status.success(), "srun: {err}");
    // Four tasks, each its share: two of the eight ranks.
    for t in 0..4 {
        assert!(err.contains(&format!("srun task {t} of 4")), "{err}");
    }
    let said = String::from_utf8_lossy(&srun.stdout);
    assert_eq!(said.lines().count(), 8, "{said}");
    let (want, want_err) = report(&[&traces], &[], &["--no-cache"]);
    let (got, got_err) = report(&[&sums], &[], &["--no-cache"]);
    assert_eq!(got, want);
    assert_eq!(got_err, want_err);
    assert_eq!(got["job"]["ranks"].as_u64(), Some(8), "{}", got["job"]);
}

#[test]
fn a_rank_summarized_twice_is_refused_naming_both_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    summarize(&[common::testdata("cluster4/rank-2.json")], &a);
    summarize(&[common::testdata("cluster4/rank-2.json")], &b);
    std::fs::rename(
        b.join("rank-2.json.stepscope"),
        a.join("again-rank-2.json.stepscope"),
    )
    .unwrap();
    let o = run(["report".as_ref(), a.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rank 2 is claimed by both") && err.contains("again-rank-2.json.stepscope"),
        "{err}"
    );
    assert!(err.contains("/rank-2.json.stepscope"), "{err}");
}

#[test]
fn an_events_text_is_read_from_the_summarized_trace_while_it_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rank-0.json");
    std::fs::copy(common::testdata("two_streams.json"), &trace).unwrap();
    let out = dir.path().join("sums");
    summarize(std::slice::from_ref(&trace), &out);
    let text = std::fs::read_to_string(&trace).unwrap();
    let at = text.find("{\"name\": \"process_labels\"").unwrap();
    let raw = stepscope::model::RawSpan {
        offset: at as u64,
        len: 24,
    };
    let summary = stepscope::input::Input::file(out.join("rank-0.json.stepscope"));
    assert_eq!(
        summary.event_text(raw).unwrap(),
        "{\"name\": \"process_labels"
    );
    // The trace changed since: said, never the wrong bytes.
    std::fs::write(&trace, format!("{text}\n")).unwrap();
    let e = summary.event_text(raw).unwrap_err();
    assert!(e.contains("changed since it was summarized"), "{e}");
    std::fs::remove_file(&trace).unwrap();
    let e = summary.event_text(raw).unwrap_err();
    assert!(e.contains("is not reachable here"), "{e}");
}

#[test]
fn whatif_diff_and_export_open_summaries_as_traces() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sums");
    let traces = common::testdata("cluster4");
    summarize(std::slice::from_ref(&traces), &out);
    let text = |args: &[&std::ffi::OsStr]| {
        let o = run(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let whatif = |p: &Path| {
        text(&[
            "whatif".as_ref(),
            p.as_os_str(),
            "--fix".as_ref(),
            "ideal".as_ref(),
        ])
    };
    assert_eq!(whatif(&out), whatif(&traces));
    // The summaries against their traces: nothing changed.
    let diff = text(&[
        "diff".as_ref(),
        traces.as_os_str(),
        out.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let d: Value = serde_json::from_str(&diff).unwrap();
    assert_eq!(d["step"]["delta_ns"].as_i64(), Some(0), "{}", d["step"]);
    assert_eq!(d["breakdown"]["span"]["delta_ns"].as_i64(), Some(0));
    let perfetto = dir.path().join("p.json");
    text(&[
        "export".as_ref(),
        out.as_os_str(),
        "--perfetto".as_ref(),
        perfetto.as_os_str(),
    ]);
    assert!(std::fs::metadata(&perfetto).unwrap().len() > 1000);
}

#[test]
fn a_cache_size_that_is_not_a_size_is_refused_before_reading() {
    let o = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["report", "--format", "json"])
        .arg(common::testdata("two_streams.json"))
        .env("STEPSCOPE_CACHE_MAX", "lots")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: STEPSCOPE_CACHE_MAX: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_fifo_in_a_summarized_folder_is_a_failed_input_and_the_rest_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    std::fs::create_dir(&job).unwrap();
    std::fs::copy(common::testdata("two_streams.json"), job.join("rank0.json")).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(job.join("rank1.json"))
            .status()
            .unwrap()
            .success()
    );
    let out = dir.path().join("sums");
    let o = run([
        "summarize".as_ref(),
        job.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rank1.json: not a regular file (a FIFO)"),
        "{err}"
    );
    assert!(out.join("rank0.json.stepscope").is_file());
    assert!(!out.join("rank1.json.stepscope").exists());
    // The warm cache is not written by summarize.
    let o = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["summarize", "--out"])
        .arg(dir.path().join("again"))
        .arg(job.join("rank0.json"))
        .env("STEPSCOPE_CACHE_DIR", dir.path().join("cache"))
        .env("STEPSCOPE_CACHE_MIN", "1")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!dir.path().join("cache").exists());
}
