//! `stepscope watch` on real logs replayed through a pipe (several files interleaved as ranks
//! with launcher prefixes, injected faults), and on a followed file that grows.

use crate::common;

use common::replay::{
    LAUNCHERS, Launcher, Pace, interleave, log, of_type, replay, replay_paced, watch_file,
};
use common::shared;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

#[test]
fn the_alcf_run_flags_its_two_real_slow_steps_once_each() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
    ));
    let steps: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["format"] == "megatron" && r["kind"] == "step")
        .collect();
    // Iterations 136004–136010, each an average over Megatron's logging window.
    assert_eq!(steps.len(), 7);
    assert_eq!(steps[2]["step"], 136_006);
    assert_eq!(steps[2]["time_ns"], 6_863_200_000_i64);
    assert_eq!(steps[2]["provenance"], "window_average");
    assert!(v.iter().all(|x| x["schema"] == "stepscope.watch/1"));
    // 3415.3 is start-up. The baseline forms over the next five (3420.2, 6863.2, 3402.7,
    // 5334.1, 3394.8): median 3420.2, MAD 25.4 → 3·1.4826·25.4 = 113 ms < the 5% floor
    // (171.01 ms): limit 3591.21 ms. 136006 and 136008 exceed it, apart: two one-offs.
    let alerts = of_type(&v, "alert");
    let got: Vec<(&str, &Value)> = alerts
        .iter()
        .filter(|a| a["rule"] == "slow_steps")
        .map(|a| (a["pattern"].as_str().unwrap(), &a["steps"]))
        .collect();
    assert_eq!(
        got,
        [
            ("one_off", &serde_json::json!([136006])),
            ("one_off", &serde_json::json!([136008]))
        ]
    );
    let slow: Vec<&&Value> = alerts
        .iter()
        .filter(|a| a["rule"] == "slow_steps")
        .collect();
    assert_eq!(slow[0]["max_ns"], 6_863_200_000_i64);
    assert_eq!(slow[0]["median_ns"], 3_420_200_000_i64);
    assert_eq!(slow[0]["threshold_ns"], 3_591_210_000_i64);
}

#[test]
fn ranks_come_from_launcher_prefixes_and_straggler_reports_name_ranks() {
    let Some(s) = shared() else { return };
    // Two torchtitan files interleaved as ranks 0 and 1 through torchrun's prefix.
    let a = log(&s, "torchtitan/pr3393_grad_norm_lines.log");
    let b = log(&s, "megatron-lm/issue756_mixtral_h100_iteration_lines.log");
    let mut mixed = Vec::new();
    let (la, lb): (Vec<&[u8]>, Vec<&[u8]>) = (
        a.split(|&c| c == b'\n').collect(),
        b.split(|&c| c == b'\n').collect(),
    );
    for k in 0..la.len().max(lb.len()) {
        for (r, l) in [(0, la.get(k)), (1, lb.get(k))] {
            if let Some(l) = l.filter(|l| !l.is_empty()) {
                mixed.extend_from_slice(format!("[rank{r}]:").as_bytes());
                mixed.extend_from_slice(l);
                mixed.push(b'\n');
            }
        }
    }
    let v = replay(&mixed);
    let recs = of_type(&v, "record");
    let by = |r: i64, f: &str| {
        recs.iter()
            .filter(|x| x["rank"] == r && x["format"] == f)
            .count()
    };
    assert_eq!(by(1, "megatron"), 6);
    assert!(by(0, "torchtitan") >= 7, "{}", by(0, "torchtitan"));
    // The savanna straggler line: Rtt 1446.49 ms (rank 13) vs 1570.32 ms (rank 30), 8.6% apart.
    let v = replay(&log(&s, "megatron-lm/savanna_hsd_straggler_line.log"));
    let alert = of_type(&v, "alert")[0];
    assert_eq!(
        (&alert["rule"], &alert["ranks"]),
        (&"slow_rank".into(), &serde_json::json!([30]))
    );
}

