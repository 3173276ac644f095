//! Turns parsed chunks into a normalized [`Rank`]: merged name and lane tables, lanes told
//! apart as device streams or host threads, events sorted per lane, launch links by
//! correlation, operator links by External id, and step attribution (DESIGN §4).

use super::chunk::{Chunk, LaneDraft, Meta, MetaKind, NO_ID};
use super::parse::Parsed;
use super::raw::Id;
use crate::error::InputError;
use crate::model::{
    Dropped, Events, HostStep, Interner, Kind, Lane, LaneSide, NONE, Rank, RawSpan, SourceInfo,
    Sym, profiler_step_number,
};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// A rank read from one file, with names interned in its own table (re-interned into the
/// job's table when the job is assembled).
pub struct RankDraft {
    /// The rank with [`Sym`]s into `strings`.
    pub rank: Rank,
    /// The rank-local string table.
    pub strings: Interner,
    /// `distributedInfo.rank`.
    pub declared_rank: Option<u32>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u32>,
    /// Things the user should know about this file (lossy names, clamped durations).
    pub warnings: Vec<String>,
}

/// Below this a `ts` is not on the Unix epoch scale (1e15 µs ≈ 2001) and
/// `baseTimeNanoseconds` applies (reference/kineto.md §3).
const EPOCH_SCALE_NS: Ns = 1_000_000_000_000_000_000;

