//! The live watch screen without a terminal: insta snapshots at 120×40 and 80×24 of the
//! generated per-rank logs + dmon capture in `testdata/watch` and of a real Megatron log, and
//! the alert list's selection and source lines.

use crate::common;

use std::path::PathBuf;
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};
use stepscope::ui::watch::WatchScreen;

fn testdata() -> Vec<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch");
    let mut v: Vec<PathBuf> = (0..4).map(|r| d.join(format!("rank{r}.log"))).collect();
    v.push(d.join("dmon.txt"));
    v
}

/// Paths relative to the checkout, so snapshots do not depend on where it lives.
fn relative(paths: &[PathBuf]) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    paths
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap_or(p).to_path_buf())
        .collect()
}

fn app(paths: &[PathBuf], size: (u16, u16)) -> Shell<WatchScreen> {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    stepscope::ui::run::headless_watch(
        &relative(paths),
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        size,
    )
    .expect("replays")
}

fn keys(app: &mut Shell<WatchScreen>, script: &str) {
    for k in parse_script(script).expect("valid keys") {
        app.key(k);
    }
}

use common::snap;

#[test]
fn watch_screen_snapshots() {
    for (w, h) in [(120, 40), (80, 24)] {
        let a = app(&testdata(), (w, h));
        snap(
            &format!("tui_watch_ranks_dmon_{w}x{h}"),
            &snapshot::render(&a),
        );
    }
    if let Some(s) = common::shared() {
        let log = s.join("traces/logs/megatron-deepspeed-alcf/aurora_2b_cooldown_excerpt.log");
        let text = snapshot::render(&app(&[log], (80, 24)));
        snap("tui_watch_alcf_80x24", &text);
    }
}

#[test]
fn the_alerts_group_ranks_and_enter_shows_the_lines_that_led_there() {
    let mut a = app(&testdata(), (120, 40));
    let v = &a.screen.view;
    // Grouped: the checkpoint stalls at steps 30 and 60 on all four ranks are one alert each;
    // rank 2's shift from step 41 is a regime change; GPU 2 throttles and trails its peers.
    let rules: Vec<(&str, Vec<u32>, Vec<u64>)> = v
        .alerts
        .iter()
        .map(|r| {
            (
                r.alert.rule,
                r.alert.ranks.clone(),
                r.alert.steps.first().copied().into_iter().collect(),
            )
        })
        .collect();
    assert!(
        rules.contains(&("slow_steps", vec![0, 1, 2, 3], vec![30])),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("slow_steps", vec![0, 1, 2, 3], vec![60])),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("slow_steps", vec![2], vec![41])),
        "{rules:?}"
    );
    assert_eq!(
        v.alerts
            .iter()
            .filter(|r| r.alert.rule.starts_with("device_"))
            .count(),
        2
    );
    assert_eq!(v.heat.len(), 4);
    assert_eq!(v.devices.len(), 4);
    assert!(
        v.devices
            .iter()
            .filter(|d| d.alerted)
            .all(|d| d.label == "GPU 2")
    );
    // The first alert (step 30 on every rank) and its lines: the checkpoint line is there.
    keys(&mut a, "g<enter>");
    assert!(a.screen.open);
    let text = snapshot::render(&a);
    assert!(
        text.contains("saving checkpoint at iteration      30"),
        "{text}"
    );
    assert!(text.contains("ranks 0,1,2,3: steps 30"), "{text}");
    keys(&mut a, "<esc>j");
    assert!(!a.screen.open);
    assert_eq!(a.screen.selection(), Some(1));
    // G goes back to following the newest.
    keys(&mut a, "G");
    assert_eq!(a.screen.selected, None);
    assert_eq!(a.screen.selection(), Some(a.screen.view.alerts.len() - 1));
}

#[test]
fn tiny_terminals_draw_without_panicking() {
    for size in [(1, 1), (2, 3), (3, 10), (10, 4), (20, 8)] {
        let mut a = app(&testdata(), size);
        snapshot::render(&a);
        keys(&mut a, "g<enter>");
        snapshot::render(&a);
    }
}

#[test]
fn devices_placed_on_the_step_axis() {
    // testdata/watch/dated.txt: GPU 1 idle from second (= step) 8 of 20.
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch/dated.txt");
    let a = app(&[d], (100, 30));
    let text = snapshot::render(&a);
    assert!(text.contains("devices (3) · by step 1–20"), "{text}");
    assert!(text.contains("device_idle GPU 1 during step 12"), "{text}");
    snap("tui_watch_devices_by_step_100x30", &text);
}

#[test]
fn an_input_without_step_lines_says_it_ended_rather_than_waiting() {
    // A monitor capture alone: devices, no step line. Once it has been read to its end the
    // step strip says the input ended instead of waiting for step lines.
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/watch/dmon.txt");
    let a = app(&[d], (100, 30));
    let screen = snapshot::render(&a);
    assert!(
        screen.contains("the input ended without a step line"),
        "{screen}"
    );
    assert!(!screen.contains("waiting for step lines"), "{screen}");
}
