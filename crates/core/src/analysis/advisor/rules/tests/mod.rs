//! Each rule fires on its case with an exact impact, stays silent on a healthy job, and
//! defers to the rule that names the same cause.

use super::accelerator::*;
use super::communication::*;
use super::compute::*;
use super::host::*;
use super::parallel::*;
use super::{Draft, Facts, Thresholds};
use crate::analysis::breakdown::{Breakdown, Part};
use crate::analysis::cluster::{Imbalance, SlowStep, Stage, Straggler, StragglerStep};
use crate::analysis::comm::slow_links::SlowLink;
use crate::analysis::comm::stats::{Sizes, TypeStats};
use crate::analysis::critical_path::{Category as Cp, CriticalOp, CriticalPath};
use crate::analysis::host::{CallStat, GcPause, Host, SyncPoint};
use crate::analysis::roofline::peaks::Device;
use crate::analysis::roofline::{Class, OpRoof, Roofline};
use crate::analysis::step_times::StepTime;
use crate::model::{CollOp, Family, RankId, StepNo};
use crate::time::Ns;

type RuleFn = fn(&Facts, &Thresholds) -> Option<Draft>;

fn ids(v: &[u32]) -> Vec<RankId> {
    v.iter().copied().map(RankId).collect()
}

/// Owned results for a `Facts`: 2 ranks, 2 steps of 100 ms.
#[derive(Default)]
pub(super) struct World {
    steps: Vec<StepTime>,
    rows: Vec<Breakdown>,
    comm: Vec<TypeStats>,
    slow_links: Vec<SlowLink>,
    stalls: Vec<crate::analysis::comm::stalls::Stall>,
    links: Vec<crate::analysis::comm::link_matrix::LinkStat>,
    unaligned: crate::analysis::comm::unaligned::Unaligned,
    affinity: Vec<crate::analysis::affinity::AffinityMatch>,
    slow_steps: Vec<SlowStep>,
    stragglers: Vec<Straggler>,
    imbalance: Vec<Imbalance>,
    stages: Option<Vec<Stage>>,
    host: Host,
    roofline: Roofline,
    critical: Option<CriticalPath>,
    tasks: crate::analysis::tasks::Tasks,
}

const MS: Ns = 1_000_000;

impl World {
    fn new() -> World {
        let row = |rank, step| Breakdown {
            rank: RankId(rank),
            step: StepNo(step),
            span_ns: 100 * MS,
            compute_ns: 100 * MS,
            ..Default::default()
        };
        World {
            steps: (1..=2)
                .map(|step| StepTime {
                    step: StepNo(step),
                    ranks: 2,
                    max_ns: 100 * MS,
                    ..Default::default()
                })
                .collect(),
            rows: vec![row(0, 1), row(1, 1), row(0, 2), row(1, 2)],
            ..Default::default()
        }
    }
    fn facts(&self) -> Facts<'_> {
        Facts::new(&self.steps, &self.rows)
            .comm(&self.comm, &self.slow_links)
            .stalls(&self.stalls)
            .links(&self.links)
            .unaligned(&self.unaligned)
            .affinity(&self.affinity)
            .cluster(
                &self.slow_steps,
                &self.stragglers,
                &self.imbalance,
                self.stages.as_deref(),
            )
            .causes(&self.host, &self.roofline, self.critical.as_ref())
            .tasks(&self.tasks)
    }
    fn run(&self, rule: RuleFn) -> Option<Draft> {
        rule(&self.facts(), &Thresholds::default())
    }
}

fn h100() -> Device {
    let table = crate::analysis::roofline::peaks::embedded();
    crate::analysis::roofline::peaks::by_name(&table, "H100-SXM")
        .unwrap()
        .clone()
}

