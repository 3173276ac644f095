//! Roofline classes from the accelerator's own counters (docs/metrics.md, "Roofline",
//! Ascend): a task's PMU pipe ratios say which pipe was busiest. MindStudio's rule: a pipe
//! busy ≥ U of the task is its bound — cube `mac` or vector `vec` **compute-bound**, a data
//! mover (MTE1/2/3, fixpipe) **memory-bound** — and a task with no pipe at U (or bound by the
//! scalar pipe, control flow) is **under-utilized** (msprof-analyze's "operator no bound").
//! Counters beat estimates: a task with ratios is classified by them, whatever its shapes.

use super::Class;
use crate::model::{Core, Pipe, Pipes, Sym, TaskDetail};
use crate::time::Ns;
use serde::Serialize;

/// The busiest pipe over the units a task ran on, and its class at threshold `u`; `None`
/// when the task has no counters.
pub fn classify(t: &TaskDetail, u: f64) -> Option<(Class, Pipe, f32)> {
    classify_units(t.cube, t.vector, u)
}

/// The same from the two units' ratios (a task's, or an operator type's means).
fn classify_units(
    cube: Option<Pipes>,
    vector: Option<Pipes>,
    u: f64,
) -> Option<(Class, Pipe, f32)> {
    let (pipe, ratio) = [cube, vector]
        .into_iter()
        .flatten()
        .map(|p| p.busiest())
        .fold(None, |b: Option<(Pipe, f32)>, x| match b {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })?;
    let class = if f64::from(ratio) < u || pipe == Pipe::Scalar {
        Class::UnderUtilized
    } else if pipe.is_compute() {
        Class::ComputeBound
    } else {
        Class::MemoryBound
    };
    Some((class, pipe, ratio))
}

/// Duration-weighted sums of one operator type's counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct PmuAcc {
    /// The unit most of its time ran on.
    pub core: Option<Core>,
    /// Tasks.
    pub kernels: u64,
    /// Σ task time.
    pub time: Ns,
    /// Σ time × ratio per pipe, cube then vector unit.
    pub weighted: [[f64; 7]; 2],
    /// Σ time of the tasks that ran on each unit.
    pub unit_time: [Ns; 2],
    /// The name of the first task added (an event name: what a view opens).
    pub task_name: Option<Sym>,
}

impl PmuAcc {
    /// Adds one task of `dur` ns.
    pub fn add_task(&mut self, t: &TaskDetail, name: Sym, dur: Ns) {
        self.core = self.core.or(t.core);
        self.task_name = self.task_name.or(Some(name));
        self.kernels += 1;
        self.time += dur;
        for (u, pipes) in [t.cube, t.vector].into_iter().enumerate() {
            if let Some(p) = pipes {
                self.unit_time[u] += dur;
                for (w, r) in self.weighted[u].iter_mut().zip(p.0) {
                    *w += dur as f64 * f64::from(r);
                }
            }
        }
    }

    /// Adds another sum.
    pub fn add(&mut self, o: &PmuAcc) {
        self.core = self.core.or(o.core);
        self.task_name = self.task_name.or(o.task_name);
        self.kernels += o.kernels;
        self.time += o.time;
        for u in 0..2 {
            self.unit_time[u] += o.unit_time[u];
            for (a, b) in self.weighted[u].iter_mut().zip(o.weighted[u]) {
                *a += b;
            }
        }
    }

    /// The duration-weighted mean ratios of one unit, when any task ran there.
    fn mean(&self, u: usize) -> Option<Pipes> {
        (self.unit_time[u] > 0)
            .then(|| Pipes(self.weighted[u].map(|w| (w / self.unit_time[u] as f64) as f32)))
    }
}

/// The profiler's name of a unit (`AI_CORE`, `AI_VECTOR_CORE`, `MIX_AIV` …), or null.
fn core_name<S: serde::Serializer>(c: &Option<Core>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(c.as_str()),
        None => s.serialize_none(),
    }
}

