//! The TUI without a terminal: insta snapshots of every pane (demo job and a real trace, at
//! 120×40 and 80×24), and state tests of navigation, search, step switching, evidence jumps,
//! the timeline's zoom and moves, and mouse clicks.

use crate::common;

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use std::path::PathBuf;
use stepscope::model::{RankId, RankIx, StepNo};
use stepscope::session::{Session, Settings};
use stepscope::ui::browser::{Browser, Level, Pane};
use stepscope::ui::shell::keymap::{Action, Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

type App = Shell<Browser>;

/// The demo cluster (no paths) or `paths`, loaded and analysed with default settings.
fn session(paths: &[PathBuf], title: &str) -> Session {
    let mut s = Session::open(paths, &Settings::default()).expect("loads");
    s.title = title.to_string();
    s
}

/// A browser on the demo cluster (no paths) or on `paths`, dark theme, default keys.
fn app_on(paths: &[PathBuf], title: &str, size: (u16, u16)) -> App {
    stepscope::ui::headless(
        session(paths, title),
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        size,
    )
}

fn demo(size: (u16, u16)) -> App {
    app_on(&[], "demo cluster", size)
}

fn keys(app: &mut App, script: &str) {
    for k in parse_script(script).expect("valid keys") {
        app.key(k);
    }
}

fn screen(app: &App) -> String {
    snapshot::render(app)
}

/// Resets navigation and shows `pane` at `size`.
fn show(app: &mut App, pane: Pane, size: (u16, u16)) {
    app.screen.nav.stack.truncate(1);
    app.screen.nav.pane = pane;
    app.ctx.size = size;
    app.screen.panes.timeline.view = Default::default();
    app.refresh();
}

use common::snap;

fn snapshot_all(app: &mut App, job: &str) {
    for size in [(120, 40), (80, 24)] {
        for pane in Pane::ALL {
            show(app, pane, size);
            let text = screen(app);
            for l in text.lines() {
                assert!(l.chars().count() <= size.0 as usize);
            }
            assert_eq!(text.lines().count(), size.1 as usize);
            snap(
                &format!("tui_{job}_{}_{}x{}", pane.name(), size.0, size.1),
                &text,
            );
        }
    }
}

#[test]
fn every_pane_on_the_demo_job() {
    let mut app = demo((120, 40));
    snapshot_all(&mut app, "demo");
    // The drill-down levels: device view of the straggler and the operator view.
    show(&mut app, Pane::Overview, (120, 40));
    app.screen.push(Level::Device(RankIx(3)), Pane::Overview);
    app.refresh();
    snap("tui_demo_device_rank3_120x40", &screen(&app));
    app.screen.nav.pane = Pane::Timeline;
    app.refresh();
    snap("tui_demo_device_rank3_timeline_120x40", &screen(&app));
    let mm = app.screen.data.loaded.job.strings.get("aten::mm").unwrap();
    app.screen.push(Level::Operator(mm), Pane::Operator);
    app.refresh();
    snap("tui_demo_operator_aten_mm_120x40", &screen(&app));
    // The what-if at 220×60: the finding list and every rank measured above replayed; the
    // ideal (the row past the findings) replays the same step with every fix.
    show(&mut app, Pane::WhatIf, (220, 60));
    snap("tui_demo_whatif_220x60", &screen(&app));
    let ideal = app.screen.data.analysis.findings.len();
    for _ in 0..ideal {
        app.key((KeyCode::Char('j'), KeyModifiers::NONE));
    }
    app.refresh();
    let text = screen(&app);
    assert!(text.contains("ideal (every fix) saves"), "{text}");
    snap("tui_demo_whatif_ideal_220x60", &text);
    // The layout at 220×60; Enter on the straggler's cell opens its timeline, Esc comes back.
    show(&mut app, Pane::Layout, (220, 60));
    snap("tui_demo_layout_220x60", &screen(&app));
    keys(&mut app, "jjj");
    let text = screen(&app);
    assert!(
        text.contains("rank 3 dp3: ") && text.contains("% vs the median"),
        "{text}"
    );
    keys(&mut app, "<enter>");
    let text = screen(&app);
    assert!(text.contains("cluster › rank 3"), "{text}");
    keys(&mut app, "<esc>");
    assert!(screen(&app).contains("layout: DP 8"));
}

/// The layout pane's own keys: `m` cycles the metric, `g` which dimension a cell holds, `t`
/// the topology; a summary-only rank says so; the stages under the grid name the heavier
/// stage's operators.
#[test]
fn the_layout_pane_cycles_metric_grouping_and_topology() {
    let dir = common::testdata("ascend/pp4");
    let mut app = app_on(&[dir], "testdata/ascend/pp4", (120, 40));
    show(&mut app, Pane::Layout, (120, 40));
    let text = screen(&app);
    assert!(
        text.contains("layout: DP 2 × PP 2 — own work vs median, cells: tp"),
        "{text}"
    );
    assert!(text.contains("aclnnFlashAttention_Backward"), "{text}");
    assert!(text.contains("group health"), "{text}");
    snap("tui_pp4_layout_120x40", &text);
    keys(&mut app, "jj");
    assert!(
        screen(&app).contains("rank 1 (summary only) pp0·dp1"),
        "{}",
        screen(&app)
    );
    keys(&mut app, "m");
    assert!(screen(&app).contains("collective wait vs median"));
    keys(&mut app, "mmm");
    assert!(
        screen(&app).contains("own work vs median"),
        "the cycle comes back"
    );
    // `g` holds the replicas side by side in one cell; the selection stays on rank 1.
    keys(&mut app, "g");
    let text = screen(&app);
    assert!(
        text.contains("cells: dp") && text.contains("rank 1 (summary only)"),
        "{text}"
    );
    keys(&mut app, "g");
    assert!(screen(&app).contains("cells: tp"));
    keys(&mut app, "t");
    show_size(&mut app, (80, 24));
    let text = screen(&app);
    assert!(
        text.contains("topology: 1 node(s)") && text.contains("p2p intra-node"),
        "{text}"
    );
    snap("tui_pp4_topology_80x24", &text);
    keys(&mut app, "t");
    assert!(screen(&app).contains("layout: DP 2 × PP 2"));
    // On a TP 2 × DP 2 job, `g` puts the data-parallel pair in a cell, rows by tp.
    let mut app = app_on(
        &[common::testdata("megatron4")],
        "testdata/megatron4",
        (80, 24),
    );
    show(&mut app, Pane::Layout, (80, 24));
    keys(&mut app, "g");
    let text = screen(&app);
    assert!(text.contains("cells: dp") && text.contains("tp1"), "{text}");
    snap("tui_megatron4_layout_by_dp_80x24", &text);
}

/// Resizes without resetting the pane's state.
fn show_size(app: &mut App, size: (u16, u16)) {
    app.ctx.size = size;
    app.refresh();
}

#[test]
fn every_pane_on_an_ascend_job() {
    let dir = common::testdata("ascend/tiny");
    let mut app = app_on(&[dir], "testdata/ascend/tiny", (120, 40));
    snapshot_all(&mut app, "ascend_tiny");
    // The device view names Ascend's lanes: NPU streams, the HCCL group and its planes.
    show(&mut app, Pane::Timeline, (120, 40));
    app.screen.push(Level::Device(RankIx(0)), Pane::Timeline);
    app.refresh();
    snap(
        "tui_ascend_tiny_device_rank0_timeline_120x40",
        &screen(&app),
    );
    // The operator view of an NPU kernel: its kernel-table type, unit, block dim and PMU
    // pipes (kernel_details.csv: mac 85% and 83% on the two ranks, 30 µs each → 84%).
    let mm = app
        .screen
        .data
        .loaded
        .job
        .strings
        .get("aclnnMm_MatMulCommon_MatMulV2")
        .unwrap();
    app.screen.push(Level::Operator(mm), Pane::Operator);
    app.refresh();
    let s = screen(&app);
    assert!(
        s.contains("MatMulV2") && s.contains("compute_bound (busiest: mac 84%)"),
        "{s}"
    );
    snap("tui_ascend_tiny_operator_matmul_120x40", &s);
}

/// The comm pane of the shared level1 Ascend job shows HCCL's transports: rank 0 moved
/// 427 596 096 B over HCCS (docs/metrics.md, transports, by hand), SDMA beside it.
#[test]
fn the_comm_pane_shows_ascend_transports() {
    let Some(shared) = common::shared() else {
        return;
    };
    let dir = common::ascend_levels(&shared, "text")[1].clone();
    let mut app = app_on(&[dir], "ascend/level1", (120, 40));
    show(&mut app, Pane::Comm, (120, 40));
    let s = screen(&app);
    assert!(s.contains("HCCL transports"), "{s}");
    assert!(s.contains("407.8 MiB"), "427 596 096 B: {s}");
    snap("tui_ascend_level1_comm_120x40", &s);
}

#[test]
fn every_pane_on_a_real_trace() {
    let Some(shared) = common::shared() else {
        return;
    };
    let dir = common::hta(&shared, "trace_filter");
    let mut app = app_on(&[dir], "hta/tests/data/trace_filter", (120, 40));
    snapshot_all(&mut app, "trace_filter");
}

#[test]
fn drill_down_in_and_out_with_a_breadcrumb() {
    let mut app = demo((120, 40));
    assert_eq!(app.screen.level(), Level::Cluster);
    // The overview opens on the rank the first finding names (rank 5's loader stall): Enter
    // drills into the cause.
    keys(&mut app, "<enter>");
    assert_eq!(app.screen.level(), Level::Device(RankIx(5)));
    keys(&mut app, "<backspace>");
    // Rows go by own work: rank 5 (its stall), then rank 3 (the straggler); Enter opens it.
    keys(&mut app, "j<enter>");
    assert_eq!(app.screen.level(), Level::Device(RankIx(3)));
    assert!(screen(&app).contains("cluster › rank 3"));
    assert!(screen(&app).contains("rank 3, step 13: breakdown vs cluster median"));
    // Enter on the device's first operator opens it.
    keys(&mut app, "<enter>");
    let Level::Operator(op) = app.screen.level() else {
        panic!("operator level")
    };
    assert_eq!(app.screen.nav.pane, Pane::Operator);
    let name = app.screen.name(op).to_string();
    assert!(name.starts_with("sm90_xmma_gemm"), "{name}");
    assert!(screen(&app).contains(&format!("cluster › rank 3 › {}", &name[..20])));
    // Esc goes back to the device, Backspace to the cluster, and no further.
    keys(&mut app, "<esc>");
    assert_eq!(
        (app.screen.level(), app.screen.nav.pane),
        (Level::Device(RankIx(3)), Pane::Overview)
    );
    keys(&mut app, "<backspace>");
    assert_eq!(app.screen.level(), Level::Cluster);
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.level(), Level::Cluster);
    assert!(screen(&app).contains("at the cluster level"));
}