fn comm(f: impl FnOnce(&mut TypeStats)) -> TypeStats {
    let mut t = TypeStats {
        op: CollOp::AllReduce,
        group: "0".into(),
        // Both ranks of the world call it: per-rank figures halve the Σs.
        ranks: 2,
        calls: 10,
        instances: 5,
        exposed_ns: 20 * MS,
        // The small calls could lose all of their time to being small.
        small_bound_ns: 20 * MS,
        ..Default::default()
    };
    f(&mut t);
    t
}

/// Every rule stays silent on a healthy world (the "must not" half of each test pair).
#[test]
fn a_healthy_job_has_no_findings() {
    let w = World::new();
    for rule in super::all() {
        assert!(
            w.run(rule.detect).is_none(),
            "{} fired on a healthy job",
            rule.id
        );
    }
}

#[test]
fn overlap_wait_bandwidth_small_misaligned() {
    let mut w = World::new();
    // 20% of the span exposed, nothing hidden.
    for r in &mut w.rows {
        r.comm_ns = 20 * MS;
        r.compute_ns = 80 * MS;
    }
    w.comm = vec![comm(|_| {})];
    assert_eq!(w.run(poor_overlap).unwrap().impact_ns, 40 * MS);
    // Overlap hides at most the compute beside it: 1 ms of 20 per row, none at all.
    w.rows.iter_mut().for_each(|r| r.compute_ns = MS);
    assert_eq!(w.run(poor_overlap).unwrap().impact_ns, 2 * MS);
    w.rows.iter_mut().for_each(|r| r.compute_ns = 0);
    assert!(
        w.run(poor_overlap).is_none(),
        "a rank that only communicates"
    );
    w.rows.iter_mut().for_each(|r| r.compute_ns = 80 * MS);
    // A pipeline's exposed sends and receives are its bubble, not a bucket problem: a
    // quarter of the exposed time in them leaves three quarters to overlap; all of it, none.
    w.comm = vec![
        comm(|c| c.exposed_ns = 30 * MS),
        comm(|c| {
            c.op = CollOp::SendRecv;
            c.exposed_ns = 10 * MS;
        }),
    ];
    let d = w.run(poor_overlap).unwrap();
    assert_eq!(
        (d.impact_ns, d.evidence.ops.clone()),
        (30 * MS, vec!["all_reduce".to_string()])
    );
    w.comm.remove(0);
    assert!(w.run(poor_overlap).is_none(), "p2p only");
    w.comm = vec![comm(|_| {})];
    for r in &mut w.rows {
        r.overlap_ns = 30 * MS;
        r.compute_ns = 50 * MS;
    }
    assert!(w.run(poor_overlap).is_none());

    w.comm = vec![comm(|c| {
        c.wait_dominated = true;
        (c.wait_ratio, c.waiting_ratio) = (Some(0.5), Some(0.5));
    })];
    assert_eq!(w.run(comm_wait_dominated).unwrap().impact_ns, 5 * MS);
    w.slow_steps = vec![SlowStep::default()];
    assert!(
        w.run(comm_wait_dominated).is_none(),
        "the slow step names the cause"
    );
    w.slow_steps.clear();
    w.stragglers = vec![Straggler {
        flagged: true,
        ..Default::default()
    }];
    assert!(
        w.run(comm_wait_dominated).is_none(),
        "the straggler names the cause"
    );
    w.stragglers[0].flagged = false;
    assert!(
        w.run(comm_wait_dominated).is_some(),
        "an unflagged rank names nothing"
    );
    w.stragglers.clear();

    let sizes = Some(Sizes {
        median: 64 << 20,
        ..Default::default()
    });
    w.comm = vec![comm(|c| {
        c.busbw_of_peak = Some(0.25);
        c.bytes = sizes.clone();
    })];
    assert_eq!(w.run(low_bandwidth).unwrap().impact_ns, 5 * MS);
    w.comm[0].busbw_of_peak = Some(0.6);
    assert!(w.run(low_bandwidth).is_none());

    w.comm = vec![comm(|c| {
        c.small_flag = true;
        c.small_calls = 5;
    })];
    assert_eq!(w.run(small_messages).unwrap().impact_ns, 10 * MS / 2 / 2);
    // Small calls whose fastest peer call takes 0.8 ms can lose at most 5 × 0.8 ms = 4 ms
    // to their size, whatever else they waited for: 4 / 2 ranks / 2.
    w.comm[0].small_bound_ns = 4 * MS;
    assert_eq!(w.run(small_messages).unwrap().impact_ns, MS);
    w.comm[0].small_flag = false;
    assert!(w.run(small_messages).is_none());

    w.comm = vec![comm(|c| c.misaligned_calls = 3)];
    assert_eq!(w.run(misaligned_sizes).unwrap().impact_ns, 0);
    w.comm[0].misaligned_calls = 0;
    assert!(w.run(misaligned_sizes).is_none());
}