#[test]
fn every_shared_log_replays_without_error() {
    let Some(s) = shared() else { return };
    for dir in std::fs::read_dir(s.join("traces/logs")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let bytes = std::fs::read(&f).unwrap();
            if f.extension().is_some_and(|e| e == "gz") {
                continue;
            }
            let v = replay(&bytes);
            assert!(
                v.iter().all(|x| x["schema"] == "stepscope.watch/1"),
                "{}",
                f.display()
            );
        }
    }
}

#[test]
fn garbage_long_lines_and_partial_lines_lose_nothing_parseable() {
    let good = b" iteration       10/     100 | elapsed time per iteration (ms): 100.0 | lm loss: 1.0E+00 |";
    let mut input = Vec::new();
    input.extend_from_slice(b"\xff\xfe\x00garbage\x1b[31m\n");
    input.extend(std::iter::repeat_n(b'x', 1 << 20));
    input.push(b'\n');
    input.extend_from_slice(good);
    input.push(b'\n');
    for i in 0..100_000 {
        input.extend_from_slice(format!("noise line {i}\n").as_bytes());
    }
    // The last line has no newline: it still counts.
    input.extend_from_slice(&good[..]);
    let v = replay(&input);
    assert_eq!(of_type(&v, "record").len(), 2);
    // An empty stream: nothing, exit 0.
    assert!(replay(b"").is_empty());
}

#[test]
fn a_followed_file_yields_lines_written_after_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.log");
    std::fs::write(
        &path,
        b" iteration 1/9 | elapsed time per iteration (ms): 1.0 |\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--jsonl"])
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b" iteration 2/9 | elapsed time per iteration (ms): 2.0 |\n")
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    // Only the line written after the start (tail -F semantics); nothing is written into the
    // watched directory.
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["step"], 2);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_source_that_goes_quiet_is_called_silent_once_with_its_last_line() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--jsonl", "--silence", "0.5", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 1..=3 {
        writeln!(
            stdin,
            "[rank2]: iteration {i}/9 | elapsed time per iteration (ms): 10.0 |"
        )
        .unwrap();
    }
    stdin.flush().unwrap();
    // Quiet for 2 s with the pipe still open: one alert (not one per tick).
    std::thread::sleep(std::time::Duration::from_millis(2000));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let v: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let silent: Vec<&Value> = v.iter().filter(|x| x["rule"] == "silent").collect();
    assert_eq!(silent.len(), 1, "{v:?}");
    assert_eq!(silent[0]["pattern"], "silent");
    assert_eq!(silent[0]["source"], "stdin");
    assert_eq!(silent[0]["ranks"], serde_json::json!([2]));
    assert_eq!(silent[0]["ended"], false);
    assert!(
        silent[0]["last_line"]
            .as_str()
            .unwrap()
            .contains("iteration 3/9")
    );
}

#[test]
fn files_of_ranks_without_prefixes_take_their_rank_from_the_name_and_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "watch".to_string(),
        "--once".into(),
        "--from-start".into(),
        "--jsonl".into(),
    ];
    for r in 0..2 {
        let p = dir.path().join(format!("rank{r}.log"));
        let lines: String = (1..=8)
            .map(|i| format!(" iteration {i}/9 | elapsed time per iteration (ms): 100.0 |\n"))
            .collect();
        std::fs::write(&p, lines).unwrap();
        args.push(p.display().to_string());
    }
    let out = common::run(&args);
    assert!(out.status.success());
    let v: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The same text in two files is two ranks' lines, not a duplicate and not a restart.
    let recs = of_type(&v, "record");
    for r in 0..2 {
        assert_eq!(recs.iter().filter(|x| x["rank"] == r).count(), 8);
    }
    assert!(of_type(&v, "alert").is_empty(), "{v:?}");
}

