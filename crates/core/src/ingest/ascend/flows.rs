//! torch_npu's `async_npu` flows: each runs from the framework operator that issued device
//! work (its start, on the Python thread) to the device task (its start). They are the text
//! export's only link from a task to its operator — the CANN `connection_id` links a task to
//! its runtime call, and Level0 records no runtime calls at all — and what the roofline and
//! the operator view read (`Events::op`). The db export has the same links in
//! `CONNECTION_IDS`.
//!
//! The Chrome reader counts flows without reading them, keeping the byte span of each
//! `async_npu` one (the Ascend dialect asks it to); the few hundred per step are read here,
//! each a flat object on its own.

use crate::model::{EventIx, Interner, Kind, Rank};
use crate::time::{Ns, micros_text_to_ns};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;

/// One end of a flow.
#[derive(Deserialize)]
struct FlowEnd<'a> {
    #[serde(borrow)]
    ph: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    cat: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    pid: &'a RawValue,
    #[serde(borrow)]
    tid: &'a RawValue,
    #[serde(borrow)]
    ts: &'a RawValue,
}

/// A flow end's lane key (pid and tid as their text, unquoted) and time.
type At<'a> = ((&'a str, &'a str), Ns);

/// Sets each device task's operator from the `async_npu` flows among `objects` (the event
/// texts the reader kept), where the reader found none. Returns the number of tasks linked.
pub(crate) fn link_ops<'a>(
    rank: &mut Rank,
    objects: impl Iterator<Item = &'a [u8]>,
    strings: &Interner,
) -> usize {
    let (starts, finishes) = flow_ends(objects);
    if finishes.is_empty() {
        return 0;
    }
    let lanes: FxHashMap<(&str, &str), u16> = rank
        .lanes
        .iter()
        .enumerate()
        .map(|(l, lane)| {
            (
                (strings.resolve(lane.pid), strings.resolve(lane.tid)),
                l as u16,
            )
        })
        .collect();
    let lane_of = |key: &(&str, &str)| lanes.get(key).copied();
    let mut found = Vec::new();
    for (id, (key, ts)) in &finishes {
        let Some(((skey, sts), task_lane)) = starts.get(id).zip(lane_of(key)) else {
            continue;
        };
        let Some(op_lane) = lane_of(skey) else {
            continue;
        };
        let task = holder(rank, task_lane, *ts, |k| k.is_device_work());
        let op = holder(rank, op_lane, *sts, |k| k == Kind::HostOp);
        if let (Some(task), Some(op)) = (task, op) {
            found.push((task, op));
        }
    }
    let ev = &mut rank.events;
    let mut linked = 0;
    for (task, op) in found {
        if ev.op[task].is_none() {
            ev.op[task] = EventIx::of(op);
            linked += 1;
        }
    }
    linked
}

/// The `async_npu` flows' starts by id, and their finishes.
fn flow_ends<'a>(
    objects: impl Iterator<Item = &'a [u8]>,
) -> (FxHashMap<&'a str, At<'a>>, Vec<(&'a str, At<'a>)>) {
    let (mut starts, mut finishes) = (FxHashMap::default(), Vec::new());
    for object in objects {
        let Ok(f) = serde_json::from_slice::<FlowEnd>(object) else {
            continue;
        };
        if f.cat.as_deref().map(str::as_bytes) != Some(super::dialect::OPERATOR_FLOWS) {
            continue;
        }
        let Ok(ts) = micros_text_to_ns(f.ts.get().as_bytes()) else {
            continue;
        };
        let end = ((unquoted(f.pid), unquoted(f.tid)), ts);
        match &*f.ph {
            "s" => {
                starts.insert(unquoted(f.id), end);
            }
            "f" => finishes.push((unquoted(f.id), end)),
            _ => {}
        }
    }
    (starts, finishes)
}

/// A JSON scalar's text without its quotes (ids and pids are numbers or strings).
fn unquoted(v: &RawValue) -> &str {
    let t = v.get();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// The innermost event of `kind` on `lane` whose span holds `ts` (the latest to start; a
/// flow binds to the slice enclosing its time).
fn holder(rank: &Rank, lane: u16, ts: Ns, kind: impl Fn(Kind) -> bool) -> Option<usize> {
    let ev = &rank.events;
    let r = rank.lane_events(lane);
    let after = r.start + ev.start[r.clone()].partition_point(|&s| s <= ts);
    (r.start..after)
        .rev()
        .take(64)
        .find(|&i| kind(ev.kind[i]) && ev.end(i) >= ts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ends_are_read_from_their_own_text() {
        let text = br#"[{"ph": "X", "name": "Conv2D", "pid": 7, "tid": 7, "ts": "10.5", "dur": 3},
{"ph": "s", "bp": "e", "name": "torch_to_npu", "id": 99, "pid": 7, "tid": 7, "ts": "10.500", "cat": "async_npu"},
{"ph": "f", "bp": "e", "name": "torch_to_npu", "id": 99, "pid": "8", "tid": 2, "ts": "20.000001", "cat": "async_npu"},
{"ph": "s", "name": "other", "id": 5, "pid": 7, "tid": 7, "ts": "1", "cat": "async_task_queue"}]"#;
        let (starts, finishes) = flow_ends(super::super::objects::each(text));
        assert_eq!(starts.len(), 1);
        assert_eq!(starts["99"], (("7", "7"), 10_500));
        assert_eq!(finishes, [("99", (("8", "2"), 20_000))]);
    }
}