#[test]
fn slow_link_fires_on_outliers() {
    let mut w = World::new();
    w.comm = vec![comm(|_| {})];
    assert!(w.run(slow_link).is_none());
    w.slow_links = vec![SlowLink {
        group: "0".into(),
        rank: RankId(1),
        peer: None,
        transit_ns: 3 * MS,
        group_median_ns: MS,
        z: 4.0,
        busbw_gbps: None,
    }];
    // 2 ms more per instance × 5 instances.
    assert_eq!(w.run(slow_link).unwrap().impact_ns, 10 * MS);
    // The worst link is the one with the most excess time, not the longest transit or the
    // largest ratio: (12, 10), (10, 6), (3, 1) ms → the second (+4 ms).
    let link = |rank, transit, median| SlowLink {
        group: "0".into(),
        rank: RankId(rank),
        peer: None,
        transit_ns: transit * MS,
        group_median_ns: median * MS,
        z: 4.0,
        busbw_gbps: None,
    };
    w.slow_links = vec![link(1, 12, 10), link(2, 10, 6), link(3, 3, 1)];
    let d = w.run(slow_link).unwrap();
    // Its excess × 5 instances; the evidence lists every slow link.
    assert_eq!(
        (d.impact_ns, d.evidence.ranks.clone()),
        (20 * MS, ids(&[1, 2, 3]))
    );
}

/// A world whose kernel time (100 ms) is all under-utilized, on an H100 at U = 0.8, and a
/// bf16 GEMM of 40 ms at 20% of the peak.
fn roofline_world() -> (World, OpRoof) {
    let mut w = World::new();
    w.roofline.device = Some(h100());
    w.roofline.u = 0.8;
    w.roofline.classes.insert(
        Class::UnderUtilized,
        crate::analysis::roofline::ClassShare {
            kernels: 2,
            time_ns: 100 * MS,
            share: 1.0,
        },
    );
    let gemm = OpRoof {
        op: "aten::mm".into(),
        family: Family::Gemm,
        dtype: Some("c10::BFloat16".into()),
        class: Class::UnderUtilized,
        kernels: 2,
        time_ns: 40 * MS,
        flops_of_peak: Some(0.2),
        ..Default::default()
    };
    (w, gemm)
}

