//! `stepscope watch` on whole real training runs (`../shared/traces/logs`): the records a
//! careful reader counts in each file, the step times from the best evidence the lines give,
//! and the patterns in the slow steps — one alert per pattern, derived by hand from the files.

use crate::common;

use common::replay::{log, of_type, replay, watch_file};
use common::shared;
use serde_json::Value;

/// The slow-step alerts as (pattern, first step, last step).
fn slow_steps(v: &[Value]) -> Vec<(String, u64, u64)> {
    of_type(v, "alert")
        .into_iter()
        .filter(|a| a["rule"] == "slow_steps")
        .map(|a| {
            let steps = a["steps"].as_array().unwrap();
            let pattern = match a["pattern"].as_str().unwrap() {
                "periodic" => format!("periodic {}", a["period"]),
                p => p.to_string(),
            };
            (
                pattern,
                steps[0].as_u64().unwrap(),
                steps[steps.len() - 1].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Records of `kind` (and `event`, for events).
fn count(v: &[Value], kind: &str, event: Option<&str>) -> usize {
    of_type(v, "record")
        .into_iter()
        .filter(|r| r["kind"] == kind && event.is_none_or(|e| r["event"] == e))
        .count()
}

#[test]
fn modded_nanogpt_step_times_are_the_deltas_of_train_time_and_its_schedule_is_three_regimes() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "modded-nanogpt/track2_medium_4740steps_batch_schedule.log",
    ));
    // `step:N/4740 train_time:…` for N = 1..4740 (the echoed source's f-strings are not
    // lines that start with `step:`), and `step:N/4740 val_loss:…` at 0, 250, …, 4750 → 4740:
    // 20 evaluations.
    assert_eq!(count(&v, "step", None), 4740);
    assert_eq!(count(&v, "event", Some("eval")), 20);
    let first = of_type(&v, "record")
        .into_iter()
        .find(|r| r["kind"] == "step")
        .unwrap()
        .clone();
    assert_eq!(first["provenance"], "running_average");
    // `step:1/4740 train_time:90ms step_avg:89.94ms`.
    assert_eq!(first["cumulative_ns"], 90_000_000);
    assert_eq!(first["time_ns"], 89_940_000);
    // The deltas of train_time alternate (85/58 ms, even/odd steps) and step up at three
    // batch-schedule boundaries: the first step at the new level is 394 (157 ms, then 99,
    // 159 …), 786 (236, 142 …) and 1178 (315, 177 …). Each is one regime change over the 16
    // steps where the level moved; the alternation itself is the run's shape, never slow.
    let got = slow_steps(&v);
    assert_eq!(got.len(), 3, "{got:?}");
    for ((pattern, a, z), boundary) in got.iter().zip([394, 786, 1178]) {
        assert_eq!(pattern, "regime_change");
        assert!(*a <= boundary && boundary <= *z, "{a}..{z} vs {boundary}");
    }
}

#[test]
fn modded_nanogpt_short_track_slows_after_each_evaluation_and_twice_for_good() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "modded-nanogpt/track1_fp8down_baseline_1390steps.log",
    ));
    assert_eq!(count(&v, "step", None), 1390);
    assert_eq!(count(&v, "event", Some("eval")), 7);
    // The step after each validation (every 250 steps) takes 1.3–1.8× (251: 8118 − 8061 = 57
    // ms against ~32): a one-off at 251 and 501, periodic from 751 on; the step time rises for
    // good at 462 (32 → 58 ms) and 922 (58 → 84 ms).
    let got = slow_steps(&v);
    let want: Vec<(String, u64, u64)> = [
        ("one_off", 251, 251),
        ("regime_change", 462, 469),
        ("one_off", 501, 501),
        ("periodic 250", 751, 751),
        ("regime_change", 922, 929),
    ]
    .iter()
    .map(|(p, a, z)| (p.to_string(), *a, *z))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn pythia_stalls_every_128_iterations_one_pattern() {
    let Some(s) = shared() else { return };
    let v = replay(&log(&s, "gpt-neox/pythia70m_512step_slurm.out"));
    assert_eq!(count(&v, "step", None), 512);
    // Iterations 129, 257 and 385 take ~14 s against ~0.6–0.8 s (forward +5 s): the third is
    // the period of 128 (the 2 s stall at iteration 2, 127 steps before 129, is no episode
    // of it: 7× smaller). Between them, 298–305 is the step time rising for good (0.6 →
    // 0.8 s) and 323, 352, 469 are ~1 s one-offs.
    let got = slow_steps(&v);
    let periodic: Vec<_> = got.iter().filter(|g| g.0.starts_with("periodic")).collect();
    assert_eq!(
        periodic,
        [&("periodic 128".to_string(), 385, 385)],
        "{got:?}"
    );
    assert_eq!(got.len(), 8, "{got:?}");
}

