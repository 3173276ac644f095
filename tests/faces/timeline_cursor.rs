//! The timeline you can point at: the cursor walks a row's bands and gaps, the inspector
//! says what is under it (a band's facts, what the host did in a gap, a range summed), several
//! steps share one axis, and snapshots of each at 80×24, 120×40 and 220×60.

use crate::common;

use stepscope::analysis::inspect::HostDoing;
use stepscope::analysis::timeline::BandKind;
use stepscope::model::{RankId, StepNo};
use stepscope::session::{Session, Settings};
use stepscope::ui::browser::panes::inspector::Inspected;
use stepscope::ui::browser::{Browser, Level, Pane};
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

type App = Shell<Browser>;

fn demo(size: (u16, u16)) -> App {
    let mut s = Session::open(&[], &Settings::default()).expect("the demo loads");
    s.title = "demo cluster".into();
    stepscope::ui::headless(
        s,
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        size,
    )
}

fn keys(app: &mut App, script: &str) {
    for k in parse_script(script).expect("valid keys") {
        app.key(k);
    }
}

fn inspected(app: &App) -> Inspected {
    app.screen
        .panes
        .timeline
        .inspected
        .clone()
        .expect("inspected")
        .1
}

/// Rank 5's lanes in step 13 (the data-loader stall), the device stream row selected.
fn rank5_stream(size: (u16, u16)) -> App {
    let mut app = demo(size);
    keys(&mut app, "2");
    let five = app.screen.data.loaded.job.rank_ix(RankId(5)).unwrap();
    app.screen.push(Level::Device(five), Pane::Timeline);
    app.refresh();
    let t = app.screen.timeline().unwrap();
    let stream = t
        .rows
        .iter()
        .position(|r| r.label.contains("stream 7"))
        .unwrap();
    keys(&mut app, &"j".repeat(stream));
    app
}

#[test]
fn the_cursor_finds_the_device_idle_under_the_loader_and_says_why() {
    let mut app = rank5_stream((120, 40));
    assert_eq!(app.screen.step_number(), Some(StepNo(13)));
    // The stream idles ~300 ms from the step's start, while the host is in the loader.
    let mut found = None;
    for _ in 0..40 {
        keys(&mut app, "w");
        if let Inspected::Gap(rank, (a, z), doing) = inspected(&app) {
            if z - a > 100_000_000 {
                found = Some((rank, z - a, doing));
                break;
            }
        }
    }
    let (rank, len, doing) = found.expect("a long gap on the stream");
    assert_eq!(rank, RankId(5));
    assert!(len > 250_000_000, "{len}");
    let HostDoing::In { chain, loading, .. } = doing else {
        panic!("{doing:?}")
    };
    assert!(loading);
    let outer = app.screen.name(chain[0]);
    assert!(outer.starts_with("enumerate(DataLoader)#"), "{outer}");
    // The screen says it in words.
    let text = snapshot::render(&app);
    assert!(text.contains("inspector: gap"), "{text}");
    assert!(text.contains("loading data"), "{text}");
    // `w` goes on to the band that ends it, `b` comes back to the gap.
    let gap = app.screen.panes.timeline.view.gap;
    keys(&mut app, "w");
    assert!(matches!(inspected(&app), Inspected::Band(_)));
    assert_eq!(app.screen.panes.timeline.view.gap, None);
    keys(&mut app, "b");
    assert_eq!(app.screen.panes.timeline.view.gap, gap);
}

#[test]
fn a_band_s_inspection_names_its_launch_and_its_collective() {
    let mut app = demo((120, 40));
    keys(&mut app, "2");
    // The default selection is the step's first collective: rank 0's row.
    let Inspected::Band(b) = inspected(&app) else {
        panic!("a band")
    };
    let c = b.collective.expect("a matched collective");
    assert_eq!(c.members, 8);
    // Rank 5 paused 300 ms in step 13: everyone else waits for it at the first all-reduce.
    assert_eq!(c.last_arriver, RankId(5));
    assert!(c.wait > 250_000_000, "{}", c.wait);
    assert!(c.skew >= c.wait);
    let l = b.launch.expect("its launch");
    assert_eq!(app.screen.name(l.name), "cudaLaunchKernel");
    assert!(l.delay >= 0);
    // Its args, read again from the input: the correlation id first on the last line.
    let (e, args) = app
        .screen
        .panes
        .timeline
        .band_args
        .clone()
        .expect("args read");
    assert_eq!(e, b.event);
    let args = args.expect("the demo's args");
    assert!(args.iter().any(|(k, _)| k == "correlation"), "{args:?}");
    let text = snapshot::render(&app);
    assert!(text.contains("args correlation "), "{text}");
}

#[test]
fn a_range_sums_the_row_and_esc_clears_it_first() {
    let mut app = rank5_stream((120, 40));
    keys(&mut app, "wvwwwwwwwwww");
    let Inspected::Range(rank, r) = inspected(&app) else {
        panic!("a range")
    };
    assert_eq!(rank, RankId(5));
    // Busy per kind and idle partition the range (one stream: kinds never overlap).
    let busy: i64 = r.kinds.iter().map(|k| k.1).sum();
    assert_eq!(busy + r.idle, r.to - r.from);
    assert!(r.kinds.iter().any(|k| k.0 == BandKind::Compute));
    assert!(!r.top.is_empty() && r.top.len() <= 5);
    assert!(r.top.windows(2).all(|w| w[0].1 >= w[1].1));
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.panes.timeline.view.mark, None);
    assert_eq!(app.screen.level(), app.screen.level()); // still on rank 5's lanes
    assert_eq!(app.screen.nav.pane, Pane::Timeline);
    assert!(matches!(
        inspected(&app),
        Inspected::Band(_) | Inspected::Gap(..)
    ));
}

