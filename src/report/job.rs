//! The report's `job` section: what was loaded — ranks, devices, process groups, steps, event
//! counts, inputs, and what the user must know about how it was read.

use crate::analysis::Analysis;
use crate::model::{Job, Kind, RankFrom, RankId, StepNo};
use crate::session::Loaded;
use serde::Serialize;
use std::collections::BTreeMap;

/// What was loaded.
#[derive(Debug, Serialize)]
pub struct JobInfo {
    /// Number of ranks loaded.
    pub ranks: usize,
    /// Their ids, ascending.
    pub rank_ids: Vec<RankId>,
    /// `world_size` as the traces state it.
    pub world_size: Option<u32>,
    /// Device models and how many ranks report each.
    pub devices: Vec<DeviceRow>,
    /// Process groups from `distributedInfo.pg_config`, by name.
    pub process_groups: Vec<GroupRow>,
    /// Step numbers seen on any rank, ascending (`[0]` for a trace without step markers).
    pub steps: Vec<StepNo>,
    /// Timed events stored, by kind (every kind present, zeros included).
    pub events: BTreeMap<&'static str, u64>,
    /// Events read but not stored, by reason.
    pub dropped: BTreeMap<&'static str, u64>,
    /// Communication kernels with collective metadata (newer PyTorch), by `Collective name`.
    pub collectives: BTreeMap<String, u64>,
    /// Timed events of categories stepscope does not know, by category.
    pub unknown_categories: BTreeMap<String, u64>,
    /// Each rank's input.
    pub sources: Vec<SourceRow>,
    /// How the job was read (guessed ranks, missing steps).
    pub notes: Vec<String>,
    /// Problems with inputs that loaded (lossy names, clamped durations).
    pub warnings: Vec<String>,
}

/// A process group.
#[derive(Debug, Serialize)]
pub struct GroupRow {
    /// The group's name (`pg_name`).
    pub name: String,
    /// Its description (`pg_desc`).
    pub description: String,
    /// Number of ranks.
    pub size: usize,
    /// Global ranks.
    pub ranks: Vec<RankId>,
}

/// A device model and how many ranks report it.
#[derive(Debug, Serialize)]
pub struct DeviceRow {
    /// The device name the traces report.
    pub name: String,
    /// Ranks reporting this device.
    pub ranks: u32,
}

/// One rank's input.
#[derive(Debug, Serialize)]
pub struct SourceRow {
    /// Rank id.
    pub rank: RankId,
    /// The input path as given.
    pub path: String,
    /// `distributed_info`, `nccl_init`, `file_name` or `discovery_order`.
    pub rank_from: &'static str,
    /// Size on disk (compressed size for gzip).
    pub file_bytes: u64,
    /// JSON bytes parsed.
    pub json_bytes: u64,
    /// Timed events stored.
    pub events: u64,
}

/// The `job` section.
pub fn job_info(loaded: &Loaded, a: &Analysis) -> JobInfo {
    let job: &Job = &loaded.job;
    let mut dropped = crate::model::Dropped::default();
    let mut unknown: BTreeMap<String, u64> = BTreeMap::new();
    let mut devices: BTreeMap<String, u32> = BTreeMap::new();
    for r in &job.ranks {
        dropped.add(&r.dropped);
        for (c, n) in &r.unknown_categories {
            *unknown
                .entry(job.strings.resolve(*c).to_string())
                .or_default() += n;
        }
        let mut names: Vec<&str> = r.devices.iter().map(|d| job.strings.resolve(*d)).collect();
        names.sort_unstable();
        names.dedup();
        for n in names {
            *devices.entry(n.to_string()).or_default() += 1;
        }
    }
    JobInfo {
        ranks: job.ranks.len(),
        rank_ids: job.ranks.iter().map(|r| r.id).collect(),
        world_size: job.world_size,
        devices: devices
            .into_iter()
            .map(|(name, ranks)| DeviceRow { name, ranks })
            .collect(),
        collectives: a
            .collectives
            .iter()
            .map(|c| (job.strings.resolve(c.name).to_string(), c.count))
            .collect(),
        process_groups: job
            .groups
            .iter()
            .map(|g| GroupRow {
                name: g.name.clone(),
                description: g.description.clone(),
                size: g.ranks.len(),
                ranks: g.ranks.clone(),
            })
            .collect(),
        steps: job.steps.clone(),
        events: Kind::ALL
            .iter()
            .zip(a.events_per_kind)
            .map(|(k, n)| (k.as_str(), n))
            .collect(),
        dropped: BTreeMap::from([
            ("python_function", dropped.python_function),
            ("flow", dropped.flow),
            ("instant", dropped.instant),
            ("metadata", dropped.metadata),
            ("other_phase", dropped.other_phase),
            ("derived", dropped.derived),
        ]),
        unknown_categories: unknown,
        sources: job
            .ranks
            .iter()
            .map(|r| SourceRow {
                rank: r.id,
                path: r.source.path.clone(),
                rank_from: match r.source.rank_from {
                    RankFrom::DistributedInfo => "distributed_info",
                    RankFrom::NcclInit => "nccl_init",
                    RankFrom::FileName => "file_name",
                    RankFrom::DiscoveryOrder => "discovery_order",
                },
                file_bytes: r.source.file_bytes,
                json_bytes: r.source.json_bytes,
                events: r.events.len() as u64,
            })
            .collect(),
        notes: job.notes.clone(),
        warnings: loaded.warnings.clone(),
    }
}
