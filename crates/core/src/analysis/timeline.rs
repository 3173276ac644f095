//! Marey-band timeline data (the banded Marey graph, docs/architecture.md#sources): for one step, one row per rank (or per lane of
//! one rank) of operator bands on the aligned clock, and the "same operator on every rank"
//! lookup that lets a view join an operator's start and end points across ranks.
//!
//! A row's bands are the rank's device work launched in the step (kernels, copies, sets), or
//! on a CPU-only rank the top-level host operators of the step. The same operator on another
//! rank is, for a matched collective call, the member calls of its instance
//! ([`Timeline::instance_occurrences`]); otherwise its k-th band of the same name in that
//! rank's row, k counted from the step start: ranks of a data-parallel job run the same
//! program, so the k-th kernel of a name is the same work everywhere.

use super::comm::Comm;
use super::comm::align::Offset;
use super::steps::StepSpan;
use crate::model::{CollOp, EventIx, Job, Kind, LaneSide, Rank, RankId, RankIx, StepNo, Sym};
use crate::time::Ns;
use rayon::prelude::*;

/// What a band is, for colouring: the operator kinds the banded Marey graph distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BandKind {
    /// Compute kernel (or a non-collective host operator on a CPU-only rank).
    Compute,
    /// Collective communication.
    Collective,
    /// Point-to-point send.
    Send,
    /// Point-to-point receive.
    Recv,
    /// Memory copy or set.
    Memory,
    /// Host work on a CPU lane (device-level view).
    Host,
}

impl BandKind {
    /// Every kind, in legend order.
    pub const ALL: [BandKind; 6] = [
        BandKind::Compute,
        BandKind::Collective,
        BandKind::Send,
        BandKind::Recv,
        BandKind::Memory,
        BandKind::Host,
    ];

    /// Stable lower-case name (legends, theme keys).
    pub fn as_str(self) -> &'static str {
        match self {
            BandKind::Compute => "compute",
            BandKind::Collective => "collective",
            BandKind::Send => "send",
            BandKind::Recv => "recv",
            BandKind::Memory => "memory",
            BandKind::Host => "host",
        }
    }
}

/// One operator on one row, aligned clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// Aligned start, ns.
    pub start: Ns,
    /// Aligned end, ns.
    pub end: Ns,
    /// Colour class.
    pub kind: BandKind,
    /// Operator or kernel name.
    pub name: Sym,
    /// The event (index into the rank's `Events`).
    pub event: EventIx,
}

/// One time axis: a rank, or one lane of a rank.
#[derive(Debug, Clone)]
pub struct Row {
    /// Rank id.
    pub rank: RankId,
    /// Index of the rank in `job.ranks`.
    pub rank_index: RankIx,
    /// The lane, on a device-level timeline.
    pub lane: Option<u16>,
    /// Row label (`rank 3`, `stream 7`).
    pub label: String,
    /// Bands sorted by start.
    pub bands: Vec<Band>,
    /// The longest band: with it, the bands overlapping a time window are found by binary
    /// search on the start.
    pub max_len: Ns,
}

/// The bands of one step.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// Step number (the first, when several steps share the axis).
    pub step: StepNo,
    /// The last step on the axis ([`join`]); `step` for one step.
    pub last: StepNo,
    /// Where each step after the first begins on the axis (its earliest row start).
    pub steps_at: Vec<(StepNo, Ns)>,
    /// Earliest aligned step start over the rows' ranks.
    pub start: Ns,
    /// Latest aligned step end (host or device) over the rows' ranks.
    pub end: Ns,
    /// Rows in rank (or lane) order.
    pub rows: Vec<Row>,
}

/// Where one operator is on a set of rows: min/mean/max of its start and end (the banded Marey graph's
/// aggregated band for a group of devices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// Earliest start.
    pub min_start: Ns,
    /// Mean start (floor).
    pub mean_start: Ns,
    /// Latest start.
    pub max_start: Ns,
    /// Earliest end.
    pub min_end: Ns,
    /// Mean end (floor).
    pub mean_end: Ns,
    /// Latest end.
    pub max_end: Ns,
    /// Rows that have the occurrence.
    pub rows: u32,
}