#[test]
fn search_finds_operators_and_n_walks_the_results() {
    let mut app = demo((120, 40));
    keys(&mut app, "/allred");
    assert!(app.screen.search.typing);
    let s = screen(&app);
    assert!(s.contains("search operators: "), "{s}");
    let best = app.screen.name(app.screen.search.results[0]).to_string();
    assert!(
        best.starts_with("ncclDevKernel_AllReduce"),
        "best match first: {best}"
    );
    keys(&mut app, "<enter>");
    let Level::Operator(op) = app.screen.level() else {
        panic!("operator level")
    };
    assert!(app.screen.name(op).starts_with("ncclDevKernel_AllReduce"));
    // Comm kernels: rank 5 waits least (it is the one the others wait for).
    let d = &app.screen.panes.operator.detail.as_ref().unwrap().2;
    assert_eq!(d.per_rank.len(), 8);
    assert_eq!(d.all.count, 192);
    // A query matching several names: n and N step through them, wrapping.
    keys(&mut app, "/aten::<enter>");
    let first = app.screen.operator().unwrap();
    keys(&mut app, "n");
    let second = app.screen.operator().unwrap();
    assert_ne!(first, second);
    keys(&mut app, "N");
    assert_eq!(app.screen.operator(), Some(first));
    // Operator levels replace each other rather than stacking up.
    assert_eq!(app.screen.nav.stack.len(), 2);
    // Nothing matches: a message, no navigation.
    keys(&mut app, "/zzzzqq<enter>");
    assert_eq!(app.screen.operator(), Some(first));
    assert!(screen(&app).contains("no operator matches `zzzzqq`"));
}

