//! Each way the product broke when probed as a hostile or unlucky user would (issue 28), as
//! a test: panics, hangs, unbounded reads, silently wrong answers and forged output lines.
//! Every case names its input and what the user must see instead.

use crate::common;

use common::{report_json_and_stderr, run, testdata, tiny_db_with};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `stdin` fed from `input`; kills it and fails after `limit` (a hang
/// is the failure these tests guard against, not a slow run: the limit is generous).
fn run_with(args: &[&str], input: Stdio, limit: Duration) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(args)
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("RUST_BACKTRACE")
        .spawn()
        .unwrap();
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > limit {
            let _ = child.kill();
            panic!("stepscope {args:?} still running after {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `stepscope ARGS` with `text` on stdin.
fn piped(args: &[&str], text: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("RUST_BACKTRACE")
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit 2 with one `error:` line that names `what` and `needle`.
fn one_error(o: &std::process::Output, what: &str, needle: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(what) && err.contains(needle),
        "{err}"
    );
    err
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

// ---- panics -------------------------------------------------------------------------------

#[test]
fn a_cjk_line_or_a_tqdm_bar_is_read_not_a_panic() {
    for line in [
        "训练开始，正在加载数据集，请稍候片刻\n",
        "Training:  70%|███████   | 700/1000 [00:10<00:04, 70.00it/s]\n",
    ] {
        let o = piped(&["watch", "--jsonl", "-"], line.as_bytes());
        assert_eq!(o.status.code(), Some(0), "{line}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

/// A step at −9.22e15 µs and an op at +9.2e12 µs: their difference overflows i64 ns. The
/// report printed a step of −9223372036.9 s and the overview panicked; now the event outside
/// the time range is an error at its byte.
#[test]
fn events_spanning_more_than_i64_are_an_error_at_their_position() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "span.json",
        r#"{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": -9220000000000000, "dur": 10},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 9200000000000, "dur": 10}
]}"#,
    );
    let path = p.to_str().unwrap();
    for args in [
        vec!["report", path],
        vec!["snapshot", "--view", "overview", path],
        vec!["snapshot", "--view", "timeline", path],
    ] {
        let o = run_with(&args, Stdio::null(), Duration::from_secs(60));
        one_error(&o, "span.json: byte 18:", "out of range");
    }
}

/// A debug build panics on a worker thread when asked: the process still ends, with one
/// line naming the file that holds the backtrace, and exit 70.
#[test]
fn a_panic_on_any_thread_is_one_line_and_exit_70() {
    if !cfg!(debug_assertions) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .arg("report")
        .env("STEPSCOPE_TEST_PANIC", "thread")
        .env("TMPDIR", tmp.path())
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(70), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: internal error (a bug in stepscope): "),
        "{err}"
    );
    // The message quoted trace text once: it comes escaped.
    assert!(err.contains(r"a worker \x1b[2J\nthread"), "{err}");
    let file = err.trim_end().rsplit("details in ").next().unwrap();
    assert!(Path::new(file).starts_with(tmp.path()), "{file}");
    assert!(std::fs::read_to_string(file).unwrap().contains("panicked"));
}

#[test]
fn usage_errors_are_one_line_and_help_lists_every_exit_code() {
    for args in [
        &["--bogus"][..],
        &["report", "--format", "xml"],
        &["snapshot", "--view", "nope"],
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("--help"),
            "{err}"
        );
    }
    let help = String::from_utf8(run(["--help"]).stdout).unwrap();
    for code in ["0 ", "1 ", "2 ", "70 ", "74 "] {
        assert!(
            help.contains(&format!("\n  {code}")),
            "exit code {code}in --help:\n{help}"
        );
    }
}

// ---- hangs and unbounded reads ------------------------------------------------------------

#[test]
fn the_timeline_of_times_near_the_i64_limit_is_refused_not_drawn_forever() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "max.json",
        r#"{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 9223372036854000, "dur": 10},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 9223372036854001, "dur": 5}
]}"#,
    );
    let o = run_with(
        &["snapshot", "--view", "timeline", p.to_str().unwrap()],
        Stdio::null(),
        Duration::from_secs(60),
    );
    one_error(&o, "max.json: byte 18:", "out of range");
}

