//! The `cluster` and `communication` sections of the report (issue 3), and the tables the
//! text and markdown renderers print for them (one table model, two renderers).

use super::table::{Table, bytes, gbps, join, pct};
use crate::analysis::Analysis;
use crate::analysis::cluster::{Imbalance, SlowStep, Stage, Straggler};
use crate::analysis::comm::align::{Align, Offset};
use crate::analysis::comm::calls::GroupSource;
use crate::analysis::comm::links::Topology;
use crate::analysis::comm::matching::Mismatch;
use crate::analysis::comm::stats::{P2pCell, SlowLink, TypeStats, WorstInstance};
use crate::time::human;
use serde::Serialize;

/// Stragglers listed per group in JSON (text shows fewer).
pub const JSON_STRAGGLERS: usize = 20;

/// `cluster`: clock offsets, slow steps, stragglers, imbalance, pipeline stages.
#[derive(Debug, Serialize)]
pub struct ClusterSection {
    /// `collective` or `none`.
    pub align: Align,
    /// Per rank: the offset added to its clock.
    pub offsets_ns: Vec<Offset>,
    /// Steps over the slow-step threshold, with culprits.
    pub slow_steps: Vec<SlowStep>,
    /// Ranks the others waited for, per group, most imposed wait first.
    pub stragglers: Vec<Straggler>,
    /// Spread of each breakdown part over each group's ranks.
    pub imbalance: Vec<Imbalance>,
    /// Pipeline stages, when send/recv traffic shows them.
    pub stages: Option<Vec<Stage>>,
}

/// A communication domain.
#[derive(Debug, Serialize)]
pub struct GroupInfo {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// `declared`, `args` or `world`.
    pub source: GroupSource,
    /// Member ranks.
    pub ranks: Vec<u32>,
    /// Members not loaded.
    pub missing_ranks: Vec<u32>,
    /// Calls over all ranks.
    pub calls: u64,
    /// Matched instances.
    pub instances: u64,
}

/// A per-rank count.
#[derive(Debug, Serialize)]
pub struct RankCount {
    /// Rank id.
    pub rank: u32,
    /// Count.
    pub calls: u64,
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
    /// Steps of groups whose calls could not be matched.
    pub mismatches: Vec<Mismatch>,
    /// Point-to-point calls without a known peer or partner.
    pub unpaired_p2p: Vec<RankCount>,
    /// gloo enqueue ops without a transfer of the same size.
    pub unpaired_enqueues: Vec<RankCount>,
}

