//! Log-line recognition on one core (BENCHMARKS.md, "watch"): Megatron iteration lines, lines
//! of a format only the generic recogniser reads, and lines nothing reads, through
//! normalisation + the recogniser table alone; Megatron lines through the whole watch engine
//! (splitting, de-duplication, recognition, live analysis) — no reader thread, no output.
//! Criterion reports lines/s as elements/s.
//!
//!   cargo bench --bench recognise

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use stepscope::input::line::{Line, normalise_into};
use stepscope::input::{SourceState, recognise};
use stepscope::session::watch::engine::Engine;

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

/// `n` lines of a format no dedicated recogniser knows (DLLogger RNN-T's layout, read by a
/// template the generic recogniser learns), one slow step every 997.
fn generic_lines(n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let took = 0.33 + (i * 7919 % 40) as f64 / 1000.0 + if i % 997 == 0 { 1.0 } else { 0.0 };
            format!(
                "DLL 2021-05-12 03:{:02}:{:02}.{:06} - epoch {:4} | iter {:3}/272 | loss {:8.3} | utts/s {:10.3} | took {took:.2} s | lrate 4.0e-03",
                i / 60 % 60, i % 60, i * 7 % 1_000_000, i / 272, i % 272, 80.0 - i as f64 / 1e3, 1500.0 + (i % 50) as f64
            )
        })
        .collect()
}

/// `n` lines no recogniser reads (what a training log mostly is between step lines): each
/// is offered to every recogniser, then to the generic one.
fn noise_lines(n: usize) -> Vec<String> {
    let kinds = [
        "[2025-01-02 15:46:55,967] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /ckpt/global_step{i}/layer_0{k}-model_00-model_states.pt...",
        "NCCL INFO Channel {k}/24 : 0[{i}] -> 1[{k}] via P2P/IPC/read",
        "  warnings.warn(  # UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class.",
        "wandb: Syncing run {i}-silver-dawn-{k}",
    ];
    (0..n)
        .map(|i| {
            kinds[i % kinds.len()]
                .replace("{i}", &i.to_string())
                .replace("{k}", &(i % 8).to_string())
        })
        .collect()
}

/// Normalise + recognise every line of `ls`, one source, as criterion's routine.
fn recognise_all(ls: &[String]) {
    let mut state = SourceState::default();
    let mut line = Line::default();
    for l in ls {
        assert!(normalise_into(l.as_bytes(), &mut line));
        black_box(recognise(&line, None, &mut state));
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("watch");
    for (name, ls) in [
        ("recognise_generic_lines", generic_lines(10_000)),
        ("recognise_noise_lines", noise_lines(10_000)),
    ] {
        g.throughput(Throughput::Elements(ls.len() as u64));
        g.bench_function(name, |b| b.iter(|| recognise_all(&ls)));
    }
    g.finish();
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
