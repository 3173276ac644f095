//! What a kernel finding says its operators' kernels could take instead, and which operator
//! type a kernel counts under: the replay's kernel fix reads both (docs/metrics.md, "Replay").

use super::rank::rule_op;
use super::shapes;
use crate::model::{EventIx, Job, Kind, Rank};
use crate::time::Ns;

/// Parts per million: a share kept exactly, so that fixes compare and hash as values.
const PPM: u64 = 1_000_000;

/// The kernels of one operator type (as the roofline lists it: the operator and the element
/// type of its first input) and the share of their time they would keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speedup {
    /// The operator (`aten::mm`).
    pub op: String,
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
            dtype: dtype.map(str::to_string),
            keep_ppm: (keep * PPM as f64).round() as u32,
        }
    }
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
    edits
        .iter()
        .find(|s| s.op == op && (s.dtype.is_none() || s.dtype.as_deref() == dtype))
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
    }
}
