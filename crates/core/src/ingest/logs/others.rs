//! The other step-line formats (`reference/logs.md` §5–10): torchtitan, MindFormers, NeMo,
//! DeepSpeed's throughput timer, nanoGPT, HF Trainer dicts, JSON lines (generic step records,
//! MLPerf `:::MLLOG`, DLLogger `DLLL`), NVRx straggler warnings, and the events any of them
//! print (checkpoints, GC, tracebacks, resumption).

use super::fields::{duration, number, pairs};
use super::{EventKind, Provenance, Said, Step};

/// `name: value` tokens separated by spaces (`step: 200  loss:  6.1384  tps: 5,856`).
fn spaced_pairs(text: &str) -> Vec<(&str, &str)> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    toks.windows(2)
        .filter_map(|w| Some((w[0].strip_suffix(':')?, w[1])))
        .collect()
}

/// torchtitan: `step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16
/// mfu: 34.29%` (window metrics, no step time: derived from timestamps); `[GC] … N seconds`.
pub(super) fn torchtitan(text: &str) -> Option<Said> {
    if text.contains("[GC] Peforming") || text.contains("[GC] Performing") {
        return Some(Said::Event {
            event: EventKind::Gc,
            step: None,
        });
    }
    let i = text.find("step:")?;
    if !text.contains("loss:") || !(text.contains("tps:") || text.contains("memory:")) {
        return None;
    }
    let kv = spaced_pairs(&text[i..]);
    let n = kv.iter().find(|(k, _)| *k == "step")?.1.parse().ok()?;
    let mut s = Step::at(Some(n), None, Provenance::FromTimestamps, &text[..i]);
    for (k, v) in kv {
        let name = match k {
            "loss" => "loss",
            "grad_norm" => "grad_norm",
            "memory" => "memory_gib",
            "tps" => "tokens_per_s_per_device",
            "tflops" => "tflops",
            "mfu" => "mfu_pct",
            _ => continue,
        };
        if let Some(x) = number(v) {
            s.metrics.push((name, x));
        }
    }
    Some(Said::Step(s))
}

/// MindFormers: `{ Epoch:[  1/  2], step:[    2/   19], loss: 10.633, per_step_time: 1752ms,
/// …, train_throughput_per_npu: 170.738T` (per-step time, integer ms).
pub(super) fn mindformers(text: &str) -> Option<Said> {
    let t = text.find("per_step_time:")?;
    let i = text.find("step:[")?;
    let inner = &text[i + 6..];
    let close = inner.find(']')?;
    let (n, of) = inner[..close].split_once('/')?;
    let mut s = Step::at(
        Some(n.trim().parse().ok()?),
        duration(&text[t + 14..], 6),
        Provenance::PerStep,
        &text[..i],
    );
    s.of = of.trim().parse().ok();
    for (k, v) in pairs(&text[i + 6 + close + 1..], ',') {
        let name = match k {
            "loss" => "loss",
            "lr" => "lr",
            "grad_norm" => "grad_norm",
            "train_throughput_per_npu" | "throughput" => "tflops",
            _ => continue,
        };
        if let Some(x) = number(v) {
            s.metrics.push((name, x));
        }
    }
    Some(Said::Step(s))
}

/// NeMo 2.x `Training epoch 0, iteration 120/149 | … | global_step: 120 | reduced_train_loss:
/// 1.233 | train_step_timing in s: 0.03146`, and NeMo 1.x tqdm bars with `global_step=794.0`
/// and `train_step_timing in s=3.130` (seconds).
pub(super) fn nemo(text: &str) -> Option<Said> {
    let v2 = text.starts_with("Training epoch");
    let bar = text.contains("it/s") || text.contains("s/it") || text.contains("train_step_timing");
    let v1 = text.contains("global_step=") && bar;
    if !v2 && !v1 {
        return None;
    }
    let sep = if v2 { '|' } else { ',' };
    let mut s = Step::at(None, None, Provenance::PerStep, text);
    for (k, v) in pairs(text, sep) {
        match k {
            "global_step" => s.step = number(v).map(|x| x as u64),
            "train_step_timing in s" => s.time_ns = duration(v, 9),
            "reduced_train_loss" => s.metrics.extend(number(v).map(|x| ("loss", x))),
            "lr" => s.metrics.extend(number(v).map(|x| ("lr", x))),
            _ => {}
        }
    }
    s.step?;
    Some(Said::Step(s))
}

