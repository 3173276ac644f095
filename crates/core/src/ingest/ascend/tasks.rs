//! Device-task details from either export (`kernel_details.csv`, or the db's
//! `COMPUTE_TASK_INFO` and `TASK_PMU_INFO`), attached to the rank's device events by start
//! time and name: both exports write the same task at the same nanosecond.

use crate::model::{Core, Interner, LaneSide, Pipes, Rank, TaskDetail};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// One task as the kernel table writes it, before it is attached to an event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskRow {
    /// Start, ns (the trace's clock).
    pub start: Ns,
    /// Task name (`Conv2D1`).
    pub name: String,
    /// Operator type; `None` when written `N/A` (Level0).
    pub op_type: Option<String>,
    /// The unit; `None` when written `N/A`.
    pub core: Option<Core>,
    /// `OP State` = `dynamic`.
    pub dynamic: Option<bool>,
    /// `Block Dim`.
    pub block_dim: Option<u32>,
    /// `Input Shapes`.
    pub input_shapes: Option<String>,
    /// `Input Data Types`.
    pub input_types: Option<String>,
    /// Cube unit's pipe ratios, when it ran there.
    pub cube: Option<Pipes>,
    /// Vector unit's pipe ratios, when it ran there.
    pub vector: Option<Pipes>,
    /// Where the kernel table is the only record of the task (no trace): its duration,
    /// stream and step.
    pub placement: Option<Placement>,
}

/// What the kernel table says of a task's place in time, beside its start: enough to build
/// the device timeline without the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    /// `Duration(us)`, ns.
    pub dur: Ns,
    /// `Stream ID`; `None` when not recorded (Level0) or `N/A` (HCCL ops).
    pub stream: Option<i64>,
    /// `Step Id`; `None` outside the profiled steps.
    pub step: Option<u32>,
}

/// Attaches rows (communication rows left out) to the rank's device events with the same
/// start and name, in event order; returns the number of rows that matched no event.
pub(crate) fn attach(rank: &mut Rank, strings: &mut Interner, rows: Vec<TaskRow>) -> usize {
    let ev = &rank.events;
    let mut at: FxHashMap<(Ns, &str), usize> = FxHashMap::default();
    for i in 0..ev.len() {
        if rank.lanes[ev.lane[i] as usize].side == LaneSide::Device {
            at.entry((ev.start[i], strings.resolve(ev.name[i])))
                .or_insert(i);
        }
    }
    let mut found: Vec<(usize, TaskRow)> = Vec::with_capacity(rows.len());
    let mut unmatched = 0;
    // Communication rows are the HCCL ops the trace already has, written with their own
    // rounding (1 ns apart): nothing to add.
    for row in rows
        .into_iter()
        .filter(|r| r.core != Some(Core::Communication))
    {
        match at.get(&(row.start, row.name.as_str())) {
            Some(&i) => found.push((i, row)),
            None => unmatched += 1,
        }
    }
    found.sort_by_key(|f| f.0);
    found.dedup_by_key(|f| f.0);
    let mut intern = |s: Option<String>| s.map(|s| strings.intern(&s));
    rank.tasks = found
        .into_iter()
        .map(|(i, r)| TaskDetail {
            event: crate::model::EventIx::of(i),
            op_type: intern(r.op_type),
            core: r.core,
            dynamic: r.dynamic,
            block_dim: r.block_dim,
            input_shapes: intern(r.input_shapes),
            input_types: intern(r.input_types),
            cube: r.cube,
            vector: r.vector,
        })
        .collect();
    unmatched
}
