//! JAX / MaxText (`MaxText/metric_logger.py`): `completed step: 12, seconds: 1.234,
//! TFLOP/s/device: 123.456, Tokens/s/device: 5678.9, total_weights: 65536, loss: 8.112` —
//! `seconds` is the step's own time.

use super::fields::{after, duration, number};
use super::{Provenance, Said, Step};

/// One `completed step:` line.
pub(super) fn completed_step(text: &str) -> Option<Said> {
    let i = text.find("completed step:")?;
    let rest = &text[i + 15..];
    let n = number(rest.split(',').next()?)?;
    let value = |key: &str| after(rest, key);
    let time = value("seconds:").and_then(|v| duration(v.split(',').next()?, 9));
    let mut s = Step::at(Some(n as u64), time, Provenance::PerStep, text);
    for (key, name) in [
        ("TFLOP/s/device:", "tflops"),
        ("Tokens/s/device:", "tokens_per_s_per_device"),
        ("loss:", "loss"),
    ] {
        if let Some(x) = value(key).and_then(|v| number(v.split(',').next()?)) {
            s.metrics.push((name, x));
        }
    }
    Some(Said::Step(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completed_step_line() {
        let Some(Said::Step(s)) = completed_step(
            "completed step: 12, seconds: 1.234, TFLOP/s/device: 123.456, Tokens/s/device: 5678.9, total_weights: 65536, loss: 8.112",
        ) else {
            panic!()
        };
        assert_eq!((s.step, s.time_ns), (Some(12), Some(1_234_000_000)));
        assert_eq!(
            s.metrics,
            [
                ("tflops", 123.456),
                ("tokens_per_s_per_device", 5678.9),
                ("loss", 8.112)
            ]
        );
        assert_eq!(completed_step("completed stepping"), None);
    }
}
