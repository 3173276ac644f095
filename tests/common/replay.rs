//! Replaying logs through `stepscope watch` as a live pipe delivers them.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Pipes `input` into `stepscope watch --jsonl -`; returns the JSON lines (exit must be 0).
pub fn replay(input: &[u8]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--jsonl", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    // Written from another thread, in small pieces, as a live pipe delivers them.
    let writer = std::thread::spawn(move || {
        for piece in data.chunks(4093) {
            if stdin.write_all(piece).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn log(s: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(s.join("traces/logs").join(rel)).unwrap()
}

pub fn of_type<'a>(v: &'a [Value], t: &str) -> Vec<&'a Value> {
    v.iter().filter(|x| x["type"] == t).collect()
}
