#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing
//! TUI frame cost (BENCHMARKS.md, "TUI frames"): with a 1024-rank job and a ~1 GB single-rank trace loaded, the
//! first frame after the analysis, and key presses (state change + frame build + draw on
//! ratatui's in-memory backend, one frame per key) per view. Benchmarks named `_keys_ab`
//! press two keys (a then b, to return to the same state): halve their time per key.
//!
//!   cargo bench --bench frame
//!   STEPSCOPE_BENCH_RANKS=256 STEPSCOPE_BENCH_SCALE=50 cargo bench --bench frame   (smaller)

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Instant;
use stepscope::analysis::critical_path::{self, Window};
use stepscope::analysis::{self, Options, deviation, operator, timeline};
use stepscope::session::{self, DemoSpec, LoadOptions, Session};
use stepscope::ui::browser::{Browser, Pane};
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

type App = Shell<Browser>;

const SIZE: (u16, u16) = (120, 40);

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Generates, loads and analyses a demo job; prints what it built.
fn job(spec: DemoSpec, label: &str) -> App {
    let t = Instant::now();
    let inputs = session::demo_inputs(spec);
    let loaded = session::load(&inputs, &LoadOptions::default()).expect("demo loads");
    let bytes: u64 = loaded.job.ranks.iter().map(|r| r.source.json_bytes).sum();
    let events: usize = loaded.job.ranks.iter().map(|r| r.events.len()).sum();
    let opts = Options::default();
    let a = analysis::analyze(&loaded.job, &opts);
    eprintln!(
        "{label}: {} ranks, {:.2} GB of JSON, {events} events; generated, loaded and analysed in {:.1} s (analysis {:.2} s)",
        loaded.job.ranks.len(),
        bytes as f64 / 1e9,
        t.elapsed().as_secs_f64(),
        a.analysis_ns as f64 / 1e9
    );
    let data = Session {
        loaded,
        analysis: a,
        opts,
        title: label.to_string(),
        inputs,
    };
    let app = stepscope::ui::headless(
        data,
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        SIZE,
    );
    on_demand(&app, label);
    app
}