#[test]
fn steps_switch_and_clamp() {
    let mut app = demo((120, 40));
    assert_eq!(
        app.screen.step_number(),
        Some(StepNo(13)),
        "opens on the slowest step"
    );
    keys(&mut app, "]]]]]]");
    assert_eq!(app.screen.step_number(), Some(StepNo(15)));
    keys(&mut app, "[[[[[[[[[");
    assert_eq!(app.screen.step_number(), Some(StepNo(10)));
    assert!(screen(&app).contains("step 10 (1 of 6)"));
    // The critical path follows the step.
    keys(&mut app, "3");
    assert_eq!(app.screen.critical().unwrap().window.to_string(), "step 10");
    keys(&mut app, "]]]");
    assert_eq!(app.screen.critical().unwrap().window.to_string(), "step 13");
    // The timeline keeps the steps it built: back and forth reuses them.
    keys(&mut app, "2][");
    let kept: Vec<StepNo> = app.screen.shared.timelines.iter().map(|t| t.step).collect();
    assert_eq!(kept, vec![StepNo(14), StepNo(13)]);
    assert_eq!(app.screen.timeline().unwrap().step, StepNo(13));
}

#[test]
fn findings_jump_to_their_evidence() {
    let mut app = demo((120, 40));
    keys(&mut app, "5");
    let rules: Vec<&str> = app
        .screen
        .data
        .analysis
        .findings
        .iter()
        .map(|f| f.rule)
        .collect();
    // The data-loader stall (the slow step folded into it): rank 5 in step 13.
    let slow = rules.iter().position(|r| *r == "dataloader").unwrap();
    let straggler = rules.iter().position(|r| *r == "straggler").unwrap();
    keys(&mut app, "g");
    for _ in 0..slow {
        keys(&mut app, "j");
    }
    keys(&mut app, "[[<enter>");
    // Its proof: rank 5's lanes in step 13, the loader range selected.
    assert_eq!(app.screen.level(), Level::Device(RankIx(5)));
    assert_eq!(app.screen.step_number(), Some(StepNo(13)));
    assert_eq!(app.screen.nav.pane, Pane::Timeline);
    let (op, _) = app.screen.panes.timeline.view.op.unwrap();
    assert!(app.screen.name(op).starts_with("enumerate(DataLoader)#"));
    keys(&mut app, "<esc>");
    assert_eq!(
        (app.screen.level(), app.screen.nav.pane),
        (Level::Cluster, Pane::Advisor)
    );
    assert_eq!(app.screen.step_number(), Some(StepNo(11)));
    // The straggler: the collective rank 3 arrives last at, on every rank's row.
    keys(&mut app, "g");
    for _ in 0..straggler {
        keys(&mut app, "j");
    }
    keys(&mut app, "<enter>");
    assert_eq!(
        (app.screen.level(), app.screen.nav.pane),
        (Level::Cluster, Pane::Timeline)
    );
    let (op, _) = app.screen.panes.timeline.view.op.unwrap();
    assert!(app.screen.name(op).starts_with("ncclDevKernel_AllReduce"));
    let t = app.screen.timeline().unwrap();
    let rows = stepscope::ui::browser::panes::timeline::display_rows(&app.screen, t, (120, 40));
    let row = &t.rows[rows[app.screen.panes.timeline.view.row].start];
    assert_eq!(row.rank, RankId(3));
}