/// The step's window on one rank, on its own clock: span start to the later of span end and
/// device end.
fn window(spans: &[StepSpan], step: StepNo) -> Option<(u32, Ns, Ns)> {
    let s = spans.iter().find(|s| s.number == step)?;
    Some((s.index, s.start, s.end.max(s.device_end.unwrap_or(s.end))))
}

/// Events of a device lane launched in step `si`: their starts lie between the step's host
/// start (nothing runs before its launch) and the window end (D_N bounds their ends), so a
/// binary search on the lane's sorted starts skips the other steps.
fn device_step_events(rank: &Rank, lane: u16, si: u32, to: Ns) -> impl Iterator<Item = usize> + '_ {
    let ev = &rank.events;
    let r = rank.lane_events(lane);
    let starts = &ev.start[r.clone()];
    let host_start = rank.steps[si as usize].start;
    let lo = r.start + starts.partition_point(|&s| s < host_start);
    let hi = r.start + starts.partition_point(|&s| s <= to);
    (lo..hi.max(lo)).filter(move |&i| ev.step[i] == si && ev.kind[i].is_device_work())
}

/// The band kind of an event, from its kind and its name's role.
fn band_kind(job: &Job, name: Sym, kind: Kind) -> BandKind {
    let role = job.role(name);
    match kind {
        Kind::Memcpy | Kind::Memset => BandKind::Memory,
        Kind::Comm => comm_kind(role.collective),
        _ if role.host_collective.is_some() => comm_kind(role.collective),
        Kind::Compute => BandKind::Compute,
        _ => BandKind::Host,
    }
}

fn comm_kind(op: CollOp) -> BandKind {
    match op {
        CollOp::Send => BandKind::Send,
        CollOp::Recv => BandKind::Recv,
        _ => BandKind::Collective,
    }
}

/// Events of a lane that are not nested in an earlier kept event (host operators nest).
fn top_level(rank: &Rank, lane: u16, from: Ns, to: Ns, keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let ev = &rank.events;
    let mut out: Vec<usize> = Vec::new();
    let mut end = Ns::MIN;
    for i in rank.lane_events(lane) {
        if !keep(i) || ev.end(i) <= from || ev.start[i] >= to {
            continue;
        }
        if ev.start[i] >= end {
            out.push(i);
            end = ev.end(i);
        }
    }
    out
}

fn band(job: &Job, rank: &Rank, i: usize, off: Ns) -> Band {
    let ev = &rank.events;
    Band {
        start: ev.start[i] + off,
        end: ev.end(i) + off,
        kind: band_kind(job, ev.name[i], ev.kind[i]),
        name: ev.name[i],
        event: EventIx::of(i),
    }
}

fn host_kind(k: Kind) -> bool {
    matches!(k, Kind::HostOp | Kind::Launch | Kind::Annotation)
}

/// One rank's row for a step: its device work launched in the step, or (CPU-only) its
/// top-level host operators in the step window.
fn rank_row(
    job: &Job,
    idx: usize,
    spans: &[StepSpan],
    off: Ns,
    step: StepNo,
) -> Option<(Row, Ns, Ns)> {
    let rank = &job.ranks[idx];
    let (si, from, to) = window(spans, step)?;
    let ev = &rank.events;
    let mut bands: Vec<Band> = Vec::new();
    if rank.is_cpu_only() {
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side != LaneSide::Cpu {
                continue;
            }
            for i in top_level(rank, l as u16, from, to, |i| {
                ev.kind[i] == Kind::HostOp && !job.role(ev.name[i]).is_step_marker()
            }) {
                bands.push(band(job, rank, i, off));
            }
        }
    } else {
        for (l, lane) in rank.lanes.iter().enumerate() {
            if lane.side != LaneSide::Device {
                continue;
            }
            for i in device_step_events(rank, l as u16, si, to) {
                bands.push(band(job, rank, i, off));
            }
        }
    }
    bands.sort_by_key(|b| (b.start, b.end, b.event));
    let row = Row {
        rank: rank.id,
        rank_index: RankIx::of(idx),
        lane: None,
        label: format!("rank {}", rank.id),
        max_len: max_len(&bands),
        bands,
    };
    Some((row, from + off, to + off))
}

