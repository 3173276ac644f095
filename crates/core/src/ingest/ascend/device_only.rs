//! A rank from `kernel_details.csv` alone, for an export whose `trace_view.json` was not kept
//! (it is the largest file, often left on the cluster): each task on its stream, the HCCL ops
//! on the group lane as collectives, each task in the step its `Step Id` names. A step runs
//! from its tasks' first start to their last end, the window torch_npu's step summary uses,
//! so that summary is still cross-checked. There is no host side: no launches, no host
//! analyses.

use super::hccl::op_collective;
use super::lanes::{Ev, Extra, LaneKey, assemble};
use super::tasks::{Placement, TaskRow};
use crate::ingest::chrome::chunk::NO_ID;
use crate::ingest::roles::RoleTable;
use crate::model::{Core, EventIx, HostStep, Interner, Kind, NO_STEP, Rank, StepNo};
use crate::time::Ns;
use std::collections::BTreeMap;

/// The rank, its task details attached, from the table's rows; `Err` says why the table
/// cannot place its tasks in time.
pub fn rank(rows: Vec<TaskRow>, strings: &mut Interner, roles: &RoleTable) -> Result<Rank, String> {
    let placed: Vec<(&TaskRow, Placement)> = rows
        .iter()
        .map(|r| r.placement.map(|p| (r, p)))
        .collect::<Option<_>>()
        .ok_or("no `Duration(us)` column: the tasks cannot be placed without trace_view.json")?;
    if placed.is_empty() {
        return Err("no tasks in the kernel table".into());
    }
    let steps = step_windows(&placed);
    let index: BTreeMap<u32, u32> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.number.0, i as u32))
        .collect();
    let mut evs = Vec::with_capacity(placed.len());
    let mut extra = Extra::default();
    for (r, p) in &placed {
        let comm = r.core == Some(Core::Communication);
        let lane = match (comm, p.stream) {
            (true, _) => LaneKey::Group(0),
            (false, Some(s)) => LaneKey::Stream(s),
            (false, None) => LaneKey::Tasks,
        };
        if comm {
            let c = op_collective(EventIx::NONE, &r.name, None, None, strings);
            extra.collectives.push((evs.len(), c));
        }
        evs.push(Ev {
            lane,
            start: r.start,
            dur: p.dur,
            name: strings.intern(&r.name),
            kind: if comm { Kind::Comm } else { Kind::Compute },
            corr: NO_ID,
            ext: NO_ID,
            step: p
                .step
                .and_then(|n| index.get(&n).copied())
                .unwrap_or(NO_STEP),
        });
    }
    let mut rank = assemble(evs, extra, strings);
    rank.steps = steps;
    if rank.steps.is_empty() {
        // No `Step Id`: the whole table is one step, as for a trace without step markers.
        crate::ingest::steps::find_steps(&mut rank, strings, roles);
        crate::ingest::steps::assign_steps(&mut rank);
    }
    super::tasks::attach(&mut rank, strings, rows);
    Ok(rank)
}

/// Each `Step Id`'s window, first start to last end of its tasks, in start order.
fn step_windows(placed: &[(&TaskRow, Placement)]) -> Vec<HostStep> {
    let mut window: BTreeMap<u32, (Ns, Ns)> = BTreeMap::new();
    for (r, p) in placed {
        if let Some(n) = p.step {
            let (lo, hi) = window.entry(n).or_insert((Ns::MAX, Ns::MIN));
            *lo = (*lo).min(r.start);
            *hi = (*hi).max(r.start + p.dur);
        }
    }
    let mut steps: Vec<HostStep> = window
        .into_iter()
        .map(|(n, (start, end))| HostStep {
            number: StepNo(n),
            start,
            end,
            synthetic: false,
        })
        .collect();
    steps.sort_by_key(|s| (s.start, s.number));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LaneSide;

    fn row(name: &str, core: Core, start: Ns, dur: Ns, stream: Option<i64>, step: u32) -> TaskRow {
        TaskRow {
            start,
            name: name.into(),
            core: Some(core),
            placement: Some(Placement {
                dur,
                stream,
                step: Some(step),
            }),
            ..TaskRow::default()
        }
    }

    #[test]
    fn tasks_go_to_their_streams_and_steps() {
        // Step 6 runs first (its table order does not matter): [100, 130); step 7 [200, 290)
        // with an all-reduce [240, 290) on the HCCL lane.
        let rows = vec![
            row("MatMul", Core::AiCore, 200, 30, Some(2), 7),
            row(
                "hcom_allReduce__1_0_1",
                Core::Communication,
                240,
                50,
                None,
                7,
            ),
            row("Add", Core::AiVector, 100, 10, Some(2), 6),
            row("Cast", Core::AiCpu, 110, 20, Some(5), 6),
        ];
        let mut strings = Interner::default();
        let r = rank(rows, &mut strings, &RoleTable::default()).unwrap();
        let steps: Vec<_> = r
            .steps
            .iter()
            .map(|s| (s.number.0, s.start, s.end))
            .collect();
        assert_eq!(steps, [(6, 100, 130), (7, 200, 290)]);
        let lanes: Vec<_> = r.lanes.iter().map(|l| strings.resolve(l.name)).collect();
        assert_eq!(
            lanes,
            ["NPU Stream 2", "NPU Stream 5", "HCCL Group Communication"]
        );
        assert!(r.lanes.iter().all(|l| l.side == LaneSide::Device));
        let ev = &r.events;
        let each: Vec<_> = (0..ev.len())
            .map(|i| (strings.resolve(ev.name[i]), ev.kind[i], ev.step[i]))
            .collect();
        assert_eq!(
            each,
            [
                ("Add", Kind::Compute, 0),
                ("MatMul", Kind::Compute, 1),
                ("Cast", Kind::Compute, 0),
                ("hcom_allReduce__1_0_1", Kind::Comm, 1),
            ]
        );
        assert_eq!(r.collectives.len(), 1);
        assert_eq!(r.collectives[0].event, EventIx(3));
        assert_eq!(strings.resolve(r.collectives[0].name.unwrap()), "allReduce");
        // Task details attach to the compute tasks (the HCCL row is the op itself).
        assert_eq!(r.tasks.len(), 3);
        assert_eq!(r.stepping_lane, None);
    }

    #[test]
    fn a_table_without_durations_or_rows_cannot_place_tasks() {
        let mut strings = Interner::default();
        let roles = RoleTable::default();
        let no_dur = TaskRow {
            name: "Add".into(),
            ..TaskRow::default()
        };
        let e = rank(vec![no_dur], &mut strings, &roles).unwrap_err();
        assert!(e.contains("Duration(us)"), "{e}");
        assert!(rank(Vec::new(), &mut strings, &roles).is_err());
    }

    #[test]
    fn without_step_ids_the_table_is_one_step() {
        let mut r = row("Add", Core::AiVector, 100, 10, None, 0);
        r.placement.as_mut().unwrap().step = None;
        let mut strings = Interner::default();
        let rank = rank(vec![r], &mut strings, &RoleTable::default()).unwrap();
        assert_eq!(strings.resolve(rank.lanes[0].name), "NPU Tasks");
        assert_eq!(rank.steps.len(), 1);
        assert!(rank.steps[0].synthetic);
        assert_eq!(rank.events.step[0], 0);
    }
}