#[test]
fn critical_path_enter_shows_the_op_in_the_timeline() {
    let mut app = demo((120, 40));
    keys(&mut app, "3");
    // The first device stretch of the path.
    let k = app
        .screen
        .critical()
        .unwrap()
        .ops
        .iter()
        .position(|o| o.category.as_str() == "gpu_compute")
        .unwrap();
    keys(&mut app, &"j".repeat(k));
    let op = app.screen.critical().unwrap().ops[k].clone();
    keys(&mut app, "<enter>");
    assert_eq!(app.screen.nav.pane, Pane::Timeline);
    let t = app.screen.timeline().unwrap();
    let (sym, k) = app.screen.panes.timeline.view.op.unwrap();
    assert_eq!(app.screen.name(sym), op.name);
    let row = &t.rows[app.screen.panes.timeline.view.row];
    assert_eq!(row.rank, op.rank);
    let band = row.occurrence(sym, k).unwrap();
    let off = app.screen.data.analysis.comm.offsets[row.rank_index.get()].offset_ns;
    assert_eq!(band.start, op.start_ns + off, "the path's own stretch");
    let (a, b) = app.screen.panes.timeline.view.zoom.unwrap();
    assert!(a <= band.start && band.end <= b, "zoomed around it");
    // A host stretch (the data loader) opens rank 5's lanes.
    keys(&mut app, "3gg<enter>");
    assert_eq!(app.screen.level(), Level::Device(RankIx(5)));
    assert_eq!(app.screen.nav.pane, Pane::Timeline);
    let t = app.screen.timeline().unwrap();
    assert!(
        t.rows
            .iter()
            .all(|r| r.rank == RankId(5) && r.lane.is_some())
    );
    let (sym, _) = app.screen.panes.timeline.view.op.unwrap();
    assert!(app.screen.name(sym).starts_with("enumerate(DataLoader)"));
}