#[test]
fn a_fifo_in_a_directory_is_skipped_and_a_named_one_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("two_streams.json"), dir.path().join("rank0.json")).unwrap();
    let fifo = dir.path().join("rank1.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let o = run_with(
        &["report", dir.path().to_str().unwrap(), "--format", "json"],
        Stdio::null(),
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("rank1.json: not a regular file (a FIFO)"),
        "{err}"
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["job"]["ranks"], 1);
    assert!(r["skipped"][0]["reason"].as_str().unwrap().contains("FIFO"));
    // Named on the command line, a FIFO is a stream, as `<(zcat …)` is.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let text = std::fs::read(testdata("two_streams.json")).unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(fifo)
                .unwrap()
                .write_all(&text)
                .unwrap();
        })
    };
    let o = run_with(
        &["report", fifo.to_str().unwrap()],
        Stdio::null(),
        Duration::from_secs(60),
    );
    writer.join().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 rank(s)"));
}

#[test]
fn dev_zero_on_stdin_fails_at_its_first_byte() {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let o = run_with(&["report", "-"], Stdio::from(zero), Duration::from_secs(60));
    one_error(&o, "-: byte 0:", "not a JSON trace or gzip");
    let o = run_with(
        &["report", "/dev/zero"],
        Stdio::null(),
        Duration::from_secs(60),
    );
    one_error(&o, "/dev/zero: byte 0:", "not a JSON trace or gzip");
}

#[test]
fn stdin_past_the_cap_is_an_error_naming_the_cap() {
    let mut text = br#"{"traceEvents": [{"ph": "X", "name": ""#.to_vec();
    text.resize(3 << 20, b'a');
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["report", "-"])
        .env("STEPSCOPE_MAX_INPUT", "1M")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader stops at the cap: the rest of the write may meet a closed pipe.
    let _ = child.stdin.take().unwrap().write_all(&text);
    let o = child.wait_with_output().unwrap();
    one_error(&o, "-:", "more than 1.0 MiB");
}

#[test]
fn one_huge_token_fails_where_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = br#"{"traceEvents": ["#.to_vec();
    text.resize(text.len() + (64 << 20), 0);
    let p = dir.path().join("nul.json");
    std::fs::write(&p, &text).unwrap();
    let o = run_with(
        &["report", p.to_str().unwrap()],
        Stdio::null(),
        Duration::from_secs(60),
    );
    one_error(&o, "nul.json: byte 17:", "expected an event object");
}

// ---- silently wrong -----------------------------------------------------------------------

