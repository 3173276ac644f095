//! The host-side rules (io, cpu, memory): what each counts, what it leaves to the others.

use super::*;

#[test]
fn host_rules() {
    let mut w = World::new();
    w.host.data_loading.count = 4;
    w.host.data_loading.device_idle_ns = 10 * MS;
    w.host.data_loading.share_of_step = 0.025;
    assert_eq!(w.run(dataloader).unwrap().impact_ns, 5 * MS);
    w.host.data_loading.share_of_step = 0.01;
    assert!(w.run(dataloader).is_none());

    w.host.launch.launched = 1000;
    w.host.launch.span_ns = 400 * MS;
    w.host.launch.host_bound_ns = 40 * MS;
    // 40 ms host-bound minus 10 ms of data loading = 30 ms (7.5%).
    assert_eq!(w.run(launch_bound).unwrap().impact_ns, 15 * MS);
    w.host.launch.host_bound_ns = 20 * MS;
    assert!(w.run(launch_bound).is_none());

    w.host.launch.shorter_share = 0.5;
    w.host.launch.launch_idle_ns = 8 * MS;
    assert_eq!(w.run(tiny_kernels).unwrap().impact_ns, 4 * MS);
    w.host.launch.launched = 50;
    assert!(w.run(tiny_kernels).is_none());

    w.host.syncs = vec![SyncPoint {
        call: "cudaStreamSynchronize".into(),
        caused_by: "aten::item".into(),
        count: 2,
        blocked_ns: MS,
        device_idle_after_ns: 0,
        ranks: ids(&[0]),
    }];
    assert!(w.run(sync_points).is_none());
    w.host.syncs[0].device_idle_after_ns = 6 * MS;
    assert_eq!(w.run(sync_points).unwrap().impact_ns, 3 * MS);

    // A recorded pause is GC; a conjectured one a host gap, which adds the wait the rank
    // imposed in that step (rank 1 made the other wait 30 ms in step 2): (250 + 30) / 2.
    let pause = GcPause {
        rank: RankId(1),
        step: StepNo(2),
        start_ns: 0,
        dur_ns: 250 * MS,
        recorded: true,
        within: None,
    };
    w.host.gc = vec![pause.clone()];
    assert_eq!(w.run(gc).unwrap().impact_ns, 125 * MS);
    assert!(w.run(host_gap).is_none());
    w.host.gc = vec![GcPause {
        recorded: false,
        within: Some("DistributedDataParallel.forward".into()),
        ..pause
    }];
    assert!(w.run(gc).is_none());
    w.stragglers = vec![Straggler {
        rank: RankId(1),
        steps: vec![StragglerStep {
            step: Some(StepNo(2)),
            last_arrivals: 1,
            imposed_wait_ns: 30 * MS,
            any_group_wait_ns: 30 * MS,
        }],
        ..Default::default()
    }];
    let d = w.run(host_gap).unwrap();
    assert_eq!(d.impact_ns, 140 * MS);
    assert_eq!(d.evidence.ops, ["DistributedDataParallel.forward"]);
    let title = crate::prose::claim_words(&d.claim).title;
    assert_eq!(
        title,
        "rank 1 stalled 250.0 ms in step 2: nothing ran on it, its main thread inside \
         DistributedDataParallel.forward; the others waited 30.0 ms each for it"
    );
    w.stragglers.clear();

    // The calls cost what the device idles inside them: 1.6 ms of their 2 ms, per rank.
    w.host.allocator = CallStat {
        count: 3,
        total_ns: 2 * MS,
        ranks: ids(&[0]),
        device_idle_ns: 1_600_000,
    };
    assert_eq!(w.run(allocator_churn).unwrap().impact_ns, 800_000);
    w.host.pageable_h2d = CallStat {
        count: 1,
        total_ns: 4 * MS,
        ranks: ids(&[1]),
        device_idle_ns: 0,
    };
    assert_eq!(w.run(pageable_memcpy).unwrap().impact_ns, 2 * MS);
}

#[test]
fn launch_bound_is_what_no_named_cause_explains_and_graph_capture_is_its_own_finding() {
    let mut w = World::new();
    w.host.launch.launched = 1000;
    w.host.launch.span_ns = 400 * MS;
    w.host.launch.host_bound_ns = 100 * MS;
    w.host.data_loading.device_idle_ns = 10 * MS;
    w.host.allocator.device_idle_ns = 20 * MS;
    w.host.graphs.capture_idle_ns = 30 * MS;
    w.host.graphs.captures = 1;
    w.host.graphs.captured_launches = 500;
    w.host.syncs = vec![SyncPoint {
        call: "cudaStreamSynchronize".into(),
        caused_by: "-".into(),
        count: 1,
        blocked_ns: MS,
        device_idle_after_ns: 4 * MS,
        ranks: ids(&[0]),
    }];
    // 100 − 10 − 20 − 30 − 4 = 36 ms over 2 ranks; the trace uses graphs: no graph advice.
    let d = w.run(launch_bound).unwrap();
    assert_eq!(d.impact_ns, 18 * MS);
    assert!(matches!(
        d.claim,
        crate::analysis::advisor::Claim::Host(
            crate::analysis::advisor::rules::host::Claim::LaunchBound {
                uses_graphs: true,
                ..
            }
        )
    ));
    let words = crate::prose::claim_words(&d.claim);
    assert!(
        words
            .suggestions
            .iter()
            .all(|s| !s.contains("capture the step"))
    );
    // Capture: 30 ms of 400 (7.5%) ≥ 5%, per rank 15 ms; under 5% it is silent.
    let c = w.run(graph_capture).unwrap();
    assert_eq!(c.impact_ns, 15 * MS);
    w.host.graphs.capture_idle_ns = 10 * MS;
    assert!(w.run(graph_capture).is_none());
    w.host.graphs.captures = 0;
    w.host.graphs.capture_idle_ns = 30 * MS;
    assert!(w.run(graph_capture).is_none());
    // Named causes that add up past the host-bound time leave nothing, not a negative.
    w.host.launch.host_bound_ns = 10 * MS;
    assert!(w.run(launch_bound).is_none());
    // A blocking call outside every operator is not worded "from -".
    let s = w.run(sync_points).unwrap();
    assert_eq!(s.evidence.ops, ["cudaStreamSynchronize"]);
    let title = crate::prose::claim_words(&s.claim).title;
    assert!(title.contains("outside any framework operator"), "{title}");
}

