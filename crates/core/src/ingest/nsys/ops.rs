//! PyTorch's operators in an Nsight export: `torch.autograd.profiler.emit_nvtx()` records each
//! operator as an NVTX range on its thread, named `aten::mm, seq = 12, op_id = 40, sizes =
//! [[8, 16], [16, 32]], input_op_ids = […]`. The range is the operator (Kineto's `cpu_op`), its
//! sizes are its `Input Dims`, and the runtime calls inside it — with the device work they
//! launch — are its own, as Kineto links them by External id.

use crate::ingest::chrome::chunk::NO_ID;
use crate::model::{EventIx, Kind, LaneSide, Rank};
use rustc_hash::FxHashMap;

/// PyTorch's operator namespaces: an operator `emit_nvtx` names without a suffix (its
/// sequence number is -1 and no shapes were recorded) starts with one. Other qualified names
/// (`KernelExecutor::compileFusion`) are a program's own ranges, annotations.
const OP_NAMESPACES: [&str; 8] = [
    "aten::",
    "prim::",
    "c10d::",
    "_c10d_functional::",
    "c10d_functional::",
    "quantized::",
    "torchvision::",
    "autograd::",
];

/// The suffixes `emit_nvtx` appends to an operator's name, in its order.
const SUFFIXES: [&str; 4] = [", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "];

/// What an NVTX range is: an operator (its name without `emit_nvtx`'s suffixes, and its
/// sizes when recorded) or an annotation (a user range, `ProfilerStep#N`, as named).
pub(super) fn classify(text: &str) -> (Kind, &str, Option<&str>) {
    let Some((cut, _)) = suffix(text, 0, &SUFFIXES) else {
        let op = OP_NAMESPACES.iter().any(|ns| text.starts_with(ns));
        let kind = if op { Kind::HostOp } else { Kind::Annotation };
        return (kind, text, None);
    };
    let sizes = suffix(text, cut, &SUFFIXES[2..3]).map(|(at, s)| {
        let from = at + s.len();
        let end = suffix(text, from, &SUFFIXES[3..]).map_or(text.len(), |(e, _)| e);
        text[from..end].trim()
    });
    let sizes = sizes.filter(|s| s.starts_with('['));
    (Kind::HostOp, &text[..cut], sizes)
}

/// The first of `suffixes` in `text` at or after byte `from`, and where (found at its `,` by
/// `memchr`: a substring search per name would cost more than the rest of the row).
fn suffix<'s>(text: &str, from: usize, suffixes: &[&'s str]) -> Option<(usize, &'s str)> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b',', bytes.get(from..)?)
        .map(|i| from + i)
        .find_map(|at| {
            let rest = &bytes[at..];
            let s = suffixes.iter().find(|s| rest.starts_with(s.as_bytes()))?;
            Some((at, *s))
        })
}

/// Operator ids for [`crate::ingest::link::link`]: each operator range its own, each runtime
/// call the innermost operator range around it on its thread, each device activity its
/// launching call's (by correlation id `corr`).
pub(super) fn op_ids(rank: &Rank, corr: &[u64]) -> Vec<u64> {
    let ev = &rank.events;
    let mut ext = vec![NO_ID; ev.len()];
    let mut by_corr: FxHashMap<u64, u64> = FxHashMap::default();
    for lane in rank.lanes.iter().filter(|l| l.side == LaneSide::Cpu) {
        let first = lane.first as usize;
        // Open operator ranges on this thread, innermost last: (end, id).
        let mut open: Vec<(i64, u64)> = Vec::new();
        for i in first..first + lane.count as usize {
            let (start, end) = (ev.start[i], ev.start[i].saturating_add(ev.dur[i]));
            while open.last().is_some_and(|&(e, _)| e <= start) {
                open.pop();
            }
            match ev.kind[i] {
                Kind::HostOp => {
                    ext[i] = i as u64;
                    open.push((end, i as u64));
                }
                Kind::Launch => {
                    if let Some(&(_, id)) = open.last().filter(|&&(e, _)| e >= end) {
                        ext[i] = id;
                        if corr[i] != NO_ID {
                            by_corr.insert(corr[i], id);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for i in 0..ev.len() {
        if ev.kind[i].is_device_work() && corr[i] != NO_ID {
            ext[i] = by_corr.get(&corr[i]).copied().unwrap_or(NO_ID);
        }
    }
    ext
}

/// The device events launched by runtime calls on lane `lane` that start within
/// [`from`, `to`] (the calls made inside an API call's range), in start order.
pub(super) fn launched_within(rank: &Rank, lane: u16, from: i64, to: i64) -> Vec<EventIx> {
    let ev = &rank.events;
    let l = &rank.lanes[lane as usize];
    let (first, count) = (l.first as usize, l.count as usize);
    let starts = &ev.start[first..first + count];
    let lo = first + starts.partition_point(|&s| s < from);
    let hi = first + starts.partition_point(|&s| s <= to);
    (lo..hi)
        .filter(|&i| ev.kind[i] == Kind::Launch && !ev.link[i].is_none())
        .map(|i| ev.link[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_nvtx_names_are_operators_with_their_sizes() {
        let (k, name, sizes) = classify(
            "aten::mm, seq = 12, op_id = 40, sizes = [[8, 16], [16, 32]], input_op_ids = [(1, 0)]",
        );
        assert_eq!(
            (k, name, sizes),
            (Kind::HostOp, "aten::mm", Some("[[8, 16], [16, 32]]"))
        );
        assert_eq!(
            classify("autograd::engine::evaluate_function: MmBackward0, seq = 3"),
            (
                Kind::HostOp,
                "autograd::engine::evaluate_function: MmBackward0",
                None
            )
        );
        assert_eq!(classify("aten::add"), (Kind::HostOp, "aten::add", None));
        assert_eq!(
            classify("ProfilerStep#4"),
            (Kind::Annotation, "ProfilerStep#4", None)
        );
        assert_eq!(
            classify("train step: fwd"),
            (Kind::Annotation, "train step: fwd", None)
        );
        assert_eq!(
            classify("KernelExecutor::compileFusion").0,
            Kind::Annotation
        );
        // Sizes of no tensor (`sizes = []`) are still the operator's.
        assert_eq!(classify("aten::empty, sizes = []").2, Some("[]"));
    }
}
