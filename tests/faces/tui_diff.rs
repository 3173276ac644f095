//! The diff screen without a terminal (issue 33): insta snapshots of its views (overview,
//! operators, kernels, an operator's two timelines) at 120×40 and 80×24, and state tests of
//! its keys: tabs, sorting, Enter and Back, clicks.

use crate::common;

use stepscope::analysis::diff::DiffOptions;
use stepscope::session::Settings;
use stepscope::session::diff::open;
use stepscope::ui::diff::{DiffScreen, Sort, View};
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

type App = Shell<DiffScreen>;

fn app(before: &str, after: &str, size: (u16, u16)) -> App {
    let p = |s: &str| -> std::path::PathBuf {
        if s.starts_with("demo") {
            s.into()
        } else {
            common::testdata(s)
        }
    };
    let pair = open(
        &p(before),
        &p(after),
        &Settings::default(),
        &DiffOptions::default(),
    )
    .expect("diff");
    let mut a = stepscope::ui::diff::headless(
        pair,
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        size,
    );
    // Titles without the checkout's path.
    a.screen.report.before.title = before.to_string();
    a.screen.report.after.title = after.to_string();
    a
}

fn keys(app: &mut App, script: &str) {
    for k in parse_script(script).expect("valid keys") {
        app.key(k);
    }
}

use common::snap;

#[test]
fn every_view_of_the_demo_against_its_straggler_twin() {
    for size in [(120, 40), (80, 24)] {
        let mut a = app("demo", "demo:straggler", size);
        let tag = format!("{}x{}", size.0, size.1);
        snap(&format!("tui_diff_overview_{tag}"), &snapshot::render(&a));
        keys(&mut a, "2");
        snap(&format!("tui_diff_operators_{tag}"), &snapshot::render(&a));
        keys(&mut a, "3");
        snap(&format!("tui_diff_kernels_{tag}"), &snapshot::render(&a));
        keys(&mut a, "<enter>");
        snap(&format!("tui_diff_timelines_{tag}"), &snapshot::render(&a));
    }
}

#[test]
fn the_opened_timelines_step_through_step_and_rank_pairs() {
    let mut a = app("demo", "demo:straggler", (120, 40));
    keys(&mut a, "2<enter>");
    let at = |a: &App| {
        let o = a.screen.opened.as_ref().expect("opened");
        (o.sides[0].step.0, o.sides[0].rank.0, o.sides[1].step.0)
    };
    // The stalled step 13 and rank 5 (its own work changed most) first.
    assert_eq!(at(&a), (13, 5, 13));
    keys(&mut a, "]");
    assert_eq!(at(&a), (14, 5, 14));
    keys(&mut a, "]]]");
    assert_eq!(at(&a).0, 15, "the last pair stays");
    keys(&mut a, "j");
    assert_ne!(at(&a).1, 5, "the next rank pair");
    keys(&mut a, "k[");
    assert_eq!(at(&a), (14, 5, 14));
    let s = snapshot::render(&a);
    assert!(
        s.contains("step 14, rank 5") && s.contains("[ ] step"),
        "{s}"
    );
    keys(&mut a, "<esc>");
    assert!(a.screen.opened.is_none());
}

#[test]
fn a_renamed_kernel_opens_both_timelines_with_its_calls_marked() {
    let mut a = app("diff/renamed/before", "diff/renamed/after", (100, 24));
    keys(&mut a, "3");
    let list = snapshot::render(&a);
    assert!(
        list.contains("Cijk_Ailk_Bljk_HHS_BH →") && list.contains("parent"),
        "{list}"
    );
    keys(&mut a, "<enter>");
    let s = snapshot::render(&a);
    snap("tui_diff_renamed_timelines_100x24", &s);
    // Each run marks its own kernel: one call in each step shown.
    assert_eq!(s.matches("1 call(s)").count(), 2, "{s}");
    keys(&mut a, "<esc>");
    assert!(a.screen.opened.is_none());
    assert_eq!(a.screen.view, View::Kernels);
}

#[test]
fn sort_cycles_and_the_selection_follows_the_keys() {
    let mut a = app("pairs/slow-rank/clean", "pairs/slow-rank/faulty", (100, 30));
    keys(&mut a, "2");
    let first = |a: &App| {
        let (rows, order, sel) = a.screen.list().unwrap();
        rows[order[sel]].name.clone()
    };
    assert_eq!(first(&a), "aten::matmul", "the largest change first");
    keys(&mut a, "s");
    assert_eq!(a.screen.sort, Sort::Before);
    assert_eq!(
        first(&a),
        "autograd::engine::evaluate_function: AddmmBackward0"
    );
    keys(&mut a, "sss");
    assert_eq!(a.screen.sort, Sort::Name);
    let (rows, order, _) = a.screen.list().unwrap();
    let names: Vec<&str> = order.iter().map(|&i| rows[i].name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let n = order.len();
    keys(&mut a, "jjG");
    assert_eq!(a.screen.selected[0], n - 1);
    keys(&mut a, "g");
    assert_eq!(a.screen.selected[0], 0);
    // `s` back to |Δ|, tab through the views and round.
    keys(&mut a, "s<tab><tab>");
    assert_eq!(
        (a.screen.sort, a.screen.view),
        (Sort::Delta, View::Overview)
    );
    let help = {
        keys(&mut a, "2?");
        snapshot::render(&a)
    };
    assert!(help.contains("sort"), "{help}");
}