/// Builds the rank from a parsed file.
pub fn build(label: &str, parsed: Parsed<'_>, source: SourceInfo) -> Result<RankDraft, InputError> {
    let Parsed { header, chunks } = parsed;
    let mut strings = Interner::default();
    let mut warnings = Vec::new();

    // Names: chunk-local ids → rank ids, decoding each distinct name once.
    let mut bad_utf8: Option<(usize, u64)> = None;
    let mut name_maps: Vec<Vec<Sym>> = Vec::with_capacity(chunks.len());
    for c in &chunks {
        let mut map = Vec::with_capacity(c.names.len());
        for (local, bytes) in c.names.iter().enumerate() {
            let text = match std::str::from_utf8(bytes) {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(_) => {
                    let entry = bad_utf8.get_or_insert((0, first_offset_of_name(c, local as u32)));
                    entry.0 += 1;
                    String::from_utf8_lossy(bytes)
                }
            };
            map.push(strings.intern(&text));
        }
        name_maps.push(map);
    }
    if let Some((n, at)) = bad_utf8 {
        warnings.push(format!(
            "{label}: byte {at}: {n} event name(s) with invalid UTF-8, shown with U+FFFD"
        ));
    }

    // Lanes: merge by (pid, tid).
    let mut lane_index: FxHashMap<Id<'static>, FxHashMap<Id<'static>, u32>> = FxHashMap::default();
    let mut drafts: Vec<LaneDraft<'static>> = Vec::new();
    let mut lane_maps: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
    for c in &chunks {
        let mut map = Vec::with_capacity(c.lanes.len());
        for l in &c.lanes {
            let by_tid = lane_index.entry(l.pid.clone().into_owned()).or_default();
            let id = *by_tid.entry(l.tid.clone().into_owned()).or_insert_with(|| {
                drafts.push(LaneDraft {
                    pid: l.pid.clone().into_owned(),
                    tid: l.tid.clone().into_owned(),
                    device_events: 0,
                    cpu_events: 0,
                });
                (drafts.len() - 1) as u32
            });
            drafts[id as usize].device_events += l.device_events;
            drafts[id as usize].cpu_events += l.cpu_events;
            map.push(id);
        }
        lane_maps.push(map);
    }
    if drafts.len() > u16::MAX as usize {
        return Err(InputError::whole(
            label,
            format!("{} lanes: more than 65535 threads/streams", drafts.len()),
        ));
    }

    let mut dropped = Dropped::default();
    let mut unknown: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
    let mut negative = (0u64, u64::MAX);
    let mut meta: Vec<Meta> = Vec::new();
    for c in &chunks {
        dropped.add(&c.dropped);
        for (k, v) in &c.unknown_cats {
            *unknown.entry(k.clone()).or_default() += v;
        }
        if c.negative_dur.0 > 0 {
            negative.0 += c.negative_dur.0;
            negative.1 = negative.1.min(c.negative_dur.1);
        }
        meta.extend(c.meta.iter().cloned());
    }
    if negative.0 > 0 {
        warnings.push(format!(
            "{label}: byte {}: {} event(s) with negative `dur`, counted as 0",
            negative.1, negative.0
        ));
    }

    let total: usize = chunks.iter().map(|c| c.cols.start.len()).sum();
    if total == 0 {
        return Err(InputError::at(
            label,
            0,
            "no timed events (ph \"X\"): nothing to analyse",
        ));
    }
    let sides = lane_sides(&drafts, &meta);
    let base = header.base_ns.unwrap_or(0);
    if header.base_ns.is_some() {
        // Relative timestamps (below the epoch scale) get `baseTimeNanoseconds` added.
        let overflow = chunks
            .iter()
            .flat_map(|c| c.cols.start.iter())
            .any(|&s| s < EPOCH_SCALE_NS && s.checked_add(base).is_none());
        if overflow {
            return Err(InputError::whole(
                label,
                "`ts` + `baseTimeNanoseconds` overflows 64-bit nanoseconds",
            ));
        }
    }
    let (events, corr, ext, lanes_range) =
        sort_by_lane(&chunks, &name_maps, &lane_maps, base, drafts.len());
    let lanes: Vec<Lane> = drafts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (first, count) = lanes_range[i];
            Lane {
                side: sides[i],
                pid: strings.intern(&d.pid.text()),
                tid: strings.intern(&d.tid.text()),
                name: strings.intern(&lane_name(d, sides[i], &meta)),
                first,
                count,
            }
        })
        .collect();

    let mut rank = Rank {
        id: 0,
        source,
        lanes,
        events,
        steps: Vec::new(),
        stepping_lane: None,
        devices: header
            .device_names
            .iter()
            .map(|n| strings.intern(n))
            .collect(),
        dropped,
        unknown_categories: Vec::new(),
    };
    let mut unknown: Vec<(Vec<u8>, u64)> = unknown.into_iter().collect();
    unknown.sort();
    rank.unknown_categories = unknown
        .into_iter()
        .map(|(k, v)| (strings.intern(&String::from_utf8_lossy(&k)), v))
        .collect();

    link(&mut rank, &corr, &ext);
    find_steps(&mut rank, &strings);
    assign_steps(&mut rank);

    let dist = header.distributed.as_ref();
    let get_u32 = |key: &str| {
        dist.and_then(|d| d.get(key))
            .and_then(|v| {
                v.as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            })
            .and_then(|v| u32::try_from(v).ok())
    };
    Ok(RankDraft {
        declared_rank: get_u32("rank"),
        world_size: get_u32("world_size"),
        rank,
        strings,
        warnings,
    })
}

fn first_offset_of_name(c: &Chunk<'_>, local: u32) -> u64 {
    c.cols
        .name
        .iter()
        .position(|&n| n == local)
        .map(|i| c.cols.raw[i].offset)
        .unwrap_or(0)
}

/// Decides each lane's side from the categories seen on it and the process labels.
fn lane_sides(drafts: &[LaneDraft<'static>], meta: &[Meta]) -> Vec<LaneSide> {
    let label_of = |pid: &Id<'static>| {
        meta.iter()
            .rev()
            .find(|m| m.what == MetaKind::ProcessLabels && &m.pid == pid)
            .map(|m| m.value.as_str())
    };
    let direct: Vec<Option<LaneSide>> = drafts
        .iter()
        .map(|d| {
            if d.device_events > 0 && d.device_events >= d.cpu_events {
                Some(LaneSide::Device)
            } else if d.cpu_events > 0 {
                Some(LaneSide::Cpu)
            } else {
                match label_of(&d.pid) {
                    Some(l) if l.starts_with("GPU") || l.starts_with("NPU") => {
                        Some(LaneSide::Device)
                    }
                    Some(l) if l.starts_with("CPU") => Some(LaneSide::Cpu),
                    _ => None,
                }
            }
        })
        .collect();
    drafts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            direct[i].unwrap_or_else(|| {
                if matches!(d.pid, Id::Text(_)) {
                    return LaneSide::Other;
                }
                // Same process as a known lane: same side (e.g. MTIA device streams).
                drafts
                    .iter()
                    .zip(&direct)
                    .find(|(o, s)| o.pid == d.pid && s.is_some())
                    .and_then(|(_, s)| *s)
                    .unwrap_or(LaneSide::Other)
            })
        })
        .collect()
}

