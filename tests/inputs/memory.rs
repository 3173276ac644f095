//! Memory is bounded on every path (issue 44, class 2): a stream, a gzip bomb, one huge
//! token, a configuration file and a watch stream that never breaks a line each end in one
//! line (or a note) within a small fraction of what they would have taken. Each case failed
//! on the release before it: an abort under a memory limit, gigabytes held, or a silent end.

use crate::common;

use common::testdata;
use std::io::Write;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_stepscope");

/// Runs a shell command line with `$BIN` set, under an address-space limit of 2 GB: what
/// used to grow without bound aborts there (exit 134), what is bounded ends normally.
fn limited(script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 2000000; {script}"))
        .env("BIN", BIN)
        .output()
        .unwrap()
}

/// Exit 2 and one stderr line containing each of `needles`.
fn refused(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

#[test]
fn a_stream_of_zeros_after_a_trace_start_is_refused_at_its_first_zero() {
    // 3 GB through a pipe: held whole, it aborts under the limit.
    let o = limited(r#"(printf '{"traceEvents": ['; head -c 3G /dev/zero) | "$BIN" report -"#);
    refused(&o, &["-: byte 17", "raw control character (0x00)"]);
}

#[test]
fn a_gzip_bomb_stops_at_its_first_byte_not_at_its_end() {
    // 48 members of 64 MiB of zeros: 3 GiB from 3 MB.
    let member = std::fs::read(testdata("zeros-64MiB.gz")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.json.gz");
    let mut f = std::fs::File::create(&bomb).unwrap();
    for _ in 0..48 {
        f.write_all(&member).unwrap();
    }
    drop(f);
    let o = limited(&format!(r#""$BIN" report '{}'"#, bomb.display()));
    refused(&o, &["bomb.json.gz: byte 0", "raw control character"]);
    // The same bomb on stdin is inflated as it streams, under the same checks.
    let o = limited(&format!(r#""$BIN" report - < '{}'"#, bomb.display()));
    refused(&o, &["-: byte 0", "raw control character"]);
}

#[test]
fn text_past_the_cap_is_refused_as_it_arrives() {
    // Valid JSON whitespace, so no byte is wrong: only the cap stops it.
    let o = limited(
        r#"(printf '{"traceEvents": ['; head -c 300M /dev/zero | tr '\0' ' ') | STEPSCOPE_MAX_INPUT=64M "$BIN" report -"#,
    );
    refused(&o, &["more than 64.0 MiB to hold in memory"]);
}

/// A trace whose kernel is named by `n` bytes of `a`.
fn long_named(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rank-0.json");
    let name = "a".repeat(n);
    let text = format!(
        r#"{{"traceEvents":[
{{"ph":"X","cat":"cpu_op","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10}},
{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":1,"dur":2}},
{{"ph":"X","cat":"kernel","name":"{name}b","pid":0,"tid":7,"ts":4,"dur":2}}]}}"#
    );
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn a_name_over_the_limit_is_cut_and_said() {
    let (_dir, path) = long_named(4 << 20);
    let o = Command::new(BIN)
        .args(["report", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success());
    // Whole, the two 4 MiB names came out twice each.
    assert!(o.stdout.len() < 512 << 10, "{} bytes", o.stdout.len());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("2 name(s) longer than 16.0 KiB cut"),
        "no warning"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let longest = v["top_ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["name"].as_str().unwrap().len())
        .max()
        .unwrap();
    assert_eq!(longest, 16 << 10, "cut names are 16 KiB with their `…`");
    // Names up to the limit (16 KiB − 1 and 16 KiB) are kept whole, and nothing is said.
    let (_dir, path) = long_named((16 << 10) - 1);
    let o = Command::new(BIN).arg("report").arg(&path).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains("cut to their start"));
}

#[test]
fn configuration_reads_are_bounded() {
    let o = limited(r#""$BIN" snapshot --theme /dev/zero"#);
    refused(&o, &["/dev/zero: not a regular file"]);
    let o = limited(r#""$BIN" snapshot --keymap /dev/zero"#);
    refused(&o, &["/dev/zero: not a regular file"]);
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "# x\n".repeat(300_000)).unwrap();
    let o = Command::new(BIN)
        .args(["snapshot", "--theme"])
        .arg(&big)
        .output()
        .unwrap();
    refused(&o, &["big.toml: more than 1.0 MiB"]);
}

#[test]
fn a_watch_stream_without_a_line_ends_saying_so() {
    let o = limited(r#"head -c 8M /dev/zero | "$BIN" watch -"#);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("stdin: no line in 8388608 bytes"), "{err}");
}