/// The tiny Ascend text export (testdata/ascend/tiny), copied so a test can spoil it.
fn tiny_ascend() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let src = testdata("ascend/tiny/host_100_20250101000000000_ascend_pt");
    let dst = t.path().join("host_100_20250101000000000_ascend_pt");
    copy_dir(&src, &dst);
    (t, dst)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn output_file(root: &Path, name: &str) -> PathBuf {
    root.join("ASCEND_PROFILER_OUTPUT").join(name)
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

fn warnings(r: &serde_json::Value) -> Vec<String> {
    r["job"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_negative_kernel_duration_is_said() {
    let (_t, root) = tiny_ascend();
    edit(&output_file(&root, "kernel_details.csv"), |t| {
        t.replacen(",1080.000\t,10.0,", ",1080.000\t,-10.0,", 1)
    });
    let (r, _) = report_json_and_stderr(&[&root], &[]);
    let w = warnings(&r);
    assert!(
        w.iter().any(|w| w.contains(
            "kernel_details.csv: line 3: 1 task(s) with a negative `Duration(us)`, read as 0"
        )),
        "{w:?}"
    );
}

#[test]
fn json_escapes_in_the_link_matrix_are_read() {
    let (_t, root) = tiny_ascend();
    let (before, _) = report_json_and_stderr(&[&root], &[]);
    edit(&output_file(&root, "communication_matrix.json"), |t| {
        t.replace("\"HCCS\"", "\"HC\\u0043S\"")
            .replace("\"LOCAL\"", "\"LOC\\u0041L\"")
    });
    let (after, _) = report_json_and_stderr(&[&root], &[]);
    assert_eq!(before["link_matrix"].as_array().unwrap().len(), 1);
    assert_eq!(before["link_matrix"], after["link_matrix"]);
}

#[test]
fn a_step_summary_cut_in_its_header_is_said() {
    let (_t, root) = tiny_ascend();
    edit(&output_file(&root, "step_trace_time.csv"), |t| {
        t[..t.find("Preparing").unwrap() + 4].to_string()
    });
    let (r, _) = report_json_and_stderr(&[&root], &[]);
    assert!(
        warnings(&r)
            .iter()
            .any(|w| w.contains("step_trace_time.csv has no step rows")),
        "{:?}",
        warnings(&r)
    );
}

#[test]
fn an_end_at_the_i64_limit_in_a_db_is_an_error_at_its_row() {
    let (_t, root) = tiny_db_with("UPDATE TASK SET endNs = 9223372036854775807 WHERE rowid = 1;");
    let o = run_with(
        &["report", root.to_str().unwrap()],
        Stdio::null(),
        Duration::from_secs(60),
    );
    one_error(&o, "table TASK row 1:", "out of range");
    let o = run_with(
        &["snapshot", "--view", "timeline", root.to_str().unwrap()],
        Stdio::null(),
        Duration::from_secs(60),
    );
    one_error(&o, "table TASK row 1:", "out of range");
}

#[test]
fn empty_or_duplicated_db_tables_are_said() {
    for (sql, said) in [
        ("DELETE FROM TASK;", "the TASK table is empty"),
        ("DELETE FROM STRING_IDS;", "are not in STRING_IDS"),
        (
            "INSERT INTO TASK SELECT * FROM TASK WHERE rowid = 1;",
            "1 duplicated TASK row(s)",
        ),
    ] {
        let (_t, root) = tiny_db_with(sql);
        let (r, _) = report_json_and_stderr(&[&root], &[]);
        assert!(
            warnings(&r).iter().any(|w| w.contains(said)),
            "{sql}: {:?}",
            warnings(&r)
        );
    }
}

#[test]
fn a_pending_write_ahead_log_is_found_beside_the_file_a_link_points_to() {
    let (_t, root) = tiny_db_with("");
    let out = root.join("ASCEND_PROFILER_OUTPUT");
    let real = tempfile::tempdir().unwrap();
    let target = real.path().join("ascend_pytorch_profiler_2.db");
    std::fs::rename(out.join("ascend_pytorch_profiler_2.db"), &target).unwrap();
    std::os::unix::fs::symlink(&target, out.join("ascend_pytorch_profiler_2.db")).unwrap();
    std::fs::write(
        real.path().join("ascend_pytorch_profiler_2.db-wal"),
        b"pending",
    )
    .unwrap();
    let o = run(["report", root.to_str().unwrap()]);
    one_error(&o, "ascend_pytorch_profiler_2.db", "a write-ahead log");
}

/// Ranks 0 and 1 of a world of 4 with a rank 2 of a world of 3: inputs of two jobs.
#[test]
fn ranks_of_different_world_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for r in 0..3 {
        let text = std::fs::read_to_string(testdata(&format!("cluster4/rank-{r}.json"))).unwrap();
        let text = if r == 2 {
            text.replacen("\"world_size\": 4", "\"world_size\": 3", 1)
        } else {
            text
        };
        assert!(
            text.contains("\"world_size\""),
            "the fixture states its world"
        );
        std::fs::write(dir.path().join(format!("rank-{r}.json")), text).unwrap();
    }
    let o = run(["report", dir.path().to_str().unwrap()]);
    one_error(
        &o,
        "rank-2.json: states world size 3, but",
        "inputs of different jobs",
    );
}

/// One rank of four written in ns where Kineto writes µs: its steps look 1000× slower. It
/// is skipped with the reason, not diagnosed as the job's straggler.
#[test]
fn a_rank_in_another_time_unit_is_skipped_not_diagnosed() {
    let dir = tempfile::tempdir().unwrap();
    for r in 0..4 {
        let mut v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(testdata(&format!("cluster4/rank-{r}.json"))).unwrap(),
        )
        .unwrap();
        if r == 2 {
            for e in v["traceEvents"].as_array_mut().unwrap() {
                for k in ["ts", "dur"] {
                    if let Some(x) = e[k].as_f64() {
                        e[k] = serde_json::json!(x * 1000.0);
                    }
                }
            }
        }
        std::fs::write(dir.path().join(format!("rank-{r}.json")), v.to_string()).unwrap();
    }
    let (r, err) = report_json_and_stderr(&[dir.path()], &[]);
    assert!(
        err.contains("rank-2.json: its events last") && err.contains("another unit"),
        "{err}"
    );
    assert_eq!(r["job"]["rank_ids"], serde_json::json!([0, 1, 3]));
    let blamed = r["findings"].as_array().unwrap().iter().any(|f| {
        f["evidence"]["ranks"]
            .as_array()
            .is_some_and(|a| a.contains(&2.into()))
    });
    assert!(!blamed, "{}", r["findings"]);
}

/// Unrelated fixtures in one directory, none naming its rank, were taken as ranks 0–3 of a
/// job and got a HIGH slow-step finding: they share no step and no collective.
#[test]
fn unrelated_fixtures_in_one_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "escape_names.json",
        "no_steps.json",
        "pre_window.json",
        "sync_then_compile.json",
    ] {
        std::fs::copy(testdata(f), dir.path().join(f)).unwrap();
    }
    let o = run(["report", dir.path().to_str().unwrap()]);
    one_error(
        &o,
        "no_steps.json: shares no step and no collective with",
        "different jobs",
    );
    // Two copies of one rankless trace share their steps: still loadable together.
    let dir = tempfile::tempdir().unwrap();
    for f in ["a.json", "b.json"] {
        std::fs::copy(testdata("escape_names.json"), dir.path().join(f)).unwrap();
    }
    assert_eq!(
        run(["report", dir.path().to_str().unwrap()]).status.code(),
        Some(0)
    );
}

