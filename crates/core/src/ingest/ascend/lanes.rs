//! Events from a table export (the db, or the kernel table alone) into a rank's lanes: grouped
//! by lane in start order, lanes named as the text export names them (`NPU Stream 2`, `HCCL
//! Plane 3`, `Python Thread 77`), launches linked, side tables placed on the sorted events.

use crate::model::{
    Collective, EventIx, Events, Interner, Kind, Lane, LaneSide, OpShape, PeerWait, PlaneTransfer,
    Rank, RawSpan, Sym,
};
use crate::time::Ns;
use std::collections::BTreeMap;

/// Where an event goes, in the order lanes are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LaneKey {
    /// An NPU stream, by id.
    Stream(i64),
    /// Device tasks whose stream is not recorded (Level0's kernel table).
    Tasks,
    /// An HCCL group's ops.
    Group(i64),
    /// An HCCL plane's tasks.
    Plane(i64),
    /// A framework thread (`pid << 32 | tid`).
    Host(i64),
    /// A CANN thread (`pid << 32 | tid`).
    Cann(i64),
}

/// An event before the events are grouped by lane.
pub(crate) struct Ev {
    /// Its lane.
    pub lane: LaneKey,
    /// Start, ns.
    pub start: Ns,
    /// Duration, ns.
    pub dur: Ns,
    /// Name.
    pub name: Sym,
    /// Kind.
    pub kind: Kind,
    /// Correlation id (launch ↔ task), or `NO_ID`.
    pub corr: u64,
    /// The framework operator's key it belongs to (operators: their own), as the text
    /// export's `async_npu` flows link them.
    pub ext: u64,
    /// Its step's index when the source says (the kernel table's `Step Id`), else `NO_STEP`
    /// for the steps to be found from the host side.
    pub step: u32,
}

/// What is built beside the events, by the event's position before sorting.
#[derive(Default)]
pub(crate) struct Extra {
    /// HCCL ops' metadata.
    pub collectives: Vec<(usize, Collective)>,
    /// Plane waits for a named peer.
    pub waits: Vec<(usize, u32)>,
    /// Plane transfers with their sizes.
    pub transfers: Vec<(usize, PlaneTransfer)>,
    /// Framework operators' input shapes.
    pub shapes: Vec<(usize, OpShape)>,
}

/// Groups the events by lane (in start order within each), names the lanes, links launches
/// and finds the steps' events.
pub(crate) fn assemble(evs: Vec<Ev>, extra: Extra, strings: &mut Interner) -> Rank {
    let mut order: Vec<usize> = (0..evs.len()).collect();
    order.sort_by_key(|&i| (evs[i].lane, evs[i].start, i));
    let mut lanes: BTreeMap<LaneKey, u16> = BTreeMap::new();
    let mut rank = Rank::default();
    let mut new_ix = vec![0u32; evs.len()];
    let mut corr = Vec::with_capacity(evs.len());
    for (k, &i) in order.iter().enumerate() {
        let e = &evs[i];
        let lane = *lanes.entry(e.lane).or_insert_with(|| {
            rank.lanes.push(lane_of(e.lane, k as u32, strings));
            (rank.lanes.len() - 1) as u16
        });
        rank.lanes[lane as usize].count += 1;
        new_ix[i] = k as u32;
        push_event(&mut rank.events, e, lane);
        corr.push(e.corr);
    }
    let ext: Vec<u64> = order.iter().map(|&i| evs[i].ext).collect();
    crate::ingest::link::link(&mut rank, &corr, &ext);
    let at = |i: usize| EventIx(new_ix[i]);
    rank.collectives = placed(extra.collectives, |(i, c)| Collective { event: at(i), ..c });
    rank.collectives.sort_by_key(|c| c.event);
    rank.shapes = placed(extra.shapes, |(i, s)| OpShape { event: at(i), ..s });
    rank.shapes.sort_by_key(|s| s.event);
    let starts = &rank.events.start;
    rank.peer_waits = placed(extra.waits, |(i, peer)| PeerWait { event: at(i), peer });
    rank.peer_waits
        .sort_by_key(|w| (starts[w.event.index()], w.event));
    rank.transfers = placed(extra.transfers, |(i, t)| PlaneTransfer {
        event: at(i),
        ..t
    });
    rank.transfers
        .sort_by_key(|t| (starts[t.event.index()], t.event));
    rank
}

/// A side table's entries, each given its event's place after sorting.
fn placed<T, U>(v: Vec<(usize, T)>, place: impl Fn((usize, T)) -> U) -> Vec<U> {
    v.into_iter().map(place).collect()
}

fn push_event(ev: &mut Events, e: &Ev, lane: u16) {
    ev.start.push(e.start);
    ev.dur.push(e.dur);
    ev.name.push(e.name);
    ev.lane.push(lane);
    ev.kind.push(e.kind);
    ev.step.push(e.step);
    ev.link.push(EventIx::NONE);
    ev.op.push(EventIx::NONE);
    ev.raw.push(RawSpan::default());
}

/// A lane as the text export names it: `NPU Stream 2`, `HCCL Plane 3`, `Python Thread 77`.
fn lane_of(key: LaneKey, first: u32, strings: &mut Interner) -> Lane {
    let thread = |g: i64| (g >> 32, g & 0xffff_ffff);
    let parts = match key {
        LaneKey::Stream(s) => (
            LaneSide::Device,
            "0".into(),
            s.to_string(),
            format!("NPU Stream {s}"),
        ),
        LaneKey::Tasks => (
            LaneSide::Device,
            "0".into(),
            "tasks".into(),
            "NPU Tasks".to_string(),
        ),
        LaneKey::Group(g) => (
            LaneSide::Device,
            "HCCL".into(),
            g.to_string(),
            "HCCL Group Communication".to_string(),
        ),
        LaneKey::Plane(p) => (
            LaneSide::Device,
            "HCCL".into(),
            format!("plane {p}"),
            format!("HCCL Plane {p}"),
        ),
        LaneKey::Host(g) => {
            let (p, t) = thread(g);
            (
                LaneSide::Cpu,
                p.to_string(),
                t.to_string(),
                format!("Python Thread {t}"),
            )
        }
        LaneKey::Cann(g) => {
            let (p, t) = thread(g);
            (
                LaneSide::Cpu,
                format!("CANN {p}"),
                t.to_string(),
                format!("CANN Thread {t}"),
            )
        }
    };
    Lane::named(parts, first, strings)
}