/// DeepSpeed's throughput timer: `epoch=0/micro_step=6/global_step=6,
/// RunningAvgSamplesPerSec=…, CurrSamplesPerSec=…` and the 2020 form `0/50, SamplesPerSec=…`.
pub(super) fn deepspeed(text: &str) -> Option<Said> {
    let i = text.find("SamplesPerSec=")?;
    let head = &text[..i];
    let n = if let Some(g) = head.find("global_step=") {
        number(&head[g + 12..])?
    } else {
        let slash = head.rfind('/')?;
        number(&head[slash + 1..])?
    };
    let mut s = Step::at(Some(n as u64), None, Provenance::FromTimestamps, text);
    let key = if text.contains("CurrSamplesPerSec=") {
        "CurrSamplesPerSec="
    } else {
        "SamplesPerSec="
    };
    let k = text.find(key)?;
    s.metrics
        .extend(number(&text[k + key.len()..]).map(|x| ("samples_per_s", x)));
    Some(Said::Step(s))
}

/// nanoGPT: `iter 100: loss 2.3456, time 123.45ms, mfu 34.56%` (and its evaluation line
/// `step 2000: train loss …, val loss …`); modded-nanogpt:
/// `step:100/1750 … step_avg:123.45ms`.
pub(super) fn nanogpt(text: &str) -> Option<Said> {
    // `step 2000: train loss 3.7822, val loss 3.7927`: the evaluation at step 2000.
    if let Some(rest) = text.strip_prefix("step ") {
        let (n, rest) = rest.split_once(':')?;
        return rest.contains("val loss").then(|| Said::Event {
            event: EventKind::Eval,
            step: n.trim().parse().ok(),
        });
    }
    if let Some(rest) = text.strip_prefix("iter ") {
        let (n, rest) = rest.split_once(':')?;
        let t = rest.find("time ")?;
        let mut s = Step::at(
            Some(n.trim().parse().ok()?),
            duration(&rest[t + 5..], 6),
            Provenance::PerStep,
            text,
        );
        for (k, name) in [("loss ", "loss"), ("mfu ", "mfu_pct")] {
            if let Some(j) = rest.find(k) {
                s.metrics
                    .extend(number(&rest[j + k.len()..]).map(|x| (name, x)));
            }
        }
        return Some(Said::Step(s));
    }
    modded(text)
}

/// modded-nanoGPT: `step:250/1390 train_time:8061ms step_avg:32.25ms` — `train_time` is
/// cumulative (the step time is its delta), `step_avg` a running mean (read only without
/// it); `step:250/1390 val_loss:4.4779 train_time:…` is the validation at step 250.
fn modded(text: &str) -> Option<Said> {
    let i = text.find("step_avg:")?;
    let j = text.find("step:")?;
    let (n, of) = text[j + 5..].split_whitespace().next()?.split_once('/')?;
    let n: u64 = n.parse().ok()?;
    if text.contains("val_loss:") {
        return Some(Said::Event {
            event: EventKind::Eval,
            step: Some(n),
        });
    }
    let mut s = Step::at(
        Some(n),
        duration(&text[i + 9..], 6),
        Provenance::RunningAverage,
        text,
    );
    s.of = of.parse().ok();
    s.cumulative_ns = text
        .find("train_time:")
        .and_then(|k| duration(&text[k + 11..], 6));
    Some(Said::Step(s))
}