/// The cluster timeline of a step: one row per rank that has the step, aligned clocks.
pub fn cluster(job: &Job, spans: &[Vec<StepSpan>], offsets: &[Offset], step: StepNo) -> Timeline {
    let rows: Vec<(Row, Ns, Ns)> = (0..job.ranks.len())
        .into_par_iter()
        .filter_map(|i| {
            let off = offsets.get(i).map_or(0, |o| o.offset_ns);
            rank_row(job, i, &spans[i], off, step)
        })
        .collect();
    assemble(step, rows)
}

/// The device-level timeline of one rank's step: one row per lane with work in the step
/// (device streams: work launched in the step; CPU threads: top-level operators, runtime
/// calls and annotations in the step window).
pub fn lanes(
    job: &Job,
    spans: &[Vec<StepSpan>],
    offsets: &[Offset],
    ix: RankIx,
    step: StepNo,
) -> Timeline {
    let idx = ix.get();
    let rank = &job.ranks[idx];
    let off = offsets.get(idx).map_or(0, |o| o.offset_ns);
    let Some((si, from, to)) = window(&spans[idx], step) else {
        return assemble(step, Vec::new());
    };
    let ev = &rank.events;
    let mut rows = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        let l = l as u16;
        let picked: Vec<usize> = match lane.side {
            LaneSide::Device => device_step_events(rank, l, si, to).collect(),
            // The step marker spans the whole step: the work is what it contains.
            LaneSide::Cpu => top_level(rank, l, from, to, |i| {
                host_kind(ev.kind[i]) && !job.role(ev.name[i]).is_step_marker()
            }),
            LaneSide::Other => continue,
        };
        if picked.is_empty() {
            continue;
        }
        let bands: Vec<Band> = picked
            .into_iter()
            .map(|i| band(job, rank, i, off))
            .collect();
        rows.push((
            Row {
                rank: rank.id,
                rank_index: ix,
                lane: Some(l),
                label: job.strings.resolve(lane.name).to_string(),
                max_len: max_len(&bands),
                bands,
            },
            from + off,
            to + off,
        ));
    }
    assemble(step, rows)
}

fn max_len(bands: &[Band]) -> Ns {
    bands.iter().map(|b| b.end - b.start).max().unwrap_or(0)
}

fn assemble(step: StepNo, rows: Vec<(Row, Ns, Ns)>) -> Timeline {
    let start = rows.iter().map(|r| r.1).min().unwrap_or(0);
    let end = rows.iter().map(|r| r.2).max().unwrap_or(0);
    Timeline {
        step,
        last: step,
        steps_at: Vec::new(),
        start,
        end,
        rows: rows.into_iter().map(|r| r.0).collect(),
    }
}

/// Consecutive steps' timelines on one axis: the rows of a rank (or lane) joined, their
/// bands in start order (a host operator both windows hold, once); the axis runs from the
/// earliest start to the latest end. `parts` in step order; none gives an empty timeline.
pub fn join(parts: Vec<Timeline>) -> Timeline {
    let mut it = parts.into_iter();
    let Some(mut out) = it.next() else {
        return assemble(StepNo(0), Vec::new());
    };
    for p in it {
        out.last = p.last;
        out.steps_at.push((p.step, p.start));
        out.start = out.start.min(p.start);
        out.end = out.end.max(p.end);
        for row in p.rows {
            let key = (row.rank_index, row.lane);
            match out.rows.iter_mut().find(|r| (r.rank_index, r.lane) == key) {
                Some(r) => {
                    r.bands.extend(row.bands);
                    r.max_len = r.max_len.max(row.max_len);
                }
                None => out.rows.push(row),
            }
        }
    }
    out.rows.sort_by_key(|r| (r.rank_index, r.lane));
    for r in &mut out.rows {
        r.bands.sort_by_key(|b| (b.start, b.end, b.event));
        r.bands.dedup_by_key(|b| b.event);
    }
    out
}

