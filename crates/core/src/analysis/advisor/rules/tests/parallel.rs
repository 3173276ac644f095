//! The parallelism rules: stragglers, slow steps, stage and rank imbalance.

use super::*;

#[test]
fn straggler_fires_only_when_flagged() {
    let mut w = World::new();
    let s = Straggler {
        group: "0".into(),
        rank: RankId(1),
        imposed_wait_ns: 30 * MS,
        share: 0.9,
        steps: vec![StragglerStep {
            step: Some(StepNo(1)),
            last_arrivals: 1,
            imposed_wait_ns: 30 * MS,
            any_group_wait_ns: 30 * MS,
        }],
        ..Default::default()
    };
    w.stragglers = vec![s.clone()];
    assert!(w.run(straggler).is_none());
    w.stragglers = vec![Straggler {
        flagged: true,
        ..s.clone()
    }];
    let impact_and_ranks = |w: &World| {
        let d = w.run(straggler).unwrap();
        (d.impact_ns, d.evidence.ranks)
    };
    // 30 ms of waiting over the 2 ranks in scope: 15 ms per rank.
    assert_eq!(impact_and_ranks(&w), (15 * MS, ids(&[1])));
    // The same rank straggling in a second group whose waits overlap the first's in time
    // (30 ms each, 30 ms as a union): the union counts, once, and the rank is named once.
    w.stragglers.push(Straggler {
        group: "1".into(),
        flagged: true,
        ..s.clone()
    });
    assert_eq!(impact_and_ranks(&w), (15 * MS, ids(&[1])));
    w.stragglers.pop();
    // In a domain of 4 the 30 ms were waited by 3 others: 10 ms each when the scope holds
    // fewer ranks (here 2).
    w.stragglers = vec![Straggler {
        flagged: true,
        members: 4,
        ..s.clone()
    }];
    assert_eq!(w.run(straggler).unwrap().impact_ns, 10 * MS);
    // The wait it imposed in a slow step it is the culprit of is that step's: 20 of its
    // 30 ms fell in step 2, slow with rank 1 as culprit; 10 ms remain, 10/3 per other.
    w.stragglers[0].steps = vec![
        StragglerStep {
            step: Some(StepNo(1)),
            last_arrivals: 1,
            imposed_wait_ns: 10 * MS,
            any_group_wait_ns: 10 * MS,
        },
        StragglerStep {
            step: Some(StepNo(2)),
            last_arrivals: 1,
            imposed_wait_ns: 20 * MS,
            any_group_wait_ns: 20 * MS,
        },
    ];
    w.slow_steps = vec![SlowStep {
        step: StepNo(2),
        culprit_rank: Some(RankId(1)),
        ..Default::default()
    }];
    let d = w.run(straggler).unwrap();
    assert_eq!(
        (d.impact_ns, d.evidence.steps.clone()),
        (10 * MS / 3, vec![StepNo(1)])
    );
    // All of it in the slow step: no straggler finding, the slow step names the rank.
    w.stragglers[0].steps.remove(0);
    w.stragglers[0].imposed_wait_ns = 20 * MS;
    assert!(w.run(straggler).is_none());
}

#[test]
fn slow_step_and_stage_imbalance() {
    let mut w = World::new();
    w.slow_steps = vec![SlowStep {
        step: StepNo(2),
        time_ns: 150 * MS,
        median_ns: 100 * MS,
        culprit_rank: Some(RankId(1)),
        ..Default::default()
    }];
    let d = w.run(slow_step).unwrap();
    assert_eq!(
        (
            d.impact_ns,
            d.evidence.ranks.clone(),
            d.evidence.steps.clone()
        ),
        (50 * MS, ids(&[1]), vec![StepNo(2)])
    );
    // Under `--step 1` step 2 is out of scope: its slowness costs step 1 nothing.
    w.steps.truncate(1);
    assert!(w.run(slow_step).is_none());
    w.steps = World::new().steps;
    let stage = |stage, compute, pace_cost_ns, flagged| Stage {
        stage,
        ranks: vec![RankId(stage)],
        compute_ns: compute,
        pace_cost_ns,
        flagged,
        ..Default::default()
    };
    w.stages = Some(vec![
        stage(0, 60 * MS, 0, false),
        stage(1, 60 * MS, 0, false),
    ]);
    assert!(w.run(stage_imbalance).is_none());
    w.stages = Some(vec![
        stage(0, 90 * MS, 30 * MS, true),
        stage(1, 30 * MS, 0, false),
    ]);
    // The pace it sets (90 − mean 60) costs each of the 2 steps; the slow stage's ranks.
    let d = w.run(stage_imbalance).unwrap();
    assert_eq!(
        (d.impact_ns, d.evidence.ranks.clone()),
        (60 * MS, ids(&[0]))
    );
}

#[test]
fn rank_imbalance_defers_to_a_straggler() {
    let mut w = World::new();
    w.imbalance = vec![Imbalance {
        group: "0".into(),
        part: Part::Compute,
        max_rank: RankId(1),
        max_ns: 220 * MS,
        min_rank: RankId(0),
        min_ns: 200 * MS,
        spread: 0.1,
        flagged: true,
    }];
    assert_eq!(w.run(rank_imbalance).unwrap().impact_ns, 10 * MS);
    w.stragglers = vec![Straggler {
        flagged: true,
        ..Default::default()
    }];
    assert!(w.run(rank_imbalance).is_none());
    w.stragglers.clear();
    w.imbalance[0].flagged = false;
    assert!(w.run(rank_imbalance).is_none());
}
