//! Every value a user gives is checked (issue 44, class 4): an environment size, a thread
//! count, a window, a rank, the same path twice, two runs in unrelated folders. Each case
//! failed on the release before it: ignored silently, unbounded, or a wrong suggestion.

use crate::common;

use common::{report_json, run, testdata};
use std::process::{Command, Output};

fn with_env(key: &str, value: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(args)
        .env(key, value)
        .output()
        .unwrap()
}

/// Exit 2 and one stderr line containing each of `needles`.
fn refused(o: &Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    err
}

fn cluster() -> String {
    testdata("cluster4").display().to_string()
}

#[test]
fn a_size_in_the_environment_takes_units_and_refuses_the_rest() {
    let c = cluster();
    for bad in ["abc", "-1", "1.5G", "0", "12 apples"] {
        let o = with_env("STEPSCOPE_MAX_INPUT", bad, &["report", &c]);
        refused(&o, &["STEPSCOPE_MAX_INPUT"]);
    }
    // A 10 kB value is echoed cut, not whole.
    let o = with_env("STEPSCOPE_MAX_INPUT", &"9x".repeat(5_000), &["report", &c]);
    assert!(refused(&o, &["not a size"]).len() < 300);
    for good in ["64M", "1GiB", "2g", "123456789"] {
        let o = with_env("STEPSCOPE_MAX_INPUT", good, &["report", &c]);
        assert!(o.status.success(), "{good}");
    }
}

#[test]
fn threads_are_capped_at_the_cores_and_zero_is_refused() {
    let c = cluster();
    let o = run(["--threads", "100000", "report", &c]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("capped at"), "{err}");
    refused(&run(["--threads", "0", "report", &c]), &["--threads"]);
}

#[test]
fn a_window_that_names_nothing_is_refused_naming_the_windows_there_are() {
    let g = testdata("gloo_absorb3").display().to_string();
    for face in ["report", "whatif"] {
        let o = run([face, &g, "--window", "nosuch"]);
        refused(
            &o,
            &["--window", "nosuch", "DistributedDataParallel.forward (×"],
        );
    }
    // A job with no user annotation says so.
    let o = run(["report", &cluster(), "--window", "nosuch"]);
    refused(&o, &["records no user annotation"]);
    // One that exists is analysed.
    let w = "DistributedDataParallel.forward";
    let r = report_json(&[&testdata("gloo_absorb3")], &["--window", w]);
    assert!(!r["critical_path"].is_null());
}

#[test]
fn every_face_refuses_a_rank_that_is_not_loaded() {
    let c = cluster();
    for face in ["report", "whatif"] {
        refused(
            &run([face, &c, "--rank", "99"]),
            &["no rank 99", "ranks: 0"],
        );
    }
}

#[test]
fn a_path_given_twice_is_one_input() {
    let f = testdata("cluster4/rank-0.json");
    let r = report_json(
        &[&f, &f, &testdata("cluster4/../cluster4/rank-0.json")],
        &[],
    );
    assert_eq!(r["job"]["ranks"], 1, "{}", r["job"]);
    // A folder and a file inside it: the folder's four ranks.
    let r = report_json(&[&testdata("cluster4"), &f], &[]);
    assert_eq!(r["job"]["ranks"], 4);
}

#[test]
fn two_runs_in_unrelated_folders_are_named_by_their_own_folders() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("home/a/run1"), t.path().join("scratch/b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(testdata("cluster4/rank-0.json"), d.join("rank-0.json")).unwrap();
    }
    let o = run([
        "report",
        &t.path().join("home").display().to_string(),
        &t.path().join("scratch").display().to_string(),
    ]);
    let want = format!("stepscope diff {} {}", a.display(), b.display());
    refused(&o, &[&want]);
}

/// Stderr that cannot be written (full, closed, a pipe whose reader left) ends nothing: the
/// export still writes its file and exits 0, an error still exits 2 — never the panic hook's
/// 70 (class 3: `eprintln!` panicked there; clippy.toml now refuses it).
#[test]
fn a_stderr_that_cannot_be_written_changes_no_exit_status() {
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        common::skip("no /dev/full on this system");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("o.json");
    let c = cluster();
    let run_full = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stepscope"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::OpenOptions::new().write(true).open(full).unwrap())
            .status()
            .unwrap()
    };
    // --threads past the cores writes a note to stderr first.
    let s = run_full(&[
        "--threads",
        "100000",
        "export",
        &c,
        "--perfetto",
        out.to_str().unwrap(),
    ]);
    assert_eq!(s.code(), Some(0));
    assert!(out.metadata().unwrap().len() > 0);
    assert_eq!(run_full(&["report", "no/such/path"]).code(), Some(2));
}

