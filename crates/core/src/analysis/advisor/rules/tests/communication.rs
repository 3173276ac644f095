//! The communication rules on HCCL's and the matching's own measurements: stalled
//! transfers, slow links of the link matrix, unaligned transfers.

use super::*;
use crate::analysis::comm::link_matrix::LinkStat;
use crate::analysis::comm::stalls::Stall;

#[test]
fn stalled_transfer_claims_the_exposed_excess() {
    let mut w = World::new();
    assert!(w.run(stalled_transfer).is_none());
    let stall = |step, name: &str, exposed| Stall {
        group: "world".into(),
        op: CollOp::AllReduce,
        step: Some(StepNo(step)),
        index: 0,
        name: Some(name.into()),
        bytes: 16 << 20,
        last_arriver: RankId(1),
        ranks: ids(&[0, 1]),
        missing_ranks: ids(&[2, 3]),
        transit_ns: 30 * MS,
        expected_ns: MS,
        reference_busbw_gbps: 16.7,
        exposed_excess_ns: exposed,
    };
    // Σ exposed excess 40 + 8 ms over 2 ranks: 24 ms of the 200 ms per rank.
    w.stalls = vec![stall(1, "hcom_a", 40 * MS), stall(2, "hcom_b", 8 * MS)];
    let d = w.run(stalled_transfer).unwrap();
    assert_eq!(d.impact_ns, 24 * MS);
    assert_eq!(d.evidence.steps, [StepNo(1), StepNo(2)]);
    assert_eq!(d.evidence.ops, ["hcom_a", "hcom_b", "all_reduce (world)"]);
    let crate::analysis::advisor::Claim::Communication(
        crate::analysis::advisor::rules::communication::Claim::StalledTransfer { missing, .. },
    ) = d.claim
    else {
        panic!("{:?}", d.claim)
    };
    assert_eq!(missing, ids(&[2, 3]));
    // Below a fifth of the exposed-communication threshold (5% / 5 = 1% of the 200 ms span
    // per rank, 2 ms): 3 ms over 2 ranks is no finding.
    w.stalls = vec![stall(1, "hcom_a", 3 * MS)];
    assert!(w.run(stalled_transfer).is_none());
}

#[test]
fn slow_transport_link_claims_the_time_beyond_the_median() {
    let mut w = World::new();
    let link = |dst, gbps: f64, slow| LinkStat {
        group: "175".into(),
        src: 0,
        dst,
        transport: crate::model::Transport::Hccs,
        bytes: 40_000_000,
        time_ns: (40_000_000.0 / gbps) as Ns,
        gbps: Some(gbps),
        median_gbps: Some(16.0),
        slow,
        ops: 1,
    };
    w.links = vec![
        link(1, 16.0, false),
        link(2, 16.0, false),
        link(3, 8.0, true),
    ];
    // 40 MB at 8 GB/s take 5 ms, at the 16 GB/s median 2.5 ms: 2.5 ms beyond, over 2 ranks.
    let d = w.run(slow_transport_link).unwrap();
    assert_eq!(d.impact_ns, 1_250_000);
    assert_eq!(d.evidence.ops, ["0->3 HCCS (175)"]);
    w.links[2].slow = false;
    assert!(w.run(slow_transport_link).is_none());
}

#[test]
fn unaligned_transfers_claim_their_tails_and_overrule_the_collective_sizes() {
    use crate::analysis::comm::unaligned::UnalignedOp;
    let mut w = World::new();
    // From the collectives' sizes alone: a finding, impact 0.
    w.comm = vec![comm(|c| c.misaligned_calls = 3)];
    assert_eq!(w.run(misaligned_sizes).unwrap().impact_ns, 0);
    // HCCL recorded its transfers and all were aligned: nothing to say.
    w.unaligned.recorded = true;
    assert!(w.run(misaligned_sizes).is_none());
    let op = |rank, name: &str, tail_ns| UnalignedOp {
        rank: RankId(rank),
        step: Some(StepNo(1)),
        name: name.into(),
        transfers: 14,
        bytes: 28_000_000,
        time_ns: 2 * MS,
        unaligned: 2,
        unaligned_bytes: 4_000_000,
        unaligned_ns: MS / 2,
        sizes: vec![1_937_312],
        tail_ns,
    };
    // Tails 3 + 1 ms over 2 ranks: 2 ms; two names, both ranks.
    w.unaligned.ops = vec![
        op(0, "hcom_a", 3 * MS),
        op(1, "hcom_a", MS),
        op(1, "hcom_b", 0),
    ];
    let d = w.run(misaligned_sizes).unwrap();
    assert_eq!(d.impact_ns, 2 * MS);
    assert_eq!(d.evidence.ranks, ids(&[0, 1]));
    assert_eq!(d.evidence.ops, ["hcom_a", "hcom_b"]);
    let crate::analysis::advisor::Claim::Communication(
        crate::analysis::advisor::rules::communication::Claim::UnalignedTransfers {
            ops,
            ranks,
            unaligned,
            size,
            gbps,
            tail_ns,
        },
    ) = d.claim
    else {
        panic!("{:?}", d.claim)
    };
    assert_eq!(
        (ops, ranks, unaligned, size, tail_ns),
        (2, 2, 6, 1_937_312, 4 * MS)
    );
    // 12 MB in 1.5 ms unaligned, 72 MB in 4.5 ms aligned.
    assert_eq!(gbps, (Some(8.0), Some(16.0)));
}

#[test]
fn waiting_seen_only_by_hccl_names_no_loaded_rank() {
    // Two of eight ranks loaded; they wait alike for a rank that is not: the skew says 3%,
    // HCCL's split 96%. The last loaded rank to arrive is not who they waited for.
    let mut w = World::new();
    w.comm = vec![super::comm(|c| {
        (c.wait_ratio, c.waiting_ratio) = (Some(0.03), Some(0.96));
        c.wait_dominated = true;
        c.unloaded_members = 6;
    })];
    w.stragglers = vec![crate::analysis::cluster::Straggler {
        group: "0".into(),
        rank: RankId(1),
        ..Default::default()
    }];
    w.comm[0].hccl = Some(crate::analysis::comm::hccl_split::HcclSplit {
        calls: 10,
        elapse_ns: 25 * MS,
        transit_ns: MS,
        not_transfer: 0.96,
    });
    // 20 ms exposed × 0.96 over 2 calling ranks.
    let d = w.run(comm_wait_dominated).unwrap();
    assert_eq!(d.impact_ns, 9_600_000);
    assert_eq!(
        d.evidence.numbers["hccl_transit_ns"],
        crate::analysis::advisor::Quantity::Ns(MS)
    );
    assert!(d.evidence.ranks.is_empty());
    let (late, unloaded) = waited_for(d);
    assert_eq!((late, unloaded), (None, Some(6)));
    // Measured by the skew itself: the loaded straggler is named, HCCL is not mentioned.
    w.comm[0].wait_ratio = Some(0.96);
    let d = w.run(comm_wait_dominated).unwrap();
    let (late, unloaded) = waited_for(d);
    assert_eq!((late.map(|l| l.0), unloaded), (Some(RankId(1)), None));
}

/// The late rank and the unloaded members a wait-dominated draft names.
fn waited_for(d: Draft) -> (Option<(RankId, u64, u64)>, Option<u32>) {
    match d.claim {
        crate::analysis::advisor::Claim::Communication(
            crate::analysis::advisor::rules::communication::Claim::WaitDominated {
                late,
                unloaded,
                ..
            },
        ) => (late, unloaded),
        c => panic!("{c:?}"),
    }
}
