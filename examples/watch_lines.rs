//! Instruction counts of log-line recognition, stable on a noisy machine (BENCHMARKS.md,
//! "watch, third part"): 20 000 Megatron iteration lines (the `benches/recognise.rs` layout)
//! through normalisation + recognition (`rec`), through the whole watch engine (`engine`), or
//! only generated (`none`, the cost to subtract).
//!
//!   cargo build --release --example watch_lines
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg target/release/examples/watch_lines rec

use std::hint::black_box;
use stepscope::input::line::{Line, normalise_into};
use stepscope::input::{SourceState, recognise};
use stepscope::session::watch::engine::Engine;

/// Lines generated (divide the instruction difference by it).
const LINES: usize = 20_000;

fn main() {
    let ls: Vec<String> = (1..=LINES)
        .map(|i| {
            let t = 3400.0 + (i * 7919 % 400) as f64 / 10.0 + if i % 997 == 0 { 3000.0 } else { 0.0 };
            format!(
                " [2024-04-06 02:59:36] iteration {i:8}/ 9999999 | consumed samples: {:12} | elapsed time per iteration (ms): {t:.1} | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | global batch size:   128 | lm loss: 1.825991E+00 | loss scale: 1.0 | grad norm: 1.426 | number of skipped iterations:   0 | number of nan iterations:   0 |",
                i * 128
            )
        })
        .collect();
    match std::env::args().nth(1).as_deref() {
        Some("rec") => {
            let (mut table, mut line) = (SourceState::default(), Line::default());
            for l in &ls {
                assert!(normalise_into(l.as_bytes(), &mut line));
                black_box(recognise(&line, None, &mut table));
            }
        }
        Some("engine") => {
            let text: String = ls.iter().map(|l| format!("{l}\n")).collect();
            let mut e = Engine::new(vec!["bench".into()], &["bench.log".into()], None);
            for chunk in text.as_bytes().chunks(64 * 1024) {
                e.feed(0, chunk, false, &mut |_, r, _| {
                    black_box(r);
                });
            }
            black_box(e.finish());
        }
        _ => {
            black_box(&ls);
        }
    }
}