/// A subfolder that cannot be listed is skipped and named; the rest of the job loads (issue
/// 44, class 5: it aborted the whole load blaming its parent). Root lists any folder, so
/// the case exists only for other users: the test returns where it cannot be made.
#[cfg(unix)]
#[test]
fn an_unreadable_subfolder_is_skipped_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    std::fs::copy(
        testdata("cluster4/rank-0.json"),
        t.path().join("rank-0.json"),
    )
    .unwrap();
    let locked = t.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_ok() {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    let o = run(["report", t.path().to_str().unwrap()]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("locked") && err.contains("cannot be listed"),
        "{err}"
    );
}

/// Copies folder `from` into `to`, recursively (fixtures are never written to in place).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_dangling_trace_link_beside_ascend_output_is_skipped_and_named() {
    let t = tempfile::tempdir().unwrap();
    let job = t.path().join("job");
    copy_dir(&testdata("ascend/tiny"), &job);
    std::os::unix::fs::symlink("/nonexistent/trace.json", job.join("stale.json")).unwrap();
    let o = run(["report", job.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Before: "stale.json: a Kineto trace, but … is Ascend profiler output", exit 2.
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("skipped") && err.contains("stale.json: a dangling symbolic link"),
        "{err}"
    );
}

#[test]
fn echoed_values_are_cut_with_their_size() {
    let t = tempfile::tempdir().unwrap();
    let theme = t.path().join("theme.toml");
    let colour = "x".repeat(100_000);
    std::fs::write(&theme, format!("[theme-colors]\ntext = \"{colour}\"\n")).unwrap();
    let o = run(["snapshot", "--theme", theme.to_str().unwrap()]);
    let err = refused(&o, &["not a colour", "(100000 bytes)"]);
    assert!(err.len() < 400, "{} bytes", err.len());
    // A value the command line refuses, and an error naming a very long path.
    let o = run(["snapshot", "--size", &"9".repeat(50_000)]);
    assert!(refused(&o, &["(50000 bytes)"]).len() < 400);
    let long = (0..6).fold(t.path().to_path_buf(), |p, k| {
        p.join(k.to_string().repeat(200))
    });
    let o = run(["report", long.to_str().unwrap()]);
    let err = refused(&o, &["characters cut"]);
    assert!(err.chars().count() < 1100, "{}", err.chars().count());
}

/// Files no reader takes are named by what they are (issue 45): the shared Nsight Systems
/// report (with how to export it to SQLite, which is read: tests/nsys.rs) and its `nsys
/// stats` CSVs, each by its evidence; a SQLite database of another schema; a folder of the
/// exports holds three jobs (an H200 and two A100 runs) and says so.
#[test]
fn a_file_no_reader_takes_is_named_by_what_it_is() {
    let Some(shared) = common::shared() else {
        return common::skip("../shared");
    };
    let nsys = shared.join("traces/nsys");
    for (file, what) in [
        (
            "nvfuser-h200/report1.nsys-rep",
            "an Nsight Systems report (.nsys-rep): export it to SQLite first",
        ),
        ("pipit-cloverleaf/cloverleaf_gpu_trace.csv", "a CSV table"),
    ] {
        let p = nsys.join(file);
        refused(
            &run(["report", p.to_str().unwrap()]),
            &[what, "stepscope reads"],
        );
    }
    // The same from stdin, where only the first bytes are seen.
    let o = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["report", "-"])
        .stdin(std::fs::File::open(nsys.join("nvfuser-h200/report1.nsys-rep")).unwrap())
        .output()
        .unwrap();
    refused(&o, &["-: an Nsight Systems report"]);
    refused(
        &run(["report", nsys.to_str().unwrap()]),
        &["3 jobs, one per directory", "but", "on NVIDIA H200"],
    );
    // A SQLite database of no schema stepscope knows, and one left mid-write.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.sqlite");
    let db = rusqlite::Connection::open(&other).unwrap();
    db.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(db);
    refused(
        &run(["report", other.to_str().unwrap()]),
        &[
            "a SQLite database of a schema stepscope does not know",
            "stepscope reads",
        ],
    );
    std::fs::write(dir.path().join("other.sqlite-wal"), b"pending").unwrap();
    refused(
        &run(["report", other.to_str().unwrap()]),
        &["a write-ahead log", "holds writes not yet in the database"],
    );
    // A folder with no file any reader takes names one of them.
    let csvs = tempfile::tempdir().unwrap();
    std::fs::copy(
        nsys.join("pipit-cloverleaf/cloverleaf_gpu_trace.csv"),
        csvs.path().join("gpu.csv"),
    )
    .unwrap();
    refused(
        &run(["report", csvs.path().to_str().unwrap()]),
        &[
            "no trace files",
            "other file(s), e.g.",
            "name one to see what it is",
        ],
    );
}