#[test]
fn gemm_rules() {
    let (mut w, gemm) = roofline_world();
    w.roofline.ops = vec![gemm.clone()];
    // 40 ms × (1 − 0.2/0.8) over 2 ranks.
    assert_eq!(w.run(under_utilized_gemms).unwrap().impact_ns, 15 * MS);
    assert!(w.run(gemm_shape_alignment).is_none());
    assert!(w.run(fp32_gemms).is_none());
    w.roofline.ops = vec![OpRoof {
        unaligned_gemms: 1,
        dtype: Some("float".into()),
        ..gemm.clone()
    }];
    // Half the kernels unaligned: 40 ms × 1/2 × (1 − 0.2/0.8) over 2 ranks.
    assert_eq!(w.run(gemm_shape_alignment).unwrap().impact_ns, 15 * MS / 2);
    w.roofline.ops[0].unaligned_gemms = 2;
    assert_eq!(w.run(gemm_shape_alignment).unwrap().impact_ns, 15 * MS);
    w.roofline.ops[0].unaligned_gemms = 1;
    // 40 ms × (1 − 66.9/494.7) / 2 ranks.
    let fp32 = w.run(fp32_gemms).unwrap().impact_ns;
    assert_eq!(fp32, (40.0 * MS as f64 * (1.0 - 66.9 / 494.7)) as Ns / 2);
    w.roofline.ops = vec![OpRoof {
        flops_of_peak: Some(0.7),
        ..gemm.clone()
    }];
    assert!(w.run(under_utilized_gemms).is_none());
    // Exactly half the peak is not under it; a slow elementwise op is no GEMM.
    w.roofline.ops = vec![OpRoof {
        flops_of_peak: Some(0.5),
        ..gemm.clone()
    }];
    assert!(w.run(under_utilized_gemms).is_none());
    w.roofline.ops = vec![OpRoof {
        family: Family::Elementwise,
        ..gemm.clone()
    }];
    assert!(w.run(under_utilized_gemms).is_none());
}

#[test]
fn elementwise_and_unknown_rules() {
    let (mut w, _) = roofline_world();
    let ew = OpRoof {
        op: "aten::add".into(),
        family: Family::Elementwise,
        class: Class::MemoryBound,
        time_ns: 20 * MS,
        ..Default::default()
    };
    w.roofline.ops = vec![ew.clone()];
    assert_eq!(w.run(memory_bound_elementwise).unwrap().impact_ns, 5 * MS);
    w.roofline.ops = vec![OpRoof {
        time_ns: 2 * MS,
        ..ew.clone()
    }];
    assert!(w.run(memory_bound_elementwise).is_none());
    // 5 ms of the 100 ms of kernel time is the 5% threshold itself: it fires.
    w.roofline.ops = vec![OpRoof {
        time_ns: 5 * MS,
        ..ew
    }];
    assert_eq!(
        w.run(memory_bound_elementwise).unwrap().impact_ns,
        5 * MS / 4
    );

    // Unknown 100 of 200 ms: exactly the 50% threshold, it fires.
    let unknown = |time_ns| crate::analysis::roofline::ClassShare {
        kernels: 9,
        time_ns,
        share: 0.0,
    };
    w.roofline.classes.insert(Class::Unknown, unknown(100 * MS));
    assert!(w.run(roofline_unknown).is_some());
    w.roofline.classes.insert(Class::Unknown, unknown(99 * MS));
    assert!(w.run(roofline_unknown).is_none());
    w.roofline.classes.insert(Class::Unknown, unknown(300 * MS));
    assert_eq!(w.run(roofline_unknown).unwrap().impact_ns, 0);
    // The cause is the true one: no shapes recorded, or shapes but operators without a rule
    // (named), or no device peaks.
    let cause = |w: &World| crate::prose::claim_words(&w.run(roofline_unknown).unwrap().claim);
    w.roofline.unknowns.no_rule_ns = 80 * MS;
    assert!(cause(&w).cause.contains("recorded without record_shapes"));
    w.roofline.unknowns.shapes_seen = true;
    w.roofline.unknowns.no_rule = vec![("aten::convolution_backward".into(), 80 * MS)];
    let words = cause(&w);
    assert!(
        words.cause.contains("have no FLOP and byte rule"),
        "{words:?}"
    );
    assert!(
        words
            .title
            .ends_with("no FLOP rule for aten::convolution_backward")
    );
    // An operator with a rule whose shapes are missing, taking more time, is named instead.
    w.roofline.unknowns.no_shapes = vec![("aten::mm".into(), 90 * MS)];
    w.roofline.unknowns.no_shapes_ns = 90 * MS;
    assert!(
        cause(&w)
            .title
            .ends_with("the inputs of aten::mm are missing or fit no rule")
    );
    // Kernels with no launching operator (graph replays) taking the most: that is the cause.
    w.roofline.unknowns.no_operator_ns = 200 * MS;
    let words = cause(&w);
    assert!(
        words
            .title
            .ends_with("most of it has no launching operator"),
        "{words:?}"
    );
    assert!(words.cause.contains("replayed from a CUDA graph"));
    w.roofline.device = None;
    assert!(cause(&w).cause.contains("no entry in the peak table"));
}

