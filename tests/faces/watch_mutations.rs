//! The generic recogniser on every shared whole log, and on each log changed as runs change
//! their own lines (issue 47): a field appended to the step line part way through the run, a
//! number written wider, the step counter restarted per epoch, unrelated lines between —
//! the same step records every time (the step, and the evidence its time comes from).

use crate::common;

use common::replay::watch_file;
use common::shared;
use serde_json::Value;
use std::path::Path;
use stepscope::input::{key_of, line};

/// The shared logs the generic recogniser reads steps of.
const LOGS: &[&str] = &[
    "deepspeed/cifar10_tutorial_pdsh_prefixed.log",
    "deepspeed/dschat_step2_dpo_opt350m_2025.log",
    "dllogger/mlperf_v1.0_dell_rnnt_8xa100_dllogger.log",
    "ezpz/diffusion_sunspot_ddp_400steps.log",
    "gnmt-pytorch/mlperf_v0.5_gnmt_dgx1_8rank_interleaved.log",
    "gpt-neox/pythia70m_512step_slurm.out",
    "maskrcnn-benchmark/mlperf_v3.0_azure_maskrcnn_8xh100.log",
    "megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log",
    "megatron-lm/issue756_mixtral_h100_iteration_lines.log",
    "mindspeed-llm/fsdp2_quick_start_iteration_lines.log",
    "mlperf-mllog/nvidia_v3.1_gpt3_eos512gpu_nemo_tracked_stats.log",
    "modded-nanogpt/track1_fp8down_baseline_1390steps.log",
    "modded-nanogpt/track2_medium_4740steps_batch_schedule.log",
    "nanogpt/pr541_gpt2_124m_8xa100_resume.log",
    "torchtitan/aurora_llama2_7b_24xpu_excerpt.log",
    "torchtitan/pr1287_rank0_prefixed_lines.log",
    "torchtitan/pr3393_grad_norm_lines.log",
    "torchtitan/qwen3_14b_8xb200_run219_profile_ansi.log",
];

/// What a step record says: (rank, step, where its time comes from, that value).
type Reading = (Option<i64>, Option<u64>, &'static str, Value);

/// The generic recogniser's step records of `file`, in order.
fn readings(file: &Path) -> Vec<Reading> {
    watch_file(&["--format", "generic"], file)
        .into_iter()
        .filter(|r| r["type"] == "record" && r["kind"] == "step")
        .map(|r| {
            let printed = matches!(
                r["provenance"].as_str(),
                Some("per_step" | "window_average" | "running_average")
            );
            let evidence = match r.get("cumulative_ns").filter(|c| !c.is_null()) {
                Some(c) => ("cumulative", c.clone()),
                None if printed => ("printed", r["time_ns"].clone()),
                None => ("timestamp", r["at_ns"].clone()),
            };
            (
                r["rank"].as_i64(),
                r["step"].as_u64(),
                evidence.0,
                evidence.1,
            )
        })
        .collect()
}

/// The templates `--explain` names for `file` (the generic recogniser's family) and the
/// step slot's name.
fn templates(file: &Path) -> (Vec<String>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--once", "--from-start", "--summary", "--explain"])
        .args(["--format", "generic"])
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let re = regex::Regex::new(r"generic template `(.*?)`: step = `(.*?)`").unwrap();
    let mut keys = Vec::new();
    let mut name = String::new();
    for c in re.captures_iter(&text) {
        keys.push(c[1].to_string());
        name = c[2].to_string();
    }
    (keys, name)
}

/// Whether a raw line is read by one of `keys` (a key `--explain` cut at 120 characters
/// matches by its start).
fn is_step_line(raw: &str, keys: &[String]) -> bool {
    let Some(l) = line::normalise(raw.as_bytes()) else {
        return false;
    };
    let Some(k) = key_of(&l.text) else {
        return false;
    };
    let cut: String = k.chars().take(120).collect();
    keys.contains(&cut)
}

/// Where the line's own text starts: past launcher prefixes and a timestamp, at the
/// template's first word.
fn body_at(raw: &str, keys: &[String]) -> Option<usize> {
    let first = keys
        .first()?
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .find(|w| !w.is_empty())?;
    raw.find(first)
}

/// Every number with a fraction in `s` written one digit wider (`0.51` → `0.510`): the same
/// value (a version `1.2.3` and an exponent `1.5e-05` are left as they are).
fn wider(s: &str) -> String {
    let re = regex::Regex::new(r"(\d\.\d+)([^\deE.]|$)").unwrap();
    re.replace_all(s, "${1}0${2}").into_owned()
}

/// The log's lines, the `k`-th step line replaced by `f(k, line)`.
fn mutate(text: &str, keys: &[String], mut f: impl FnMut(usize, &str) -> String) -> String {
    let mut k = 0;
    let mut out = String::with_capacity(text.len() * 2);
    for raw in text.split_inclusive('\n') {
        let (body, nl) = match raw.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (raw, ""),
        };
        if is_step_line(body, keys) {
            out.push_str(&f(k, body));
            k += 1;
        } else {
            out.push_str(body);
        }
        out.push_str(nl);
    }
    out
}