#[test]
fn maskrcnn_blips_every_1200_to_1250_iterations_are_one_pattern() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "maskrcnn-benchmark/mlperf_v3.0_azure_maskrcnn_8xh100.log",
    ));
    // Logged every 50 iterations; the blips start at 1250, 2450, 3700, 4900, … (gaps of 1200
    // and 1250): two bursts, then one periodic pattern (the mean gap) that covers the other
    // eleven; the summary folds the two bursts into it.
    let got = slow_steps(&v);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[2].0, "periodic 1225");
    let summary = watch_file_summary(
        &s,
        "maskrcnn-benchmark/mlperf_v3.0_azure_maskrcnn_8xh100.log",
    );
    let slow: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("slow_steps"))
        .collect();
    assert_eq!(slow.len(), 1, "{summary}");
    assert!(
        slow[0].contains("(every 1225 steps): steps 1250,1300,1350,2450,"),
        "{summary}"
    );
}

#[test]
fn deepspeed_chat_reads_every_micro_batch_and_a_steady_run_raises_nothing() {
    let Some(s) = shared() else { return };
    let v = replay(&log(&s, "deepspeed/dschat_step2_dpo_opt350m_2025.log"));
    let of = |format: &str| {
        of_type(&v, "record")
            .into_iter()
            .filter(|r| r["kind"] == "step" && r["format"] == format)
            .count()
    };
    // 2,354 optimizer steps × 2 micro-batches: 4,708 `Model Parameters: … Latency: …` lines
    // (per-step figures), and DeepSpeed's timer line every 10 global steps: 235.
    assert_eq!(of("deepspeed-chat"), 4708);
    assert_eq!(of("deepspeed"), 235);
    // 20 `Overflow detected. Skipping step` (rank 0; each rank's `Grad overflow` repeats
    // it), reward evaluation before and after the epoch.
    assert_eq!(count(&v, "event", Some("skipped")), 20);
    assert_eq!(count(&v, "event", Some("eval")), 2);
    // Latencies alternate ~0.14 / ~0.54 s (gradient accumulation 2): the run's shape. A steady
    // run: no slow steps.
    assert_eq!(slow_steps(&v), []);
}

#[test]
fn pdsh_hosts_interleaved_are_series_of_their_own() {
    use common::replay::{Launcher, interleave};
    let Some(s) = shared() else { return };
    let one = log(&s, "nanogpt/pr541_gpt2_124m_8xa100_resume.log");
    let alone = slow_steps(&replay(&one));
    // Eight hosts printing the same run line by line under `worker-N: `: each host is its own
    // series with the alerts the run has alone (each naming its host), none from the steps
    // of one host following another's.
    let v = replay(&interleave(&[&one[..]; 8], Launcher::Pdsh, None));
    let alerts: Vec<&Value> = of_type(&v, "alert")
        .into_iter()
        .filter(|a| a["rule"] == "slow_steps")
        .collect();
    assert_eq!(alerts.len(), 8 * alone.len(), "{alerts:?}");
    for h in 0..8 {
        let host = format!("worker-{h}");
        let mine = alerts
            .iter()
            .filter(|a| a["hosts"][0] == host.as_str())
            .count();
        assert_eq!(mine, alone.len(), "{host}");
    }
    assert_eq!(
        count(&v, "step", None),
        8 * count(&replay(&one), "step", None)
    );
}

