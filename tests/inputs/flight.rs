//! Flight Recorder dumps (issue 45; docs/flight-recorder.md): the fixtures of
//! `testdata/gen_flight.py` — pickles as torch writes them and JSON as
//! `_dump_nccl_trace_json` does — read by `report`, alone or beside traces, with the truths
//! the generator states.

use crate::common;

use common::{report_json, report_leaving_input_unchanged, run, testdata};
use serde_json::{Value, json};

fn group<'a>(r: &'a Value, desc: &str) -> &'a Value {
    r["hang"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["desc"] == desc)
        .unwrap()
}

#[test]
fn a_rank_that_never_entered_the_collective_is_named_first() {
    // hang4 (pickles): rank 2 never entered all_reduce #12 of default_pg; 0, 1 and 3 wait
    // in it; rank 1's send in pp:0 is open.
    let r = report_leaving_input_unchanged(&testdata("flight/hang4"));
    assert_eq!(r["schema"], "stepscope.hang/1");
    assert_eq!(r["hang"]["dumped"], json!([0, 1, 2, 3]));
    let v = &r["hang"]["verdict"];
    assert_eq!(v["kind"], "absent");
    assert_eq!(v["group"], "default_pg");
    let s = &v["stuck"];
    assert_eq!(
        (&s["seq"], &s["op"], &s["absent"], &s["waiting"]),
        (
            &json!(12),
            &json!("nccl:all_reduce"),
            &json!([2]),
            &json!([0, 1, 3])
        )
    );
    assert_eq!(s["timeout_ms"], 600_000);
    let g = group(&r, "default_pg");
    assert_eq!(g["ranks"], json!([0, 1, 2, 3]));
    assert_eq!(g["members"][2]["last_entered"], 11);
    assert_eq!(g["members"][2]["last_completed"], 11);
    let p = &group(&r, "pp:0")["open_p2p"][0];
    assert_eq!(
        (&p["rank"], &p["op"]),
        (&json!(1), &json!("nccl:send 1->0"))
    );
    // The text leads with it.
    let out = run(["report", testdata("flight/hang4").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().find(|l| l.contains("never entered")).unwrap();
    assert!(
        first.contains("rank(s) 2 never entered nccl:all_reduce #12"),
        "{text}"
    );
}

#[test]
fn different_operations_at_one_sequence_number_are_a_desync() {
    // desync3 (JSON): at #5 rank 1 runs all_gather, ranks 0 and 2 all_reduce.
    let r = report_json(&[&testdata("flight/desync3")], &[]);
    let v = &r["hang"]["verdict"];
    assert_eq!(v["kind"], "desync");
    let m = &v["mismatch"];
    assert_eq!(
        (&m["seq"], &m["rank"], &m["op"], &m["expected_op"]),
        (
            &json!(5),
            &json!(1),
            &json!("nccl:all_gather"),
            &json!("nccl:all_reduce")
        )
    );
}

#[test]
fn a_collective_every_member_entered_and_none_completed_is_stalled() {
    // stall3: ranks 0 and 1 wait in broadcast #3; rank 2 of the group wrote no dump.
    let r = report_json(&[&testdata("flight/stall3")], &[]);
    let v = &r["hang"]["verdict"];
    assert_eq!(v["kind"], "stalled");
    assert_eq!(
        (
            &v["stuck"]["seq"],
            &v["stuck"]["no_dump"],
            &v["stuck"]["absent"]
        ),
        (&json!(3), &json!([2]), &json!([]))
    );
    assert_eq!(r["hang"]["missing"], json!([2]));
}

#[test]
fn an_unreadable_dump_is_skipped_and_said_and_a_finished_job_has_no_verdict() {
    // clean2: rank 0 completed everything; rank 1's dump is cut at byte 200.
    let r = report_json(&[&testdata("flight/clean2")], &[]);
    assert_eq!(r["hang"]["verdict"], Value::Null);
    let skipped = r["skipped"][0].as_str().unwrap();
    assert!(
        skipped.ends_with("nccl_trace_rank_1: byte 200: pickle: truncated"),
        "{skipped}"
    );
    // `--fail-on` trips on a hang, not on a finished job.
    let dir = |d: &str| testdata(d).to_str().unwrap().to_string();
    let code = |d: &str| run(["report", &dir(d), "--fail-on", "high"]).status.code();
    assert_eq!(code("flight/clean2"), Some(0));
    assert_eq!(code("flight/hang4"), Some(1));
}

#[test]
fn dumps_beside_traces_add_the_hang_to_the_performance_report() {
    let r = report_json(
        &[&testdata("pageable.json"), &testdata("flight/hang4")],
        &[],
    );
    assert_eq!(r["schema"], "stepscope.report/1");
    assert_eq!(r["job"]["ranks"], 1);
    assert_eq!(r["hang"]["hang"]["verdict"]["kind"], "absent");
    let out = run([
        "report",
        testdata("pageable.json").to_str().unwrap(),
        testdata("flight/hang4").to_str().unwrap(),
        "--format",
        "md",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("never entered"));
}

#[test]
fn two_dumps_of_one_rank_are_two_runs_and_refused() {
    let t = tempfile::tempdir().unwrap();
    for name in ["a_rank_0", "b_rank_0"] {
        std::fs::copy(
            testdata("flight/hang4/nccl_trace_rank_0"),
            t.path().join(name),
        )
        .unwrap();
    }
    let out = run(["report", t.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a second Flight Recorder dump of rank 0"),
        "{err}"
    );
}

#[test]
fn a_pickle_that_calls_code_is_refused_in_one_line() {
    // The recorder's keys, then a call of os.system: never run, refused at its byte.
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("nccl_trace_rank_0");
    let mut bytes = b"\x80\x02}q\x00(X\x09\x00\x00\x00pg_configq\x01".to_vec();
    bytes.extend_from_slice(b"cos\nsystem\nq\x02X\x02\x00\x00\x00lsq\x03\x85q\x04Rq\x05u.");
    std::fs::write(&p, bytes).unwrap();
    let out = run(["report", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("byte 22: pickle: refused: the pickle calls os.system"),
        "{err}"
    );
}

/// The hang screen without a terminal: insta snapshots at 120×40 and 80×24 — the verdict,
/// the groups, default_pg's members (rank 2 never entered #12) — then rank 2's operations
/// (Enter), and the pipeline group (Tab) with its open send.
#[test]
fn the_hang_screen_leads_with_the_absent_rank_and_opens_its_operations() {
    use stepscope::ui::shell::keymap::{Keymap, parse_script};
    use stepscope::ui::shell::snapshot;
    use stepscope::ui::shell::theme::Theme;
    for size in [(120, 40), (80, 24)] {
        let (_, f) = stepscope::session::flight::open(&[testdata("flight/hang4")]).unwrap();
        let mut a = stepscope::ui::hang::headless(
            f.expect("dumps"),
            Keymap::default_map(),
            Theme::builtin("dark"),
            false,
            size,
        );
        let tag = format!("{}x{}", size.0, size.1);
        let keys = |a: &mut stepscope::ui::shell::Shell<_>, s: &str| {
            for k in parse_script(s).unwrap() {
                a.key(k);
            }
        };
        common::snap(&format!("tui_hang_{tag}"), &snapshot::render(&a));
        keys(&mut a, "jj<enter>");
        assert_eq!(a.screen.rank(), Some(2));
        let ops = a.screen.entries();
        assert_eq!((ops.len(), ops[0].seq), (11, 11), "rank 2's last is #11");
        common::snap(&format!("tui_hang_rank2_{tag}"), &snapshot::render(&a));
        keys(&mut a, "<esc><tab>");
        assert!(!a.screen.opened);
        assert_eq!(a.screen.flight.hang.groups[a.screen.group].desc, "pp:0");
        common::snap(&format!("tui_hang_pp_{tag}"), &snapshot::render(&a));
    }
}

#[test]
fn a_command_that_reads_traces_says_what_to_do_with_dumps() {
    let out = run(["whatif", testdata("flight/hang4").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("4 PyTorch Flight Recorder dump(s) and no trace: `stepscope report`"),
        "{err}"
    );
}

/// `watch DIR` on the folder where a hung job's dumps land: nothing while it is empty, then a
/// line each time the triage says something new — rank 0's dump alone is a stall with three
/// ranks undumped; once all four are there, rank 2 never entered the all-reduce. `--once`
/// triages what is there and exits; `--summary` says it in words.
#[test]
fn watch_says_the_verdict_again_as_dumps_land() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("watch.jsonl");
    let dumps = dir.path().join("dumps");
    std::fs::create_dir(&dumps).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", dumps.to_str().unwrap()])
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    let lines = |n: usize| -> Vec<Value> {
        // The watcher polls each second and reads a listing once it held still for a poll.
        for _ in 0..200 {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if text.lines().count() >= n {
                return text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("no {n} lines: {}", std::fs::read_to_string(&out).unwrap());
    };
    let from = testdata("flight/hang4");
    std::fs::copy(
        from.join("nccl_trace_rank_0"),
        dumps.join("nccl_trace_rank_0"),
    )
    .unwrap();
    let first = lines(1);
    assert_eq!(first[0]["type"], "hang");
    assert_eq!(first[0]["verdict"]["kind"], "stalled", "{}", first[0]);
    assert_eq!(first[0]["missing"], json!([1, 2, 3]));
    for r in 1..4 {
        let name = format!("nccl_trace_rank_{r}");
        std::fs::copy(from.join(&name), dumps.join(&name)).unwrap();
    }
    let all = lines(2);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(all[1]["verdict"]["kind"], "absent", "{}", all[1]);
    assert_eq!(all[1]["verdict"]["stuck"]["absent"], json!([2]));
    assert_eq!(all[1]["dumped"], json!([0, 1, 2, 3]));
    let once = run(["watch", "--once", "--summary", dumps.to_str().unwrap()]);
    let text = String::from_utf8(once.stdout).unwrap();
    assert!(
        text.starts_with("4 dump(s): rank(s) 2 never entered nccl:all_reduce #12"),
        "{text}"
    );
}