/// One-shot timings of the analyses views run on demand (a new step's critical path, an
/// operator's detail, a step's timeline bands): not frames, but what a key can wait on.
fn on_demand(app: &App, label: &str) {
    let b = &app.screen;
    let (job, an) = (&b.data.loaded.job, &b.data.analysis);
    let step = b.step_number().expect("a step");
    let t = Instant::now();
    black_box(critical_path::critical_path(
        job,
        &an.comm,
        &Window::Step(step),
    ));
    let cp = t.elapsed();
    let t = Instant::now();
    black_box(timeline::cluster(job, &an.spans, &an.comm.offsets, step));
    let tl = t.elapsed();
    let top = an.top_ops[0].name;
    let t = Instant::now();
    black_box(operator::detail(job, top, None, &an.roofline, None));
    let op = t.elapsed();
    eprintln!(
        "{label} on demand: critical path of step {step} {:.1} ms, timeline bands {:.1} ms, operator detail {:.1} ms",
        cp.as_secs_f64() * 1e3,
        tl.as_secs_f64() * 1e3,
        op.as_secs_f64() * 1e3
    );
    // The slowest step replayed over its dependency graph (what-if's self-check).
    let t = Instant::now();
    let replay = stepscope::analysis::whatif::check(job, &an.comm, step);
    eprintln!(
        "{label} on demand: replay of step {step} {:.1} ms (error {:.3}%)",
        t.elapsed().as_secs_f64() * 1e3,
        replay.map_or(f64::NAN, |c| c.error * 100.0)
    );
    // The same step built and replayed with the ideal fix (what the what-if pane asks).
    let t = Instant::now();
    let ideal = stepscope::analysis::whatif::StepReplay::new(job, &an.comm, step).map(|r| {
        let cx = stepscope::analysis::whatif::Context::of(job, an);
        r.time_with(&r.weights(&cx, &[stepscope::analysis::whatif::Fix::Ideal]))
    });
    eprintln!(
        "{label} on demand: replay of step {step} with the ideal fix {:.1} ms ({:.1} ms ideal)",
        t.elapsed().as_secs_f64() * 1e3,
        ideal.map_or(f64::NAN, |x| x as f64 / 1e6)
    );
    // Each finding's proof, as Enter on it resolves it.
    for f in &an.findings {
        let t = Instant::now();
        black_box(stepscope::analysis::advisor::proof::land(job, an, f));
        eprintln!(
            "{label} on demand: the proof of {} {:.2} ms",
            f.rule,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}

/// Presses each key and draws a frame after each; returns the last frame.
fn press(app: &mut App, keys: &str) -> String {
    let mut frame = String::new();
    for k in parse_script(keys).expect("keys") {
        app.key(k);
        frame = snapshot::render(app);
    }
    frame
}

fn bench_job(c: &mut Criterion, app: &mut App, label: &str) {
    let mut g = c.benchmark_group(format!("frame/{label}"));
    g.sample_size(20);
    g.measurement_time(std::time::Duration::from_secs(4));
    // The first frame after the analysis: what Browser::new does (operator names for search,
    // the overview's caches) plus drawing.
    g.bench_function("first_frame", |b| {
        b.iter(|| {
            let data = &app.screen.data;
            let job = &data.loaded.job;
            black_box(operator::totals(job));
            let ids: Vec<_> = job.ranks.iter().map(|r| r.id).collect();
            let groups = deviation::rank_groups(ids.len());
            black_box(deviation::grid(
                &data.analysis.breakdown,
                &ids,
                &job.steps,
                &groups,
            ));
            app.screen.forget_computed();
            app.screen.nav.stack.truncate(1);
            app.screen.nav.pane = Pane::Overview;
            app.refresh();
            black_box(snapshot::render(app))
        })
    });
    app.screen.nav.pane = Pane::Overview;
    g.bench_function("overview_key_j", |b| b.iter(|| black_box(press(app, "j"))));
    press(app, "2");
    g.bench_function("timeline_keys_zoom_in_out", |b| {
        b.iter(|| black_box(press(app, "+-")))
    });
    press(app, "+");
    g.bench_function("timeline_keys_pan_left_right", |b| {
        b.iter(|| black_box(press(app, "lh")))
    });
    press(app, "0");
    g.bench_function("timeline_keys_next_prev_of_kind", |b| {
        b.iter(|| black_box(press(app, "><lt>")))
    });
    // The cursor: each key moves it and the inspector reads what is under it.
    g.bench_function("timeline_keys_cursor_w_b", |b| {
        b.iter(|| black_box(press(app, "wb")))
    });
    // A range marked and cleared: the inspector sums the row over it.
    press(app, "w");
    g.bench_function("timeline_keys_range_v_v", |b| {
        b.iter(|| black_box(press(app, "vv")))
    });
    // One more step on the axis and back: the joined timeline (kept after its first build).
    g.bench_function("timeline_keys_widen_narrow_steps", |b| {
        b.iter(|| black_box(press(app, "}{")))
    });
    // A step switch on the timeline builds the new step's bands (an analysis, not a redraw).
    g.bench_function("timeline_keys_prev_next_step_first_visit", |b| {
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                app.screen.shared.timelines.clear();
                let t = Instant::now();
                black_box(press(app, "[]"));
                spent += t.elapsed();
            }
            spent
        })
    });
    g.bench_function("timeline_keys_prev_next_step_revisit", |b| {
        b.iter(|| black_box(press(app, "[]")))
    });
    // In the terminal UI the neighbouring steps are built in the background after each
    // timeline frame; a key that finds them ready (one key per iteration, the step's bands dropped
    // and the neighbours prefetched before it, untimed).
    app.background();
    g.bench_function("timeline_key_step_prefetched", |b| {
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for i in 0..iters {
                app.screen.shared.timelines.clear();
                app.refresh();
                app.after_frame();
                while app.screen.busy() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    app.collect();
                }
                let t = Instant::now();
                black_box(press(app, if i % 2 == 0 { "]" } else { "[" }));
                spent += t.elapsed();
            }
            spent
        })
    });
    app.ctx.spawner = None;
    press(app, "5");
    g.bench_function("advisor_keys_j_k", |b| {
        b.iter(|| black_box(press(app, "jk")))
    });
    press(app, "4");
    g.bench_function("roofline_keys_j_k", |b| {
        b.iter(|| black_box(press(app, "jk")))
    });
    press(app, "7");
    g.bench_function("comm_keys_j_k", |b| b.iter(|| black_box(press(app, "jk"))));
    press(app, "3");
    g.bench_function("critical_keys_j_k", |b| {
        b.iter(|| black_box(press(app, "jk")))
    });
    press(app, "6");
    g.bench_function("operator_list_keys_j_k", |b| {
        b.iter(|| black_box(press(app, "jk")))
    });
    g.finish();
}

fn frames(c: &mut Criterion) {
    let ranks = env("STEPSCOPE_BENCH_RANKS", 1024);
    let mut cluster = job(
        DemoSpec {
            ranks,
            ..DemoSpec::default()
        },
        &format!("{ranks}_ranks"),
    );
    bench_job(c, &mut cluster, &format!("{ranks}_ranks"));
    drop(cluster);
    let scale = env("STEPSCOPE_BENCH_SCALE", 530);
    let mut single = job(
        DemoSpec {
            ranks: 1,
            scale,
            ..DemoSpec::default()
        },
        "single_rank",
    );
    bench_job(c, &mut single, "single_rank");
}

criterion_group!(benches, frames);
criterion_main!(benches);