#[test]
fn query_gpu_csv_of_a_script_finds_the_hot_gpu_and_the_all_gpu_dips() {
    let Some(s) = shared() else { return };
    let rule = |v: &[Value], r: &str| -> Vec<Value> {
        of_type(v, "alert")
            .into_iter()
            .filter(|a| a["rule"] == r)
            .cloned()
            .collect()
    };
    // `timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W`: the script's own
    // column names read as nvidia-smi's; 780 rounds × 8 GPUs + the header.
    let v = replay(&log(
        &s,
        "gpu-monitors/nanogpt_pr643_baseline_query_gpu_100ms.csv",
    ));
    assert_eq!(count(&v, "device", None), 6240);
    // GPU 1 runs ~10 °C over the others' median all run (67.8 °C on average vs ~56): one
    // episode (GPU 0 warms first at start-up, ~17 °C over the idle others, for a while).
    let hot = rule(&v, "device_hot");
    assert!(hot.iter().any(|a| a["devices"][0] == "GPU 1"), "{hot:?}");
    assert_eq!(hot.iter().filter(|a| a["devices"][0] == "GPU 1").count(), 1);
    // The co-located workload's run: six all-GPU dips (one round each but one of two rounds),
    // each one alert naming all eight GPUs with its time span.
    let v = replay(&log(
        &s,
        "gpu-monitors/nanogpt_pr643_secondary_workload_query_gpu.csv",
    ));
    let dips = rule(&v, "device_dip");
    assert_eq!(dips.len(), 6, "{dips:?}");
    assert!(
        dips.iter()
            .all(|a| a["devices"].as_array().unwrap().len() == 8)
    );
    assert!(
        dips.iter()
            .all(|a| a["from_ns"].as_i64() <= a["to_ns"].as_i64())
    );
    assert!(dips.iter().all(|a| a["util_pct"].as_f64().unwrap() < 50.0));
}

#[test]
fn formats_without_a_recogniser_are_read_by_a_learned_template() {
    let Some(s) = shared() else { return };
    let steps = |v: &[Value]| -> Vec<Value> {
        of_type(v, "record")
            .into_iter()
            .filter(|r| r["kind"] == "step" && r["format"] == "generic")
            .cloned()
            .collect()
    };
    // DLLogger RNN-T: `DLL <ts> - epoch E | iter i/272 | loss … | utts/s … | took X s |`,
    // 16 320 iterations over 60 epochs, every one read (the three that teach the template
    // once it is learned). The step is E × 272 + i; `took` is the per-step time; utts/s the
    // throughput.
    let v = replay(&log(
        &s,
        "dllogger/mlperf_v1.0_dell_rnnt_8xa100_dllogger.log",
    ));
    let g = steps(&v);
    assert_eq!(g.len(), 16_320);
    // `epoch 1 | iter 1/272 | … | took 0.92 s` is the first record: 1 × 272 + 1.
    assert_eq!(g[0]["step"], 273);
    assert_eq!(g[0]["time_ns"], 920_000_000);
    assert_eq!(g[0]["provenance"], "per_step");
    assert!(
        g.iter()
            .all(|r| r["time_ns"].as_i64().unwrap() % 10_000_000 == 0)
    );
    // ezpz's diffusion example: `step=N loss=… dt=…` for steps 0–399, `dt` per step.
    let v = replay(&log(&s, "ezpz/diffusion_sunspot_ddp_400steps.log"));
    let g = steps(&v);
    assert_eq!(g.len(), 400);
    assert_eq!(g[0]["step"], 0);
    // GNMT, every line printed by each of 8 ranks (`N: ` prefix): one template taught by the
    // first rank's (7) lines, read on all: of 8 208 lines, the 17 other ranks printed before
    // rank 7's third give none. `Time 0.067 (0.108)` is a value with its average: read as a
    // smoothed figure (the line has no timestamp to do better).
    let v = replay(&log(
        &s,
        "gnmt-pytorch/mlperf_v0.5_gnmt_dgx1_8rank_interleaved.log",
    ));
    let g = steps(&v);
    assert_eq!(g.len(), 8_208 - 17);
    assert_eq!(g[0]["provenance"], "running_average");
    let ranks: std::collections::BTreeSet<i64> =
        g.iter().filter_map(|r| r["rank"].as_i64()).collect();
    assert_eq!(ranks.len(), 8);
}