fn lane_name(d: &LaneDraft<'static>, side: LaneSide, meta: &[Meta]) -> String {
    let named = meta.iter().rev().find(|m| {
        m.what == MetaKind::ThreadName && m.pid == d.pid && m.tid.as_ref() == Some(&d.tid)
    });
    match (side, named) {
        (LaneSide::Device, Some(m)) => format!("device {} {}", d.pid.text(), m.value),
        (_, Some(m)) => m.value.clone(),
        (LaneSide::Device, None) => format!("device {} stream {}", d.pid.text(), d.tid.text()),
        (LaneSide::Cpu, None) => format!("thread {}", d.tid.text()),
        (LaneSide::Other, None) => format!("{} {}", d.pid.text(), d.tid.text())
            .trim()
            .to_string(),
    }
}

/// Sorts events by (lane, start, longest first) so that each lane is a contiguous, time-ordered
/// range and a parent precedes the children it contains. Columns are gathered straight from
/// the chunks (names and lanes remapped to rank ids on the way), so they are copied once.
#[allow(clippy::type_complexity)]
fn sort_by_lane(
    chunks: &[Chunk<'_>],
    names: &[Vec<Sym>],
    lanes: &[Vec<u32>],
    base: Ns,
    n_lanes: usize,
) -> (Events, Vec<u64>, Vec<u64>, Vec<(u32, u32)>) {
    let shifted = |s: Ns| if s < EPOCH_SCALE_NS { s + base } else { s };
    // Compact keys (no indirection into the columns) keep the sort cache-friendly; the last
    // two fields say where the event is: (chunk, index in chunk).
    let mut keys: Vec<(u32, Ns, Ns, u32, u32)> = chunks
        .par_iter()
        .enumerate()
        .flat_map_iter(|(k, c)| {
            let cols = &c.cols;
            (0..cols.start.len()).map(move |i| {
                (
                    lanes[k][cols.lane[i] as usize],
                    shifted(cols.start[i]),
                    -cols.dur[i],
                    k as u32,
                    i as u32,
                )
            })
        })
        .collect();
    keys.par_sort_unstable();
    fn gather<T: Copy + Send + Sync>(
        keys: &[(u32, Ns, Ns, u32, u32)],
        f: impl Fn(usize, usize) -> T + Sync,
    ) -> Vec<T> {
        keys.par_iter()
            .map(|k| f(k.3 as usize, k.4 as usize))
            .collect()
    }
    let col = |k: usize| &chunks[k].cols;
    let ((start, dur), ((name, lane), ((kind, raw), (corr, ext)))) = rayon::join(
        || {
            rayon::join(
                || keys.par_iter().map(|k| k.1).collect(),
                || keys.par_iter().map(|k| -k.2).collect(),
            )
        },
        || {
            rayon::join(
                || {
                    rayon::join(
                        || gather(&keys, |k, i| names[k][col(k).name[i] as usize]),
                        || keys.par_iter().map(|k| k.0 as u16).collect(),
                    )
                },
                || {
                    rayon::join(
                        || {
                            rayon::join(
                                || gather(&keys, |k, i| col(k).kind[i]),
                                || gather::<RawSpan>(&keys, |k, i| col(k).raw[i]),
                            )
                        },
                        || {
                            rayon::join(
                                || gather(&keys, |k, i| col(k).corr[i]),
                                || gather(&keys, |k, i| col(k).ext[i]),
                            )
                        },
                    )
                },
            )
        },
    );
    let n = keys.len();
    let mut ranges = vec![(0u32, 0u32); n_lanes];
    for (i, k) in keys.iter().enumerate() {
        let r = &mut ranges[k.0 as usize];
        if r.1 == 0 {
            r.0 = i as u32;
        }
        r.1 += 1;
    }
    let events = Events {
        start,
        dur,
        name,
        lane,
        kind,
        step: vec![NONE; n],
        link: vec![NONE; n],
        op: vec![NONE; n],
        raw,
    };
    (events, corr, ext, ranges)
}

/// Launch links by correlation (runtime call ↔ device activity) and operator links by
/// External id (runtime call / device activity → `cpu_op`). An External id shared by several
/// operators is ambiguous and links nothing.
fn link(rank: &mut Rank, corr: &[u64], ext: &[u64]) {
    const AMBIGUOUS: u32 = NONE - 1;
    let ev = &rank.events;
    let lanes = &rank.lanes;
    let launches = IdTable::build(
        (0..ev.len()).filter_map(|i| {
            (ev.kind[i] == Kind::Launch
                && corr[i] != NO_ID
                && lanes[ev.lane[i] as usize].side == LaneSide::Cpu)
                .then_some((corr[i], i as u32))
        }),
        None,
    );
    let ops = IdTable::build(
        (0..ev.len()).filter_map(|i| {
            (ev.kind[i] == Kind::HostOp && ext[i] != NO_ID).then_some((ext[i], i as u32))
        }),
        Some(AMBIGUOUS),
    );
    // Lookups are independent: do them in parallel, then write the reverse links.
    let found: Vec<(u32, u32)> = (0..ev.len())
        .into_par_iter()
        .map(|i| {
            let k = ev.kind[i];
            let device = k.is_device_work() || k == Kind::Sync;
            let launch = if device && corr[i] != NO_ID {
                launches.get(corr[i])
            } else {
                NONE
            };
            let op = if (device || k == Kind::Launch) && ext[i] != NO_ID {
                ops.get(ext[i])
            } else {
                NONE
            };
            (launch, if op == AMBIGUOUS { NONE } else { op })
        })
        .collect();
    let ev = &mut rank.events;
    for (i, &(launch, op)) in found.iter().enumerate() {
        ev.op[i] = op;
        if launch != NONE {
            ev.link[i] = launch;
            if ev.link[launch as usize] == NONE {
                ev.link[launch as usize] = i as u32;
            }
        }
    }
}

/// id → event index. Profiler ids (correlation, External id) are mostly dense counters, so
/// a direct-address table is used when the id range is small; otherwise a hash map.
enum IdTable {
    Dense { min: u64, slots: Vec<u32> },
    Sparse(FxHashMap<u64, u32>),
}

impl IdTable {
    /// Builds the table; with `dup = Some(marker)` an id seen twice maps to `marker`, else the
    /// last occurrence wins.
    fn build(entries: impl Iterator<Item = (u64, u32)>, dup: Option<u32>) -> IdTable {
        let entries: Vec<(u64, u32)> = entries.collect();
        let (lo, hi) = entries
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &(id, _)| (lo.min(id), hi.max(id)));
        let put = |slot: &mut u32, v: u32| {
            *slot = match dup {
                Some(marker) if *slot != NONE => marker,
                _ => v,
            }
        };
        if !entries.is_empty() && hi - lo < 4 * entries.len() as u64 + 1024 {
            let mut slots = vec![NONE; (hi - lo + 1) as usize];
            for &(id, v) in &entries {
                put(&mut slots[(id - lo) as usize], v);
            }
            IdTable::Dense { min: lo, slots }
        } else {
            let mut map = FxHashMap::with_capacity_and_hasher(entries.len(), Default::default());
            for &(id, v) in &entries {
                put(map.entry(id).or_insert(NONE), v);
            }
            IdTable::Sparse(map)
        }
    }

    fn get(&self, id: u64) -> u32 {
        match self {
            IdTable::Dense { min, slots } => id
                .checked_sub(*min)
                .and_then(|o| slots.get(o as usize))
                .copied()
                .unwrap_or(NONE),
            IdTable::Sparse(m) => m.get(&id).copied().unwrap_or(NONE),
        }
    }
}