#[test]
fn timeline_zoom_pan_and_next_of_kind() {
    let mut app = demo((120, 40));
    keys(&mut app, "2");
    let t = app.screen.timeline().unwrap();
    let (t0, t1) = (t.start, t.end);
    assert_eq!(t.rows.len(), 8);
    assert!(app.screen.panes.timeline.view.zoom.is_none());
    let (s0, k0) = app.screen.panes.timeline.view.op.unwrap();
    assert!(
        app.screen.name(s0).starts_with("ncclDevKernel_AllReduce"),
        "opens on the first collective"
    );
    assert_eq!(k0, 0);
    keys(&mut app, "+");
    let (a, b) = app.screen.panes.timeline.view.zoom.unwrap();
    assert_eq!(b - a, (t1 - t0) / 2);
    keys(&mut app, "h");
    let (a2, b2) = app.screen.panes.timeline.view.zoom.unwrap();
    assert_eq!(
        (a2, b2),
        (
            (a - (b - a) / 4).max(t0),
            (a - (b - a) / 4).max(t0) + (b - a)
        )
    );
    keys(&mut app, "0");
    assert!(app.screen.panes.timeline.view.zoom.is_none());
    keys(&mut app, "-");
    assert!(
        app.screen.panes.timeline.view.zoom.is_none(),
        "never wider than the step"
    );
    // Next collective on rank 0: the second all-reduce of the step.
    keys(&mut app, ">");
    assert_eq!(app.screen.panes.timeline.view.op, Some((s0, 1)));
    keys(&mut app, "<lt>");
    assert_eq!(app.screen.panes.timeline.view.op, Some((s0, 0)));
    // Enter on a rank row opens its lanes; Esc comes back.
    keys(&mut app, "jjj<enter>");
    assert_eq!(app.screen.level(), Level::Device(RankIx(3)));
    assert!(screen(&app).contains("step 13: rank 3 lanes"));
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.level(), Level::Cluster);
}