#[test]
fn severity_follows_impact() {
    let mut w = World::new();
    w.slow_steps = vec![SlowStep {
        step: StepNo(2),
        time_ns: 120 * MS,
        median_ns: 100 * MS,
        ..Default::default()
    }];
    let t = Thresholds::default();
    // 20 ms of 200 ms = 10%: high.
    let f = crate::analysis::advisor::advise(&w.facts(), &t);
    assert_eq!(
        (f[0].rule, f[0].severity),
        ("slow_step", crate::analysis::advisor::Severity::High)
    );
    w.slow_steps[0].time_ns = 107 * MS;
    assert_eq!(
        crate::analysis::advisor::advise(&w.facts(), &t)[0].severity,
        crate::analysis::advisor::Severity::Medium
    );
    w.slow_steps[0].time_ns = 101 * MS;
    assert_eq!(
        crate::analysis::advisor::advise(&w.facts(), &t)[0].severity,
        crate::analysis::advisor::Severity::Low
    );
}

#[test]
fn comm_impacts_are_per_calling_rank_under_a_rank_scope() {
    // `--rank 0`: one rank's rows in scope, but the type's Σs cover both ranks that call it.
    // Wait-dominated: 20 ms exposed × 0.5 wait over 2 calling ranks = 5 ms (not 10).
    let mut w = World::new();
    w.rows.retain(|b| b.rank == RankId(0));
    w.comm = vec![comm(|c| {
        c.wait_dominated = true;
        (c.wait_ratio, c.waiting_ratio) = (Some(0.5), Some(0.5));
    })];
    assert_eq!(w.run(comm_wait_dominated).unwrap().impact_ns, 5 * MS);
    w.comm = vec![comm(|c| {
        c.small_flag = true;
        c.small_calls = 5;
    })];
    assert_eq!(w.run(small_messages).unwrap().impact_ns, 10 * MS / 2 / 2);
}

#[test]
fn category_and_severity_names_are_stable() {
    // The JSON report and the text's `[HIGH] … [straggler, parallel]` use these names.
    use crate::analysis::advisor::{Category, Severity};
    let cats = [
        Category::Parallel,
        Category::Io,
        Category::Cpu,
        Category::Compute,
        Category::Communication,
        Category::Memory,
    ]
    .map(Category::as_str);
    assert_eq!(
        cats,
        [
            "parallel",
            "io",
            "cpu",
            "compute",
            "communication",
            "memory"
        ]
    );
    assert_eq!(
        Severity::ALL.map(Severity::as_str),
        ["low", "medium", "high"]
    );
}

#[test]
fn quantities_write_their_bare_value() {
    use crate::analysis::advisor::Quantity;
    let q = [
        Quantity::Ns(1500),
        Quantity::Count(7),
        Quantity::Ratio(0.25),
        Quantity::Gbps(450.5),
        Quantity::Tflops(989.0),
        Quantity::FlopPerByte(12.5),
        Quantity::Z(-3.5),
    ];
    assert_eq!(
        q.map(Quantity::value),
        [1500.0, 7.0, 0.25, 450.5, 989.0, 12.5, -3.5]
    );
    assert_eq!(
        serde_json::to_string(&q).unwrap(),
        "[1500.0,7.0,0.25,450.5,989.0,12.5,-3.5]"
    );
}

