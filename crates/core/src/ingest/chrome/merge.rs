//! Turns the parsed chunks of one document into one rank's columns: merged name and lane
//! tables (each distinct name decoded once), lanes told apart as device streams or host
//! threads, and events sorted by (lane, start, longest first) so each lane is a contiguous,
//! time-ordered range in which a parent precedes the children it contains.

use super::chunk::{Chunk, LaneDraft, Meta};
use super::lanes::{lane_name, lane_sides};
use super::raw::Id;
use crate::error::Error;
use crate::model::{Dropped, EventIx, Events, Interner, Lane, NO_STEP, RawSpan, Sym};
use crate::time::Ns;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// One document's events as a rank's columns, with what the dialect still needs: the link
/// ids, and where each chunk's events ended up (for its side tables).
pub(crate) struct Merged {
    /// The rank-local string table (names, lanes, unknown categories).
    pub strings: Interner,
    /// Lanes, indexed by `Events::lane`.
    pub lanes: Vec<Lane>,
    /// Events grouped by lane, sorted by start within a lane; links and steps unset.
    pub events: Events,
    /// Correlation id of each event (`NO_ID` when none).
    pub corr: Vec<u64>,
    /// External id of each event (`NO_ID` when none).
    pub ext: Vec<u64>,
    /// Events read but not stored.
    pub dropped: Dropped,
    /// Timed events of unknown categories, by category name (sorted; interned by the dialect's
    /// reader after its side tables, keeping the order names were always interned in).
    pub unknown_categories: Vec<(Vec<u8>, u64)>,
    /// Lossy names, clamped durations.
    pub warnings: Vec<String>,
    /// Per chunk, the final index of each of its events (only for chunks with side tables).
    pub final_index: Vec<Vec<u32>>,
    /// Where the profiler stopped recording (Kineto's `Record Window End`), on the events'
    /// time base.
    pub record_end: Option<Ns>,
}

/// Below this a `ts` is not on the Unix epoch scale (1e15 µs ≈ 2001) and the document's time
/// base applies: Kineto writes `ts` relative to `baseTimeNanoseconds` in some versions and
/// as Unix-epoch µs in others.
const EPOCH_SCALE_NS: Ns = 1_000_000_000_000_000_000;