#[test]
fn many_ranks_are_grouped_and_groups_expand() {
    let mut app = demo((120, 14)); // room for 6 axes
    keys(&mut app, "2");
    let t = app.screen.timeline().unwrap();
    let rows = stepscope::ui::browser::panes::timeline::display_rows(&app.screen, t, app.ctx.size);
    assert_eq!(rows, vec![0..2, 2..4, 4..6, 6..8]);
    assert!(screen(&app).contains("0…1"));
    keys(&mut app, "j<enter>");
    assert_eq!(app.screen.panes.timeline.view.expanded, Some((2, 4)));
    let t = app.screen.timeline().unwrap();
    assert_eq!(
        stepscope::ui::browser::panes::timeline::display_rows(&app.screen, t, app.ctx.size),
        vec![2..3, 3..4]
    );
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.panes.timeline.view.expanded, None);
    assert_eq!(app.screen.level(), Level::Cluster);
}

#[test]
fn help_overlay_lists_the_keymap_and_any_key_closes_it() {
    let mut app = demo((120, 40));
    // Each pane's help lists the global keys and its own, only: every binding is in one.
    let mut seen = std::collections::HashSet::new();
    for p in Pane::ALL {
        show(&mut app, p, (120, 40));
        keys(&mut app, "?");
        let s = screen(&app);
        assert!(s.contains("keys (any key closes)"));
        for b in &app.ctx.keymap.bindings {
            if s.contains(&b.desc) {
                seen.insert(b.desc.clone());
            }
        }
        let own = |desc: &str| s.contains(desc);
        // Pane commands: `m metric` in comm and layout, `g grouping` in layout alone (where
        // `g` is not `first`).
        let metric = own("m  metric") || own("m metric");
        match p {
            Pane::Timeline => assert!(own("next band or gap") && !metric),
            Pane::Comm => assert!(metric && !own("next band or gap") && !own("grouping")),
            Pane::Layout => assert!(metric && own("grouping") && own("topology")),
            _ => assert!(!metric && !own("next band or gap"), "{}", p.name()),
        }
        keys(&mut app, "x");
    }
    // `sort` is the diff screen's (tests/tui_diff.rs checks its help lists it).
    let browser = |a: Action| a != Action::CycleSort;
    for b in app.ctx.keymap.bindings.iter().filter(|b| browser(b.action)) {
        assert!(seen.contains(&b.desc), "some help lists `{}`", b.desc);
    }
    keys(&mut app, "?");
    keys(&mut app, "x");
    assert!(!app.ctx.help);
    assert!(!app.ctx.quit);
    app.key((KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.ctx.quit);
}

#[test]
fn mouse_clicks_select_rows_tabs_and_open() {
    let mut app = demo((120, 40));
    let _ = screen(&app); // records the clickable areas
    // The advisor tab (" 5 advisor " on line 1).
    let line = screen(&app).lines().nth(1).unwrap().to_string();
    let x = line.find("5 advisor").unwrap() as u16;
    app.click(x, 1);
    assert_eq!(app.screen.nav.pane, Pane::Advisor);
    let _ = screen(&app);
    // The second finding (list rows start at line 3).
    app.click(5, 4);
    assert_eq!(app.screen.row_of(Pane::Advisor), 1);
    // A second click on it opens its evidence.
    let _ = screen(&app);
    app.click(5, 4);
    assert_ne!(
        (app.screen.nav.pane, app.screen.level()),
        (Pane::Advisor, Level::Cluster)
    );
}

#[test]
fn mono_and_ascii_keep_the_selection_visible() {
    let mut app = stepscope::ui::headless(
        session(&[], "demo"),
        Keymap::default_map(),
        Theme::builtin("mono"),
        true,
        (80, 24),
    );
    keys(&mut app, "2");
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let buf = term.backend().buffer();
    assert!(
        buf.content.iter().all(|c| c.symbol().is_ascii()),
        "--ascii draws ASCII only"
    );
    let reversed = buf
        .content
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .count();
    assert!(
        reversed > 0,
        "the selection is reverse video without colours"
    );
    assert!(
        buf.content
            .iter()
            .all(|c| c.fg == ratatui::style::Color::Reset)
    );
}

#[test]
fn every_view_draws_at_tiny_and_huge_sizes() {
    let mut app = demo((120, 40));
    for size in [(20, 8), (33, 11), (300, 100)] {
        for pane in Pane::ALL {
            show(&mut app, pane, size);
            for script in ["", "jjj<enter>", "<enter><enter>", "?", "/a", "+>"] {
                keys(&mut app, script);
                let text = screen(&app);
                assert_eq!(text.lines().count(), size.1 as usize);
                keys(&mut app, "<esc><esc><esc>");
            }
        }
    }
}

#[test]
fn background_work_keeps_keys_responsive_and_lands() {
    use stepscope::ui::browser::work::Task;
    let mut app = demo((120, 40));
    app.background();
    let settle = |app: &mut App| {
        let began = std::time::Instant::now();
        while app.screen.busy() {
            assert!(began.elapsed().as_secs() < 30, "background work finishes");
            std::thread::sleep(std::time::Duration::from_millis(5));
            app.collect();
        }
    };
    // Step 12's critical path is not known yet: the pane says so, then shows it.
    keys(&mut app, "[3");
    if app.screen.is_pending(Task::Critical(StepNo(12))) {
        assert!(screen(&app).contains("computing the critical path of step 12"));
    }
    settle(&mut app);
    assert_eq!(app.screen.critical().unwrap().window.to_string(), "step 12");
    assert!(screen(&app).contains("critical path: time by category"));
    // An operator's statistics arrive the same way.
    keys(&mut app, "/aten::mm<enter>");
    settle(&mut app);
    assert_eq!(
        app.screen
            .panes
            .operator
            .detail
            .as_ref()
            .unwrap()
            .2
            .all
            .count,
        4608
    );
    assert!(screen(&app).contains("who is slow at it"));
    // After a timeline frame, the neighbouring steps are prefetched.
    keys(&mut app, "<esc>2");
    let _ = screen(&app);
    app.after_frame();
    settle(&mut app);
    let mut kept: Vec<StepNo> = app.screen.shared.timelines.iter().map(|t| t.step).collect();
    kept.sort_unstable();
    assert_eq!(kept, vec![StepNo(11), StepNo(12), StepNo(13)]);
    assert_eq!(
        app.screen.timeline().unwrap().step,
        StepNo(12),
        "the current one stays current"
    );
}

#[test]
fn search_in_the_timeline_selects_the_operator_there() {
    let mut app = demo((120, 14)); // grouped rows: 2 ranks per row
    keys(&mut app, "2/flash_fwd<enter>");
    assert_eq!(app.screen.nav.pane, Pane::Timeline);
    let (s, k) = app.screen.panes.timeline.view.op.unwrap();
    assert!(app.screen.name(s).contains("flash_fwd"));
    assert_eq!(k, 0);
    assert_eq!(
        app.screen.panes.timeline.view.row, 0,
        "display row of rank 0's group"
    );
    // An operator this view does not draw (a host op) opens the lanes of the rank where it
    // ran longest in the step; Esc comes back to the cluster's selection.
    keys(&mut app, "/aten::mm<enter>");
    assert!(matches!(app.screen.level(), Level::Device(_)));
    assert!(
        screen(&app).contains(", step 13: aten::mm"),
        "{}",
        screen(&app)
    );
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.level(), Level::Cluster);
    // Operator levels replace each other from any view.
    keys(&mut app, "6/aten::mm<enter>4g<enter>");
    assert_eq!(app.screen.nav.stack.len(), 2);
    keys(&mut app, "<esc>");
    assert_eq!(app.screen.level(), Level::Cluster);
}

