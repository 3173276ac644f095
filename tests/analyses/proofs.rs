//! Every finding lands on its proof: on each demo scenario, Enter on each finding opens the
//! view its focus names, with the culprit selected (the band of the event the proof points at,
//! or the rank's row), and Esc comes back to exactly the advisor row and step it left. The
//! same on the real jobs in `../shared/traces`.

use crate::common;

use stepscope::analysis::advisor::proof::{Target, land};
use stepscope::analysis::advisor::{Focus, HostCall};
use stepscope::model::StepNo;
use stepscope::session::{Scenario, Session, Settings};
use stepscope::ui::browser::panes::timeline::display_rows;
use stepscope::ui::browser::{Browser, Level, Pane};
use stepscope::ui::shell::Shell;
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;

type App = Shell<Browser>;
const SIZE: (u16, u16) = (120, 40);

fn app(s: Scenario) -> App {
    let settings = Settings {
        scenario: s,
        ..Settings::default()
    };
    browser(Session::open(&[], &settings).expect("the demo loads"))
}

fn browser(session: Session) -> App {
    stepscope::ui::headless(
        session,
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        SIZE,
    )
}

fn keys(app: &mut App, script: &str) {
    for k in parse_script(script).expect("valid keys") {
        app.key(k);
    }
}

/// The rank id of the selected timeline row.
fn selected_rank(app: &App) -> stepscope::model::RankId {
    let b = &app.screen;
    let t = b.timeline().expect("a timeline");
    let rows = display_rows(b, t, SIZE);
    t.rows[rows[b.panes.timeline.view.row].start].rank
}

/// Checks that the browser shows target `t`.
fn shows(app: &App, t: Target, what: &str) {
    let b = &app.screen;
    let job = &b.data.loaded.job;
    let status = app.ctx.status.clone().unwrap_or_default();
    assert!(
        status.ends_with("(Esc: back)"),
        "{what}: says why: {status}"
    );
    match t {
        Target::RankLanes {
            rank, step, band, ..
        } => {
            assert_eq!(
                (b.nav.pane, b.level()),
                (Pane::Timeline, Level::Device(rank)),
                "{what}"
            );
            assert_eq!(b.step_number(), Some(step), "{what}");
            assert_eq!(selected_rank(app), job.rank(rank).id, "{what}");
            if let Some(e) = band {
                let ev = &job.rank(rank).events;
                let (op, k) = b.panes.timeline.view.op.expect("a band selected");
                let t = b.timeline().unwrap();
                let row = &t.rows[display_rows(b, t, SIZE)[b.panes.timeline.view.row].start];
                let sel = *row
                    .occurrence(op, k)
                    .expect("the selected band is on the selected row");
                // The culprit itself, or the top-level operator that holds it.
                let i = e.index();
                let off = b.data.analysis.comm.offsets[rank.get()].offset_ns;
                assert!(
                    op == ev.name[i]
                        || (sel.start <= ev.start[i] + off && ev.end(i) + off <= sel.end),
                    "{what}: selects {} for {}",
                    b.name(op),
                    b.name(ev.name[i])
                );
                // In view (a band may reach past the step's window, where the view stops).
                assert!(
                    b.panes
                        .timeline
                        .view
                        .zoom
                        .is_none_or(|(a, z)| a < sel.end && sel.start < z),
                    "{what}: in view"
                );
            }
        }
        Target::Cluster {
            step,
            rank,
            band,
            gap,
        } => {
            assert_eq!(
                b.panes.timeline.view.gap, gap,
                "{what}: the cursor on the gap"
            );
            assert_eq!(
                (b.nav.pane, b.level()),
                (Pane::Timeline, Level::Cluster),
                "{what}"
            );
            assert_eq!(b.step_number(), Some(step), "{what}");
            if let Some(r) = rank {
                assert_eq!(selected_rank(app), job.rank(r).id, "{what}");
            }
            if let (Some(r), Some(e)) = (rank, band) {
                let name = job.rank(r).events.name[e.index()];
                assert_eq!(b.panes.timeline.view.op.map(|o| o.0), Some(name), "{what}");
            }
        }
        Target::Comm { max_bytes, .. } => {
            assert_eq!(b.nav.pane, Pane::Comm, "{what}");
            assert_eq!(b.panes.comm.view.max_bytes, max_bytes, "{what}");
        }
        Target::Critical { .. } => assert_eq!(b.nav.pane, Pane::Critical, "{what}"),
        Target::Operator { name, .. } => assert_eq!(b.level(), Level::Operator(name), "{what}"),
        Target::Device { rank, .. } => assert_eq!(b.level(), Level::Device(rank), "{what}"),
        Target::View(_) => {}
    }
}