/// One operator type's counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PmuOp {
    /// Operator type (`MatMulV2`), else the task name.
    pub op: String,
    /// A task's name (`aclnnMm_MatMulCommon_MatMulV2`): the operator a view opens.
    pub task_name: String,
    /// The unit.
    #[serde(serialize_with = "core_name")]
    pub core: Option<Core>,
    /// Tasks.
    pub kernels: u64,
    /// Σ task time.
    pub time_ns: Ns,
    /// Class of the mean ratios.
    pub class: Class,
    /// Its busiest pipe (`mac`, `vec`, `mte2` …).
    pub bound_pipe: &'static str,
    /// That pipe's mean ratio.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub bound_ratio: f64,
    /// Mean ratio per pipe of the cube unit (`mac`, `vec`, `scalar`, `mte1`, `mte2`, `mte3`,
    /// `fixpipe`), when it ran there.
    #[serde(serialize_with = "crate::analysis::ser::opt_pipes_6")]
    pub cube: Option<[f32; 7]>,
    /// The same for the vector unit.
    #[serde(serialize_with = "crate::analysis::ser::opt_pipes_6")]
    pub vector: Option<[f32; 7]>,
}

/// The row of an operator type from its sums; `task_name` names its first task.
pub fn op_row(op: String, task_name: String, a: &PmuAcc, u: f64) -> PmuOp {
    let (cube, vector) = (a.mean(0), a.mean(1));
    let (class, pipe, ratio) =
        classify_units(cube, vector, u).unwrap_or((Class::Unknown, Pipe::Mac, 0.0));
    PmuOp {
        op,
        task_name,
        core: a.core,
        kernels: a.kernels,
        time_ns: a.time,
        class,
        bound_pipe: pipe.as_str(),
        bound_ratio: f64::from(ratio),
        cube: cube.map(|p| p.0),
        vector: vector.map(|p| p.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(cube: Option<[f32; 7]>, vector: Option<[f32; 7]>) -> TaskDetail {
        TaskDetail {
            event: crate::model::EventIx(0),
            op_type: None,
            core: Some(Core::AiCore),
            dynamic: None,
            block_dim: None,
            input_shapes: None,
            input_types: None,
            cube: cube.map(Pipes),
            vector: vector.map(Pipes),
        }
    }

    #[test]
    fn the_busiest_pipe_decides() {
        // Order: mac, vec, scalar, mte1, mte2, mte3, fixpipe.
        // The shared level1 Conv2D1: mac 0.519, mte2 0.913 → memory-bound on MTE2.
        let conv = task(Some([0.519, 0.0, 0.2, 0.3, 0.913, 0.0, 0.1]), None);
        assert_eq!(
            classify(&conv, 0.8),
            Some((Class::MemoryBound, Pipe::Mte2, 0.913))
        );
        // Conv2D2: mac 0.787, mte2 0.761 → no pipe at 0.8: under-utilized.
        let conv2 = task(Some([0.787, 0.0, 0.2, 0.3, 0.761, 0.0, 0.1]), None);
        assert_eq!(classify(&conv2, 0.8).unwrap().0, Class::UnderUtilized);
        // A GEMM at mac 0.824 is compute-bound; a scalar-bound task is not on any roof.
        let mm = task(Some([0.824, 0.0, 0.479, 0.648, 0.7, 0.0, 0.031]), None);
        assert_eq!(classify(&mm, 0.8).unwrap().0, Class::ComputeBound);
        let scalar = task(Some([0.1, 0.0, 0.9, 0.0, 0.0, 0.0, 0.0]), None);
        assert_eq!(classify(&scalar, 0.8).unwrap().0, Class::UnderUtilized);
        // A mixed task: the busiest pipe over both units (vector MTE3 0.85).
        let mix = task(Some([0.5; 7]), Some([0.2, 0.3, 0.1, 0.0, 0.4, 0.85, 0.0]));
        assert_eq!(
            classify(&mix, 0.8),
            Some((Class::MemoryBound, Pipe::Mte3, 0.85))
        );
        assert_eq!(classify(&task(None, None), 0.8), None);
    }

    #[test]
    fn op_rows_weigh_ratios_by_time() {
        // 30 µs at vec 0.9 and 10 µs at vec 0.5: mean 0.8 → compute-bound at U = 0.8.
        let mut a = PmuAcc::default();
        let v = |r| task(None, Some([0.0, r, 0.0, 0.0, 0.1, 0.1, 0.0]));
        a.add_task(&v(0.9), 7, 30_000);
        a.add_task(&v(0.5), 8, 10_000);
        assert_eq!(a.task_name, Some(7));
        let row = op_row("Add".into(), "aclnnAdd".into(), &a, 0.8);
        assert_eq!(
            (row.kernels, row.time_ns, row.bound_pipe),
            (2, 40_000, "vec")
        );
        assert!((row.bound_ratio - 0.8).abs() < 1e-6, "{}", row.bound_ratio);
        assert_eq!(row.cube, None);
    }
}