#[test]
fn a_dedicated_recogniser_keeps_the_generic_one_aside() {
    let Some(s) = shared() else { return };
    // pythia: Megatron reads the iterations; DeepSpeed's `step=N, skipped=…` lines would be a
    // second series of the same run if the generic recogniser read them.
    let v = replay(&log(&s, "gpt-neox/pythia70m_512step_slurm.out"));
    assert!(
        !of_type(&v, "record")
            .iter()
            .any(|r| r["format"] == "generic")
    );
}

#[test]
fn mlperf_gpt3_step_timing_is_read_and_its_evaluations_show_as_wall_clock_pauses() {
    let Some(s) = shared() else { return };
    let v = replay(&log(
        &s,
        "mlperf-mllog/nvidia_v3.1_gpt3_eos512gpu_nemo_tracked_stats.log",
    ));
    // `tracked_stats {"train_step_timing": 11.39…}`: the step's own time (~11 s),
    let first = of_type(&v, "record")
        .into_iter()
        .find(|r| r["kind"] == "step")
        .unwrap()
        .clone();
    assert_eq!(first["time_ns"], 11_396_877_766_i64); // 11.396877765655518 s, to the ns
    assert_eq!(first["provenance"], "per_step");
    // Every 12 steps an evaluation runs outside the step timer: the wall interval is ~24 s
    // against ~11 s printed. Two one-offs, then one periodic pattern, each around an eval;
    // no slow step (the timer itself is steady).
    let pauses: Vec<&Value> = of_type(&v, "alert")
        .into_iter()
        .filter(|a| a["rule"] == "wall_pause")
        .collect();
    assert_eq!(pauses.len(), 3, "{pauses:?}");
    assert_eq!(pauses[2]["pattern"], "periodic");
    assert!(pauses.iter().all(|a| a["events"][0] == "eval"));
    assert_eq!(slow_steps(&v), []);
}

#[test]
fn srun_wrapped_lines_rejoin_into_the_records_of_the_whole_lines() {
    let Some(s) = shared() else { return };
    // srun -l cuts a line longer than its buffer (1 024 bytes) into labelled pieces; MLPerf's
    // lines here are ~230 bytes, so they are cut at 100 to the same effect. Two ranks
    // interleaved line by line, each line cut in two with the other rank's piece between.
    let text = log(
        &s,
        "mlperf-mllog/nvidia_v3.1_gpt3_eos512gpu_nemo_tracked_stats.log",
    );
    let lines: Vec<&[u8]> = text
        .split(|&c| c == b'\n')
        .filter(|l| l.windows(13).any(|w| w == b"tracked_stats"))
        .take(40)
        .collect();
    let (mut whole, mut cut) = (Vec::new(), Vec::new());
    for l in &lines {
        for r in 0..2 {
            whole.extend_from_slice(format!("{r}: ").as_bytes());
            whole.extend_from_slice(l);
            whole.push(b'\n');
        }
        let (a, b) = l.split_at(100.min(l.len()));
        for half in [a, b] {
            for r in 0..2 {
                cut.extend_from_slice(format!("{r}: ").as_bytes());
                cut.extend_from_slice(half);
                cut.push(b'\n');
            }
        }
    }
    let key = |v: &[Value]| -> Vec<(Value, Value, Value)> {
        of_type(v, "record")
            .into_iter()
            .filter(|r| r["kind"] == "step")
            .map(|r| (r["rank"].clone(), r["step"].clone(), r["time_ns"].clone()))
            .collect()
    };
    let want = key(&replay(&whole));
    // 40 lines × 2 ranks, less the 8 `validation_step_timing` lines (evaluation, no step).
    assert_eq!(want.len(), 64);
    assert_eq!(key(&replay(&cut)), want);
}