/// Merges a document's chunks; `base` is added to timestamps below the epoch scale.
pub(crate) fn merge(label: &str, chunks: &[Chunk<'_>], base: Option<Ns>) -> Result<Merged, Error> {
    let (mut strings, name_maps, mut warnings) = merge_names(label, chunks);
    let (drafts, lane_maps) = merge_lanes(label, chunks)?;
    let (dropped, unknown, meta) = merge_counts(label, chunks, &mut warnings);
    let total: usize = chunks.iter().map(|c| c.cols.start.len()).sum();
    if total == 0 {
        return Err(Error::input_at(
            label,
            0,
            "no timed events (ph \"X\"): nothing to analyse",
        ));
    }
    let base_ns = base.unwrap_or(0);
    if base.is_some() {
        // Relative timestamps (below the epoch scale) get the base added.
        let overflow = chunks
            .iter()
            .flat_map(|c| c.cols.start.iter())
            .any(|&s| s < EPOCH_SCALE_NS && s.checked_add(base_ns).is_none());
        if overflow {
            return Err(Error::input(
                label,
                "`ts` + `baseTimeNanoseconds` overflows 64-bit nanoseconds",
            ));
        }
    }
    let sides = lane_sides(&drafts, &meta);
    let Sorted {
        events,
        corr,
        ext,
        ranges: lanes_range,
        final_index,
    } = sort_by_lane(chunks, &name_maps, &lane_maps, base_ns, drafts.len());
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
    let mut unknown_categories: Vec<(Vec<u8>, u64)> = unknown.into_iter().collect();
    unknown_categories.sort();
    let record_end = chunks.iter().filter_map(|c| c.record_end).max().map(|t| {
        if t < EPOCH_SCALE_NS {
            t.saturating_add(base_ns)
        } else {
            t
        }
    });
    Ok(Merged {
        strings,
        lanes,
        events,
        corr,
        ext,
        dropped,
        unknown_categories,
        warnings,
        final_index,
        record_end,
    })
}

/// Unknown categories with their names interned.
pub(crate) fn intern_categories(
    strings: &mut Interner,
    cats: Vec<(Vec<u8>, u64)>,
) -> Vec<(Sym, u64)> {
    cats.into_iter()
        .map(|(k, v)| (strings.intern(&String::from_utf8_lossy(&k)), v))
        .collect()
}

/// Names: chunk-local ids → rank ids, decoding each distinct name once. Names with invalid
/// UTF-8 are decoded lossily and counted once (a name recurs in many chunks), with the offset
/// of the first event carrying one.
fn merge_names(label: &str, chunks: &[Chunk<'_>]) -> (Interner, Vec<Vec<Sym>>, Vec<String>) {
    let mut strings = Interner::default();
    let mut warnings = Vec::new();
    let mut bad_utf8: rustc_hash::FxHashSet<&[u8]> = Default::default();
    let mut first_bad: Option<u64> = None;
    let mut name_maps: Vec<Vec<Sym>> = Vec::with_capacity(chunks.len());
    for c in chunks {
        let mut map = Vec::with_capacity(c.names.len());
        for (local, bytes) in c.names.iter().enumerate() {
            let text = match std::str::from_utf8(bytes) {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(_) => {
                    let at = first_offset_of_name(c, local as u32);
                    first_bad = Some(first_bad.map_or(at, |f| f.min(at)));
                    bad_utf8.insert(bytes);
                    String::from_utf8_lossy(bytes)
                }
            };
            map.push(strings.intern(&text));
        }
        name_maps.push(map);
    }
    if let Some(at) = first_bad {
        warnings.push(format!(
            "{label}: byte {at}: {} event name(s) with invalid UTF-8, shown with U+FFFD",
            bad_utf8.len()
        ));
    }
    (strings, name_maps, warnings)
}

/// Lanes: chunk-local lanes merged by (pid, tid), with their per-chunk id maps.
#[allow(clippy::type_complexity)]
fn merge_lanes(
    label: &str,
    chunks: &[Chunk<'_>],
) -> Result<(Vec<LaneDraft<'static>>, Vec<Vec<u32>>), Error> {
    let mut lane_index: FxHashMap<Id<'static>, FxHashMap<Id<'static>, u32>> = FxHashMap::default();
    let mut drafts: Vec<LaneDraft<'static>> = Vec::new();
    let mut lane_maps: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
    for c in chunks {
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
        return Err(Error::input(
            label,
            format!("{} lanes: more than 65535 threads/streams", drafts.len()),
        ));
    }
    Ok((drafts, lane_maps))
}

/// Dropped and unknown-category counts, clamped durations and metadata records of all chunks.
fn merge_counts(
    label: &str,
    chunks: &[Chunk<'_>],
    warnings: &mut Vec<String>,
) -> (Dropped, FxHashMap<Vec<u8>, u64>, Vec<Meta>) {
    let mut dropped = Dropped::default();
    let mut unknown: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
    let mut negative = (0u64, u64::MAX);
    let mut meta: Vec<Meta> = Vec::new();
    for c in chunks {
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
    (dropped, unknown, meta)
}

fn first_offset_of_name(c: &Chunk<'_>, local: u32) -> u64 {
    c.cols
        .name
        .iter()
        .position(|&n| n == local)
        .map(|i| c.cols.raw[i].offset)
        .unwrap_or(0)
}

/// An event's sort key: (lane, start, −duration, chunk, index in chunk). Compact keys (no
/// indirection into the columns) keep the sort cache-friendly; the last two fields say where
/// the event is.
type Key = (u32, Ns, Ns, u32, u32);

/// The events in their final order and what else their order fixes.
struct Sorted {
    events: Events,
    /// Correlation ids, per event.
    corr: Vec<u64>,
    /// External ids, per event.
    ext: Vec<u64>,
    /// (first event, count) per lane.
    ranges: Vec<(u32, u32)>,
    /// Per chunk with side tables: each of its events' final index.
    final_index: Vec<Vec<u32>>,
}

/// Sorts events by (lane, start, longest first) so that each lane is a contiguous, time-ordered
/// range and a parent precedes the children it contains. Columns are gathered straight from
/// the chunks (names and lanes remapped to rank ids on the way), so they are copied once.
fn sort_by_lane(
    chunks: &[Chunk<'_>],
    names: &[Vec<Sym>],
    lanes: &[Vec<u32>],
    base: Ns,
    n_lanes: usize,
) -> Sorted {
    let shifted = |s: Ns| if s < EPOCH_SCALE_NS { s + base } else { s };
    let mut keys: Vec<Key> = chunks
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
    let (events, corr, ext) = gather_columns(chunks, names, &keys);
    let (ranges, final_index) = positions(chunks, &keys, n_lanes);
    Sorted {
        events,
        corr,
        ext,
        ranges,
        final_index,
    }
}

/// The columns in key order, gathered in parallel (one column per task).
fn gather_columns(
    chunks: &[Chunk<'_>],
    names: &[Vec<Sym>],
    keys: &[Key],
) -> (Events, Vec<u64>, Vec<u64>) {
    fn gather<T: Copy + Send + Sync>(keys: &[Key], f: impl Fn(usize, usize) -> T + Sync) -> Vec<T> {
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
                        || gather(keys, |k, i| names[k][col(k).name[i] as usize]),
                        || keys.par_iter().map(|k| k.0 as u16).collect(),
                    )
                },
                || {
                    rayon::join(
                        || {
                            rayon::join(
                                || gather(keys, |k, i| col(k).kind[i]),
                                || gather::<RawSpan>(keys, |k, i| col(k).raw[i]),
                            )
                        },
                        || {
                            rayon::join(
                                || gather(keys, |k, i| col(k).corr[i]),
                                || gather(keys, |k, i| col(k).ext[i]),
                            )
                        },
                    )
                },
            )
        },
    );
    let n = keys.len();
    let events = Events {
        start,
        dur,
        name,
        lane,
        kind,
        step: vec![NO_STEP; n],
        link: vec![EventIx::NONE; n],
        op: vec![EventIx::NONE; n],
        raw,
    };
    (events, corr, ext)
}

/// Each lane's (first event, count), and the final index of the events of chunks with side
/// tables (collective metadata, shapes).
fn positions(
    chunks: &[Chunk<'_>],
    keys: &[Key],
    n_lanes: usize,
) -> (Vec<(u32, u32)>, Vec<Vec<u32>>) {
    let mut ranges = vec![(0u32, 0u32); n_lanes];
    let mut final_index: Vec<Vec<u32>> = chunks
        .iter()
        .map(|c| {
            if c.coll.is_empty() && c.shapes.is_empty() {
                Vec::new()
            } else {
                vec![u32::MAX; c.cols.start.len()]
            }
        })
        .collect();
    for (i, k) in keys.iter().enumerate() {
        let r = &mut ranges[k.0 as usize];
        if r.1 == 0 {
            r.0 = i as u32;
        }
        r.1 += 1;
        if let Some(slot) = final_index[k.3 as usize].get_mut(k.4 as usize) {
            *slot = i as u32;
        }
    }
    (ranges, final_index)
}
