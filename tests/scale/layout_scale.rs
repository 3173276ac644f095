//! The layout at 1 024 ranks (issue 32): the pipeline scenarios split as declared — PP 2 ×
//! DP 512 — with the stage imbalance or the slow worker inside a stage as the first finding,
//! the stage vs worker figures that say which, and the layout pane drawn within its area at
//! 220×60 and 80×24 with the selection reaching the last rank. Optimised builds only (the
//! demo takes minutes to analyse unoptimised); `.ci/run` runs it with `--release`.

use crate::common;

use common::twins::demo;
use stepscope::analysis::layout::Dim;
use stepscope::model::RankId;
use stepscope::session::Scenario;
use stepscope::ui::browser::{Browser, Pane};
use stepscope::ui::shell::keymap::{Keymap, parse_script};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

const RANKS: u32 = 1024;

#[test]
#[cfg_attr(debug_assertions, ignore = "needs an optimised build")]
fn pipeline_scenarios_at_1024_ranks_name_stage_or_worker() {
    for (sc, rule) in [
        (Scenario::StageImbalance, "stage_imbalance"),
        (Scenario::PipelineStraggler, "straggler"),
    ] {
        let s = demo(sc, RANKS, 3, false);
        let a = &s.analysis;
        let l = a.layout.as_ref().expect("a layout");
        assert_eq!(l.shape(), "DP 512 × PP 2", "{}", sc.name());
        assert_eq!(l.coord(RankId(700), Dim::Pp), Some(1));
        assert_eq!(a.findings[0].rule, rule, "{}", sc.name());
        let stages = a.stages.as_ref().expect("stages");
        assert_eq!(stages.len(), 2);
        assert_eq!(stages[0].workers.len(), 512);
        match sc {
            // Stage 1 holds 13 of 23 layers: flagged, its workers even.
            Scenario::StageImbalance => {
                assert!(stages[1].flagged);
                assert!(!a.findings.iter().any(|f| f.rule == "straggler"));
            }
            // Balanced stages; rank 3 over its stage's median by about its 25%.
            _ => {
                assert!(!stages.iter().any(|s| s.flagged));
                let w = stages[0]
                    .workers
                    .iter()
                    .max_by_key(|w| w.excess_ns)
                    .unwrap();
                assert_eq!(w.rank, RankId(3));
                assert!(w.excess_ns * 5 > w.compute_ns - w.excess_ns, "{w:?}");
                assert_eq!(a.findings[0].evidence.ranks, [RankId(3)]);
            }
        }
        // The pane at both sizes: every line within the width, the last rank selectable.
        let mut app: Shell<Browser> = stepscope::ui::headless(
            s,
            Keymap::default_map(),
            Theme::builtin("dark"),
            false,
            (220, 60),
        );
        app.screen.nav.pane = Pane::Layout;
        for size in [(220, 60), (80, 24)] {
            app.ctx.size = size;
            app.refresh();
            let text = snapshot::render(&app);
            assert!(text.contains("layout: DP 512 × PP 2"), "{text}");
            assert!(text.lines().all(|l| l.chars().count() <= size.0 as usize));
            assert_eq!(text.lines().count(), size.1 as usize);
        }
        for k in parse_script("G").unwrap() {
            app.key(k);
        }
        let text = snapshot::render(&app);
        assert!(text.contains("rank 1023 pp1·dp511"), "{text}");
    }
}
