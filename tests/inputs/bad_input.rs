//! Bad input: a one-line error naming the file and the position, exit code 2, no panic; in a
//! multi-rank directory the bad file is skipped and listed while the others load.

use crate::common;
use common::*;
use std::path::Path;

/// Runs `report` on one path; asserts exit 2 and a single `error:` line naming the path;
/// returns that line.
fn fails(path: &Path) -> String {
    let out = run([Path::new("report"), path]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for {}: stderr {err}",
        path.display()
    );
    assert!(out.stdout.is_empty(), "nothing on stdout on error");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.contains(&path.display().to_string()),
        "names the file: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn not_json() {
    let e = fails(&testdata("not_json.json"));
    assert!(
        e.contains("byte 0:") && e.contains("not a JSON trace"),
        "{e}"
    );
}

#[test]
fn truncated_json() {
    let e = fails(&testdata("truncated.json"));
    // The file is 158 bytes and ends inside a string.
    assert!(
        e.contains("byte 157:") && e.contains("truncated JSON"),
        "{e}"
    );
}

#[test]
fn truncated_gzip() {
    let e = fails(&testdata("truncated.json.gz"));
    assert!(
        e.contains("compressed byte") && e.contains("truncated gzip"),
        "{e}"
    );
}

#[test]
fn corrupt_gzip() {
    let e = fails(&testdata("corrupt.json.gz"));
    assert!(
        e.contains("compressed byte") && e.contains("corrupt gzip"),
        "{e}"
    );
}

#[test]
fn wrong_field_type() {
    // `ts` is an object; the event starts at byte 20.
    let e = fails(&testdata("wrong_type_ts.json"));
    assert!(
        e.contains("byte 20:") && e.contains("`ts`") && e.contains("not a number"),
        "{e}"
    );
}

#[test]
fn id_beyond_64_bits_is_an_error_but_beyond_i64_is_not() {
    // The first event carries `Comms Id` and `correlation` of 2^64−1 (valid: u64); the
    // second a correlation of 10^23, which fits nowhere.
    let e = fails(&testdata("huge_id.json"));
    assert!(e.contains("does not fit in 64 bits"), "{e}");
    let at: u64 = e
        .split("byte ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let text = std::fs::read(testdata("huge_id.json")).unwrap();
    let second = text.windows(3).rposition(|w| w == b"  {").unwrap() as u64;
    assert!(at > second, "points into the second event: {e}");
}

#[test]
fn timestamp_overflowing_i64_nanoseconds() {
    let e = fails(&testdata("ts_overflow.json"));
    assert!(e.contains("byte 20:") && e.contains("out of range"), "{e}");
}

#[test]
fn empty_trace_events() {
    let e = fails(&testdata("empty_events.json"));
    assert!(
        e.contains("byte 36:") && e.contains("`traceEvents` is empty"),
        "{e}"
    );
}

#[test]
fn only_metadata() {
    let e = fails(&testdata("only_metadata.json"));
    assert!(e.contains("no timed events"), "{e}");
}

#[test]
fn trailing_data_after_the_trace() {
    let e = fails(&testdata("trailing_data.json"));
    assert!(
        e.contains("byte 112:") && e.contains("unexpected data"),
        "{e}"
    );
}

#[test]
fn invalid_utf8_in_a_name_loads_with_a_warning() {
    // A name is data, not structure: decode it lossily and say where, rather than refuse
    // a multi-gigabyte trace over one byte (reference/kineto.md §14).
    let r = report_json(&[&testdata("invalid_utf8.json")], &[]);
    let w = r["job"]["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("invalid_utf8.json: byte 112:") && w.contains("invalid UTF-8"),
        "{w}"
    );
    let names = top_op_names(&r);
    assert!(
        names.iter().any(|n| n == "bad\u{fffd}\u{fffd}name"),
        "{names:?}"
    );
}

#[test]
fn directory_without_traces() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "not a trace").unwrap();
    let e = fails(dir.path());
    assert!(e.contains("no trace files"), "{e}");
}

#[test]
fn unreadable_file() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("rank-0.json");
    std::os::unix::fs::symlink(dir.path().join("gone.json"), &link).unwrap();
    let e = fails(&link);
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn missing_path() {
    let e = fails(Path::new("/nonexistent/stepscope/trace.json"));
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn bad_rank_in_a_directory_is_skipped_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("two_streams.json"), dir.path().join("rank0.json")).unwrap();
    std::fs::copy(testdata("truncated.json"), dir.path().join("rank1.json")).unwrap();
    let out = run([
        Path::new("report"),
        dir.path(),
        Path::new("--format"),
        Path::new("json"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("warning: skipped ") && err.contains("rank1.json: byte 157"),
        "{err}"
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["job"]["ranks"], 1);
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0]["path"].as_str().unwrap().ends_with("rank1.json"));
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("truncated JSON")
    );
}

#[test]
fn two_files_claiming_one_rank() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("two_streams.json"), dir.path().join("a.json")).unwrap();
    std::fs::copy(testdata("two_streams.json"), dir.path().join("b.json")).unwrap();
    let out = run([Path::new("report"), dir.path()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank 0 is claimed by both")
            && err.contains("a.json")
            && err.contains("b.json"),
        "{err}"
    );
}

