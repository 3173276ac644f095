//! What the timeline's inspector says of the thing under its cursor (docs/metrics.md,
//! "Inspector"): a band (its event's kind, lane and times; the runtime call that launched it
//! and the launch delay; the operator around it; its shapes; the matched collective's wait,
//! transit and last arriver), a gap on a row (what the rank's host was doing meanwhile), or
//! a range of a row (busy time per band kind, idle time, and the operators that fill it).
//! All times are on the aligned clock the timeline draws.

use super::comm::Comm;
use super::intervals::IntervalSet;
use super::timeline::{BandKind, Row};
use crate::model::{CollOp, EventIx, EventRef, Job, Kind, LaneSide, RankId, RankIx, Sym};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// An event linked to the inspected one by its launch: the runtime call of a device event,
/// or the device event of a runtime call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linked {
    /// Its name.
    pub name: Sym,
    /// Its aligned start.
    pub start: Ns,
    /// Device start − call start: the launch delay (negative only on skewed clocks).
    pub delay: Ns,
}

/// A matched collective's timing as one member saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectiveFacts {
    /// The operation.
    pub op: CollOp,
    /// Message size.
    pub bytes: Option<u64>,
    /// Members of the instance.
    pub members: u32,
    /// This member's wait for the last arriver.
    pub wait: Ns,
    /// This member's share of the transfer (own end − last arrival).
    pub transit: Ns,
    /// Who arrived last.
    pub last_arriver: RankId,
    /// Last arrival − first start.
    pub skew: Ns,
}

/// One band's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandFacts {
    /// The event.
    pub event: EventRef,
    /// Its rank.
    pub rank: RankId,
    /// Its name.
    pub name: Sym,
    /// Its event kind.
    pub kind: Kind,
    /// Its lane's name.
    pub lane: Sym,
    /// Aligned start.
    pub start: Ns,
    /// Duration.
    pub dur: Ns,
    /// A device event's launching call.
    pub launch: Option<Linked>,
    /// A runtime call's device event.
    pub launched: Option<Linked>,
    /// The framework operator it belongs to (by `External id`), when not itself.
    pub op: Option<Sym>,
    /// `Input Dims` and `Input type` of that operator (or of itself).
    pub shapes: Option<(Option<Sym>, Option<Sym>)>,
    /// The matched collective it performs.
    pub collective: Option<CollectiveFacts>,
}

/// The facts of rank `r`'s event `e`; `offset` is the rank's clock offset.
pub fn band(job: &Job, comm: &Comm, r: RankIx, e: EventIx, offset: Ns) -> BandFacts {
    let rank = job.rank(r);
    let ev = &rank.events;
    let i = e.index();
    let linked = |j: EventIx, delay: Ns| Linked {
        name: ev.name[j.index()],
        start: ev.start[j.index()].saturating_add(offset),
        delay,
    };
    let link = ev.link[i].get();
    let device = ev.kind[i].is_device_work();
    let launch = link
        .filter(|_| device)
        .map(|j| linked(ev.link[i], ev.start[i].saturating_sub(ev.start[j])));
    let launched = link
        .filter(|_| ev.kind[i] == Kind::Launch)
        .map(|j| linked(ev.link[i], ev.start[j].saturating_sub(ev.start[i])));
    let op_ix = if ev.kind[i] == Kind::HostOp {
        e
    } else {
        ev.op[i]
    };
    let shapes = rank
        .shapes
        .binary_search_by_key(&op_ix, |s| s.event)
        .ok()
        .map(|k| (rank.shapes[k].dims, rank.shapes[k].types));
    BandFacts {
        event: EventRef { rank: r, event: e },
        rank: rank.id,
        name: ev.name[i],
        kind: ev.kind[i],
        lane: rank.lanes[ev.lane[i] as usize].name,
        start: ev.start[i].saturating_add(offset),
        dur: ev.dur[i],
        launch,
        launched,
        op: op_ix.get().filter(|&o| o != i).map(|o| ev.name[o]),
        shapes,
        collective: collective(comm, r, e),
    }
}

/// The matched instance whose member on rank `r` is event `e`.
fn collective(comm: &Comm, r: RankIx, e: EventIx) -> Option<CollectiveFacts> {
    let calls = comm.calls.per_rank.get(r.get())?;
    let call = calls.iter().position(|c| c.event == e)? as u32;
    let (inst, t) = comm
        .instances()
        .find(|(inst, _)| inst.members.iter().any(|m| m.rank == r && m.call == call))?;
    let pos = inst
        .members
        .iter()
        .position(|m| m.rank == r && m.call == call)?;
    let m = t.members.get(pos)?;
    Some(CollectiveFacts {
        op: inst.op,
        bytes: inst.bytes,
        members: inst.members.len() as u32,
        wait: m.wait_ns,
        transit: m.transit_ns,
        last_arriver: t.timing.last_arriver,
        skew: t.timing.skew_ns,
    })
}

/// What a rank's host was doing in a gap of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostDoing {
    /// Nothing the trace recorded on a host thread (idle, or not traced).
    Nothing,
    /// In these operators, outermost first, the innermost being a blocking call when
    /// `blocked` (the host waits on the device).
    In {
        /// Names, outermost first (at most the outermost and the innermost two).
        chain: Vec<Sym>,
        /// The innermost is a blocking runtime call.
        blocked: bool,
        /// The outermost is a data-loader range.
        loading: bool,
    },
}

