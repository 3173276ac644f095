//! The `cluster` and `communication` sections of the report; their tables are in
//! the sibling module `cluster_tables`.

use super::json::{MismatchRow, SlowStepRow, StragglerRow};
use crate::analysis::Analysis;
use crate::analysis::cluster::{Imbalance, Stage};
use crate::analysis::comm::RankCount;
use crate::analysis::comm::align::{Align, Offset};
use crate::analysis::comm::calls::GroupSource;
use crate::analysis::comm::links::Topology;
use crate::analysis::comm::slow_links::SlowLink;
use crate::analysis::comm::stalls::Stall;
use crate::analysis::comm::stats::{P2pCell, TypeStats, WorstInstance};
use crate::analysis::layout::Layout;
use crate::model::RankId;
use serde::Serialize;

/// Stragglers listed per group in JSON (text shows fewer).
pub const JSON_STRAGGLERS: usize = 20;

/// `cluster`: clock offsets, slow steps, stragglers, imbalance, pipeline stages, layout.
#[derive(Debug, Serialize)]
pub struct ClusterSection {
    /// `collective` or `none`.
    pub align: Align,
    /// Per rank: the offset added to its clock.
    pub offsets_ns: Vec<Offset>,
    /// Steps over the slow-step threshold, with culprits.
    pub slow_steps: Vec<SlowStepRow>,
    /// Ranks the others waited for, per group, most imposed wait first.
    pub stragglers: Vec<StragglerRow>,
    /// Spread of each breakdown part over each group's ranks.
    pub imbalance: Vec<Imbalance>,
    /// Pipeline stages, when send/recv traffic shows them.
    pub stages: Option<Vec<Stage>>,
    /// The job's parallel layout, declared or inferred.
    pub layout: Option<Layout>,
    /// Each group's health, by the layout dimension it runs along.
    pub group_health: Vec<crate::analysis::layout::health::GroupHealth>,
}

/// A communication domain.
#[derive(Debug, Serialize)]
pub struct GroupInfo {
    /// The group's name (`Process Group Name`).
    pub name: String,
    /// Its description (`pg_desc`: `default_pg`, ...).
    pub description: String,
    /// `declared`, `args` or `world`.
    pub source: GroupSource,
    /// Member ranks.
    pub ranks: Vec<RankId>,
    /// Members not loaded.
    pub missing_ranks: Vec<RankId>,
    /// Calls over all ranks.
    pub calls: u64,
    /// Matched instances.
    pub instances: u64,
}

/// `communication`: per type/group stats, worst instances, p2p matrix, slow links, and what
/// could not be matched.
#[derive(Debug, Serialize)]
pub struct CommSection {
    /// Ranks per node and link peaks.
    pub topology: Topology,
    /// Domains with calls.
    pub groups: Vec<GroupInfo>,
    /// Per collective type and group.
    pub types: Vec<TypeStats>,
    /// Instances with the most waiting.
    pub worst_instances: Vec<WorstInstance>,
    /// Send/recv traffic.
    pub p2p_matrix: Vec<P2pCell>,
    /// Ranks with outlier transit.
    pub slow_links: Vec<SlowLink>,
    /// Transfers far slower than their type's best with every loaded rank present.
    pub stalls: Vec<Stall>,
    /// Steps of groups whose calls could not be matched.
    pub mismatches: Vec<MismatchRow>,
    /// Point-to-point calls without a known peer or partner.
    pub unpaired_p2p: Vec<RankCount>,
    /// gloo enqueue ops without a transfer of the same size.
    pub unpaired_enqueues: Vec<RankCount>,
}

/// Builds both sections.
pub fn build(a: &Analysis) -> (ClusterSection, CommSection) {
    let c = &a.comm;
    let mut stragglers: Vec<StragglerRow> = Vec::new();
    for s in &a.stragglers {
        let n = stragglers
            .iter()
            .filter(|x| x.straggler.group == s.group)
            .count();
        if n < JSON_STRAGGLERS {
            stragglers.push(StragglerRow::of(s, a.layout.as_ref()));
        }
    }
    let missing = |name: &str| {
        c.matching
            .missing_members
            .iter()
            .find(|m| m.group == name)
            .map(|m| m.ranks.clone())
            .unwrap_or_default()
    };
    let groups = c
        .calls
        .groups
        .iter()
        .enumerate()
        .filter_map(|(g, grp)| {
            let calls: u64 = c
                .calls
                .per_rank
                .iter()
                .map(|rc| rc.iter().filter(|x| x.group == g as u32).count() as u64)
                .sum();
            (calls > 0).then(|| GroupInfo {
                name: grp.name.clone(),
                description: grp.description.clone(),
                source: grp.source,
                ranks: grp.members.clone(),
                missing_ranks: missing(&grp.name),
                calls,
                instances: c
                    .matching
                    .instances
                    .iter()
                    .filter(|i| i.group == g as u32)
                    .count() as u64,
            })
        })
        .collect();
    (
        ClusterSection {
            align: c.align,
            offsets_ns: c.offsets.clone(),
            slow_steps: a.slow_steps.iter().map(SlowStepRow::of).collect(),
            stragglers,
            imbalance: a.imbalance.clone(),
            stages: a.stages.clone(),
            layout: a.layout.clone(),
            group_health: a.group_health.clone(),
        },
        CommSection {
            topology: c.topology.clone(),
            groups,
            types: c.types.clone(),
            worst_instances: c.worst.clone(),
            p2p_matrix: c.p2p.clone(),
            slow_links: c.slow_links.clone(),
            stalls: c.stalls.clone(),
            mismatches: c.matching.mismatches.iter().map(MismatchRow::of).collect(),
            unpaired_p2p: c.matching.unpaired_p2p.clone(),
            unpaired_enqueues: c.calls.unpaired_enqueues.clone(),
        },
    )
}