#[test]
fn ranks_from_file_names_and_discovery_order() {
    // no_steps.json has no distributedInfo: the name decides, else discovery order.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        testdata("no_steps.json"),
        dir.path().join("job_rank_3.json"),
    )
    .unwrap();
    std::fs::copy(testdata("no_steps.json"), dir.path().join("worker.json")).unwrap();
    std::fs::copy(testdata("cpu_only.json"), dir.path().join("rank-9.json")).unwrap(); // says rank 2
    let r = report_json(&[dir.path()], &[]);
    assert_eq!(r["job"]["rank_ids"], serde_json::json!([0, 2, 3]));
    let from: Vec<(u64, &str)> = r["job"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["rank"].as_u64().unwrap(),
                s["rank_from"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        from,
        [
            (0, "discovery_order"),
            (2, "distributed_info"),
            (3, "file_name")
        ]
    );
}

#[test]
fn unknown_step_or_rank_is_a_usage_error() {
    let out = run([
        Path::new("report"),
        &testdata("two_streams.json"),
        Path::new("--step"),
        Path::new("99"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no step 99 (steps: 1, 2)"));
    let out = run([
        Path::new("report"),
        &testdata("two_streams.json"),
        Path::new("--rank"),
        Path::new("5"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rank 5 (ranks: 0)"));
}

#[test]
fn usage_errors_exit_2() {
    let out = run(["report", "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    for (args, says) in [
        (vec!["--align", "ntp"], "invalid value 'ntp' for '--align"),
        (
            vec!["--intra-link", "pigeon"],
            "unknown link `pigeon`: use GB/s or one of nvlink4",
        ),
        (vec!["--inter-link=-5"], "unknown link `-5`"),
        (
            vec!["--ranks-per-node", "0"],
            "invalid value '0' for '--ranks-per-node",
        ),
        (
            vec!["--split-buckets", "0"],
            "invalid value '0' for '--split-buckets",
        ),
    ] {
        let mut all = vec!["report"];
        if args[0] == "--split-buckets" {
            all = vec!["demo", "--out", "/nonexistent"];
        }
        all.extend(&args);
        let out = run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{all:?}: {err}");
    }
}

#[test]
fn stdin_plain_and_gzip() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    for file in ["two_streams.json", "two_streams.json.gz"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
            .args(["report", "-", "--format", "json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&std::fs::read(testdata(file)).unwrap())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["job"]["sources"][0]["path"], "-");
        assert_eq!(parts(&row(&r, 1, 0)).1, 120_000);
    }
}

/// Runs stepscope with its config directory (XDG_CONFIG_HOME) set to `home`.
fn with_config(home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(args)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .output()
        .unwrap()
}

#[test]
fn broken_user_config_files_are_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("stepscope");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[advisor]\nfree_share = 'lots'\n").unwrap();
    let out = with_config(home.path(), &["report"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: config.toml: ") && err.contains("free_share"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    std::fs::write(dir.join("config.toml"), "[advisor]\nfree_share = 0.9\n").unwrap();
    std::fs::write(
        dir.join("devices.toml"),
        "[[device]]\nname = 'X'\nbf16_tflops = -1\nhbm_gbps = 1\n",
    )
    .unwrap();
    let out = with_config(home.path(), &["report"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("devices.toml") && err.contains("peaks must be positive"),
        "{err}"
    );
}

#[test]
fn user_device_table_and_thresholds_apply() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("stepscope");
    std::fs::create_dir_all(&dir).unwrap();
    // A made-up device with 10× the H100's bf16 peak, and a threshold that silences the
    // data-loader rule.
    std::fs::write(
        dir.join("devices.toml"),
        "[[device]]\nname = 'Future-GPU'\nmatch = ['H100']\nbf16_tflops = 9894\nhbm_gbps = 33500\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[advisor]\ndataloader_share = 0.9\n",
    )
    .unwrap();
    let out = with_config(home.path(), &["report", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["roofline"]["device"]["name"], "Future-GPU");
    let rules: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(!rules.contains(&"dataloader"), "{rules:?}");
    assert!(rules.contains(&"slow_step"), "{rules:?}");
}

/// A gzip trace in many members, cut at equal sizes as bgzip cuts them (every member's
/// trailer gives the same size, none the whole text's): the whole text is read — never its
/// first member only — and the report equals the plain trace's; bytes after the last member
/// are a one-line error at their compressed byte, as a corrupt stream is.
#[test]
fn gzip_in_many_members_is_read_whole() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let plain = std::fs::read(testdata("two_streams.json")).unwrap();
    let members: Vec<u8> = plain
        .chunks(64)
        .flat_map(|piece| {
            let mut e = GzEncoder::new(Vec::new(), Compression::fast());
            e.write_all(piece).unwrap();
            e.finish().unwrap()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("members.json.gz");
    std::fs::write(&gz, &members).unwrap();
    let report = |p: &Path| {
        let out = run([
            Path::new("report"),
            p,
            Path::new("--format"),
            Path::new("json"),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["job"]["sources"] = serde_json::Value::Null;
        r["timings"] = serde_json::Value::Null;
        r
    };
    assert_eq!(report(&gz), report(&testdata("two_streams.json")));
    let trailing = dir.path().join("trailing.json.gz");
    std::fs::write(&trailing, [members.as_slice(), b"not gzip"].concat()).unwrap();
    let e = fails(&trailing);
    assert!(e.contains("compressed byte"), "{e}");
}