/// Enter on each finding shows its proof; Esc comes back to the advisor row and step it
/// left. Returns how many findings were followed.
fn walk(app: &mut App, what: &str) -> usize {
    keys(app, "5");
    let findings = app.screen.data.analysis.findings.clone();
    for (i, f) in findings.iter().enumerate() {
        let what = format!("{what} / {}", f.rule);
        // Leave from another step than the proof's, to see Esc restore it.
        keys(app, "g");
        for _ in 0..i {
            keys(app, "j");
        }
        keys(app, "]");
        let (step, sel) = (app.screen.nav.step, app.screen.row_of(Pane::Advisor));
        let t = land(&app.screen.data.loaded.job, &app.screen.data.analysis, f);
        keys(app, "<enter>");
        shows(app, t, &what);
        keys(app, "<esc>");
        let b = &app.screen;
        assert_eq!(
            (b.nav.pane, b.level()),
            (Pane::Advisor, Level::Cluster),
            "{what}"
        );
        assert_eq!((b.nav.step, b.row_of(Pane::Advisor)), (step, sel), "{what}");
        assert_eq!(b.panes.comm.view.max_bytes, None, "{what}");
    }
    findings.len()
}

#[test]
fn every_finding_of_every_scenario_lands_on_its_proof_and_esc_comes_back() {
    let followed: usize = Scenario::ALL
        .into_iter()
        .map(|s| walk(&mut app(s), s.name()))
        .sum();
    assert!(followed >= 30, "{followed} findings followed");
}

#[test]
fn every_finding_of_the_real_jobs_lands_on_its_proof() {
    let Some(shared) = common::shared() else {
        return;
    };
    let t = shared.join("traces");
    let jobs = [
        "ext/param-dlrm8",
        "ext/kineto-resnet50-2021",
        "ext/tracelens-mi300-sglang-decode",
        "torch-cpu",
        "ascend/msinsight/test/data/pytorch/text/level1",
    ];
    for job in jobs {
        let session = Session::open(&[t.join(job)], &Settings::default()).expect(job);
        let mut app = browser(session);
        // DLRM's host-bound finding used to fall back to the overview: it opens a rank's
        // lanes now.
        if job.ends_with("dlrm8") {
            let a = &app.screen.data.analysis;
            let f = a
                .findings
                .iter()
                .find(|f| f.rule == "launch_bound")
                .expect("launch_bound");
            let to = land(&app.screen.data.loaded.job, a, f);
            assert!(matches!(to, Target::RankLanes { .. }), "{to:?}");
        }
        assert!(walk(&mut app, job) > 0, "{job}: no finding");
    }
}

/// The rank and the name of the band a target selects.
fn band(app: &App, t: Target) -> (u32, String) {
    let (r, e) = match t {
        Target::RankLanes {
            rank,
            band: Some(e),
            ..
        } => (rank, e),
        Target::Cluster {
            rank: Some(r),
            band: Some(e),
            ..
        } => (r, e),
        other => panic!("no band: {other:?}"),
    };
    let job = &app.screen.data.loaded.job;
    let name = job.strings.resolve(job.rank(r).events.name[e.index()]);
    (job.rank(r).id.0, name.to_string())
}

