//! The command line: complete `--help`, and the text/markdown reports as snapshots.

use crate::common;
use common::*;

fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_lists_every_command_and_option() {
    let top = stdout(&["--help"]);
    for want in [
        "report",
        "demo",
        "--threads",
        "--align",
        "--ranks-per-node",
        "--intra-link",
        "--inter-link",
        "[PATH]...",
        "Exit codes",
        "stdin",
    ] {
        assert!(top.contains(want), "top-level help lacks {want}:\n{top}");
    }
    let report = stdout(&["report", "--help"]);
    for want in [
        "--format",
        "text",
        "json",
        "md",
        "--step",
        "--rank",
        "--threads",
    ] {
        assert!(report.contains(want), "report help lacks {want}:\n{report}");
    }
    let demo = stdout(&["demo", "--help"]);
    for want in [
        "--out",
        "--ranks",
        "--steps",
        "--scale",
        "--split-buckets",
        "--plain",
    ] {
        assert!(demo.contains(want), "demo help lacks {want}:\n{demo}");
    }
    assert!(stdout(&["--version"]).starts_with("stepscope "));
}

#[test]
fn threads_option_before_a_subcommand() {
    let r: serde_json::Value =
        serde_json::from_str(&stdout(&["--threads", "1", "report", "--format", "json"])).unwrap();
    assert_eq!(r["job"]["ranks"], 8);
}

/// Report text without the timings line (the one part allowed to vary).
fn without_timings(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("timings:") && !l.starts_with("_timings:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn text_report_snapshots() {
    let path = testdata("two_streams.json");
    let p = path.to_str().unwrap();
    let fixture = stdout(&["report", p]).replace(p, "testdata/two_streams.json");
    snapshot("report_text_two_streams", &without_timings(&fixture));
    snapshot("report_text_demo", &without_timings(&stdout(&["report"])));
    snapshot(
        "report_md_demo",
        &without_timings(&stdout(&["report", "--format", "md"])),
    );
    snapshot(
        "report_text_demo_rank3",
        &without_timings(&stdout(&["report", "--rank", "3"])),
    );
}

#[test]
fn every_text_line_fits_100_columns_and_cut_names_follow_whole() {
    for args in [vec!["report"], vec!["report", "--step", "13"]] {
        let s = stdout(&args);
        for l in s.lines() {
            // A name a table cut is written whole on its own line, however long.
            if l.trim_start().starts_with('↳') {
                continue;
            }
            assert!(
                l.chars().count() <= 100,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        // The top operators keep every column and their full names.
        let full =
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
        assert!(s.contains(&format!("↳ {full}")), "{s}");
        let top = s
            .lines()
            .find(|l| l.contains("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…)"))
            .unwrap();
        assert!(top.trim_end().ends_with('%'), "{top}");
    }
}

/// Every pane of the fixtures with hostile or long names draws at the small size too: the
/// timeline's inspector once subtracted a cut name's string width from the columns its
/// characters' widths had left, and a name of control characters overflowed it (a panic in
/// debug builds, a wrapped count in release ones).
#[test]
fn every_pane_draws_hostile_names_at_every_size() {
    for f in ["escape_names.json", "roofline.json"] {
        let path = testdata(f);
        let path = path.to_str().unwrap();
        for view in stepscope::ui::browser::Pane::ALL.map(|p| p.name()) {
            for size in ["80x24", "120x40", "40x12"] {
                let out = stdout(&["snapshot", "--view", view, "--size", size, path]);
                assert!(
                    !out.contains(['\u{1b}', '\u{9b}', '\u{7}']),
                    "{f} {view} {size}: a control character got through"
                );
            }
        }
    }
}

/// Trace content is untrusted: names carrying terminal escape sequences (ESC, C1 CSI, BEL)
/// reach the text and markdown reports with those characters written as visible escapes.
#[test]
fn escape_sequences_in_names_never_reach_the_terminal() {
    let path = testdata("escape_names.json");
    let path = path.to_str().unwrap();
    for format in ["text", "md"] {
        let out = stdout(&["report", "--format", format, path]);
        assert!(
            !out.contains(['\u{1b}', '\u{9b}', '\u{7}']),
            "{format}: a control character got through"
        );
        assert!(
            out.contains(r"evil\x1b[2J\x9b31mker\u{202e}nel"),
            "{format}:\n{out}"
        );
        // Bidi overrides (a name that would print reversed) are escaped too.
        assert!(!out.contains(['\u{202e}', '\u{2066}']), "{format}");
    }
    // JSON keeps the name, escaped as JSON escapes control characters.
    let json = stdout(&["report", "--format", "json", path]);
    assert!(json.contains(r"evil\u001b[2J"), "{json}");
}
