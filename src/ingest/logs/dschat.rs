//! DeepSpeed-Chat's throughput lines (`utils/perf.py`), one per training call of a rank-0
//! process — per micro-batch in steps 1–2, per PPO step in step 3 — each a per-step figure:
//! - `Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, …`
//! - `End-to-End => Latency: 33.57s, TFLOPs: 3.58, Samples/sec: 0.48, …` (step 3)
//! - `|E2E latency=33.57s |Gather latency=… |Generate time=9.83s (29.27%) |Training time=…`
//!   (step 3, older releases)

use super::fields::{after, duration, number};
use super::{Provenance, Said, Step};

/// One throughput line: its latency is the step's time; TFLOP/s and samples/s as printed.
pub fn throughput(text: &str) -> Option<Said> {
    let t = text.trim_start();
    let latency = if t.starts_with("Model Parameters:") || t.starts_with("End-to-End =>") {
        after(t, "Latency: ")?
    } else if t.starts_with("|E2E latency=") {
        after(t, "|E2E latency=")?
    } else {
        return None;
    };
    let mut s = Step::at(None, Some(duration(latency, 9)?), Provenance::PerStep, text);
    for (key, name) in [
        ("TFLOPs: ", "tflops"),
        ("Samples/sec: ", "samples_per_s"),
        ("CurSamplesPerSec=", "samples_per_s"),
    ] {
        if let Some(v) = after(t, key).and_then(number) {
            s.metrics.push((name, v));
        }
    }
    Some(Said::Step(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: &str) -> Step {
        match throughput(line) {
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
        assert_eq!(throughput("Latency: 3s"), None);
    }
}
