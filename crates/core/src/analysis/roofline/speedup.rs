//! What a kernel finding says its operators' kernels could take instead, and which operator
//! type a kernel counts under: the replay's kernel fix reads both (docs/metrics.md, "Replay").

use super::rank::{rule_op, task_of};
use super::shapes;
use crate::model::{EventIx, Job, Kind, Rank};
use crate::time::Ns;

/// Parts per million: a share kept exactly, so that fixes compare and hash as values.
const PPM: u64 = 1_000_000;

/// The kernels of one operator type (as the roofline lists it: the operator and the element
/// type of its first input, or the accelerator's own operator type of a task with counters)
/// and the share of their time they would keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speedup {
    /// The operator (`aten::mm`), or the task's operator type (`MatMulV2`) when `by` is
    /// [`By::Task`].
    pub op: String,
    /// Which name of a kernel `op` is.
    pub by: By,
    /// Its element type; `None`: every element type.
    pub dtype: Option<String>,
    /// The share of their time kept, in parts per million (at most 1 000 000).
    pub keep_ppm: u32,
}

impl Speedup {
    /// `op`'s kernels (of `dtype`) keeping `keep` of their time (clamped to 0..=1).
    pub fn new(op: &str, dtype: Option<&str>, keep: f64) -> Speedup {
        let keep = if keep.is_finite() {
            keep.clamp(0.0, 1.0)
        } else {
            1.0
        };
        Speedup {
            op: op.to_string(),
            by: By::Operator,
            dtype: dtype.map(str::to_string),
            keep_ppm: (keep * PPM as f64).round() as u32,
        }
    }

    /// The kernels whose task (with PMU counters) has operator type `op` keeping `keep`.
    pub fn task(op: &str, keep: f64) -> Speedup {
        Speedup {
            by: By::Task,
            ..Speedup::new(op, None, keep)
        }
    }
}

/// Which name of a kernel a [`Speedup`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The operator it counts under on the roofline ([`kernel_operator`]).
    Operator,
    /// Its task's operator type as the PMU rows list it ([`task_type`]).
    Task,
}

/// The operator type a kernel's task lists it under in the roofline's PMU rows (the task's
/// `OP Type`, else the kernel's name); `None`: no task recorded with counters.
pub fn task_type<'a>(job: &'a Job, rank: &'a Rank, kernel: usize) -> Option<&'a str> {
    let t = task_of(rank, kernel)?;
    (t.cube.is_some() || t.vector.is_some()).then(|| {
        job.strings
            .resolve(t.op_type.unwrap_or(rank.events.name[kernel]))
    })
}

/// `ns` scaled to `keep_ppm` parts per million (never above `ns` for a share ≤ 1).
pub fn kept(ns: Ns, keep_ppm: u32) -> Ns {
    let k = i128::from(ns) * i128::from(keep_ppm) / i128::from(PPM);
    Ns::try_from(k).unwrap_or(ns)
}

/// The operator type a compute kernel's work counts under on the roofline: the operator
/// with a FLOP rule that launched or encloses its launch, and its first input's element
/// type. `None`: not a compute kernel, or launched by no operator.
pub fn kernel_operator(job: &Job, rank: &Rank, kernel: usize) -> Option<(EventIx, Option<String>)> {
    let ev = &rank.events;
    if ev.kind.get(kernel) != Some(&Kind::Compute) || ev.op[kernel].is_none() {
        return None;
    }
    let op = rule_op(job, rank, ev.op[kernel]);
    let dtype = rank
        .shapes
        .binary_search_by_key(&op, |s| s.event)
        .ok()
        .and_then(|k| rank.shapes[k].types)
        .and_then(|t| shapes::first_type(job.strings.resolve(t)));
    Some((op, dtype))
}

/// The speedup of `edits` that concerns kernels of operator `op` (of element type `dtype`).
pub fn speedup_for<'a>(edits: &'a [Speedup], op: &str, dtype: Option<&str>) -> Option<&'a Speedup> {
    edits.iter().find(|s| {
        s.by == By::Operator && s.op == op && (s.dtype.is_none() || s.dtype.as_deref() == dtype)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedups_keep_their_share_exactly() {
        let s = Speedup::new("aten::mm", Some("float"), 0.25);
        assert_eq!(s.keep_ppm, 250_000);
        assert_eq!(kept(1_000_003, s.keep_ppm), 250_000);
        assert_eq!(Speedup::new("x", None, 7.0).keep_ppm, 1_000_000);
        assert_eq!(Speedup::new("x", None, f64::NAN).keep_ppm, 1_000_000);
        assert_eq!(kept(i64::MAX, Speedup::new("x", None, -1.0).keep_ppm), 0);
        assert_eq!(
            kept(i64::MAX, Speedup::new("x", None, 1.0).keep_ppm),
            i64::MAX
        );
        let edits = [s.clone(), Speedup::new("aten::add", None, 0.5)];
        assert_eq!(speedup_for(&edits, "aten::mm", Some("float")), Some(&s));
        assert_eq!(speedup_for(&edits, "aten::mm", Some("c10::BFloat16")), None);
        assert!(speedup_for(&edits, "aten::add", Some("float")).is_some());
        // A task's operator type is another name space.
        let task = [Speedup::task("aten::mm", 0.5)];
        assert_eq!(task[0].by, By::Task);
        assert_eq!(speedup_for(&task, "aten::mm", None), None);
    }
}