/// One place a cursor stops at on a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A band (index into the row's bands).
    Band(usize),
    /// A stretch that no band of the row covers (aligned start, end).
    Gap(Ns, Ns),
}

impl Row {
    /// The row's stops in time order over the axis `[from, to)`: each band, and each stretch
    /// no band covers — before the first band, between bands (after the latest end so far),
    /// after the last.
    pub fn stops(&self, (from, to): (Ns, Ns)) -> Vec<Stop> {
        let mut out = Vec::with_capacity(self.bands.len() * 2 + 1);
        let mut reach = from;
        for (i, b) in self.bands.iter().enumerate() {
            if b.start > reach {
                out.push(Stop::Gap(reach, b.start));
            }
            out.push(Stop::Band(i));
            reach = reach.max(b.end);
        }
        if to > reach {
            out.push(Stop::Gap(reach, to));
        }
        out
    }

    /// Its longest gap over the axis `[from, to)` (ties: the earliest).
    pub fn longest_gap(&self, axis: (Ns, Ns)) -> Option<(Ns, Ns)> {
        self.stops(axis)
            .into_iter()
            .filter_map(|s| match s {
                Stop::Gap(a, z) => Some((a, z)),
                Stop::Band(_) => None,
            })
            .max_by_key(|&(a, z)| (z - a, std::cmp::Reverse(a)))
    }

    /// The `k`-th band named `name` (0-based, in start order).
    pub fn occurrence(&self, name: Sym, k: usize) -> Option<&Band> {
        self.bands.iter().filter(|b| b.name == name).nth(k)
    }

    /// Which occurrence of its name band `i` is (0-based).
    pub fn occurrence_index(&self, i: usize) -> usize {
        let name = self.bands[i].name;
        self.bands[..i].iter().filter(|b| b.name == name).count()
    }
}

impl Timeline {
    /// The `k`-th occurrence of `name` on every row (`None` where a row lacks it).
    pub fn occurrences(&self, name: Sym, k: usize) -> Vec<Option<Band>> {
        self.rows
            .iter()
            .map(|r| r.occurrence(name, k).copied())
            .collect()
    }

    /// The bands of the collective instance (comm matching) that band `band` of row `row`
    /// is a call of, one per row (`None` for rows not in it) — exact where the k-th-occurrence
    /// rule is not (pipeline stages, ranks that skip a collective). `None` when the band is not
    /// a matched call.
    pub fn instance_occurrences(
        &self,
        comm: &Comm,
        row: usize,
        band: &Band,
    ) -> Option<Vec<Option<Band>>> {
        let ri = self.rows.get(row)?.rank_index;
        let calls = comm.calls.per_rank.get(ri.get())?;
        let c = calls.iter().position(|c| c.event == band.event)? as u32;
        let inst = comm.matching.instances.iter().find(|i| {
            i.members
                .binary_search_by_key(&ri, |m| m.rank)
                .is_ok_and(|p| i.members[p].call == c)
        })?;
        let mut out = vec![None; self.rows.len()];
        for m in &inst.members {
            // Cluster rows are in rank order: one row per rank index.
            let Ok(at) = self.rows.binary_search_by_key(&m.rank, |r| r.rank_index) else {
                continue;
            };
            let ev = comm.calls.per_rank[m.rank.get()][m.call as usize].event;
            out[at] = self.rows[at].bands.iter().find(|b| b.event == ev).copied();
        }
        Some(out)
    }

