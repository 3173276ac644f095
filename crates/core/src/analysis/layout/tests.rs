use super::*;
use crate::model::{ProcessGroup, Rank};

fn job(world: u32, groups: &[(&str, &[u32])], parallel: Option<ParallelSizes>) -> Job {
    Job {
        ranks: (0..world)
            .map(|r| Rank {
                id: RankId(r),
                ..Rank::default()
            })
            .collect(),
        world_size: Some(world),
        groups: groups
            .iter()
            .map(|(d, r)| ProcessGroup {
                name: "g".into(),
                description: d.to_string(),
                ranks: r.iter().map(|&x| RankId(x)).collect(),
            })
            .collect(),
        parallel,
        ..Job::default()
    }
}

#[test]
fn group_names_name_their_dimension() {
    let cases = [
        ("tp", Some(Dim::Tp)),
        ("TENSOR_MODEL_PARALLEL_GROUP", Some(Dim::Tp)),
        ("mesh_dp", Some(Dim::Dp)),
        ("DATA_PARALLEL_GROUP", Some(Dim::Dp)),
        ("pipeline", Some(Dim::Pp)),
        ("PIPELINE_MODEL_PARALLEL_GROUP", Some(Dim::Pp)),
        ("cp", Some(Dim::Cp)),
        ("exp", Some(Dim::Ep)),
        ("EXPERT_MODEL_PARALLEL_GROUP", Some(Dim::Ep)),
        ("tp_dp", None),
        ("default_pg", None),
        ("embd", None),
        ("dp_modulo_exp", None),
    ];
    for (name, dim) in cases {
        assert_eq!(Dim::of_group_name(name), dim, "{name}");
    }
}

/// Ascend's TP2×PP2×DP2 metadata (msinsight's test data): sizes declared, strides from the
/// named groups of rank 0 (tp [0, 1], dp [0, 2], pp [0, 4]).
#[test]
fn declared_sizes_and_groups_place_every_rank() {
    let sizes = ParallelSizes {
        tp: 2,
        pp: 2,
        dp: 2,
        cp: 1,
        ep: 1,
    };
    let groups: [(&str, &[u32]); 5] = [
        ("tp", &[0, 1]),
        ("dp", &[0, 2]),
        ("pp", &[0, 4]),
        ("tp_dp", &[0, 1, 2, 3]),
        ("cp", &[0]),
    ];
    let j = job(8, &groups, Some(sizes));
    let l = layout(&j, None, None).unwrap();
    let dims: Vec<(Dim, u32, u32)> = l.axes.iter().map(|a| (a.dim, a.size, a.stride)).collect();
    assert_eq!(
        dims,
        vec![(Dim::Pp, 2, 4), (Dim::Dp, 2, 2), (Dim::Tp, 2, 1)]
    );
    assert!(l.tiles);
    assert_eq!(l.shape(), "TP 2 × DP 2 × PP 2");
    // Rank 7 = tp 1 + 2 × (dp 1) + 4 × (pp 1); rank 5 = tp 1, dp 0, pp 1.
    assert_eq!(l.label(RankId(7)), "pp1·dp1·tp1");
    assert_eq!(l.label(RankId(5)), "pp1·dp0·tp1");
    assert_eq!(l.coord(RankId(5), Dim::Pp), Some(1));
    assert_eq!(l.coord(RankId(5), Dim::Cp), None);
    // Sizes alone take Megatron's order (tp innermost, then dp, then pp): the same layout.
    let bare = layout(&job(8, &[], Some(sizes)), None, None).unwrap();
    assert_eq!(bare.axes, {
        let mut v = l.axes.clone();
        v.iter_mut().for_each(|a| a.source = Source::DeclaredSize);
        v
    });
}

/// Nothing declared: two pipeline stages of 4 (ranks 0–3, 4–7) give PP 2 with stride 4, and
/// the rest of the world is data parallel (stride 1).
#[test]
fn stages_and_the_rest_of_the_world_are_inferred() {
    let stage = |k: u32, ranks: &[u32]| Stage {
        stage: k,
        ranks: ranks.iter().map(|&r| RankId(r)).collect(),
        ..Stage::default()
    };
    let stages = [stage(0, &[0, 1, 2, 3]), stage(1, &[4, 5, 6, 7])];
    let l = layout(&job(8, &[], None), None, Some(&stages)).unwrap();
    let dims: Vec<(Dim, u32, u32, Source)> = l
        .axes
        .iter()
        .map(|a| (a.dim, a.size, a.stride, a.source))
        .collect();
    assert_eq!(
        dims,
        vec![
            (Dim::Pp, 2, 4, Source::InferredStages),
            (Dim::Dp, 4, 1, Source::InferredRest)
        ]
    );
    assert!(l.tiles);
    assert_eq!(l.label(RankId(6)), "pp1·dp2");
    // Alternating stages (0, 2 | 1, 3) are PP 2 with stride 1, DP 2 outside it.
    let alt = [stage(0, &[0, 2]), stage(1, &[1, 3])];
    let l = layout(&job(4, &[], None), None, Some(&alt)).unwrap();
    assert_eq!(
        (l.shape(), l.label(RankId(3))),
        ("DP 2 × PP 2".into(), "pp1·dp1".into())
    );
    // Stages that are no regular split (0, 3 | 1, 2) are not an axis: all is DP.
    let odd = [stage(0, &[0, 3]), stage(1, &[1, 2])];
    let l = layout(&job(4, &[], None), None, Some(&odd)).unwrap();
    assert_eq!(l.shape(), "DP 4");
}

#[test]
fn runs_are_evenly_spaced_ranks() {
    let r = |v: &[u32]| run(&v.iter().map(|&x| RankId(x)).collect::<Vec<_>>());
    assert_eq!(r(&[4, 0, 2, 6]), Some((4, 2)));
    assert_eq!(r(&[0, 1, 3]), None);
    assert_eq!(r(&[5]), None);
    // A single rank has no layout, nor a world no job has (a hostile `world_size`).
    assert!(layout(&job(1, &[], None), None, None).is_none());
    // Rank 9 loaded alone, nothing declared: any split would be a guess. Declared world 16:
    // the rest is data parallel.
    let mut lone = job(1, &[], None);
    lone.ranks[0].id = RankId(9);
    lone.world_size = None;
    assert!(layout(&lone, None, None).is_none());
    lone.world_size = Some(16);
    assert_eq!(
        layout(&lone, None, None).map(|l| l.shape()).as_deref(),
        Some("DP 16")
    );
    let mut huge = job(2, &[], None);
    huge.world_size = Some(u32::MAX);
    assert!(layout(&huge, None, None).is_none());
    // Declared sizes that overflow a product place nothing but do not panic.
    let wild = ParallelSizes {
        tp: u32::MAX,
        pp: u32::MAX,
        dp: 3,
        cp: u32::MAX,
        ep: 1,
    };
    let l = layout(&job(8, &[], Some(wild)), None, None).unwrap();
    assert!(!l.tiles);
}
