//! The what-if's twin predictions at 256 and 1 024 ranks (issue 31; 8 and 64 ranks are in
//! tests/whatif.rs): every scenario's first finding stays right, and its fix predicts the
//! clean twin within 5% per step. Four steps (10–13: every scenario's problem step is among
//! them). One test per scenario and size, so that the harness runs them on every core. An
//! unoptimised build takes tens of minutes for these, so they run in optimised builds only:
//! `cargo test --release --test whatif_scale` (CI runs it).

use crate::common;

use common::twins;
use stepscope::session::Scenario;

/// A test per scenario at 256 and at 1 024 ranks.
macro_rules! twins {
    ($($name:ident: $sc:ident),* $(,)?) => {
        mod at_256_ranks {
            use super::*;
            $(
                #[test]
                #[cfg_attr(debug_assertions, ignore = "optimised builds only: cargo test --release")]
                fn $name() {
                    twins::twin_at(Scenario::$sc, 256, 4);
                }
            )*
        }
        mod at_1024_ranks {
            use super::*;
            $(
                #[test]
                #[cfg_attr(debug_assertions, ignore = "optimised builds only: cargo test --release")]
                fn $name() {
                    twins::twin_at(Scenario::$sc, 1024, 4);
                }
            )*
        }
        /// The list above names every scenario.
        #[test]
        fn every_scenario_has_its_test() {
            let listed = [$(Scenario::$sc),*];
            for sc in Scenario::ALL {
                assert!(listed.contains(&sc), "{} has no scale test", sc.name());
            }
        }
    };
}

twins! {
    default: Default,
    straggler: Straggler,
    slow_step: SlowStep,
    stage_imbalance: StageImbalance,
    small_messages: SmallMessages,
    dataloader: Dataloader,
    launch_bound: LaunchBound,
    allocator_churn: AllocatorChurn,
    graph_capture: GraphCapture,
    skewed_clocks_but_healthy: SkewedClocksButHealthy,
    overlapping_buckets: OverlappingBuckets,
    pipeline_straggler: PipelineStraggler,
}
