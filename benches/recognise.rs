//! Log-line recognition on one core (BENCHMARKS.md, "watch"): Megatron iteration lines
//! through normalisation + the recogniser table alone, and through the whole watch engine
//! (splitting, de-duplication, recognition, live analysis) — no reader thread, no output.
//! Criterion reports lines/s as elements/s.
//!
//!   cargo bench --bench recognise

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use stepscope::input::line::{Line, normalise_into};
use stepscope::input::{SourceState, recognise};
use stepscope::watch::engine::Engine;

/// `n` Megatron-LM iteration lines (the bench-watch.sh layout), one slow step every 997.
fn lines(n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let t = 3400.0 + (i * 7919 % 400) as f64 / 10.0 + if i % 997 == 0 { 3000.0 } else { 0.0 };
            format!(
                " [2024-04-06 02:59:36] iteration {i:8}/ 9999999 | consumed samples: {:12} | elapsed time per iteration (ms): {t:.1} | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | global batch size:   128 | lm loss: 1.825991E+00 | loss scale: 1.0 | grad norm: 1.426 | number of skipped iterations:   0 | number of nan iterations:   0 |",
                i * 128
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let ls = lines(10_000);
    let mut g = c.benchmark_group("watch");
    g.throughput(Throughput::Elements(ls.len() as u64));
    g.bench_function("recognise_megatron_lines", |b| {
        let mut table = SourceState::default();
        let mut line = Line::default();
        b.iter(|| {
            for l in &ls {
                assert!(normalise_into(l.as_bytes(), &mut line));
                black_box(recognise(&line, None, &mut table));
            }
        })
    });
    let text: String = ls.iter().map(|l| format!("{l}\n")).collect();
    g.bench_function("engine_megatron_lines", |b| {
        b.iter(|| {
            let mut e = Engine::new(vec!["bench".into()], &["bench.log".into()], None);
            for chunk in text.as_bytes().chunks(64 * 1024) {
                e.feed(0, chunk, false, &mut |_, r, _| {
                    black_box(r);
                });
            }
            black_box(e.finish());
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
