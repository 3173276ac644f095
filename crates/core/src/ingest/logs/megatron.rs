//! The Megatron family (`reference/logs.md` §3–4): the iteration line of Megatron-LM,
//! Megatron-DeepSpeed, ALCF's `key=value` variant and MindSpeed-LLM (anchor `iteration N/M`,
//! then `|`-separated pairs), and the straggler detector's `MnRtt/Rnk: 3453.08ms/8` pairs.

use super::fields::{duration, number, pairs};
use super::{EventKind, Extreme, Provenance, Said, Step};
use memchr::memmem;
use std::sync::LazyLock;

/// `iteration 43/100 | … | elapsed time per iteration (ms): 5444.9 | …`: a window average
/// (over `log_interval` iterations) ending at iteration 43; `validation loss at iteration N`
/// is an evaluation.
pub(super) fn iteration(text: &str) -> Option<Said> {
    static WORD: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new("iteration"));
    let i = WORD.find(text.as_bytes())?;
    // One scan: `validation loss at iteration N` is the same word, preceded.
    if text[..i].ends_with("validation loss at ") {
        let n = super::fields::number(&text[i + 9..])?;
        return Some(Said::Event {
            event: EventKind::Eval,
            step: Some(n as u64),
        });
    }
    let (step, of) = step_of(&text[i + "iteration".len()..])?;
    let mut s = Step::at(Some(step), None, Provenance::WindowAverage, &text[..i]);
    s.of = of;
    for (k, v) in pairs(&text[i..], '|') {
        match key(k) {
            Some(Key::Time) => s.time_ns = duration(v, 6),
            Some(Key::Metric(name)) => {
                if let Some(x) = number(v) {
                    s.metrics.push((name, x));
                }
            }
            None => {}
        }
    }
    // A line without a time is no iteration line (e.g. `saving checkpoint at iteration`).
    // Every layout ends its fields with `|`: a line without it was cut (a launcher's partial
    // write), and its last value may be cut too — it waits to be rejoined (`rejoin`).
    (s.time_ns.is_some() && text.ends_with('|')).then_some(Said::Step(s))
}

/// ` 43/ 100` or `=  136006/  136100` after the word `iteration`.
fn step_of(rest: &str) -> Option<(u64, Option<u64>)> {
    let rest = rest.trim_start_matches(['=', ' ']);
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    let step: u64 = rest.get(..n)?.parse().ok()?;
    let rest = rest[n..].trim_start();
    let of = rest.strip_prefix('/').and_then(|r| {
        let r = r.trim_start();
        let m = r.bytes().take_while(u8::is_ascii_digit).count();
        r[..m].parse().ok()
    });
    of.map(|of| (step, Some(of)))
}

/// What a Megatron key holds.
enum Key {
    /// The step time (ms).
    Time,
    /// A metric, by its canonical name.
    Metric(&'static str),
}

/// The key `k` names (any case, `_` or space): one lower-cased copy on the stack, one match.
fn key(k: &str) -> Option<Key> {
    // As long as the longest key below: longer keys are no metric.
    let mut buf = [0u8; 32];
    let folded = buf.get_mut(..k.len())?;
    for (d, c) in folded.iter_mut().zip(k.bytes()) {
        *d = if c == b'_' {
            b' '
        } else {
            c.to_ascii_lowercase()
        };
    }
    let metric = match &*folded {
        b"elapsed time per iteration (ms)" | b"elapsed time per iteration ms" => {
            return Some(Key::Time);
        }
        b"lm loss" | b"loss" => "loss",
        b"learning rate" => "lr",
        b"grad norm" => "grad_norm",
        b"global batch size" => "global_batch",
        b"number of skipped iterations" => "skipped_iterations",
        b"number of nan iterations" => "nan_iterations",
        b"samples per second" => "samples_per_s",
        b"tokens per gpu per second (tgs)" | b"tokens per gpu per second tgs" => {
            "tokens_per_s_per_device"
        }
        b"tflops" | b"throughput per gpu (tflop/s/gpu)" => "tflops",
        _ => return None,
    };
    Some(Key::Metric(metric))
}

/// The straggler detector: `| MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | …`.
pub(super) fn straggler(text: &str) -> Option<Said> {
    if !text.contains("/Rnk:") {
        return None;
    }
    let extremes: Vec<Extreme> = text
        .split('|')
        .filter_map(|f| {
            let f = f.trim();
            let which = match f.get(..2)? {
                "Mn" => "min",
                "Mx" => "max",
                _ => return None,
            };
            let (metric, rest) = f[2..].split_once("/Rnk:")?;
            let (value, rank) = rest.trim().rsplit_once('/')?;
            Some(Extreme {
                metric: metric.to_string(),
                which,
                value: number(value)?,
                rank: rank.trim().parse().ok()?,
            })
        })
        .collect();
    (!extremes.is_empty()).then_some(Said::Straggler { extremes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str) -> Step {
        match iteration(text) {
            Some(Said::Step(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn iteration_lines_of_every_layout() {
        let s = step(
            " [2024-04-06 02:59:36] iteration       43/     100 | consumed samples:         5504 | elapsed time per iteration (ms): 5444.9 | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | global batch size:   128 | lm loss: 1.825991E+00 | loss scale: 1.0 | grad norm: 1.426 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        );
        assert_eq!(
            (s.step, s.of, s.time_ns),
            (Some(43), Some(100), Some(5_444_900_000))
        );
        assert_eq!(s.provenance, Provenance::WindowAverage);
        assert!(s.at_ns.is_some());
        assert!(s.metrics.contains(&("tflops", 239.8)));
        assert!(s.metrics.contains(&("loss", 1.825991)));
        // ALCF key=value.
        let s = step(
            "[2025-11-10 09:43:46,446173][I][megatron/training_log:402:training_log]  iteration=  136006/  136100 | consumed_samples=   835620864 | elapsed_time_per_iteration_ms=6863.2 | lm loss=11.744588 | TFLOPs=26.70 |",
        );
        assert_eq!((s.step, s.time_ns), (Some(136_006), Some(6_863_200_000)));
        assert!(s.metrics.contains(&("tflops", 26.70)));
        // MindSpeed FSDP2.
        let s = step(
            "INFO [2026-06-22 19:28:41] >>  iteration        2/    2000 | consumed samples:         16 | elapsed time per iteration (ms): 1879.90 | lm loss: 1.232217E+00 |",
        );
        assert_eq!(s.time_ns, Some(1_879_900_000));
        assert!(iteration("saving checkpoint at iteration     100 to /x").is_none());
        // Cut before its end: `54` may be the start of `5444.9`.
        assert!(iteration(" iteration 43/100 | elapsed time per iteration (ms): 54").is_none());
        assert_eq!(
            iteration(" validation loss at iteration 50 | lm loss value: 8.889540E+00 |"),
            Some(Said::Event {
                event: EventKind::Eval,
                step: Some(50)
            })
        );
    }

    #[test]
    fn straggler_detector_pairs() {
        let Some(Said::Straggler { extremes }) = straggler(
            "INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | MnEtpt/Rnk: 296.02TF/0",
        ) else {
            panic!()
        };
        assert_eq!(extremes.len(), 3);
        assert_eq!(
            (
                extremes[1].metric.as_str(),
                extremes[1].which,
                extremes[1].value,
                extremes[1].rank
            ),
            ("Rtt", "max", 3468.20, 0)
        );
    }
}