/// The proofs the issue names, by hand on the scenarios that carry them.
#[test]
fn the_named_causes_open_the_view_that_proves_them() {
    let target = |s: Scenario, rule: &str| {
        let app = app(s);
        let a = &app.screen.data.analysis;
        let f = a.findings.iter().find(|f| f.rule == rule).expect(rule);
        (land(&app.screen.data.loaded.job, a, f), f.focus, app)
    };
    // Data loading: rank 5's loader range in step 13, on its lanes.
    let (t, focus, app) = target(Scenario::Default, "dataloader");
    assert_eq!(focus, Focus::HostCall(HostCall::DataLoader));
    let Target::RankLanes {
        rank,
        step,
        band: Some(e),
        ..
    } = t
    else {
        panic!("{t:?}")
    };
    let job = &app.screen.data.loaded.job;
    assert_eq!((job.rank(rank).id.0, step), (5, StepNo(13)));
    let name = job.strings.resolve(job.rank(rank).events.name[e.index()]);
    assert_eq!(
        name,
        "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
    );
    // The straggler: rank 3's all-reduce, where the others wait.
    let (t, _, app) = target(Scenario::Straggler, "straggler");
    assert!(matches!(t, Target::Cluster { .. }), "{t:?}");
    let (rank, name) = band(&app, t);
    assert_eq!(rank, 3);
    assert!(name.starts_with("ncclDevKernel_AllReduce"), "{name}");
    // A sync: the blocking call itself.
    let (t, _, app) = target(Scenario::Default, "sync_points");
    assert_eq!(band(&app, t).1, "cudaStreamSynchronize");
    // Allocator churn: an allocator call.
    let (t, _, app) = target(Scenario::AllocatorChurn, "allocator_churn");
    let name = band(&app, t).1;
    assert!(name == "cudaFree" || name == "cudaMalloc", "{name}");
    // Small messages: the comm pane, filtered to the rule's size bound.
    let (t, focus, _) = target(Scenario::SmallMessages, "small_messages");
    let Focus::SmallCalls(bound) = focus else {
        panic!("{focus:?}")
    };
    assert_eq!(
        t,
        Target::Comm {
            step: None,
            rank: None,
            max_bytes: Some(bound)
        }
    );
    // A stage imbalance: the heavy stage's first rank on every rank's timeline.
    let (t, _, app) = target(Scenario::StageImbalance, "stage_imbalance");
    let Target::Cluster { rank: Some(r), .. } = t else {
        panic!("{t:?}")
    };
    assert_eq!(app.screen.data.loaded.job.rank(r).id.0, 4);
}

/// A slow step whose culprit's device idled (here rank 5's loader stall, a finding the
/// data-loader one folds on the demo) puts the cursor on the culprit's longest gap.
#[test]
fn a_slow_step_s_proof_is_the_culprit_s_gap() {
    let mut app = app(Scenario::Default);
    let a = &app.screen.data.analysis;
    let mut f = a.findings[0].clone();
    f.focus = Focus::SlowRank;
    f.evidence.steps = vec![StepNo(13)];
    let t = land(&app.screen.data.loaded.job, a, &f);
    let Target::Cluster {
        rank: Some(r),
        gap: Some((from, to)),
        ..
    } = t
    else {
        panic!("{t:?}")
    };
    assert_eq!(app.screen.data.loaded.job.rank(r).id.0, 5);
    assert!(to - from > 250_000_000, "{}", to - from);
    // The browser opens it with the cursor on that gap, the inspector on the host's loader.
    stepscope::ui::browser::jumps::open(&mut app.screen, t, &mut app.ctx);
    app.refresh();
    assert_eq!(app.screen.panes.timeline.view.gap, Some((from, to)));
    let Some((_, stepscope::ui::browser::panes::inspector::Inspected::Gap(_, _, doing))) =
        app.screen.panes.timeline.inspected.clone()
    else {
        panic!("the inspector on the gap")
    };
    assert!(matches!(
        doing,
        stepscope::analysis::inspect::HostDoing::In { loading: true, .. }
    ));
}