/// Host steps: `ProfilerStep#N` annotations on the CPU lane that has most of them (the main
/// thread); none → one synthetic step over the whole trace.
fn find_steps(rank: &mut Rank, strings: &Interner) {
    let step_syms: FxHashMap<Sym, u32> = strings
        .iter()
        .filter_map(|(id, s)| profiler_step_number(s).map(|n| (id, n)))
        .collect();
    let ev = &rank.events;
    let mut per_lane: FxHashMap<u16, u32> = FxHashMap::default();
    if !step_syms.is_empty() {
        for i in 0..ev.len() {
            if step_syms.contains_key(&ev.name[i])
                && matches!(ev.kind[i], Kind::Annotation | Kind::HostOp)
                && rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu
            {
                *per_lane.entry(ev.lane[i]).or_default() += 1;
            }
        }
    }
    let best = per_lane
        .into_iter()
        .max_by_key(|&(lane, n)| (n, std::cmp::Reverse(lane)));
    if let Some((lane, _)) = best {
        rank.stepping_lane = Some(lane);
        for i in rank.lane_events(lane) {
            if let Some(&n) = step_syms.get(&ev.name[i]) {
                rank.steps.push(HostStep {
                    number: n,
                    start: ev.start[i],
                    end: ev.end(i),
                    synthetic: false,
                });
            }
        }
        rank.steps.sort_by_key(|s| (s.start, s.number));
        return;
    }
    // No markers: the whole trace is one step, bounded by host and device work.
    let mut lo = Ns::MAX;
    let mut hi = Ns::MIN;
    for i in 0..ev.len() {
        if rank.lanes[ev.lane[i] as usize].side != LaneSide::Other {
            lo = lo.min(ev.start[i]);
            hi = hi.max(ev.end(i));
        }
    }
    if lo > hi {
        lo = ev.start.iter().copied().min().unwrap_or(0);
        hi = (0..ev.len()).map(|i| ev.end(i)).max().unwrap_or(0);
    }
    rank.steps.push(HostStep {
        number: 0,
        start: lo,
        end: hi,
        synthetic: true,
    });
    rank.stepping_lane = rank
        .lanes
        .iter()
        .enumerate()
        .filter(|(_, l)| l.side == LaneSide::Cpu)
        .max_by_key(|(i, l)| (l.count, std::cmp::Reverse(*i)))
        .map(|(i, _)| i as u16);
}