#[test]
fn several_steps_share_one_axis() {
    let mut app = demo((120, 40));
    keys(&mut app, "2");
    let one: Vec<usize> = (13..=15)
        .map(|s| {
            let mut a = demo((120, 40));
            keys(&mut a, "2");
            while a.screen.step_number() != Some(StepNo(s)) {
                keys(&mut a, "]");
            }
            a.screen.timeline().unwrap().rows[0].bands.len()
        })
        .collect();
    keys(&mut app, "}}");
    let t = app.screen.timeline().unwrap();
    assert_eq!((t.step, t.last), (StepNo(13), StepNo(15)));
    // Rank 0's device work of the three steps, once each, in start order.
    assert_eq!(t.rows[0].bands.len(), one.iter().sum::<usize>());
    assert!(t.rows[0].bands.windows(2).all(|w| w[0].start <= w[1].start));
    let text = snapshot::render(&app);
    assert!(text.contains("steps 13–15: ranks"));
    // The ruler marks where steps 14 and 15 begin.
    let marks: Vec<StepNo> = t.steps_at.iter().map(|s| s.0).collect();
    assert_eq!(marks, vec![StepNo(14), StepNo(15)]);
    assert!(t.steps_at.windows(2).all(|w| w[0].1 < w[1].1));
    assert!(text.contains("┃14") && text.contains("┃15"), "{text}");
    // Past the last step it stops and says so; `{` narrows.
    keys(&mut app, "}}}}");
    assert_eq!(app.screen.timeline().unwrap().last, StepNo(15));
    keys(&mut app, "{{");
    assert_eq!(app.screen.timeline().unwrap().last, StepNo(13));
}

#[test]
fn i_hides_the_inspector_and_gives_its_lines_to_the_rows() {
    let mut app = demo((120, 24));
    keys(&mut app, "2");
    assert!(snapshot::render(&app).contains("inspector"));
    keys(&mut app, "i");
    assert!(!snapshot::render(&app).contains("inspector"));
}

use common::snap;

#[test]
fn snapshots_of_the_inspector_the_range_and_several_steps() {
    for size in [(80, 24), (120, 40), (220, 60)] {
        let tag = format!("{}x{}", size.0, size.1);
        let mut app = rank5_stream(size);
        keys(&mut app, "ww");
        snap(
            &format!("timeline_inspect_band_{tag}"),
            &snapshot::render(&app),
        );
        let mut app = rank5_stream(size);
        keys(&mut app, "wvwwwwww");
        snap(&format!("timeline_range_{tag}"), &snapshot::render(&app));
        let mut app = demo(size);
        keys(&mut app, "2}}");
        snap(&format!("timeline_steps_{tag}"), &snapshot::render(&app));
    }
}

#[test]
fn a_click_on_a_row_puts_the_cursor_on_what_is_at_that_time() {
    let mut app = demo((120, 40));
    keys(&mut app, "2");
    let text = snapshot::render(&app);
    // Rank 5's row: idle for its first 300 ms (the loader), busy at the end.
    let y = text
        .lines()
        .position(|l| l.starts_with("│rank 5 "))
        .unwrap() as u16;
    let line: Vec<char> = text.lines().nth(y as usize).unwrap().chars().collect();
    let first_cell = 1 + 11; // border + label column
    let idle = line.iter().position(|&c| c == '─').unwrap() as u16;
    let busy = line.iter().rposition(|&c| c == '█').unwrap() as u16;
    assert!(idle as usize >= first_cell);
    app.click(idle + 5, y);
    let b = &app.screen;
    let row = &b.timeline().unwrap().rows[stepscope::ui::browser::panes::timeline::display_rows(
        b,
        b.timeline().unwrap(),
        (120, 40),
    )[b.panes.timeline.view.row]
        .start];
    assert_eq!(row.rank, RankId(5));
    let Inspected::Gap(rank, (a, z), _) = inspected(&app) else {
        panic!("a gap")
    };
    assert_eq!(rank, RankId(5));
    assert!(z - a > 250_000_000);
    app.click(busy, y);
    assert_eq!(app.screen.panes.timeline.view.gap, None);
    let Inspected::Band(band) = inspected(&app) else {
        panic!("a band")
    };
    assert_eq!(band.rank, RankId(5));
}

#[test]
fn search_results_say_how_often_and_how_long_and_n_walks_the_hits_in_time() {
    let mut app = demo((120, 40));
    keys(&mut app, "2/allred");
    let text = snapshot::render(&app);
    let line = text
        .lines()
        .find(|l| l.contains("ncclDevKernel_AllReduce"))
        .unwrap_or_else(|| panic!("{text}"));
    // 4 all-reduces per step × 6 steps × 8 ranks.
    assert!(line.contains("192×"), "{line}");
    keys(&mut app, "<enter>");
    let start = |app: &App| {
        let b = &app.screen;
        let t = b.timeline().unwrap();
        let rows = stepscope::ui::browser::panes::timeline::display_rows(b, t, (120, 40));
        let (op, k) = b.panes.timeline.view.op.unwrap();
        t.rows[rows[b.panes.timeline.view.row].start]
            .occurrence(op, k)
            .unwrap()
            .start
    };
    let mut seen = vec![start(&app)];
    for _ in 0..5 {
        keys(&mut app, "n");
        let s = start(&app);
        assert!(s >= *seen.last().unwrap(), "in time order");
        seen.push(s);
    }
    let status = app.ctx.status.clone().unwrap();
    assert!(status.contains(" of 32 on this axis"), "{status}");
    keys(&mut app, "N");
    assert_eq!(start(&app), seen[4]);
}