/// HF Trainer's `str(logs)`: `{'loss': 1.0887, 'learning_rate': …, 'epoch': 0.87}` (a Python
/// dict repr); `eval_*` keys are an evaluation, `train_runtime` the end of training.
pub(super) fn hf_trainer(text: &str) -> Option<Said> {
    let t = text.trim();
    let body = t.strip_prefix('{')?.strip_suffix('}')?;
    if !body.starts_with('\'') {
        return None;
    }
    let kv: Vec<(String, &str)> = body
        .split(", '")
        .filter_map(|f| {
            let (k, v) = f.split_once("':")?;
            Some((k.trim_matches('\'').to_string(), v.trim()))
        })
        .collect();
    if kv.iter().any(|(k, _)| k.starts_with("eval_")) {
        // MLPerf BERT's `{'global_steps': 20, 'eval_loss': …}` says at which step.
        let step = kv
            .iter()
            .find(|(k, _)| matches!(k.as_str(), "global_steps" | "global_step" | "step"))
            .and_then(|(_, v)| v.parse().ok());
        return Some(Said::Event {
            event: EventKind::Eval,
            step,
        });
    }
    if kv.iter().any(|(k, _)| k == "train_runtime") {
        return Some(Said::Event {
            event: EventKind::Exit,
            step: None,
        });
    }
    let loss = kv.iter().find(|(k, _)| k == "loss")?;
    let mut s = Step::at(None, None, Provenance::FromTimestamps, "");
    s.metrics.extend(number(loss.1).map(|x| ("loss", x)));
    for (k, v) in &kv {
        match k.as_str() {
            "step" => s.step = number(v).map(|x| x as u64),
            "learning_rate" => s.metrics.extend(number(v).map(|x| ("lr", x))),
            "grad_norm" => s.metrics.extend(number(v).map(|x| ("grad_norm", x))),
            _ => {}
        }
    }
    Some(Said::Step(s))
}

/// JSON lines: a generic step record (`{"step": 5, "step_time": 0.5, "loss": …}`, also
/// HF's old JSON logs), MLPerf `:::MLLOG {…}` and DLLogger `DLLL {…}`.
pub(super) fn jsonl(text: &str) -> Option<Said> {
    let (kind, json) = if let Some(i) = text.find(":::MLLOG ") {
        ("mllog", &text[i + 9..])
    } else if let Some(i) = text.find("DLLL ") {
        ("dllogger", &text[i + 5..])
    } else if text.trim_start().starts_with('{') {
        ("plain", text.trim())
    } else {
        return None;
    };
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let o = v.as_object()?;
    match kind {
        "mllog" => mllog(o),
        "dllogger" => {
            let data = o.get("data")?.as_object()?;
            json_step(o.get("step"), data, text)
        }
        _ => json_step(
            ["step", "global_step", "iteration", "iter"]
                .iter()
                .find_map(|k| o.get(*k)),
            o,
            text,
        ),
    }
}

/// A step from JSON fields: the step, a time (`step_time`/`iteration_time` in s,
/// `*_ms` in ms, `train_step_timing in s`), `loss`, throughput.
fn json_step(
    n: Option<&serde_json::Value>,
    o: &serde_json::Map<String, serde_json::Value>,
    text: &str,
) -> Option<Said> {
    let n = n?.as_u64().or_else(|| n?.as_f64().map(|x| x as u64))?;
    let time = |keys: &[&str], scale| {
        keys.iter().find_map(|k| {
            let v = o.get(*k)?;
            duration(&v.to_string().replace('"', ""), scale)
        })
    };
    let t = time(
        &[
            "step_time_ms",
            "iteration_time_ms",
            "elapsed_time_per_iteration_ms",
            "time_ms",
        ],
        6,
    )
    .or_else(|| {
        time(
            &[
                "step_time",
                "iteration_time",
                "train_step_timing in s",
                "step_time_s",
            ],
            9,
        )
    });
    let mut s = Step::at(Some(n), t, Provenance::PerStep, text);
    for (k, name) in [
        ("loss", "loss"),
        ("lr", "lr"),
        ("tokens_per_second", "tokens_per_s"),
    ] {
        if let Some(x) = o.get(k).and_then(serde_json::Value::as_f64) {
            s.metrics.push((name, x));
        }
    }
    (t.is_some() || !s.metrics.is_empty()).then_some(Said::Step(s))
}

