//! Turns parsed chunks into a normalized [`Rank`]: merged name and lane tables, lanes told
//! apart as device streams or host threads, events sorted per lane, launch links by
//! correlation, operator links by External id, and step attribution (DESIGN §4).

use super::chunk::{Chunk, LaneDraft, Meta};
use super::lanes::{lane_name, lane_sides};
use super::link::link;
use super::parse::Parsed;
use super::raw::Id;
use super::steps::{assign_steps, find_steps};
use crate::error::InputError;
use crate::model::{
    Collective, Dropped, Events, Interner, Lane, NONE, OpShape, ProcessGroup, Rank, RawSpan,
    SourceInfo, Sym,
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
    /// `distributedInfo.pg_config`.
    pub groups: Vec<ProcessGroup>,
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
    // Distinct names with invalid UTF-8 (a name recurs in many chunks: count it once), and
    // the offset of the first event carrying one.
    let mut bad_utf8: rustc_hash::FxHashSet<&[u8]> = Default::default();
    let mut first_bad: Option<u64> = None;
    let mut name_maps: Vec<Vec<Sym>> = Vec::with_capacity(chunks.len());
    for c in &chunks {
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
    let (events, corr, ext, lanes_range, final_index) =
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
        collectives: Vec::new(),
        shapes: Vec::new(),
    };
    rank.collectives = collectives(&chunks, &final_index, &mut strings);
    rank.shapes = shapes(&chunks, &final_index, &mut strings);
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
        groups: dist.map(process_groups).unwrap_or_default(),
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
) -> (Events, Vec<u64>, Vec<u64>, Vec<(u32, u32)>, Vec<Vec<u32>>) {
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
    // Final index of each event, only for chunks with side tables (collective metadata).
    let mut final_index: Vec<Vec<u32>> = chunks
        .iter()
        .map(|c| {
            if c.coll.is_empty() && c.shapes.is_empty() {
                Vec::new()
            } else {
                vec![NONE; c.cols.start.len()]
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
    (events, corr, ext, ranges, final_index)
}

/// Collective metadata of the chunks, at final event indices, names interned.
fn collectives(
    chunks: &[Chunk<'_>],
    final_index: &[Vec<u32>],
    strings: &mut Interner,
) -> Vec<Collective> {
    let mut out = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        for (local, m) in &c.coll {
            let mut sym = |s: &Option<super::raw::Str<'_>>| {
                s.as_ref()
                    .map(|s| strings.intern(&String::from_utf8_lossy(&s.0)))
            };
            let input_type = m
                .input_type
                .and_then(first_input_type)
                .map(|t| super::raw::Str(t.into_bytes().into()));
            out.push(Collective {
                event: final_index[k][*local as usize],
                name: sym(&m.name),
                in_nelems: m
                    .in_nelems
                    .or_else(|| m.input_dims.and_then(first_input_elems)),
                out_nelems: m.out_nelems,
                dtype: sym(&m.dtype).or_else(|| sym(&input_type)),
                group: sym(&m.group),
                group_ranks: sym(&m.group_ranks),
                group_size: m.group_size,
                seq: m.seq,
                src_rank: m.src_rank,
                dst_rank: m.dst_rank,
            });
        }
    }
    out.sort_by_key(|c| c.event);
    out
}

/// Operator shapes of the chunks, at final event indices, texts interned.
fn shapes(chunks: &[Chunk<'_>], final_index: &[Vec<u32>], strings: &mut Interner) -> Vec<OpShape> {
    let mut out = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        for (local, m) in &c.shapes {
            let mut text =
                |b: Option<&[u8]>| b.map(|b| strings.intern(&String::from_utf8_lossy(b)));
            out.push(OpShape {
                event: final_index[k][*local as usize],
                dims: text(m.input_dims),
                types: text(m.input_type),
                flops: m.flops,
            });
        }
    }
    out.sort_by_key(|s| s.event);
    out
}

/// Elements of the first input in an `Input Dims` value: `[[8, 16], ...]` → 128; a tensor
/// list `[[[4], [6]], ...]` → 10. `None` when it is not such a list or overflows.
fn first_input_elems(dims: &[u8]) -> Option<u64> {
    use serde_json::Value;
    let product = |d: &Value| -> Option<u64> {
        d.as_array()?
            .iter()
            .try_fold(1u64, |p, n| p.checked_mul(n.as_u64()?))
    };
    let v: Value = serde_json::from_slice(dims).ok()?;
    let first = v.as_array()?.first()?;
    match first.as_array()?.first() {
        Some(Value::Array(_)) => first
            .as_array()?
            .iter()
            .try_fold(0u64, |s, t| s.checked_add(product(t)?)),
        _ => product(first),
    }
}

/// The first input's type in an `Input type` value (`["float", ""]` → `float`), unless it is
/// not a tensor element type (`TensorList`, `Scalar`, empty).
fn first_input_type(types: &[u8]) -> Option<String> {
    let v: Vec<serde_json::Value> = serde_json::from_slice(types).ok()?;
    let t = v.first()?.as_str()?;
    (!t.is_empty() && t != "TensorList" && t != "Scalar").then(|| t.to_string())
}

/// `pg_config` entries; entries without a name or with non-integer ranks are left out.
fn process_groups(dist: &serde_json::Value) -> Vec<ProcessGroup> {
    let Some(list) = dist.get("pg_config").and_then(|v| v.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|pg| {
            let name = match pg.get("pg_name")? {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let ranks = pg
                .get("ranks")?
                .as_array()?
                .iter()
                .map(|r| r.as_u64().and_then(|r| u32::try_from(r).ok()))
                .collect::<Option<Vec<u32>>>()?;
            let description = pg
                .get("pg_desc")
                .and_then(|d| d.as_str())
                .unwrap_or("")
                .to_string();
            Some(ProcessGroup {
                name,
                description,
                ranks,
            })
        })
        .collect()
}