#[test]
fn a_collective_is_joined_across_ranks_by_its_matched_instance() {
    // testdata/pipeline2: rank 0 sends [520, 620) into rank 1's receive posted at 30
    // (590 µs); rank 1 sends back [920, 1000) into rank 0's receive posted at 620 (380 µs).
    let mut app = app_on(&[common::testdata("pipeline2")], "pipeline2", (120, 40));
    keys(&mut app, "2");
    let t = app.screen.timeline().unwrap();
    let comm = &app.screen.data.analysis.comm;
    let durs = |v: Vec<Option<stepscope::analysis::timeline::Band>>| -> Vec<i64> {
        v.iter()
            .map(|b| b.map_or(-1, |b| b.end - b.start))
            .collect()
    };
    let sr: Vec<_> = t.rows[0]
        .bands
        .iter()
        .filter(|b| b.kind != stepscope::analysis::timeline::BandKind::Compute)
        .copied()
        .collect();
    assert_eq!(
        durs(t.instance_occurrences(comm, 0, &sr[0]).unwrap()),
        vec![100_000, 590_000]
    );
    assert_eq!(
        durs(t.instance_occurrences(comm, 0, &sr[1]).unwrap()),
        vec![380_000, 80_000]
    );
    let gemm = t.rows[0]
        .bands
        .iter()
        .find(|b| app.screen.name(b.name) == "fwd_gemm")
        .unwrap();
    assert!(
        t.instance_occurrences(comm, 0, gemm).is_none(),
        "compute is not a collective"
    );
    // The view uses it: select the second transfer on rank 0.
    keys(&mut app, ">");
    assert_eq!(
        durs(app.screen.panes.timeline.bands.clone()),
        vec![380_000, 80_000]
    );
    assert!(screen(&app).contains("on 2 rows"));
}