#[test]
fn the_generic_recogniser_alone_reads_what_the_dedicated_ones_read() {
    let Some(s) = shared() else { return };
    // With the dedicated recognisers switched off (`--format generic`), the learned template
    // gives the dedicated recogniser's step records, in order, with the same step-time
    // evidence; `missing` are records it cannot give (counted by hand, reason on the line).
    for (rel, format, missing) in [
        (
            "modded-nanogpt/track1_fp8down_baseline_1390steps.log",
            "nanogpt",
            0,
        ),
        (
            "modded-nanogpt/track2_medium_4740steps_batch_schedule.log",
            "nanogpt",
            0,
        ),
        ("nanogpt/pr541_gpt2_124m_8xa100_resume.log", "nanogpt", 0),
        (
            "torchtitan/aurora_llama2_7b_24xpu_excerpt.log",
            "torchtitan",
            0,
        ),
        (
            "torchtitan/qwen3_14b_8xb200_run219_profile_ansi.log",
            "torchtitan",
            0,
        ),
        ("torchtitan/pr3393_grad_norm_lines.log", "torchtitan", 0),
        (
            "torchtitan/pr1287_rank0_prefixed_lines.log",
            "torchtitan",
            0,
        ),
        // Three single lines of other NeMo versions: one line teaches no template.
        ("nemo/nemo_step_lines_from_issues.log", "nemo", 3),
        (
            "megatron-lm/issue756_mixtral_h100_iteration_lines.log",
            "megatron",
            0,
        ),
        (
            "mindspeed-llm/fsdp2_quick_start_iteration_lines.log",
            "megatron",
            0,
        ),
        (
            "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
            "megatron",
            0,
        ),
        (
            "maskrcnn-benchmark/mlperf_v3.0_azure_maskrcnn_8xh100.log",
            "jsonl",
            0,
        ),
        // The run's closing `throughput` stat, printed at the last step again.
        (
            "mlperf-mllog/nvidia_v3.1_gpt3_eos512gpu_nemo_tracked_stats.log",
            "jsonl",
            1,
        ),
        (
            "deepspeed/cifar10_tutorial_pdsh_prefixed.log",
            "deepspeed",
            0,
        ),
        // DeepSpeed's throughput timer among DeepSpeed-Chat's lines (the generic recogniser
        // reads the timer's template, as the dedicated one does).
        (
            "deepspeed/dschat_step2_dpo_opt350m_2025.log",
            "deepspeed",
            0,
        ),
        ("megatron-lm/legacy_formats_from_issues.log", "megatron", 0),
    ] {
        let dedicated: Vec<_> = read_as(&s, rel, None)
            .into_iter()
            .filter(|r| r.0 == format)
            .map(|r| r.1)
            .collect();
        let generic: Vec<_> = read_as(&s, rel, Some("generic"))
            .into_iter()
            .map(|r| r.1)
            .collect();
        assert!(!generic.is_empty(), "{rel}");
        assert_eq!(generic.len() + missing, dedicated.len(), "{rel}");
        // In order: each generic record is the next dedicated one that reads the same.
        let mut rest = dedicated.iter();
        for g in &generic {
            assert!(
                rest.any(|d| same(d, g)),
                "{rel}: {g:?} not read by {format}"
            );
        }
    }
}