    /// The `k`-th occurrence of `name` on rows `rows`: min/mean/max of its starts and ends.
    pub fn envelope(&self, rows: std::ops::Range<usize>, name: Sym, k: usize) -> Option<Envelope> {
        envelope_of(&self.occurrences(name, k)[rows])
    }

    /// The row index of a rank (cluster timelines).
    pub fn row_of_rank(&self, rank: RankId) -> Option<usize> {
        self.rows.iter().position(|r| r.rank == rank)
    }
}

/// The envelope of one operator's occurrences on a set of rows ([`Timeline::occurrences`]).
pub fn envelope_of(occurrences: &[Option<Band>]) -> Option<Envelope> {
    {
        let found: Vec<&Band> = occurrences.iter().flatten().collect();
        let n = found.len() as i128;
        if n == 0 {
            return None;
        }
        let mean =
            |f: fn(&Band) -> Ns| (found.iter().map(|b| f(b) as i128).sum::<i128>() / n) as Ns;
        Some(Envelope {
            min_start: found.iter().map(|b| b.start).min()?,
            mean_start: mean(|b| b.start),
            max_start: found.iter().map(|b| b.start).max()?,
            min_end: found.iter().map(|b| b.end).min()?,
            mean_end: mean(|b| b.end),
            max_end: found.iter().map(|b| b.end).max()?,
            rows: n as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_row_stops_at_each_band_and_each_uncovered_stretch() {
        let band = |start, end| Band {
            start,
            end,
            kind: BandKind::Compute,
            name: 1,
            event: EventIx::of(0),
        };
        // On [-5, 120): 0–50 holds 10–20; 60–70; touching 70–80; 100–110.
        let row = Row {
            rank: RankId(0),
            rank_index: RankIx::of(0),
            lane: None,
            label: String::new(),
            bands: vec![
                band(0, 50),
                band(10, 20),
                band(60, 70),
                band(70, 80),
                band(100, 110),
            ],
            max_len: 50,
        };
        assert_eq!(
            row.stops((-5, 120)),
            vec![
                Stop::Gap(-5, 0),
                Stop::Band(0),
                Stop::Band(1),
                Stop::Gap(50, 60),
                Stop::Band(2),
                Stop::Band(3),
                Stop::Gap(80, 100),
                Stop::Band(4),
                Stop::Gap(110, 120),
            ]
        );
        // An axis the bands fill has no gap at its ends.
        assert_eq!(row.stops((0, 110)).len(), 7);
        assert_eq!(row.longest_gap((-5, 120)), Some((80, 100)));
    }

    use super::*;

    fn b(start: Ns, end: Ns, name: Sym) -> Band {
        Band {
            start,
            end,
            kind: BandKind::Compute,
            name,
            event: EventIx(0),
        }
    }

    #[test]
    fn envelope_of_the_kth_occurrence() {
        let row = |rank, bands| Row {
            rank: RankId(rank),
            rank_index: RankIx(rank),
            lane: None,
            label: String::new(),
            max_len: 20,
            bands,
        };
        let tl = Timeline {
            step: StepNo(1),
            last: StepNo(1),
            steps_at: Vec::new(),
            start: 0,
            end: 100,
            rows: vec![
                row(0, vec![b(0, 10, 7), b(20, 30, 8), b(40, 50, 7)]),
                row(1, vec![b(5, 10, 7), b(45, 61, 7)]),
                row(2, vec![b(0, 3, 8)]),
            ],
        };
        assert_eq!(tl.rows[0].occurrence_index(2), 1);
        let e = tl.envelope(0..3, 7, 1).unwrap();
        assert_eq!(
            (
                e.min_start,
                e.mean_start,
                e.max_start,
                e.min_end,
                e.mean_end,
                e.max_end,
                e.rows
            ),
            (40, 42, 45, 50, 55, 61, 2)
        );
        assert!(tl.envelope(0..3, 7, 2).is_none());
        assert_eq!(tl.row_of_rank(RankId(2)), Some(2));
    }
}