#[test]
fn pgdn_scrolls_the_advisor_s_detail_to_its_cause_and_fix_at_80x24() {
    let mut app = demo((80, 24));
    keys(&mut app, "5");
    let before = screen(&app);
    assert!(!before.contains("what to change"), "{before}");
    keys(&mut app, "<pagedown>");
    let after = screen(&app);
    assert!(after.contains("what to change"), "{after}");
    assert!(after.contains("↑ more above"), "{after}");
    // The selection stays; another finding starts at its top.
    assert_eq!(app.screen.row_of(Pane::Advisor), 0);
    keys(&mut app, "j");
    assert!(!screen(&app).contains("↑ more above"));
    // Scrolling stops at the text's last line; PgUp comes back to the top.
    keys(&mut app, &"<pagedown>".repeat(20));
    assert!(screen(&app).contains("↑ more above"));
    keys(&mut app, &"<pageup>".repeat(6));
    assert!(!screen(&app).contains("↑ more above"));
}

#[test]
fn pgdn_scrolls_the_operator_s_args_at_80x24() {
    let mut app = demo((80, 24));
    keys(&mut app, "/aten::linear<enter>");
    assert!(matches!(app.screen.level(), Level::Operator(_)));
    let before = screen(&app);
    assert!(!before.contains("Record function id"), "{before}");
    assert!(before.contains("more below; PgDn"), "{before}");
    keys(&mut app, "<pagedown>");
    let after = screen(&app);
    assert!(after.contains("Record function id"), "{after}");
    assert!(after.contains("more above"), "{after}");
    // The per-rank rows still move with j/k.
    keys(&mut app, "j");
    assert_eq!(app.screen.panes.operator.row, 1);
}