/// Two readings of one step agree: the same evidence, timestamps within 5 ms (maskrcnn's
/// text line and its MLPerf `time_ms` line read the clock apart: up to 2 ms seen).
fn same(a: &Reading, b: &Reading) -> bool {
    let close = || match (a.3.as_i64(), b.3.as_i64()) {
        (Some(x), Some(y)) => a.2 == "timestamp" && (x - y).abs() <= 5_000_000,
        _ => false,
    };
    (a.0, a.1, a.2) == (b.0, b.1, b.2) && (a.3 == b.3 || close())
}

/// What a step record says of its step: (rank, step, the evidence its time comes from —
/// the cumulative timer, else a per-step figure, else the line's timestamp).
type Reading = (Option<i64>, u64, &'static str, Value);

/// The step records of `rel` read by `format` alone (`None`: every recogniser), in order,
/// with the recogniser that read each.
fn read_as(s: &std::path::Path, rel: &str, format: Option<&str>) -> Vec<(String, Reading)> {
    let args = format.map_or(Vec::new(), |f| vec!["--format", f]);
    watch_file(&args, &s.join("traces/logs").join(rel))
        .into_iter()
        .filter(|r| r["type"] == "record" && r["kind"] == "step")
        .filter_map(|r| {
            let step = r["step"].as_u64()?;
            let printed = matches!(
                r["provenance"].as_str(),
                Some("per_step" | "window_average")
            );
            let evidence = match r.get("cumulative_ns").filter(|c| !c.is_null()) {
                Some(c) => ("cumulative", c.clone()),
                None if printed => ("printed", r["time_ns"].clone()),
                None => ("timestamp", r["at_ns"].clone()),
            };
            let format = r["format"].as_str()?.to_string();
            Some((format, (r["rank"].as_i64(), step, evidence.0, evidence.1)))
        })
        .collect()
}

#[test]
fn recogniser_gates_change_no_reading_of_any_shared_log() {
    use stepscope::input::{RECOGNISERS, SourceState, line::normalise, recognise};
    let Some(s) = shared() else { return };
    // A recogniser's gate literals only spare it lines it would refuse: every line of every
    // shared log reads the same through the gates as offered to each recogniser in turn.
    let mut files = Vec::new();
    let mut dirs = vec![s.join("traces/logs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.file_name().is_some_and(|n| n != "SOURCE.md") {
                files.push(p);
            }
        }
    }
    files.push(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch/custom_loop.log"),
    );
    let mut lines = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let (mut gated, mut each) = (SourceState::default(), SourceState::default());
        for raw in bytes.split(|&b| b == b'\n' || b == b'\r') {
            let Some(l) = normalise(raw) else { continue };
            let want = RECOGNISERS
                .iter()
                .find_map(|r| recognise(&l, Some(r), &mut each));
            assert_eq!(
                recognise(&l, None, &mut gated),
                want,
                "{}: {}",
                f.display(),
                l.text
            );
            lines += 1;
        }
    }
    assert!(lines > 75_000, "{lines}");
}

#[test]
fn apex_overflow_skips_are_skipped_step_events_of_a_run_without_step_lines() {
    let Some(s) = shared() else { return };
    // MLPerf v2.0 BERT on 171 nodes: no step lines (the result log prints only MLLOG events:
    // 9 `eval_accuracy`), and 3 862 lines holding Apex's `Gradient overflow.  Skipping
    // step, …` (many glued, up to 10 per line); an identical line again (the next rank's)
    // counts once: 2 532 skipped-step events.
    let v = replay(&log(
        &s,
        "mlperf-mllog/samsung_v2.0_bert_171node_overflow_skips.log",
    ));
    let records = of_type(&v, "record");
    assert!(!records.iter().any(|r| r["kind"] == "step"));
    let count = |e: &str| records.iter().filter(|r| r["event"] == e).count();
    assert_eq!(count("skipped"), 2_532);
    assert_eq!(count("eval"), 9);
}