#[test]
fn a_closed_output_pipe_ends_the_watch_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("train.log");
    let lines: String = (1..=50_000)
        .map(|i| format!(" iteration {i}/99999 | elapsed time per iteration (ms): 100.0 |\n"))
        .collect();
    std::fs::write(&p, lines).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--once", "--from-start", "--jsonl"])
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader (like `| head -1`) is gone now.
    let out = child.wait_with_output().unwrap();
    assert!(first.contains("stepscope.watch/1"));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_summary_gives_the_pace_and_goodput_of_the_alcf_run() {
    let Some(s) = shared() else { return };
    let log = s.join("traces/logs/megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log");
    let out = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--summary", "--once", "--from-start"])
        .arg(&log)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // Judged steps 136005–136010 (136004 is start-up): 3420.2 + 6863.2 + 3402.7 + 5334.1 +
    // 3394.8 + 3401.5 = 25 816.5 ms. Lost against the 3420.2 ms median the two slow steps
    // were judged by: 3443.0 + 1913.9 = 5 356.9 ms = 20.75%, no event near: goodput 79.25%.
    assert!(
        text.contains("goodput 79.3% of step time (lost 0.0% to slow steps near events, 20.7% to other slow steps)"),
        "{text}"
    );
    // Throughput as printed on the last iteration line, and the plain note on ranks.
    assert!(
        text.contains("last printed samples_per_s 1806.288"),
        "{text}"
    );
    assert!(text.contains("which rank is slow cannot be told"), "{text}");
}

#[test]
fn megatron_timer_blocks_are_recognised_with_min_and_max() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
    ));
    let timers: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "timer")
        .collect();
    // The first `(min, max) time across ranks (ms):` block (line 72 of the file).
    assert_eq!(timers[0]["name"], "forward-backward");
    assert_eq!(timers[0]["min_ns"], 3_198_270_000_i64);
    assert_eq!(timers[0]["max_ns"], 3_199_530_000_i64);
    assert_eq!(timers[1]["name"], "optimizer");
    assert_eq!(timers[1]["max_ns"], 166_360_000);
    assert!(timers.iter().all(|t| t["format"] == "monitor"));
}

#[test]
fn a_slow_step_names_the_timed_phase_its_time_went_to() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
    ));
    // Iteration 136006 took 6863.2 ms: Megatron's forward-backward timer says 6640.87 ms
    // (slowest rank) against about 3.2 s in the other blocks, while DeepSpeed's own fwd/bwd
    // stayed at ~0.7 / 2.35 s — the time went inside forward-backward, outside fwd/bwd.
    let alerts = of_type(&v, "alert");
    let slow: Vec<&&Value> = alerts
        .iter()
        .filter(|a| a["rule"] == "slow_steps")
        .collect();
    let phases = &slow[0]["phases"];
    assert_eq!(phases.as_array().unwrap().len(), 1, "{phases}");
    assert_eq!(phases[0]["name"], "forward-backward");
    assert_eq!(phases[0]["ns"], 6_640_870_000_i64);
    let median = phases[0]["median_ns"].as_i64().unwrap();
    assert!(
        (3_193_070_000..=3_200_270_000).contains(&median),
        "{median}"
    );
    // DeepSpeed's wall-clock breakdown lines are phases, exact.
    let first = of_type(&v, "record")
        .into_iter()
        .find(|r| r["kind"] == "phases")
        .unwrap();
    assert_eq!(first["phases"][0]["name"], "fwd_microstep");
    assert_eq!(first["phases"][0]["ns"], 715_450_000);
}

