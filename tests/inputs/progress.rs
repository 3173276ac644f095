//! Load progress goes to stderr only when it is a terminal, after about a second. The slow
//! load is a pipe that delivers the trace after 1.5 s; `script` gives the process a terminal.

use crate::common;
use common::*;
use std::process::Command;

fn pipeline(bin: &str) -> String {
    let trace = testdata("two_streams.json");
    format!(
        "sh -c 'sleep 1.5; cat {}' | {bin} report - --format json >/dev/null",
        trace.display()
    )
}

#[test]
fn progress_shows_on_a_terminal_and_is_cleared() {
    if Command::new("script").arg("--version").output().is_err() {
        skip("no `script` (util-linux) to give the binary a terminal");
        return;
    }
    let out = Command::new("script")
        .args([
            "-qec",
            &pipeline(env!("CARGO_BIN_EXE_stepscope")),
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("loading: 0/1 files"), "{screen:?}");
    assert!(screen.contains("MB/s"), "{screen:?}");
    // The line is erased when the load ends.
    assert!(screen.contains("\r\x1b[2K"), "{screen:?}");
}

#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let out = Command::new("sh")
        .args(["-c", &pipeline(env!("CARGO_BIN_EXE_stepscope"))])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