/// MLPerf's `:::MLLOG`: evaluation and checkpoint intervals, `run_stop`, throughput stats.
fn mllog(o: &serde_json::Map<String, serde_json::Value>) -> Option<Said> {
    let key = o.get("key")?.as_str()?;
    let meta = o.get("metadata").and_then(|m| m.as_object());
    let at = meta.and_then(|m| {
        ["step", "epoch_num", "samples_count"]
            .iter()
            .find_map(|k| m.get(*k)?.as_u64())
    });
    let event = match key {
        // One evaluation, once: its stop and accuracy lines are the same event again.
        "eval_start" => EventKind::Eval,
        k if k.starts_with("checkpoint") || k.starts_with("save_") => EventKind::Checkpoint,
        "run_stop" => EventKind::Exit,
        "tracked_stats" => {
            let mut s = Step::at(at, None, Provenance::FromTimestamps, "");
            s.at_ns = logged_at(o);
            let v = o.get("value")?.as_object()?;
            // NeMo's `validation_step_timing` (steps of the evaluation) and
            // `train_epoch_timing` (the whole run): no training step.
            let step_stat = |k: &String| {
                !(k.starts_with("validation")
                    || k.starts_with("eval")
                    || k.ends_with("epoch_timing"))
            };
            if !v.keys().any(step_stat) {
                return None;
            }
            if let Some(x) = v.get("throughput").and_then(serde_json::Value::as_f64) {
                s.metrics.push(("samples_per_s", x));
            }
            // NeMo's `train_step_timing` is the step's own time (s); maskrcnn's `time` the
            // trainer's running mean.
            let secs = |k: &str| duration(&v.get(k)?.to_string(), 9);
            if let Some(t) = secs("train_step_timing") {
                (s.time_ns, s.provenance) = (Some(t), Provenance::PerStep);
            } else if let Some(t) = secs("time") {
                (s.time_ns, s.provenance) = (Some(t), Provenance::RunningAverage);
            }
            return Some(Said::Step(s));
        }
        // MLPerf power runs: the node's AC power, read every ~2 s (`power_reading`, W).
        "power_reading" => {
            let w = o.get("value")?.as_f64()?;
            return Some(Said::Device(super::Sample {
                device: "node".into(),
                host: None,
                at_ns: logged_at(o),
                metrics: vec![("power_w", w)],
            }));
        }
        _ => return None,
    };
    Some(Said::Event { event, step: at })
}

/// An MLLOG line's `time_ms` in ns (`None` past the ns range: a fuzzed clock, not a panic).
fn logged_at(o: &serde_json::Map<String, serde_json::Value>) -> Option<crate::time::Ns> {
    o.get("time_ms")?.as_i64()?.checked_mul(1_000_000)
}

/// NVIDIA Resiliency Extension: `STRAGGLER DETECTION WARNING: … Affected ranks: {1, 5}`.
pub(super) fn nvrx(text: &str) -> Option<Said> {
    let i = text.find("Affected ranks:")?;
    let ranks = text[i + 15..]
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|t| t.parse().ok())
        .collect();
    Some(Said::SlowRanks { ranks })
}