#[test]
fn a_minmax_spread_says_ranks_differ_and_that_the_layout_cannot_say_which() {
    // Default `minmax` timers: batch-generator 0.5–420 ms against a ~3.2 s forward-backward
    // (13%): told once, chronic at the third block; forward-backward itself 0.1% apart.
    let mut text = String::new();
    for it in 1..=4 {
        text.push_str(&format!(
            " iteration {it:8}/ 100 | elapsed time per iteration (ms): 3200.0 |\n(min, max) time across ranks (ms):\n    forward-backward ...............................: (3198.27, 3201.53)\n    batch-generator ................................: (0.50, 420.00)\n"
        ));
    }
    let out = summary_of(text.as_bytes(), &[]);
    let spreads: Vec<&str> = out.lines().filter(|l| l.contains("rank_spread")).collect();
    assert_eq!(spreads.len(), 2, "{out}");
    assert!(
        spreads[0].contains(
            "batch-generator takes 500.0 µs on the fastest rank, 420.0 ms on the slowest"
        ),
        "{out}"
    );
    assert!(spreads[1].contains("chronic"), "{out}");
    assert!(out.contains("minmax timers do not say"), "{out}");
    let v = replay(text.as_bytes());
    let a = of_type(&v, "alert")[0];
    assert_eq!(
        (&a["rule"], &a["pattern"], &a["timer"]),
        (
            &"rank_spread".into(),
            &"spread".into(),
            &"batch-generator".into()
        )
    );
    assert_eq!(
        (&a["min_ns"], &a["spread_max_ns"]),
        (&500_000.into(), &420_000_000.into())
    );
}

#[test]
fn per_rank_timer_blocks_name_the_slow_rank() {
    // `--timing-log-option all`: three blocks of 4 ranks; rank 3's forward-backward is 8%
    // slower in every block (1080 vs 1000 ms > 5%): named once, then chronic at the third.
    let mut text = String::new();
    for it in [10, 20, 30] {
        text.push_str(&format!(
            " iteration {it:8}/ 100 | elapsed time per iteration (ms): 1080.0 |\ntimes across ranks (ms):\n  forward-backward:\n"
        ));
        for (r, ms) in [
            (0, "1000.00"),
            (1, "1001.50"),
            (2, "999.80"),
            (3, "1080.00"),
        ] {
            text.push_str(&format!("     rank {r:2}: {ms}\n"));
        }
    }
    let v = replay(text.as_bytes());
    let slow: Vec<(&str, &Value)> = of_type(&v, "alert")
        .iter()
        .filter(|a| a["rule"] == "slow_rank")
        .map(|a| (a["pattern"].as_str().unwrap(), &a["ranks"]))
        .collect();
    assert_eq!(
        slow,
        [
            ("one_off", &serde_json::json!([3])),
            ("burst", &serde_json::json!([3]))
        ]
    );
}

#[test]
fn a_silent_file_is_called_silent_while_another_source_keeps_printing() {
    // stdin prints a line every 100 ms (the read loop never waits a whole tick), while a
    // followed file prints nothing: the watchdog must still call the file silent.
    let dir = tempfile::tempdir().unwrap();
    let quiet = dir.path().join("rank5.log");
    std::fs::write(&quiet, "").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--jsonl", "--silence", "0.5", "-"])
        .arg(&quiet)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 1..=25 {
        writeln!(
            stdin,
            "[rank0]: iteration {i}/99 | elapsed time per iteration (ms): 100.0 |"
        )
        .unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The file is followed forever: stop the watch and read what it wrote.
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let silent: Vec<&Value> = v.iter().filter(|x| x["rule"] == "silent").collect();
    assert_eq!(silent.len(), 1, "{v:?}");
    assert!(silent[0]["source"].as_str().unwrap().ends_with("rank5.log"));
}

/// The records of a replay.
fn records(v: &[Value]) -> Vec<Value> {
    of_type(v, "record").into_iter().cloned().collect()
}

/// `got` is `want`, or the first difference is named.
fn same(got: &[Value], want: &[Value], what: &str) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        first.is_none() && got.len() == want.len(),
        "{what}: {} records for {}; first difference at {first:?}: {:?} vs {:?}",
        got.len(),
        want.len(),
        first.map(|i| &got[i]),
        first.map(|i| &want[i]),
    );
}