/// (format, kind, event) → count of the records (and `("alert", rule, "")` of the alerts).
fn tally(v: &[Value]) -> std::collections::BTreeMap<(String, String, String), usize> {
    let mut t = std::collections::BTreeMap::new();
    for r in v {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        let key = match s("type").as_str() {
            "record" => (s("format"), s("kind"), s("event")),
            _ => ("alert".into(), s("rule"), String::new()),
        };
        *t.entry(key).or_default() += 1;
    }
    t
}

#[test]
fn the_short_shared_logs_yield_the_records_a_reader_counts() {
    let Some(s) = shared() else { return };
    // Counted by hand from each file (the long runs have tests of their own above).
    // (file, [(format, kind, event, records)]).
    type Counts = &'static [(&'static str, &'static str, &'static str, usize)];
    let cases: &[(&str, Counts)] = &[
        // Timer lines with `SamplesPerSec=` at steps 34, 40 (`0/40`) and 4500; two
        // `rank=0 time (ms) |` breakdowns and a pre-2022 `time (ms) |` line; one Megatron
        // iteration line (34). The `step=N, skipped=…` lines repeat the timer lines' steps.
        (
            "deepspeed/deepspeed_lines_from_issues.log",
            &[
                ("deepspeed", "step", "", 3),
                ("megatron", "step", "", 1),
                ("wall-clock", "phases", "", 3),
            ],
        ),
        // Four training dicts, one `eval_*` dict, two 2020 JSON lines with a step.
        (
            "hf-trainer/hf_trainer_dict_lines_from_issues.log",
            &[
                ("hf-trainer", "step", "", 4),
                ("hf-trainer", "event", "eval", 1),
                ("jsonl", "step", "", 2),
            ],
        ),
        // The README's straggler lines: one `MnRtt/Rnk` report (the `^^^^` lines add none).
        (
            "megatron-lm/straggler_detector_readme_lines.log",
            &[("megatron-straggler", "straggler", "", 1)],
        ),
        // Step 4 printed by 7 ranks without prefixes (3 lines identical in a row count once)
        // and step 5: 6 records, and step 4 judged once.
        (
            "torchtitan/pr2389_all_ranks_unprefixed_lines.log",
            &[("torchtitan", "step", "", 6)],
        ),
        // Five step lines of three MindFormers generations (comment lines aside).
        (
            "mindformers/mindformers_step_lines_from_docs.log",
            &[("mindformers", "step", "", 5)],
        ),
        // Five Megatron iteration lines of pre-2022 layouts and three `time (ms) |` lines.
        (
            "megatron-lm/legacy_formats_from_issues.log",
            &[("megatron", "step", "", 5), ("wall-clock", "phases", "", 3)],
        ),
        // MLPerf power: 1 702 `power_reading` lines, the node's AC power (start and stop
        // lines aside).
        (
            "gpu-monitors/mlperf_v4.0_smc_gpt3_node1_ac_power_mllog.txt",
            &[("jsonl", "device", "", 1_702)],
        ),
        // Megatron's golden values: a JSON document of per-step series, no log line.
        (
            "megatron-lm/golden_values_gpt3_7b_tp4_pp1_memory_speed_dgx_h100.json",
            &[],
        ),
        // One scrape: one GPU's sample.
        (
            "gpu-monitors/dcgm_exporter_metrics_issue568.prom",
            &[("dcgm-exporter", "device", "", 1)],
        ),
    ];
    for (rel, want) in cases {
        let got = tally(&watch_file(&[], &s.join("traces/logs").join(rel)));
        let want: std::collections::BTreeMap<_, _> = want
            .iter()
            .map(|(f, k, e, n)| ((f.to_string(), k.to_string(), e.to_string()), *n))
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}

/// `stepscope watch --once --from-start --summary` of the shared log `rel`: its text.
fn watch_file_summary(s: &std::path::Path, rel: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--once", "--from-start", "--summary"])
        .arg(s.join("traces/logs").join(rel))
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}
