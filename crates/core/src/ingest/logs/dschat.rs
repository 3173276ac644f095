//! DeepSpeed-Chat (`utils/perf.py`, `step3_rlhf_finetuning/main.py`): throughput lines, one
//! per training call of a rank-0 process — per micro-batch in steps 1–2, per PPO step in step
//! 3 — each a per-step figure:
//! - `Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, …`
//! - step 3, a record of four lines: `Epoch: 0 | Step: 12 | PPO Epoch: 1 | Actor Loss: …`
//!   (older: `epoch: 0|step: 12|ppo_ep: 1|act_loss: …`) names the step, then
//!   `End-to-End => Latency: 33.57s, …` is its time, and `Generation => Latency: 9.83s, …`
//!   and `Training   => Latency: 23.73s, …` its two phases;
//! - `|E2E latency=33.57s |Gather latency=… |Generate time=9.83s (29.27%) |Training time=…`
//!   (step 3, older releases: one line).

use super::fields::{after, duration, number};
use super::{Phase, Provenance, Said, Step};

/// What a source's step-3 lines told so far: the step the PPO line named, for the
/// `End-to-End` line after it.
#[derive(Debug, Default)]
pub struct Pending {
    step: Option<u64>,
    metrics: Vec<(&'static str, f64)>,
}

/// One line of DeepSpeed-Chat's: a PPO step line is remembered (and says nothing yet), a
/// throughput line is a step, a `Generation =>` / `Training =>` line a phase of it.
pub(super) fn read(text: &str, p: &mut Pending) -> Option<Said> {
    let t = text.trim_start();
    if let Some(step) = ppo_step(t, p) {
        p.step = Some(step);
        return Some(Said::Header);
    }
    for (head, name) in [("Generation", "generation"), ("Training", "training")] {
        if let Some(rest) = t.strip_prefix(head) {
            let rest = rest.trim_start().strip_prefix("=>")?;
            let ns = duration(after(rest, "Latency: ")?, 9)?;
            let name = name.to_string();
            return Some(Said::Phases {
                phases: vec![Phase { name, ns }],
            });
        }
    }
    let mut s = throughput(t)?;
    s.step = p.step.take();
    s.metrics.append(&mut p.metrics);
    Some(Said::Step(s))
}

/// The step a PPO line names (`Epoch: 0 | Step: 12 | PPO Epoch: 1 | Actor Loss: 0.5 | …`
/// or `epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.5|…`), its losses into `p`.
fn ppo_step(t: &str, p: &mut Pending) -> Option<u64> {
    if !(t.contains("PPO Epoch:") || t.contains("ppo_ep:")) {
        return None;
    }
    let step = after(t, "Step: ").or_else(|| after(t, "step: "))?;
    let step = number(step.split('|').next()?)? as u64;
    p.metrics.clear();
    for (key, name) in [
        ("Actor Loss: ", "actor_loss"),
        ("act_loss: ", "actor_loss"),
        ("Critic Loss: ", "critic_loss"),
        ("cri_loss: ", "critic_loss"),
    ] {
        if let Some(v) = after(t, key).and_then(|v| number(v.split('|').next()?)) {
            p.metrics.push((name, v));
        }
    }
    Some(step)
}

/// One throughput line: its latency is the step's time; TFLOP/s and samples/s as printed.
fn throughput(t: &str) -> Option<Step> {
    let latency = if t.starts_with("Model Parameters:") || t.starts_with("End-to-End =>") {
        after(t, "Latency: ")?
    } else if t.starts_with("|E2E latency=") {
        after(t, "|E2E latency=")?
    } else {
        return None;
    };
    let mut s = Step::at(None, Some(duration(latency, 9)?), Provenance::PerStep, t);
    for (key, name) in [
        ("TFLOPs: ", "tflops"),
        ("Samples/sec: ", "samples_per_s"),
        ("CurSamplesPerSec=", "samples_per_s"),
    ] {
        if let Some(v) = after(t, key).and_then(number) {
            s.metrics.push((name, v));
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: &str) -> Step {
        match read(line, &mut Pending::default()) {
            Some(Said::Step(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_three_throughput_lines() {
        let s = step(
            "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, \
             Time/seq 0.14s, Batch Size: 2, Sequence Length: 512",
        );
        assert_eq!((s.step, s.time_ns), (None, Some(270_000_000)));
        assert_eq!(s.metrics, [("tflops", 1.02), ("samples_per_s", 7.28)]);
        let s = step("End-to-End => Latency: 33.57s, TFLOPs: 3.58, Samples/sec: 0.48");
        assert_eq!(s.time_ns, Some(33_570_000_000));
        let s = step(
            "|E2E latency=33.57s |Gather latency=0.00s (0.00%) |Generate time=9.83s (29.27%) \
             |Training time=23.73s (70.68%) |Others=0.00 (0.00%)|CurSamplesPerSec=0.48",
        );
        assert_eq!(s.time_ns, Some(33_570_000_000));
        assert_eq!(s.metrics, [("samples_per_s", 0.48)]);
        assert_eq!(read("Latency: 3s", &mut Pending::default()), None);
    }

    #[test]
    fn a_step3_record_of_four_lines_is_one_step_with_two_phases() {
        let mut p = Pending::default();
        let lines = [
            "Epoch: 0 | Step: 12 | PPO Epoch: 1 | Actor Loss: 0.51 | Critic Loss: 0.25 | Unsupervised Loss: 0.0",
            "End-to-End => Latency: 33.57s, TFLOPs: 3.58, Samples/sec: 0.48, Time/seq 2.10s, Batch Size: 16, Total Seq. Length: 512",
            "Generation => Latency: 9.83s, Per-token Latency 38.40 ms, TFLOPs: 1.23, BW: 123.45 GB/sec, Answer Seq. Length: 256",
            "Training   => Latency: 23.73s, TFLOPs: 4.56",
        ];
        let said: Vec<Said> = lines.iter().filter_map(|l| read(l, &mut p)).collect();
        assert_eq!(said[0], Said::Header);
        let Said::Step(s) = &said[1] else {
            panic!("{said:?}")
        };
        assert_eq!((s.step, s.time_ns), (Some(12), Some(33_570_000_000)));
        assert!(s.metrics.contains(&("actor_loss", 0.51)));
        let phases: Vec<(String, i64)> = said[2..]
            .iter()
            .flat_map(|x| match x {
                Said::Phases { phases } => phases.iter().map(|p| (p.name.clone(), p.ns)).collect(),
                _ => Vec::new(),
            })
            .collect();
        assert_eq!(
            phases,
            [
                ("generation".into(), 9_830_000_000),
                ("training".into(), 23_730_000_000)
            ]
        );
        // The older one-line PPO step, then the one-line E2E record: step 13.
        let _ = read(
            "epoch: 0|step: 13|ppo_ep: 1|act_loss: 0.5|cri_loss: 0.2|unsup_loss: 0.0",
            &mut p,
        );
        let Some(Said::Step(s)) = read(
            "|E2E latency=30.00s |Gather latency=0.00s (0.00%) |Generate time=9.00s (30.00%) |Training time=21.00s (70.00%) |Others=0.00 (0.00%)|CurSamplesPerSec=0.53",
            &mut p,
        ) else {
            panic!()
        };
        assert_eq!((s.step, s.time_ns), (Some(13), Some(30_000_000_000)));
        // A throughput line with no PPO line before it has no step number.
        let Some(Said::Step(s)) = read("End-to-End => Latency: 1.00s, TFLOPs: 3.58", &mut p) else {
            panic!()
        };
        assert_eq!(s.step, None);
    }
}