// ---- forged output ------------------------------------------------------------------------

/// Names that try to forge a finding line, split a markdown row, hide text or reorder it.
const FORGED: &str = r#"{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
{"ph": "X", "cat": "cpu_op", "name": "x\n  1. [HIGH] fake finding\t| col |", "pid": 1, "tid": 1, "ts": 10, "dur": 400},
{"ph": "X", "cat": "cpu_op", "name": "zw\u200bj\u200dbom\ufeffc1\u009brlo\u202eend", "pid": 1, "tid": 1, "ts": 500, "dur": 400}
]}"#;

#[test]
fn names_cannot_forge_lines_or_hide_characters_in_any_face() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "forge.json", FORGED);
    let path = p.to_str().unwrap();
    let unsafe_in = |s: &str| {
        s.lines()
            .any(|l| l.contains(stepscope::format::unsafe_char))
    };
    for format in ["text", "md"] {
        let out = String::from_utf8(run(["report", "--format", format, path]).stdout).unwrap();
        assert!(
            !out.lines()
                .any(|l| l.trim_start().starts_with("1. [HIGH] fake")),
            "{out}"
        );
        assert!(!unsafe_in(&out), "{format}:\n{out}");
        assert!(
            out.contains(r"x\n  1. [HIGH] fake finding\t"),
            "{format}:\n{out}"
        );
        assert!(
            out.contains(r"zw\u{200b}j\u{200d}bom\u{feff}c1\x9brlo\u{202e}end"),
            "{out}"
        );
    }
    let json = String::from_utf8(run(["report", "--format", "json", path]).stdout).unwrap();
    assert!(!json.contains(stepscope::format::json_unsafe), "{json}");
    assert!(
        json.contains(r"zw\u200bj\u200dbom\ufeffc1\u009brlo\u202eend"),
        "{json}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v.to_string().contains("\u{202e}"),
        "JSON readers get the name back"
    );
    for view in ["overview", "timeline", "critical", "operator", "advisor"] {
        let s =
            String::from_utf8(run(["snapshot", "--view", view, "--size", "120x40", path]).stdout)
                .unwrap();
        assert!(!unsafe_in(&s), "{view}:\n{s}");
        assert!(
            !s.lines()
                .any(|l| l.trim_start().starts_with("1. [HIGH] fake")),
            "{s}"
        );
    }
}
