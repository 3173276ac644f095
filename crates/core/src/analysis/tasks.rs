//! What the accelerator's kernel table says beyond timing (docs/metrics.md, "Device
//! tasks"): how many tasks ran compiled for dynamic shapes (`OP State`), and which operators
//! fell back to the AI CPU. Over the ranks and steps in scope; empty without a kernel table.

use crate::model::{Core, Job, RankId, StepNo, Sym};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Operator types listed per kind.
pub const TOP: usize = 10;

/// One operator type's tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskOp {
    /// Operator type (`MatMulV2`), else the task name.
    pub op: String,
    /// Tasks.
    pub tasks: u64,
    /// Σ their durations.
    pub time_ns: Ns,
    /// The longest.
    pub max_ns: Ns,
    /// Tasks with a 64-bit float input (`DOUBLE`): no AI Core kernel takes one.
    pub double_tasks: u64,
}

/// The kernel table's facts over the scope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tasks {
    /// Tasks with details.
    pub tasks: u64,
    /// Of those, tasks whose `OP State` was recorded.
    pub with_state: u64,
    /// Of those, tasks compiled for dynamic shapes.
    pub dynamic: u64,
    /// Dynamic operator types, most time first (at most [`TOP`]).
    pub dynamic_ops: Vec<TaskOp>,
    /// Σ time of AI CPU tasks.
    pub ai_cpu_ns: Ns,
    /// AI CPU operator types, most time first (at most [`TOP`]).
    pub ai_cpu_ops: Vec<TaskOp>,
}

/// The facts of every rank's tasks in scope.
pub fn tasks(job: &Job, in_scope: impl Fn(RankId, StepNo) -> bool) -> Tasks {
    let mut t = Tasks::default();
    let (mut dynamic, mut ai_cpu): (Ops, Ops) = Default::default();
    for rank in &job.ranks {
        for d in &rank.tasks {
            let i = d.event.index();
            if !rank.step_of(i).is_some_and(|s| in_scope(rank.id, s)) {
                continue;
            }
            let (key, dur) = (d.op_type.unwrap_or(rank.events.name[i]), rank.events.dur[i]);
            let double = d
                .input_types
                .is_some_and(|t| job.strings.resolve(t).contains("DOUBLE"));
            t.tasks += 1;
            if let Some(is) = d.dynamic {
                t.with_state += 1;
                if is {
                    t.dynamic += 1;
                    add(&mut dynamic, key, dur, double);
                }
            }
            if d.core == Some(Core::AiCpu) {
                t.ai_cpu_ns += dur;
                add(&mut ai_cpu, key, dur, double);
            }
        }
    }
    t.dynamic_ops = top(job, dynamic);
    t.ai_cpu_ops = top(job, ai_cpu);
    t
}

type Ops = FxHashMap<Sym, (u64, Ns, Ns, u64)>;

fn add(ops: &mut Ops, key: Sym, dur: Ns, double: bool) {
    let e = ops.entry(key).or_default();
    e.0 += 1;
    e.1 += dur;
    e.2 = e.2.max(dur);
    e.3 += u64::from(double);
}

/// The [`TOP`] operator types by time (ties: by name).
fn top(job: &Job, ops: Ops) -> Vec<TaskOp> {
    let mut v: Vec<TaskOp> = ops
        .into_iter()
        .map(|(k, (n, time, max, double))| TaskOp {
            op: job.strings.resolve(k).to_string(),
            tasks: n,
            time_ns: time,
            max_ns: max,
            double_tasks: double,
        })
        .collect();
    v.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.op.cmp(&b.op)));
    v.truncate(TOP);
    v
}

/// One rank's kernel table summed per operator type against the profiler's own sums
/// (`op_statistic.csv`), over the whole profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpStatCheck {
    /// The rank.
    pub rank: RankId,
    /// Rows of the profiler's table.
    pub rows: u64,
    /// Of those, rows whose count is ours and whose total is ours within 1 ns per task (each
    /// side rounds every task to the ns once).
    pub agree: u64,
    /// The rows that do not.
    pub differ: Vec<OpStatDiff>,
}

/// A row where the profiler's sum and the tasks' differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpStatDiff {
    /// Operator type.
    pub op: String,
    /// Unit (`AI_CORE`, …).
    pub core: &'static str,
    /// (theirs, ours) task counts.
    pub count: (u64, u64),
    /// (theirs, ours) Σ time.
    pub time_ns: (Ns, Ns),
}

/// Every rank that has both a kernel table and the profiler's sums of it.
pub fn op_stat_checks(job: &Job) -> Vec<OpStatCheck> {
    let mut out = Vec::new();
    for rank in job
        .ranks
        .iter()
        .filter(|r| !r.op_stats.is_empty() && !r.tasks.is_empty())
    {
        let mut ours: FxHashMap<(&str, Core), (u64, Ns)> = FxHashMap::default();
        for d in &rank.tasks {
            let i = d.event.index();
            let op = job
                .strings
                .resolve(d.op_type.unwrap_or(rank.events.name[i]));
            let e = ours.entry((op, d.core.unwrap_or_default())).or_default();
            e.0 += 1;
            e.1 += rank.events.dur[i];
        }
        let mut check = OpStatCheck {
            rank: rank.id,
            rows: rank.op_stats.len() as u64,
            agree: 0,
            differ: Vec::new(),
        };
        for s in &rank.op_stats {
            let (n, ns) = ours
                .get(&(s.op_type.as_str(), s.core))
                .copied()
                .unwrap_or_default();
            if n == s.count && ns.abs_diff(s.total_ns) <= n + 1 {
                check.agree += 1;
            } else {
                check.differ.push(OpStatDiff {
                    op: s.op_type.clone(),
                    core: s.core.as_str(),
                    count: (s.count, n),
                    time_ns: (s.total_ns, ns),
                });
            }
        }
        out.push(check);
    }
    out
}