#[test]
fn free_time_and_critical_path() {
    let mut w = World::new();
    for r in &mut w.rows {
        r.free_ns = 15 * MS;
        r.compute_ns = 85 * MS;
    }
    assert_eq!(w.run(free_time).unwrap().impact_ns, 30 * MS);
    for r in &mut w.rows {
        r.free_ns = 5 * MS;
    }
    assert!(w.run(free_time).is_none());

    let op = |name: &str, category, total_ns| CriticalOp {
        name: name.into(),
        category,
        count: 1,
        total_ns,
        data_loader: false,
    };
    let mut c = CriticalPath {
        total_ns: 100 * MS,
        top_ops: vec![
            op("cudaMalloc", Cp::Cpu, 70 * MS),
            op("gemm", Cp::GpuCompute, 30 * MS),
        ],
        ..Default::default()
    };
    c.by_category.insert(Cp::Cpu, 70 * MS);
    c.by_category.insert(Cp::GpuCompute, 30 * MS);
    w.critical = Some(c.clone());
    // Host work costs only while the device idles for it: no host-bound time, no cost.
    assert!(w.run(critical_path_host).is_none());
    // 100 ms host-bound over 2 ranks caps its 70 ms on the path at 50 ms.
    w.host.launch.host_bound_ns = 100 * MS;
    let d = w.run(critical_path_host).unwrap();
    assert_eq!(
        (d.impact_ns, d.evidence.ops.clone()),
        (50 * MS, vec!["cudaMalloc".to_string()])
    );
    w.host.launch.host_bound_ns = 200 * MS;
    assert_eq!(w.run(critical_path_host).unwrap().impact_ns, 70 * MS);
    // Data loading on the path belongs to the dataloader rule.
    c.top_ops[0].name = "enumerate(DataLoader)#x".into();
    c.top_ops[0].data_loader = true;
    w.critical = Some(c);
    assert!(w.run(critical_path_host).is_none());
}

#[test]
fn launch_bound_needs_a_device_to_feed() {
    let mut w = World::new();
    w.host.launch.span_ns = 400 * MS;
    w.host.launch.host_bound_ns = 40 * MS;
    // No launch recorded (no runtime layer, Ascend Level0's text export): device work still
    // shows a device to feed; with neither, nothing says the host drives a device.
    w.host.launch.device_work = 300;
    assert_eq!(w.run(launch_bound).unwrap().impact_ns, 20 * MS);
    w.host.launch.device_work = 0;
    assert!(w.run(launch_bound).is_none());
    w.host.launch.launched = 1000;
    assert_eq!(w.run(launch_bound).unwrap().impact_ns, 20 * MS);
}

#[test]
fn op_dispatch_by_count_or_by_idle() {
    use crate::analysis::host::CallStat;
    let mut w = World::new();
    let calls = |count, idle| CallStat {
        count,
        total_ns: 14 * MS,
        ranks: vec![RankId(0), RankId(1)],
        device_idle_ns: idle,
    };
    // 38 calls over 2 ranks (19 each, under msprof-analyze's 20) idling the device 2 ms per
    // rank: 1% of the 200 ms span, under 2%: no finding.
    w.host = Host {
        op_dispatch: calls(38, 4 * MS),
        ..Host::default()
    };
    assert!(w.run(op_dispatch).is_none());
    // 40 calls (20 per rank): msprof-analyze's count; the impact is the idle per rank.
    w.host.op_dispatch = calls(40, 4 * MS);
    assert_eq!(w.run(op_dispatch).unwrap().impact_ns, 2 * MS);
    // 19 per rank idling 4 ms per rank (2% of the span): fires by its cost.
    w.host.op_dispatch = calls(38, 8 * MS);
    assert_eq!(w.run(op_dispatch).unwrap().impact_ns, 4 * MS);
    // launch_bound leaves that time to it.
    w.host.launch.host_bound_ns = 30 * MS;
    w.host.launch.span_ns = 400 * MS;
    w.host.launch.launched = 10;
    assert_eq!(w.run(launch_bound).unwrap().impact_ns, 11 * MS);
}
