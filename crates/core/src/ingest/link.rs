//! Links between events: launch links by correlation id (Kineto's `correlation`, Ascend's
//! `connection_id`) and operator links by External id. Format-neutral: each reader hands
//! over the ids its events carry.

use crate::ingest::chrome::chunk::NO_ID;
use crate::model::{EventIx, Kind, LaneSide, Rank};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Launch links by correlation (runtime call ↔ device activity) and operator links by
/// External id (runtime call / device activity → `cpu_op`). An External id shared by several
/// operators is ambiguous and links nothing.
pub(super) fn link(rank: &mut Rank, corr: &[u64], ext: &[u64]) {
    const NONE: u32 = u32::MAX;
    const AMBIGUOUS: u32 = NONE - 1;
    let ev = &rank.events;
    let lanes = &rank.lanes;
    // Entries are collected in parallel; the (ordered) collect keeps "last wins" exact.
    let (launch_ids, op_ids) = rayon::join(
        || {
            (0..ev.len())
                .into_par_iter()
                .filter(|&i| {
                    ev.kind[i] == Kind::Launch
                        && corr[i] != NO_ID
                        && lanes[ev.lane[i] as usize].side == LaneSide::Cpu
                })
                .map(|i| (corr[i], i as u32))
                .collect()
        },
        || {
            (0..ev.len())
                .into_par_iter()
                .filter(|&i| ev.kind[i] == Kind::HostOp && ext[i] != NO_ID)
                .map(|i| (ext[i], i as u32))
                .collect()
        },
    );
    let (launches, ops) = rayon::join(
        || IdTable::build(launch_ids, None),
        || IdTable::build(op_ids, Some(AMBIGUOUS)),
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
        ev.op[i] = EventIx(op);
        if launch != NONE {
            ev.link[i] = EventIx(launch);
            if ev.link[launch as usize].is_none() {
                ev.link[launch as usize] = EventIx::of(i);
            }
        }
    }
}

/// id → event index (`u32::MAX`: none). Profiler ids (correlation, External id) are mostly dense counters, so
/// a direct-address table is used when the id range is small; otherwise a hash map.
enum IdTable {
    Dense { min: u64, slots: Vec<u32> },
    Sparse(FxHashMap<u64, u32>),
}

impl IdTable {
    /// Builds the table; with `dup = Some(marker)` an id seen twice maps to `marker`, else the
    /// last occurrence wins.
    fn build(entries: Vec<(u64, u32)>, dup: Option<u32>) -> IdTable {
        let (lo, hi) = entries
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &(id, _)| (lo.min(id), hi.max(id)));
        let put = |slot: &mut u32, v: u32| {
            *slot = match dup {
                Some(marker) if *slot != u32::MAX => marker,
                _ => v,
            }
        };
        if !entries.is_empty() && hi - lo < 4 * entries.len() as u64 + 1024 {
            let mut slots = vec![u32::MAX; (hi - lo + 1) as usize];
            for &(id, v) in &entries {
                put(&mut slots[(id - lo) as usize], v);
            }
            IdTable::Dense { min: lo, slots }
        } else {
            let mut map = FxHashMap::with_capacity_and_hasher(entries.len(), Default::default());
            for &(id, v) in &entries {
                put(map.entry(id).or_insert(u32::MAX), v);
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
                .unwrap_or(u32::MAX),
            IdTable::Sparse(m) => m.get(&id).copied().unwrap_or(u32::MAX),
        }
    }
}