/// Step of every event: host events by the host step containing their start; device work by
/// the step of the runtime call that launched it (it may run during a later step); unlinked
/// device work by the last host step started before it.
fn assign_steps(rank: &mut Rank) {
    let steps = &rank.steps;
    if steps.len() == 1 && steps[0].synthetic {
        rank.events.step.iter_mut().for_each(|s| *s = 0);
        return;
    }
    let starts: Vec<Ns> = steps.iter().map(|s| s.start).collect();
    let host_step = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 {
            return NONE;
        }
        if t < steps[k - 1].end {
            (k - 1) as u32
        } else {
            NONE
        }
    };
    let last_started = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 { NONE } else { (k - 1) as u32 }
    };
    let ev = &mut rank.events;
    let lanes = &rank.lanes;
    for i in 0..ev.len() {
        if lanes[ev.lane[i] as usize].side == LaneSide::Cpu {
            ev.step[i] = host_step(ev.start[i]);
        }
    }
    for i in 0..ev.len() {
        if lanes[ev.lane[i] as usize].side == LaneSide::Device {
            // A device event's link, when set, is always its launching runtime call.
            let l = ev.link[i];
            ev.step[i] = if l != NONE {
                ev.step[l as usize]
            } else {
                last_started(ev.start[i])
            };
        }
    }
}
