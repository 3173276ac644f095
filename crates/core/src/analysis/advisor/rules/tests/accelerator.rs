//! The kernel-table rules: operators no PMU pipe bounds, dynamic-shape compiles, affinity APIs.

use super::*;
use crate::analysis::roofline::pmu::PmuOp;

fn pmu_op(op: &str, class: Class, kernels: u64, time_ns: Ns, ratio: f64) -> PmuOp {
    PmuOp {
        op: op.into(),
        task_name: format!("aclnn{op}"),
        core: Some(crate::model::Core::AiVector),
        kernels,
        time_ns,
        class,
        bound_pipe: "mte2",
        bound_ratio: ratio,
        cube: None,
        vector: None,
    }
}

#[test]
fn unbound_operators_claim_what_their_busiest_pipe_leaves() {
    let mut w = World::new();
    w.roofline.u = 0.8;
    w.roofline.classes.insert(
        Class::UnderUtilized,
        crate::analysis::roofline::ClassShare {
            kernels: 1_200,
            time_ns: 100 * MS,
            share: 1.0,
        },
    );
    // A: 40 ms in 100 tasks (400 µs each) at MTE2 0.4 → would take half: 20 ms over 2
    // ranks. B: tasks of 10 µs, under msprof's 20 µs. C: bound, not a candidate.
    w.roofline.pmu_ops = vec![
        pmu_op("A", Class::UnderUtilized, 100, 40 * MS, 0.4),
        pmu_op("B", Class::UnderUtilized, 1_000, 10 * MS, 0.1),
        pmu_op("C", Class::MemoryBound, 100, 50 * MS, 0.95),
    ];
    let d = w.run(unbound_operators).unwrap();
    assert_eq!(
        (d.impact_ns, d.evidence.ops.clone()),
        (10 * MS, vec!["A".to_string()])
    );
    // Its replay: A's tasks at 0.4 / 0.8 of their time.
    let keep = crate::analysis::roofline::speedup::Speedup::task("A", 0.5);
    assert_eq!(d.evidence.speedups, vec![keep]);
    // 4 ms of 100 ms is under the 5% share: nothing to say.
    w.roofline.pmu_ops[0].time_ns = 4 * MS;
    assert!(w.run(unbound_operators).is_none());
}

#[test]
fn dynamic_shapes_need_every_recorded_task_dynamic() {
    let mut w = World::new();
    assert!(w.run(dynamic_shapes).is_none());
    w.tasks.tasks = 12;
    w.tasks.with_state = 10;
    w.tasks.dynamic = 10;
    let d = w.run(dynamic_shapes).unwrap();
    assert_eq!(d.impact_ns, 0);
    w.tasks.dynamic = 9;
    assert!(w.run(dynamic_shapes).is_none());
}

#[test]
fn affinity_apis_name_the_api_with_the_most_host_time() {
    use crate::analysis::affinity::AffinityMatch;
    let mut w = World::new();
    assert!(w.run(affinity_apis).is_none());
    let m = |api: &str, replaces: &str, count, host_ns| AffinityMatch {
        api: api.into(),
        replaces: replaces.into(),
        count,
        host_ns,
        ranks: ids(&[0, 1]),
        steps: vec![StepNo(1)],
    };
    w.affinity = vec![
        m(
            "torch_npu.optim.NpuFusedSGD",
            "Optimizer.step#SGD.step",
            2,
            20 * MS,
        ),
        m("torch_npu.fast_gelu", "gelu", 40, MS),
    ];
    let d = w.run(affinity_apis).unwrap();
    assert_eq!(d.impact_ns, 0);
    assert_eq!(d.evidence.ranks, ids(&[0, 1]));
    assert_eq!(
        d.evidence.ops,
        ["torch_npu.optim.NpuFusedSGD", "torch_npu.fast_gelu"]
    );
}

#[test]
fn ai_cpu_operators_need_a_task_of_20_us() {
    use crate::analysis::tasks::TaskOp;
    let mut w = World::new();
    let op = |op: &str, time_ns, max_ns, double_tasks| TaskOp {
        op: op.into(),
        tasks: 4,
        time_ns,
        max_ns,
        double_tasks,
    };
    // Tasks of at most 19 µs: msprof-analyze's threshold is 20.
    w.tasks.ai_cpu_ops = vec![op("NonZero", 60_000, 19_000, 0)];
    assert!(w.run(ai_cpu_operators).is_none());
    // 8 + 2 ms of AI CPU time over 2 ranks; IndexPut's 5 µs tasks are left out.
    w.tasks.ai_cpu_ops = vec![
        op("Cast", 8 * MS, 4 * MS, 2),
        op("NonZero", 2 * MS, 600_000, 0),
        op("IndexPut", MS, 5_000, 0),
    ];
    let d = w.run(ai_cpu_operators).unwrap();
    assert_eq!(d.impact_ns, 5 * MS);
    assert_eq!(d.evidence.ops, ["Cast", "NonZero"]);
    assert!(matches!(
        d.claim,
        crate::analysis::advisor::Claim::Accelerator(
            crate::analysis::advisor::rules::accelerator::Claim::AiCpu {
                double: true,
                ops: 2,
                ..
            }
        )
    ));
}

#[test]
fn clock_drop_claims_the_compute_the_slower_clock_added() {
    use crate::analysis::clocks::ClockDrop;
    let w = World::new();
    assert!(w.run(clock_drop).is_none());
    let drop = |rank, lost_ns| ClockDrop {
        rank: RankId(rank),
        step: StepNo(1),
        mean_mhz: 1500.0,
        min_mhz: 1200,
        compute_ns: 6 * lost_ns,
        lost_ns,
    };
    let drops = [drop(1, 6 * MS), drop(0, 2 * MS)];
    let f = w.facts();
    let f = crate::analysis::advisor::Facts {
        clock_drops: &drops,
        top_mhz: Some(1800),
        ..f
    };
    // 6 + 2 ms lost over 2 ranks.
    let d = clock_drop(&f, &Thresholds::default()).unwrap();
    assert_eq!(d.impact_ns, 4 * MS);
    assert_eq!(d.evidence.ranks, ids(&[0, 1]));
}
