//! What the HCCL process of a `trace_view.json` says beyond its events' times: each op's
//! element count and type (collective metadata: sizes, bandwidth), and each plane's
//! `Notify_Wait` task with the peer it waited for (measured arrivals, docs/metrics.md
//! "Measured peer waits"), and each data-moving plane task's size and link (byte alignment).
//! All are read again from the events' own text: a few hundred per
//! step, against tens of thousands of events that need neither.

use super::dialect::Process;
use crate::model::{Collective, EventIx, Interner, Kind, PeerWait, PlaneTransfer, Rank};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::borrow::Cow;

/// The HCCL facts of one rank.
#[derive(Debug, Default)]
pub(crate) struct Hccl {
    /// Collective metadata of the ops, in event order.
    pub collectives: Vec<Collective>,
    /// The waits for a named peer, in start order.
    pub peer_waits: Vec<PeerWait>,
    /// The data-moving plane tasks, in start order.
    pub transfers: Vec<PlaneTransfer>,
}

/// The collective an HCCL op performs, from its name: `hcom_allReduce__586_0_1` → `allReduce`
/// (what the role tables map to all_reduce, as a `Collective name`).
pub(crate) fn hccl_type(op: &str) -> &str {
    let t = op.strip_prefix("hcom_").unwrap_or(op);
    t.split("__").next().unwrap_or(t).trim_end_matches('_')
}

/// An HCCL event's own args.
#[derive(Deserialize)]
struct HcclEvent<'a> {
    #[serde(default, borrow)]
    args: HcclArgs<'a>,
}

/// Its texts borrow from the trace unless escaped: tens of thousands are read per rank.
#[derive(Deserialize, Default)]
struct HcclArgs<'a> {
    /// An op's element count.
    #[serde(default)]
    count: Option<u64>,
    #[serde(default, borrow)]
    data_type: Option<Cow<'a, str>>,
    /// A plane task's own rank and its peer, in the communicator.
    #[serde(default, rename = "src rank")]
    src_rank: Option<u64>,
    #[serde(default, rename = "dst rank")]
    dst_rank: Option<u64>,
    /// A plane task's bytes, engine and link.
    #[serde(default, rename = "size(Byte)")]
    size: Option<u64>,
    #[serde(default, borrow, rename = "transport type")]
    transport: Option<Cow<'a, str>>,
    #[serde(default, borrow, rename = "link type")]
    link: Option<Cow<'a, str>>,
}

/// HCCL writes this for "no peer" (u32::MAX).
const NO_RANK: u64 = u32::MAX as u64;

/// Reads the ops' metadata and the plane waits of the lanes of the HCCL process.
pub(crate) fn read(
    rank: &Rank,
    text: &[u8],
    strings: &mut Interner,
    by_pid: &FxHashMap<String, (Process, &str)>,
) -> Hccl {
    let ev = &rank.events;
    let mut out = Hccl::default();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if !matches!(
            by_pid.get(strings.resolve(lane.pid)),
            Some((Process::Hccl, _))
        ) {
            continue;
        }
        for i in rank.lane_events(l as u16) {
            let task = ev.kind[i] == Kind::Other;
            let wait = task && matches!(strings.resolve(ev.name[i]), "Notify_Wait" | "Notify Wait");
            if ev.kind[i] != Kind::Comm && !task {
                continue;
            }
            let raw = ev.raw[i];
            let at = raw.offset as usize;
            let bytes = text.get(at..at + raw.len as usize);
            let Some(e) = bytes.and_then(|b| serde_json::from_slice::<HcclEvent>(b).ok()) else {
                continue;
            };
            if wait {
                out.peer_waits.extend(peer_wait(i, &e.args));
            } else if task {
                out.transfers.extend(transfer(i, &e.args));
            } else if e.args.count.is_some() {
                let op = strings.resolve(ev.name[i]).to_string();
                let dtype = e.args.data_type.as_deref();
                let c = op_collective(EventIx::of(i), &op, e.args.count, dtype, strings);
                out.collectives.push(c);
            }
        }
    }
    out.collectives.sort_by_key(|c| c.event);
    // Planes are lanes of their own: start order lets a call find its waits by search.
    out.peer_waits
        .sort_by_key(|w| (ev.start[w.event.0 as usize], w.event));
    out.transfers
        .sort_by_key(|t| (ev.start[t.event.0 as usize], t.event));
    out
}

/// A plane task that moved data: its size, engine and link.
fn transfer(i: usize, a: &HcclArgs) -> Option<PlaneTransfer> {
    let (t, l) = (a.transport.as_deref()?, a.link.as_deref()?);
    PlaneTransfer::of(EventIx::of(i), t, l, a.size?)
}

/// A plane's wait for a peer: the `dst rank` of a task whose `src rank` is another.
fn peer_wait(i: usize, a: &HcclArgs) -> Option<PeerWait> {
    let peer = a
        .dst_rank
        .filter(|&d| d != NO_RANK && Some(d) != a.src_rank)?;
    Some(PeerWait {
        event: EventIx::of(i),
        peer: u32::try_from(peer).ok()?,
    })
}

/// An HCCL op's collective metadata: its type from its name (`hcom_allReduce__586_0_1` →
/// `allReduce`), its element count and type. Both exports use it.
pub(crate) fn op_collective(
    event: EventIx,
    op_name: &str,
    count: Option<u64>,
    dtype: Option<&str>,
    strings: &mut Interner,
) -> Collective {
    Collective {
        event,
        name: Some(strings.intern(hccl_type(op_name))),
        in_nelems: count,
        out_nelems: None,
        dtype: dtype.map(|d| strings.intern(d)),
        group: None,
        group_ranks: None,
        group_size: None,
        seq: None,
        src_rank: None,
        dst_rank: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hccl_types() {
        assert_eq!(hccl_type("hcom_allReduce__586_0_1"), "allReduce");
        assert_eq!(hccl_type("hcom_send__822_0"), "send");
        assert_eq!(hccl_type("hcom_batchSendRecv__3_1"), "batchSendRecv");
        assert_eq!(hccl_type("HcclAllReduce"), "HcclAllReduce");
    }

    #[test]
    fn a_wait_names_its_peer_unless_it_has_none() {
        let args = |src, dst| HcclArgs {
            src_rank: src,
            dst_rank: dst,
            ..HcclArgs::default()
        };
        let w = peer_wait(4, &args(Some(0), Some(5))).expect("a peer");
        assert_eq!((w.event, w.peer), (EventIx(4), 5));
        assert_eq!(peer_wait(4, &args(Some(0), Some(NO_RANK))), None);
        assert_eq!(peer_wait(4, &args(Some(3), Some(3))), None);
        assert_eq!(peer_wait(4, &args(Some(0), None)), None);
    }
}