#[test]
fn every_launchers_prefix_gives_the_ranks_and_lines_cut_in_two_are_rejoined_exactly() {
    let Some(s) = shared() else { return };
    let a = log(&s, "megatron-lm/issue756_mixtral_h100_iteration_lines.log");
    let b = log(&s, "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log");
    let whole = records(&replay(&interleave(&[&a, &b], Launcher::Srun, None)));
    let steps = |rank: i64| {
        whole
            .iter()
            .filter(|r| r["rank"] == rank && r["format"] == "megatron" && r["kind"] == "step")
            .count()
    };
    assert_eq!((steps(0), steps(1)), (6, 7));
    for launcher in LAUNCHERS {
        let v = records(&replay(&interleave(&[&a, &b], launcher, None)));
        same(&v, &whole, &format!("{launcher:?}"));
    }
    // Every line of both ranks cut in two, the other rank's half between: the same records,
    // to the nanosecond (a cut `elapsed time per iteration (ms): 34` is never read as 34 ms).
    for launcher in [Launcher::Torchrun, Launcher::Srun] {
        let cut = records(&replay(&interleave(&[&a, &b], launcher, Some(1))));
        same(&cut, &whole, &format!("{launcher:?}, cut"));
    }
}

#[test]
fn a_replay_at_a_slow_line_rate_gives_the_records_of_a_fast_one() {
    let Some(s) = shared() else { return };
    let a = log(&s, "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log");
    let head: Vec<u8> = a
        .split_inclusive(|&c| c == b'\n')
        .skip(60)
        .take(70)
        .flatten()
        .copied()
        .collect();
    let slow = replay_paced(
        &head,
        Pace {
            lines_per_s: Some(300),
            ..Pace::default()
        },
    );
    same(&records(&slow), &records(&replay(&head)), "paced");
    assert!(!records(&slow).is_empty());
}

/// `stepscope watch --summary` with `args` over `input` on stdin: the summary.
fn summary_of(input: &[u8], args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--summary"])
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mfu_is_derived_from_flags_and_never_over_the_framework_s_own() {
    let Some(s) = shared() else { return };
    let alcf = log(&s, "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log");
    // The last printed TFLOPs=53.88 over a 200 TFLOP/s peak: 26.94%.
    let out = summary_of(&alcf, &["--peak-tflops", "200"]);
    assert!(
        out.contains("MFU 26.9% derived (53.9 TFLOP/s per device from the printed TFLOP/s, of a 200 TFLOP/s peak)"),
        "{out}"
    );
    // Without a peak: nothing derived.
    assert!(!summary_of(&alcf, &[]).contains("MFU"));
    // torchtitan prints its own mfu: shown as printed, not derived.
    let titan = log(&s, "torchtitan/pr3393_grad_norm_lines.log");
    let out = summary_of(&titan, &["--peak-tflops", "989", "--model-params", "8e9"]);
    assert!(!out.contains("derived"), "{out}");
    // Bad flags are usage errors (exit 2).
    let st = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--summary", "--peak-tflops", "-1", "-"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
}

#[test]
fn slow_ranks_are_grouped_by_node_when_ranks_per_node_is_given() {
    // Two straggler reports name ranks 13 and 14 slowest (Rtt 7% and 8% over the fastest):
    // with 8 ranks a node, both sit on node 1.
    let text = "INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3700.00ms/13 |\n\
                INFO:megatron.core.utils:[2024-03-14 23:08:56] | MnRtt/Rnk: 3453.08ms/2 | MxRtt/Rnk: 3730.00ms/14 |\n";
    let out = summary_of(text.as_bytes(), &["--ranks-per-node", "8"]);
    assert!(
        out.contains("slow ranks by node: node 1: ranks 13,14"),
        "{out}"
    );
    assert!(out.contains("slow_rank rank 13 (node 1)"), "{out}");
    let out = summary_of(text.as_bytes(), &[]);
    assert!(!out.contains("node"), "{out}");
}

#[test]
fn deepspeed_s_comms_table_shows_the_collectives_that_wait() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
    ));
    let rows: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "comm")
        .collect();
    // 6 broadcast + 9 all_reduce + 2 all_gather + 1 + 1 barrier rows (lines 141–163).
    assert_eq!(rows.len(), 19);
    // `874.0 MB 1650 -259904.95 246.25`: the negative printed total is 1650 × 246.25 ms.
    let big = rows.iter().find(|r| r["bytes"] == 916_455_424).unwrap();
    assert_eq!(big["total_ns"], 406_312_500_000_i64);
    // all_reduce 100 KB: 26.15 ms a call, 82% of 45.6 MB's 31.96 ms, 1650 calls = 43.1475 s;
    // all_gather 36 B: 37.49 ms, 39% of 1.23 MB's 95.50 ms, 61.8585 s. Nothing else.
    let waits: Vec<(&Value, &Value, &Value)> = of_type(&v, "alert")
        .iter()
        .filter(|a| a["rule"] == "comm_wait")
        .map(|a| (&a["op"], &a["bytes"], &a["total_ns"]))
        .collect();
    assert_eq!(
        waits,
        [
            (
                &"all_reduce".into(),
                &102_400.into(),
                &43_147_500_000_i64.into()
            ),
            (
                &"all_gather_into_tensor".into(),
                &36.into(),
                &61_858_500_000_i64.into()
            )
        ]
    );
}