/// Events any framework prints: checkpoint saves, tracebacks, resumption.
pub(super) fn events(text: &str) -> Option<Said> {
    let lower = text.to_ascii_lowercase();
    let at = |word: &str| {
        lower
            .find(word)
            .and_then(|i| number(lower[i + word.len()..].trim_start()))
            .map(|x| x as u64)
    };
    let (event, step) = if lower.contains("saving checkpoint") || lower.contains("checkpoint saved")
    {
        (EventKind::Checkpoint, at("iteration"))
    } else if lower.starts_with("traceback (most recent call last)")
        || lower.contains("error: ") && lower.contains("exitcode")
    {
        (EventKind::Exit, None)
    } else if lower.contains("resuming from checkpoint") || lower.contains("loading checkpoint") {
        (EventKind::Restart, at("iteration"))
    } else if lower.contains("overflow detected. skipping step")
        || lower.contains("gradient overflow.  skipping step")
    {
        // DeepSpeed's rank-0 line (each rank's `Grad overflow on iteration N` repeats it);
        // Apex AMP's `Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale`.
        (EventKind::Skipped, None)
    } else if lower.trim_start().starts_with("*****") && lower.contains("evaluat") {
        // `***** Evaluating rewards, Epoch 1/1 *****`, `***** Running Evaluation *****`.
        (EventKind::Eval, None)
    } else {
        return None;
    };
    Some(Said::Event { event, step })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_mllog_clock_past_the_ns_range_is_no_timestamp() {
        let line = r#":::MLLOG {"namespace": "", "time_ms": 99999999999999999, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"train_step_timing": 1.0}, "metadata": {"step": 5}}"#;
        match jsonl(line) {
            Some(Said::Step(s)) => assert_eq!((s.step, s.at_ns), (Some(5), None)),
            other => panic!("{other:?}"),
        }
    }

    use super::*;

    fn st(s: Option<Said>) -> Step {
        match s {
            Some(Said::Step(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn step_lines_of_each_framework() {
        let s = st(torchtitan(
            "[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%",
        ));
        assert_eq!((s.step, s.time_ns), (Some(200), None));
        assert!(s.metrics.contains(&("tokens_per_s_per_device", 5856.0)));
        assert!(s.at_ns.is_some());
        let s = st(mindformers(
            "2025-04-07 15:34:29,173 - [mindformers/core/callback/callback.py:529] - INFO - { Epoch:[  1/  2], step:[    2/   19], loss: 10.633, per_step_time: 1752ms, lr: 1e-05, overflow cond: False, loss_scale: 1.0, global_norm: [1 508834], train_throughput_per_npu: 170.738T",
        ));
        assert_eq!(
            (s.step, s.of, s.time_ns),
            (Some(2), Some(19), Some(1_752_000_000))
        );
        assert!(s.metrics.contains(&("tflops", 170.738)));
        let s = st(nemo(
            "Training epoch 0, iteration 120/149 | lr: 3e-05 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | val_loss: 4.106",
        ));
        assert_eq!((s.step, s.time_ns), (Some(120), Some(31_460_000)));
        let s = st(deepspeed(
            "[2025-11-10 09:43:46,437] [INFO] [timer.py:264:stop] epoch=0/micro_step=6/global_step=6, RunningAvgSamplesPerSec=2472.27, CurrSamplesPerSec=2561.32, MemAllocated=3.71GB",
        ));
        assert_eq!(s.step, Some(6));
        assert!(s.metrics.contains(&("samples_per_s", 2561.32)));
        assert_eq!(
            st(deepspeed(
                "[INFO 2020-02-06 19:53:56] 0/50, SamplesPerSec=1292.6"
            ))
            .step,
            Some(50)
        );
        let s = st(nanogpt("iter 100: loss 2.3456, time 123.45ms, mfu 34.56%"));
        assert_eq!((s.step, s.time_ns), (Some(100), Some(123_450_000)));
        let s = st(hf_trainer(
            "{'loss': 1.0887, 'learning_rate': 2.8e-06, 'epoch': 0.87}",
        ));
        assert_eq!((s.step, s.metrics[0]), (None, ("loss", 1.0887)));
        let s = st(jsonl(r#"{"step": 5, "step_time": 0.5, "loss": 2.0}"#));
        assert_eq!((s.step, s.time_ns), (Some(5), Some(500_000_000)));
    }

    #[test]
    fn events_and_reports() {
        let event = |line| match events(line) {
            Some(Said::Event { event, .. }) => Some(event),
            _ => None,
        };
        // DeepSpeed-Chat's (dschat_step2_dpo_opt350m_2025.log).
        assert_eq!(
            event(
                "[2025-01-02 15:47:32,713] [INFO] [logging.py:128:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 65536, reducing to 32768.0"
            ),
            Some(EventKind::Skipped)
        );
        assert_eq!(
            event("***** Evaluating rewards, Epoch 1/1 *****"),
            Some(EventKind::Eval)
        );
        assert_eq!(event("Grad overflow on iteration 0"), None);
        assert_eq!(
            events("saving checkpoint at iteration     100 to /root/ckpt in torch_dist format"),
            Some(Said::Event {
                event: EventKind::Checkpoint,
                step: Some(100)
            })
        );
        assert_eq!(
            hf_trainer(
                "{'global_steps': 20, 'eval_loss': 4.172319412231445, 'eval_mlm_accuracy': 0.3681600093841553}"
            ),
            Some(Said::Event {
                event: EventKind::Eval,
                step: Some(20)
            })
        );
        assert!(matches!(
            hf_trainer("{'eval_snli_loss': 1.06, 'epoch': 0.89}"),
            Some(Said::Event {
                event: EventKind::Eval,
                ..
            })
        ));
        assert_eq!(
            nvrx(
                "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. Affected ranks: {1, 5}"
            ),
            Some(Said::SlowRanks { ranks: vec![1, 5] })
        );
        assert!(matches!(
            jsonl(
                r#" 0: :::MLLOG {"namespace": "", "time_ms": 1719843792116, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"throughput": 14214.6}, "metadata": {"epoch_num": 799502}}"#
            ),
            Some(Said::Step(_))
        ));
    }
}