/// The step number after the slot name `name` in `s` (from `at`): its byte range.
fn step_number(s: &str, at: usize, name: &str) -> Option<std::ops::Range<usize>> {
    let i = at + s[at..].find(name)? + name.len();
    let start = i + s[i..].find(|c: char| c.is_ascii_digit())?;
    let gap = &s[i..start];
    if gap.chars().any(|c| c.is_alphanumeric()) {
        return None;
    }
    let end = start
        + s[start..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(s.len() - start);
    Some(start..end)
}

/// Where and how a log is changed.
#[derive(Debug, Clone, Copy)]
struct Changes {
    /// The share of step lines after which the line changes (its field appended, its
    /// numbers written wider).
    from: f64,
    /// Step lines per epoch for the restarted counter.
    per: usize,
}

/// Reads log `rel` as it is and changed in each way by `c`: every reading must be the
/// same. Returns the changes that did change it.
fn check_log(s: &Path, dir: &Path, rel: &str, c: Changes) -> Vec<&'static str> {
    let path = s.join("traces/logs").join(rel);
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
    let want = readings(&path);
    assert!(
        !want.is_empty(),
        "{rel}: the generic recogniser reads no step"
    );
    let (keys, name) = templates(&path);
    assert!(!keys.is_empty(), "{rel}: no template explained");
    let total = text.lines().filter(|l| is_step_line(l, &keys)).count();
    // A template is learned from its first lines (three with a time, eight without): the
    // line changes after those.
    let from = ((total as f64 * c.from) as usize).max(8);
    let mut changed = Vec::new();
    let mut check = |what: &'static str, mutated: String| {
        if mutated == text {
            return;
        }
        changed.push(what);
        let p = dir.join(format!("{what}.log"));
        std::fs::write(&p, &mutated).unwrap();
        let got = readings(&p);
        assert_eq!(got.len(), want.len(), "{rel}, {what}, {c:?}: step records");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{rel}, {what}, {c:?}: record {i}");
        }
    };
    // A field appended part way through the run (an ETA printed once it is known: minutes
    // left, falling as the run goes).
    check(
        "appended",
        mutate(&text, &keys, |k, l| {
            if k >= from {
                format!("{l} | eta {}.{}m", (total - k) / 10, (total - k) % 10)
            } else {
                l.to_string()
            }
        }),
    );
    // Numbers written one digit wider part way through.
    check(
        "wider",
        mutate(&text, &keys, |k, l| match body_at(l, &keys) {
            Some(at) if k >= from => format!("{}{}", &l[..at], wider(&l[at..])),
            _ => l.to_string(),
        }),
    );
    // Unrelated lines between the step lines.
    check(
        "interleaved",
        mutate(&text, &keys, |k, l| match k % 5 {
            0 => format!("INFO: data shard cache is warm\n{l}"),
            3 => format!("{l}\nheartbeat: all workers alive, queue depth steady"),
            _ => l.to_string(),
        }),
    );
    // The step counter restarted every `per` step lines, the epoch printed before it: the
    // steps continue the run (its step lines printed at a steady stride).
    let named = !name.starts_with('#') && keys.len() == 1 && !keys[0].contains("epoch");
    if named && total > 2 * c.per {
        check("epochs", epochs(&text, &keys, &name, c.per));
    }
    changed
}

#[test]
fn every_shared_log_keeps_its_step_records_through_the_changes_runs_make_to_their_lines() {
    let Some(s) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Per change, the logs it changed (a change that changed nothing proves nothing).
    let mut changed: std::collections::BTreeMap<&str, usize> = Default::default();
    let c = Changes {
        from: 1.0 / 3.0,
        per: 50,
    };
    for rel in LOGS {
        for what in check_log(&s, dir.path(), rel, c) {
            *changed.entry(what).or_default() += 1;
        }
    }
    // 13, 13, 18 and 7 logs when this was written.
    let n = |what: &str| changed.get(what).copied().unwrap_or(0);
    assert!(n("appended") >= 12 && n("wider") >= 12, "{changed:?}");
    assert!(
        n("interleaved") == LOGS.len() && n("epochs") >= 6,
        "{changed:?}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// Any shared log, changed from any point on, its counter restarted at any epoch
    /// length: the same step records.
    #[test]
    fn any_shared_log_changed_anywhere_keeps_its_step_records(
        log in 0..LOGS.len(),
        from in 0.0..0.95f64,
        per in 10usize..200,
    ) {
        let Some(s) = shared() else { return Ok(()) };
        let dir = tempfile::tempdir().unwrap();
        check_log(&s, dir.path(), LOGS[log], Changes { from, per });
    }
}

/// `text` with each step line's counter printed within an epoch of `per` step lines: `epoch
/// E` before the template's first word, the step as its offset in the epoch from the first
/// epoch's start, and a total printed after it (`step:51/1390`) the epoch's own.
fn epochs(text: &str, keys: &[String], name: &str, per: usize) -> String {
    let mut first: Option<(u64, u64)> = None;
    let mut epoch_start = 0u64;
    let numbers: Vec<u64> = text
        .lines()
        .filter(|l| is_step_line(l, keys))
        .filter_map(|l| {
            let r = step_number(l, body_at(l, keys)?, name)?;
            l[r].parse().ok()
        })
        .take(2)
        .collect();
    let stride = match numbers[..] {
        [a, b] if b > a => b - a,
        _ => 1,
    };
    let of = per as u64 * stride;
    mutate(text, keys, |k, l| {
        let Some(at) = body_at(l, keys) else {
            return l.to_string();
        };
        let Some(r) = step_number(l, at, name) else {
            return l.to_string();
        };
        let n: u64 = l[r.clone()].parse().unwrap();
        let (start, _) = *first.get_or_insert((n, n));
        if k % per == 0 {
            epoch_start = n;
        }
        let printed = start + (n - epoch_start);
        let mut rest = l[r.end..].to_string();
        if let Some(t) = rest.strip_prefix('/') {
            let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
            rest = format!("/{of}{}", &t[digits..]);
        }
        format!(
            "{}epoch {} {}{printed}{rest}",
            &l[..at],
            k / per,
            &l[at..r.start]
        )
    })
}