#[test]
fn once_without_from_start_says_it_read_nothing_of_the_file() {
    let log = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch/rank0.log");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stepscope"))
            .args(["watch", "--once", "--summary"])
            .args(args)
            .arg(&log)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rank0.log: nothing read: without --from-start"),
        "{err}"
    );
    // With --from-start the file is read and nothing is said.
    let out = run(&["--from-start"]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("recognised")
    );
}

#[test]
fn a_step_pattern_makes_the_steps_and_the_recognisers_keep_their_events() {
    // Two workers of a plain script interleaved without launcher prefixes, 40 steps each;
    // worker 1's step 30 takes 1 750 ms against ~352 ms; a checkpoint after step 20.
    let log =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch/custom_loop.log");
    let pattern = r"^\[worker (?P<rank>\d+)\] it (?P<step>\d+) \| (?P<time_ms>[\d.]+) ms";
    let v = watch_file(&["--step-pattern", pattern], &log);
    let records = of_type(&v, "record");
    let steps: Vec<&&Value> = records.iter().filter(|r| r["kind"] == "step").collect();
    assert_eq!(steps.len(), 80);
    assert!(steps.iter().all(|r| r["format"] == "step-pattern"));
    assert_eq!(
        (steps[1]["rank"].as_i64(), steps[1]["step"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(steps[1]["time_ns"], 352_500_000);
    // The events recogniser still reads the checkpoint line.
    assert!(records.iter().any(|r| r["event"] == "checkpoint"));
    let alerts = of_type(&v, "alert");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (&alerts[0]["ranks"], &alerts[0]["steps"]),
        (&json!([1]), &json!([30]))
    );
    // Without the pattern the generic recogniser learns the line, its `worker` slot as the
    // rank: the same alert; the 2 lines of worker 1 before worker 0's third are not read.
    let v = watch_file(&[], &log);
    let generic: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "step")
        .collect();
    assert_eq!(generic.len(), 78);
    assert!(generic.iter().all(|r| r["format"] == "generic"));
    let alerts = of_type(&v, "alert");
    assert_eq!(
        (&alerts[0]["ranks"], &alerts[0]["steps"]),
        (&json!([1]), &json!([30]))
    );
}

#[test]
fn a_bad_step_pattern_is_a_usage_error_of_one_line() {
    for (pattern, says) in [
        ("(", "unclosed group"),
        (r"(?P<steps>\d+)", "unknown group `steps`"),
        (r"rank (?P<rank>\d+)", "needs a named group"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stepscope"))
            .args(["watch", "--once", "--step-pattern", pattern, "-"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: --step-pattern: ") && err.contains(says),
            "{err}"
        );
    }
}

#[test]
fn a_deepspeed_chat_step3_record_of_four_lines_is_one_step_and_its_phases() {
    // testdata/watch/dschat_step3.log: 40 PPO steps, each a PPO line, an `End-to-End`, a
    // `Generation` and a `Training` line (as main.py and utils/perf.py print them); step 25's
    // generation takes 39.8 s against ~9.82 s.
    let log = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/watch/dschat_step3.log");
    let v = watch_file(&[], &log);
    let steps: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "step")
        .collect();
    assert_eq!(steps.len(), 40);
    assert!(steps.iter().enumerate().all(|(i, r)| r["step"] == i as u64));
    assert_eq!(steps[25]["time_ns"], 63_530_000_000i64);
    let alerts = of_type(&v, "alert");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0]["steps"], json!([25]));
    assert_eq!(alerts[0]["phases"][0]["name"], "generation");
    assert_eq!(alerts[0]["phases"][0]["ns"], 39_800_000_000i64);
}