/// Builds both sections.
pub fn build(a: &Analysis) -> (ClusterSection, CommSection) {
    let c = &a.comm;
    let mut stragglers: Vec<&Straggler> = Vec::new();
    for s in &a.stragglers {
        let n = stragglers.iter().filter(|x| x.group == s.group).count();
        if n < JSON_STRAGGLERS {
            stragglers.push(s);
        }
    }
    let missing = |name: &str| {
        c.matching
            .missing_members
            .iter()
            .find(|m| m.0 == name)
            .map(|m| m.1.clone())
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
    let counts = |v: &[(u32, u64)]| {
        v.iter()
            .map(|&(rank, calls)| RankCount { rank, calls })
            .collect()
    };
    (
        ClusterSection {
            align: c.align,
            offsets_ns: c.offsets.clone(),
            slow_steps: a.slow_steps.clone(),
            stragglers: stragglers.into_iter().cloned().collect(),
            imbalance: a.imbalance.clone(),
            stages: a.stages.clone(),
        },
        CommSection {
            topology: c.topology.clone(),
            groups,
            types: c.types.clone(),
            worst_instances: c.worst.clone(),
            p2p_matrix: c.p2p.clone(),
            slow_links: c.slow_links.clone(),
            mismatches: c.matching.mismatches.clone(),
            unpaired_p2p: counts(&c.matching.unpaired_p2p),
            unpaired_enqueues: counts(&c.calls.unpaired_enqueues),
        },
    )
}

/// The tables of the cluster and communication sections, in reading order; empty ones are
/// left out.
pub fn tables(cl: &ClusterSection, cm: &CommSection) -> Vec<Table> {
    let mut out = Vec::new();
    if let Some(s) = cl.slow_steps.first() {
        out.push(Table {
            title: format!(
                "Slow steps (cluster step time > {} = median {} + max(3 x 1.4826 x MAD, 5%))",
                human(s.threshold_ns),
                human(s.median_ns)
            ),
            header: vec!["step", "time", "vs median", "culprit"],
            rows: cl
                .slow_steps
                .iter()
                .map(|s| {
                    vec![
                        s.step.to_string(),
                        human(s.time_ns),
                        format!("+{}", human(s.time_ns - s.median_ns)),
                        s.culprit_rank.map_or("-".into(), |r| r.to_string()),
                    ]
                })
                .collect(),
            notes: cl
                .slow_steps
                .iter()
                .map(|s| format!("step {}: {}", s.step, s.reason))
                .collect(),
        });
    }
    if !cl.stragglers.is_empty() {
        let mut t = Table {
            title: "Stragglers (ranks the others waited for, per group)".into(),
            header: vec!["<group", "rank", "last", "imposed wait", "share", "<flag"],
            ..Default::default()
        };
        let mut shown: Vec<&Straggler> = Vec::new();
        for s in &cl.stragglers {
            if shown.iter().filter(|x| x.group == s.group).count() < 5 {
                shown.push(s);
            }
        }
        for s in &shown {
            t.rows.push(vec![
                s.group.clone(),
                s.rank.to_string(),
                format!("{}/{}", s.last_arrivals, s.instances),
                human(s.imposed_wait_ns),
                pct(s.share),
                if s.flagged {
                    "straggler".into()
                } else {
                    String::new()
                },
            ]);
        }
        t.notes = shown
            .iter()
            .filter(|s| s.flagged)
            .map(|s| format!("rank {} ({}): {}", s.rank, s.group, s.evidence))
            .collect();
        out.push(t);
    }
    let flagged: Vec<&Imbalance> = cl.imbalance.iter().filter(|i| i.flagged).collect();
    if !flagged.is_empty() {
        out.push(Table {
            title: "Imbalance (part spread over a group > 5% of the mean span)".into(),
            header: vec!["<group", "<part", "max (rank)", "min (rank)", "spread"],
            rows: flagged
                .iter()
                .map(|i| {
                    vec![
                        i.group.clone(),
                        i.part.to_string(),
                        format!("{} ({})", human(i.max_ns), i.max_rank),
                        format!("{} ({})", human(i.min_ns), i.min_rank),
                        pct(i.spread),
                    ]
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    if let Some(stages) = &cl.stages {
        out.push(Table {
            title: "Pipeline stages".into(),
            header: vec![
                "stage",
                "<ranks",
                "compute",
                "recv wait/step",
                "vs mean",
                "<flag",
            ],
            rows: stages
                .iter()
                .map(|s| {
                    vec![
                        s.stage.to_string(),
                        join(&s.ranks),
                        human(s.compute_ns),
                        human(s.recv_wait_ns),
                        format!("{:+.0}%", s.excess * 100.0),
                        if s.flagged {
                            "imbalanced".into()
                        } else {
                            String::new()
                        },
                    ]
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    if !cm.types.is_empty() {
        let mut t = Table {
            title: "Communication (per type and group; wait% = wait / (wait + transit))".into(),
            header: vec![
                "<type", "<group", "ranks", "inst", "exposed", "of step", "wait%", "busbw",
                "of peak", "<size",
            ],
            ..Default::default()
        };
        for s in &cm.types {
            t.rows.push(vec![
                s.op.as_str().to_string(),
                s.group.clone(),
                s.group_size.to_string(),
                s.instances.to_string(),
                human(s.exposed_ns),
                pct(s.share_of_step),
                s.wait_ratio.map_or("-".into(), pct),
                s.busbw_gbps.map_or("-".into(), gbps),
                s.busbw_of_peak.map_or("-".into(), pct),
                s.bytes.as_ref().map_or("-".into(), |b| bytes(b.median)),
            ]);
            let name = format!("{} in group {}", s.op.as_str(), s.group);
            if s.wait_dominated {
                t.notes.push(format!(
                    "{name}: wait-dominated ({} waiting): the cause is upstream, a straggler, not the network",
                    s.wait_ratio.map_or("-".into(), pct)
                ));
            }
            if s.small_flag {
                t.notes.push(format!(
                    "{name}: {} of {} calls under {} (small messages)",
                    s.small_calls,
                    s.calls,
                    bytes(s.small_threshold)
                ));
            }
            if s.misaligned_calls > 0 {
                t.notes.push(format!(
                    "{name}: {} call(s) not a multiple of 512 B",
                    s.misaligned_calls
                ));
            }
        }
        out.push(t);
    }
    if !cm.worst_instances.is_empty() {
        out.push(Table {
            title: "Worst collective instances (by total wait)".into(),
            header: vec![
                "<type", "<group", "step", "#", "skew", "last", "wait", "transit", "busbw",
            ],
            rows: cm
                .worst_instances
                .iter()
                .map(|w| {
                    vec![
                        w.op.as_str().to_string(),
                        w.group.clone(),
                        w.step.map_or("-".into(), |s| s.to_string()),
                        w.index.to_string(),
                        human(w.timing.skew_ns),
                        w.timing.last_arriver.to_string(),
                        human(w.timing.wait_ns),
                        human(w.timing.transit_ns),
                        w.timing.busbw_gbps.map_or("-".into(), gbps),
                    ]
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    if !cm.p2p_matrix.is_empty() {
        out.push(Table {
            title: "Point-to-point traffic".into(),
            header: vec!["src", "dst", "transfers", "bytes", "time", "GB/s"],
            rows: cm
                .p2p_matrix
                .iter()
                .map(|p| {
                    vec![
                        p.src.to_string(),
                        p.dst.to_string(),
                        p.transfers.to_string(),
                        bytes(p.bytes),
                        human(p.time_ns),
                        p.gbps.map_or("-".into(), |g| format!("{g:.1}")),
                    ]
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    if !cm.slow_links.is_empty() {
        out.push(Table {
            title: "Slow links (transit z > 3 or > 1.5x the group median)".into(),
            header: vec!["<group", "rank", "transit", "median", "z", "busbw"],
            rows: cm
                .slow_links
                .iter()
                .map(|s| {
                    vec![
                        s.group.clone(),
                        s.rank.to_string(),
                        human(s.transit_ns),
                        human(s.group_median_ns),
                        format!("{:.1}", s.z),
                        s.busbw_gbps.map_or("-".into(), gbps),
                    ]
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    let mut notes = Vec::new();
    let offs: Vec<&Offset> = cl.offsets_ns.iter().filter(|o| o.offset_ns != 0).collect();
    if cl.align == Align::Collective && cl.offsets_ns.len() > 1 {
        let max = cl
            .offsets_ns
            .iter()
            .map(|o| o.offset_ns.abs())
            .max()
            .unwrap_or(0);
        let unaligned: Vec<u32> = cl
            .offsets_ns
            .iter()
            .filter(|o| o.via.is_none())
            .map(|o| o.rank)
            .collect();
        notes.push(format!(
            "clocks aligned on collective ends: {} rank(s) shifted, largest offset {}{}",
            offs.len(),
            human(max),
            if unaligned.is_empty() {
                String::new()
            } else {
                format!(
                    "; no shared collective, left unshifted: ranks {}",
                    join(&unaligned)
                )
            }
        ));
    }
    for g in cm.groups.iter().filter(|g| !g.missing_ranks.is_empty()) {
        let present = g.ranks.len() - g.missing_ranks.len();
        notes.push(format!(
            "group {}: {} of {} member rank(s) not loaded; {}",
            g.name,
            g.missing_ranks.len(),
            g.ranks.len(),
            if present < 2 {
                "nothing to match its calls with".to_string()
            } else {
                format!("instances cover the {present} present")
            }
        ));
    }
    for m in &cm.mismatches {
        let calls: Vec<String> = m.calls.iter().map(|(r, n)| format!("r{r}:{n}")).collect();
        notes.push(format!(
            "group {} step {}: {} ({}): not matched",
            m.group,
            m.step.map_or("-".into(), |s| s.to_string()),
            m.reason,
            calls.join(" ")
        ));
    }
    let total = |v: &[RankCount]| v.iter().map(|r| r.calls).sum::<u64>();
    if !cm.unpaired_p2p.is_empty() {
        notes.push(format!(
            "{} point-to-point call(s) on {} rank(s) without a known peer or partner: not matched",
            total(&cm.unpaired_p2p),
            cm.unpaired_p2p.len()
        ));
    }
    if !cm.unpaired_enqueues.is_empty() {
        notes.push(format!(
            "{} c10d enqueue op(s) without a gloo transfer of the same size",
            total(&cm.unpaired_enqueues)
        ));
    }
    let relevant = !cm.groups.is_empty() || !cl.slow_steps.is_empty();
    if relevant && !notes.is_empty() {
        out.push(Table {
            title: "Matching and alignment".into(),
            notes,
            ..Default::default()
        });
    }
    out
}