#[test]
fn shares_and_descriptions() {
    assert_eq!(super::share(1, 4), 0.25);
    // Nothing to share: 0, not NaN (a NaN would compare false with every threshold).
    assert_eq!(super::share(0, 0), 0.0);
    assert_eq!(super::describe(CollOp::AllReduce, "tp"), "all_reduce (tp)");
}

#[test]
fn no_step_time_gives_no_share_and_a_low_severity() {
    // A finding over steps that take no time (a trace without device work or host steps)
    // has impact_pct 0, never infinity.
    let mut w = World::new();
    w.steps.clear();
    w.stragglers = vec![Straggler {
        flagged: true,
        imposed_wait_ns: 30 * MS,
        ..Default::default()
    }];
    let f = crate::analysis::advisor::advise(&w.facts(), &Thresholds::default());
    let s = f
        .iter()
        .find(|f| f.rule == "straggler")
        .expect("the straggler finding");
    assert_eq!(
        (s.impact_pct, s.severity),
        (0.0, crate::analysis::advisor::Severity::Low)
    );
}

#[test]
fn communication_rules_at_their_thresholds() {
    use crate::analysis::advisor::Quantity;
    let mut w = World::new();
    // Exposed 5 of each 100 ms row (5% exactly: fires), 5 hidden: overlap ratio 5/10 = 0.5 is
    // not below 0.5; with 4 hidden it is (4/9).
    for r in &mut w.rows {
        r.comm_ns = 5 * MS;
        r.overlap_ns = 5 * MS;
        r.compute_ns = 90 * MS;
    }
    w.comm = vec![comm(|_| {})];
    assert!(w.run(poor_overlap).is_none());
    for r in &mut w.rows {
        r.overlap_ns = 4 * MS;
        r.compute_ns = 91 * MS;
    }
    let d = w
        .run(poor_overlap)
        .expect("exposed share at exactly 5% fires");
    assert_eq!(
        d.evidence.numbers["overlap_ratio"],
        Quantity::Ratio(4.0 / 9.0)
    );
    assert_eq!(d.evidence.numbers["exposed_share"], Quantity::Ratio(0.05));
    // Exposed 20 ms over 4 rows, per rank 10 ms; a type waiting half the time leaves 5 ms
    // of transfer to overlap.
    assert_eq!(d.impact_ns, 10 * MS);
    w.comm = vec![comm(|c| {
        (c.wait_ratio, c.waiting_ratio) = (Some(0.5), Some(0.5))
    })];
    assert_eq!(w.run(poor_overlap).unwrap().impact_ns, 5 * MS);

    // Wait-dominated: per calling rank exposed × wait / 2 against 1% of the 200 ms per-rank
    // span: 8 ms exposed → 2 ms = 1% exactly fires, 7.9 ms does not.
    let waiting = |exposed| {
        comm(|c| {
            c.wait_dominated = true;
            (c.wait_ratio, c.waiting_ratio) = (Some(0.5), Some(0.5));
            c.exposed_ns = exposed;
        })
    };
    w.comm = vec![waiting(8 * MS)];
    assert_eq!(w.run(comm_wait_dominated).unwrap().impact_ns, 2 * MS);
    w.comm = vec![waiting(79 * MS / 10)];
    assert!(w.run(comm_wait_dominated).is_none());

    // Low bandwidth: at exactly half the peak it is not low; messages under 1 MiB are not
    // judged (latency-bound, not bandwidth-bound).
    let sized = |median, of_peak| {
        comm(|c| {
            c.busbw_of_peak = Some(of_peak);
            c.bytes = Some(Sizes {
                median,
                ..Default::default()
            });
        })
    };
    w.comm = vec![sized(1 << 20, 0.5)];
    assert!(w.run(low_bandwidth).is_none());
    w.comm = vec![sized(1 << 20, 0.25)];
    assert!(w.run(low_bandwidth).is_some());
    w.comm = vec![sized((1 << 20) - 1, 0.25)];
    assert!(w.run(low_bandwidth).is_none());
}

mod accelerator;
mod communication;
mod host;
mod parallel;