/// A deterministic generator for the synthetic runs below (no rand crate needed).
struct Lcg(u64);

impl Lcg {
    /// A number in `lo..=hi`.
    fn within(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (self.0 >> 33) % (hi - lo + 1)
    }
}

#[test]
fn every_tenth_step_slow_and_a_jittered_blip_are_two_patterns_and_bursts_every_900_one() {
    // The issue's run: 6 000 modded-nanoGPT steps of ~100 ms (cumulative `train_time`), every
    // 10th 5× slower, a data-shard blip of +250 ms every 180–200 steps from step 150.
    let mut rng = Lcg(7);
    let mut blips = std::collections::BTreeSet::new();
    let mut at = 150;
    while at < 6_000 {
        blips.insert(at);
        at += rng.within(180, 200);
    }
    let (mut t, mut text) = (0u64, String::new());
    for i in 1..=6_000u64 {
        let mut dt = 97_000 + rng.within(0, 6_000); // µs
        if i % 10 == 0 {
            dt *= 5;
        }
        if blips.contains(&i) {
            dt += 250_000;
        }
        t += dt;
        text.push_str(&format!(
            "step:{i}/6000 train_time:{}ms step_avg:1.00ms\n",
            t / 1000
        ));
    }
    let summary = summary_of(text.as_bytes(), &[]);
    let slow: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("slow_steps"))
        .collect();
    // One pattern every 10 steps, one every ~190, and at most a few blips that landed where
    // the pattern lost them (on stall steps): not hundreds of alerts, not none.
    assert!(
        slow.iter().any(|l| l.contains("(every 10 steps)")),
        "{summary}"
    );
    let blip = slow
        .iter()
        .find(|l| l.contains("every 1") && !l.contains("every 10 "))
        .unwrap_or_else(|| panic!("{summary}"));
    let period: u64 = blip
        .split("every ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((180..=200).contains(&period), "{summary}");
    assert!(slow.len() <= 4, "{summary}");
    // 20 000 steps of ~200 ms with bursts of 2–4 steps at 3× every 860–940 steps.
    let mut rng = Lcg(11);
    let mut bursts = std::collections::BTreeSet::new();
    let mut at = 700;
    while at < 20_000 {
        for k in 0..rng.within(2, 4) {
            bursts.insert(at + k);
        }
        at += rng.within(860, 940);
    }
    let mut text = String::new();
    for i in 1..=20_000u64 {
        let mut dt = 194_000 + rng.within(0, 12_000);
        if bursts.contains(&i) {
            dt *= 3;
        }
        text.push_str(&format!(
            "iter {i}: loss 3.0, time {}.{:03}ms, mfu 35.00%\n",
            dt / 1000,
            dt % 1000
        ));
    }
    let summary = summary_of(text.as_bytes(), &[]);
    let slow: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("slow_steps"))
        .collect();
    assert!(slow.len() <= 2, "{summary}");
    let period: u64 = slow[0]
        .split("every ")
        .nth(1)
        .unwrap_or_else(|| panic!("{summary}"))
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((860..=940).contains(&period), "{summary}");
}