/// What rank `r`'s host threads were doing at the middle of the aligned interval
/// `[from, to)`: the host events holding that instant (step markers excluded), outermost
/// first.
pub fn gap(job: &Job, r: RankIx, from: Ns, to: Ns, offset: Ns) -> HostDoing {
    let rank = job.rank(r);
    let ev = &rank.events;
    let mid = from
        .saturating_add(to.saturating_sub(from) / 2)
        .saturating_sub(offset);
    let mut held: Vec<usize> = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        held.extend(rank.lane_events(l as u16).filter(|&i| {
            matches!(
                ev.kind[i],
                Kind::HostOp | Kind::Launch | Kind::Annotation | Kind::Other
            ) && ev.start[i] <= mid
                && mid < ev.end(i)
                && !job.role(ev.name[i]).is_step_marker()
        }));
    }
    if held.is_empty() {
        return HostDoing::Nothing;
    }
    // Outermost first: the longest holds the others.
    held.sort_by_key(|&i| (std::cmp::Reverse(ev.dur[i]), ev.start[i], i));
    let inner = *held.last().expect("not empty");
    let outer = held[0];
    let mut chain = vec![ev.name[outer]];
    if held.len() > 2 {
        chain.push(ev.name[held[held.len() - 2]]);
    }
    if held.len() > 1 {
        chain.push(ev.name[inner]);
    }
    HostDoing::In {
        chain,
        blocked: job.role(ev.name[inner]).is_blocking(),
        loading: job.role(ev.name[outer]).data_loader,
    }
}

/// A range of one row summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeFacts {
    /// Aligned start.
    pub from: Ns,
    /// Aligned end.
    pub to: Ns,
    /// Busy time per band kind (the union of its bands, clipped), kinds in legend order,
    /// kinds with none left out.
    pub kinds: Vec<(BandKind, Ns)>,
    /// Time no band covers.
    pub idle: Ns,
    /// Operators by clipped time (summed over their bands), largest first (ties: by name
    /// symbol), at most [`TOP`].
    pub top: Vec<(Sym, Ns, u32)>,
}

/// Operators a range lists.
pub const TOP: usize = 5;

/// The bands of `row` in the aligned interval `[from, to)`, summed.
pub fn range(row: &Row, from: Ns, to: Ns) -> RangeFacts {
    let (from, to) = (from.min(to), from.max(to));
    let clip = |s: Ns, e: Ns| (s.max(from), e.min(to));
    let mut per_kind: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); BandKind::ALL.len()];
    let mut all = Vec::new();
    let mut by_name: FxHashMap<Sym, (Ns, u32)> = FxHashMap::default();
    for b in &row.bands {
        let (s, e) = clip(b.start, b.end);
        if s >= e {
            continue;
        }
        let k = BandKind::ALL
            .iter()
            .position(|x| *x == b.kind)
            .expect("listed");
        per_kind[k].push((s, e));
        all.push((s, e));
        let n = by_name.entry(b.name).or_default();
        n.0 += e - s;
        n.1 += 1;
    }
    let kinds = BandKind::ALL
        .iter()
        .zip(per_kind)
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (*k, IntervalSet::from_intervals(v).total()))
        .collect();
    let busy = IntervalSet::from_intervals(all).total();
    let mut top: Vec<(Sym, Ns, u32)> = by_name.into_iter().map(|(s, (t, n))| (s, t, n)).collect();
    top.sort_by_key(|&(s, t, _)| (std::cmp::Reverse(t), s));
    top.truncate(TOP);
    RangeFacts {
        from,
        to,
        kinds,
        idle: (to - from) - busy,
        top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::timeline::Band;

    fn b(start: Ns, end: Ns, kind: BandKind, name: Sym) -> Band {
        Band {
            start,
            end,
            kind,
            name,
            event: EventIx::of(0),
        }
    }

    #[test]
    fn a_range_sums_its_bands_clipped_per_kind_and_by_name() {
        // compute 0–40 (name 1) and 30–60 (name 2): union 0–60; a collective 70–100 (name 3).
        let row = Row {
            rank: RankId(0),
            rank_index: RankIx::of(0),
            lane: None,
            label: "rank 0".into(),
            bands: vec![
                b(0, 40, BandKind::Compute, 1),
                b(30, 60, BandKind::Compute, 2),
                b(70, 100, BandKind::Collective, 3),
            ],
            max_len: 40,
        };
        // [20, 80): compute 20–60 = 40, collective 70–80 = 10, idle 60–70 = 10.
        let r = range(&row, 80, 20);
        assert_eq!((r.from, r.to), (20, 80));
        assert_eq!(
            r.kinds,
            vec![(BandKind::Compute, 40), (BandKind::Collective, 10)]
        );
        assert_eq!(r.idle, 10);
        // name 2: 30–60 = 30; name 1: 20–40 = 20; name 3: 10.
        assert_eq!(r.top, vec![(2, 30, 1), (1, 20, 1), (3, 10, 1)]);
        // A range over nothing is all idle.
        let r = range(&row, 200, 300);
        assert_eq!((r.kinds.len(), r.idle, r.top.len()), (0, 100, 0));
    }
}
