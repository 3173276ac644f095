//! The tables the text and markdown reports print for the cluster and communication
//! sections, one function per table, in reading order (one table model, two renderers).

use super::cluster::{ClusterSection, CommSection};
use super::json::StragglerRow;
use super::table::Table;
use crate::analysis::cluster::Imbalance;
use crate::analysis::comm::RankCount;
use crate::analysis::comm::align::{Align, Offset};
use crate::analysis::comm::hccl_split;
use crate::analysis::comm::stalls::STALL_RATIO;
use crate::analysis::comm::stats::WORST;
use crate::format::{bytes, gbps, human, join, pct};
use crate::model::RankId;

/// Every table of both sections, in reading order; empty ones are left out.
pub fn tables(cl: &ClusterSection, cm: &CommSection) -> Vec<Table> {
    let mut out = Vec::new();
    out.extend(super::layout_tables::layout(cl));
    out.extend(super::layout_tables::group_health(cl));
    out.extend(slow_steps(cl));
    out.extend(stragglers(cl));
    out.extend(imbalance(cl));
    out.extend(stages(cl));
    out.extend(comm_types(cm));
    out.extend(worst_instances(cm));
    out.extend(p2p(cm));
    out.extend(slow_links(cm));
    out.extend(stalls(cm));
    let notes = matching_notes(cl, cm);
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

/// A rank with its position in the layout when there is one (`3 dp3`).
fn at(cl: &ClusterSection, r: RankId) -> String {
    match cl.layout.as_ref().map(|l| l.label(r)) {
        Some(p) if !p.is_empty() => format!("{r} {p}"),
        _ => r.to_string(),
    }
}

/// The parallel layout: one row per axis, outermost first.
fn slow_steps(cl: &ClusterSection) -> Option<Table> {
    let s = &cl.slow_steps.first()?.step;
    Some(Table {
        title: format!(
            "Slow steps (cluster step time > {} = median {} + max(3 x 1.4826 x MAD, 5%))",
            human(s.threshold_ns),
            human(s.median_ns)
        ),
        header: vec!["step", "time", "vs median", "culprit"],
        rows: cl
            .slow_steps
            .iter()
            .map(|r| {
                let s = &r.step;
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
            .map(|r| format!("step {}: {}", r.step.step, r.reason))
            .collect(),
    })
}

fn stragglers(cl: &ClusterSection) -> Option<Table> {
    if cl.stragglers.is_empty() {
        return None;
    }
    let mut t = Table {
        title: "Stragglers (ranks the others waited for, per group)".into(),
        header: vec![
            "<group",
            "rank",
            "<position",
            "last",
            "imposed wait",
            "share",
            "<flag",
        ],
        ..Default::default()
    };
    let mut shown: Vec<&StragglerRow> = Vec::new();
    for s in &cl.stragglers {
        let group = &s.straggler.group;
        if shown.iter().filter(|x| &x.straggler.group == group).count() < 5 {
            shown.push(s);
        }
    }
    for r in &shown {
        let s = &r.straggler;
        t.rows.push(vec![
            s.group.clone(),
            s.rank.to_string(),
            r.position.clone().unwrap_or_default(),
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
        .filter(|r| r.straggler.flagged)
        .map(|r| {
            let s = &r.straggler;
            format!("rank {} ({}): {}", s.rank, s.group, r.evidence)
        })
        .collect();
    Some(t)
}

fn imbalance(cl: &ClusterSection) -> Option<Table> {
    let flagged: Vec<&Imbalance> = cl.imbalance.iter().filter(|i| i.flagged).collect();
    if flagged.is_empty() {
        return None;
    }
    Some(Table {
        title: "Imbalance (part spread over a group > 5% of the mean span)".into(),
        header: vec!["<group", "<part", "max (rank)", "min (rank)", "spread"],
        rows: flagged
            .iter()
            .map(|i| {
                vec![
                    i.group.clone(),
                    i.part.as_str().to_string(),
                    format!("{} ({})", human(i.max_ns), at(cl, i.max_rank)),
                    format!("{} ({})", human(i.min_ns), at(cl, i.min_rank)),
                    pct(i.spread),
                ]
            })
            .collect(),
        notes: Vec::new(),
    })
}

fn stages(cl: &ClusterSection) -> Option<Table> {
    let stages = cl.stages.as_ref()?;
    Some(Table {
        title: "Pipeline stages".into(),
        header: vec![
            "stage",
            "<ranks",
            "compute",
            "recv wait/step Σ",
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
        notes: stage_notes(stages),
    })
}

/// Stage against worker (M_S vs M_W): where the stages come from, the operators that make
/// the flagged stage heavier, and each stage's slowest worker against its peers.
fn stage_notes(stages: &[crate::analysis::cluster::Stage]) -> Vec<String> {
    use crate::analysis::cluster::StagesFrom;
    let mut out = Vec::new();
    if stages.first().is_some_and(|s| s.from == StagesFrom::Layout) {
        out.push(
            "stages from the layout's pipeline axis (the send/recv do not say who sent)".into(),
        );
    }
    for s in stages.iter().filter(|s| !s.heavier_ops.is_empty()) {
        let ops: Vec<String> = s
            .heavier_ops
            .iter()
            .map(|o| format!("{} {} vs {}", o.name, human(o.stage_ns), human(o.others_ns)))
            .collect();
        out.push(format!(
            "stage {} is heavier by (per rank and step, vs the other stages): {}",
            s.stage,
            ops.join("; ")
        ));
    }
    for s in stages {
        let Some(w) = s
            .workers
            .iter()
            .max_by_key(|w| (w.excess_ns, std::cmp::Reverse(w.rank)))
        else {
            continue;
        };
        if s.workers.len() > 1 {
            out.push(format!(
                "stage {}: slowest worker rank {} computes {} per step, {} over its stage's median",
                s.stage,
                w.rank,
                human(w.compute_ns),
                human(w.excess_ns)
            ));
        }
    }
    out
}

fn comm_types(cm: &CommSection) -> Option<Table> {
    if cm.types.is_empty() {
        return None;
    }
    let mut t = Table {
        title: "Communication (per type and group; wait% = wait / (wait + transit))".into(),
        header: vec![
            "<type", "<group", "ranks", "inst", "exposed", "of step", "wait%", "busbw", "of peak",
            "<size",
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
            match s.waiting() {
                (Some(w), true) => format!("{}*", pct(w)),
                (w, _) => w.map_or("-".into(), pct),
            },
            s.busbw_gbps.map_or("-".into(), gbps),
            s.busbw_of_peak.map_or("-".into(), pct),
            s.bytes.as_ref().map_or("-".into(), |b| bytes(b.median)),
        ]);
        let name = format!("{} in group {}", s.op.as_str(), s.group);
        if s.wait_dominated {
            t.notes.push(format!(
                "{name}: wait-dominated ({} waiting): the cause is upstream, a straggler, not the network",
                s.waiting_ratio.map_or("-".into(), pct)
            ));
        }
        let starred = s.waiting().1;
        if let Some(h) = s.hccl.filter(|h| {
            starred || (h.not_transfer - s.wait_ratio.unwrap_or(0.0)).abs() > hccl_split::DISAGREE
        }) {
            t.notes.push(format!(
                "{name}: HCCL's own split{}: {} of {} moving data ({} not); across the loaded \
                 ranks {} waiting{}",
                if starred { " (the starred wait%)" } else { "" },
                human(h.transit_ns),
                human(h.elapse_ns),
                pct(h.not_transfer),
                s.wait_ratio.map_or("-".into(), pct),
                match s.unloaded_members {
                    0 => String::new(),
                    n =>
                        format!(" ({n} member(s) not loaded, whose lateness the skew cannot show)"),
                }
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
    Some(t)
}

fn worst_instances(cm: &CommSection) -> Option<Table> {
    if cm.worst_instances.is_empty() {
        return None;
    }
    Some(Table {
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
    })
}

fn p2p(cm: &CommSection) -> Option<Table> {
    if cm.p2p_matrix.is_empty() {
        return None;
    }
    Some(Table {
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
    })
}

fn slow_links(cm: &CommSection) -> Option<Table> {
    if cm.slow_links.is_empty() {
        return None;
    }
    Some(Table {
        title: "Slow links (transit z > 3 or > 1.5x the group's or the pairs' median)".into(),
        header: vec!["<group", "rank", "transit", "median", "z", "busbw"],
        rows: cm
            .slow_links
            .iter()
            .map(|s| {
                vec![
                    s.group.clone(),
                    match s.peer {
                        Some(p) => format!("{} <-> {p}", s.rank),
                        None => s.rank.to_string(),
                    },
                    human(s.transit_ns),
                    human(s.group_median_ns),
                    format!("{:.1}", s.z),
                    s.busbw_gbps.map_or("-".into(), gbps),
                ]
            })
            .collect(),
        notes: Vec::new(),
    })
}

fn stalls(cm: &CommSection) -> Option<Table> {
    if cm.stalls.is_empty() {
        return None;
    }
    Some(Table {
        title: format!(
            "Stalled transfers (every loaded rank present; transit >= {:.0}x what the size needs at the type's best busbw)",
            STALL_RATIO
        ),
        header: vec![
            "type",
            "<group",
            "step",
            "#",
            "size",
            "last",
            "transit",
            "expected",
            "best busbw",
        ],
        rows: cm
            .stalls
            .iter()
            .take(WORST)
            .map(|s| {
                vec![
                    s.op.as_str().to_string(),
                    s.group.clone(),
                    s.step.map_or("-".into(), |x| x.to_string()),
                    s.index.to_string(),
                    bytes(s.bytes),
                    s.last_arriver.to_string(),
                    human(s.transit_ns),
                    human(s.expected_ns),
                    gbps(s.reference_busbw_gbps),
                ]
            })
            .collect(),
        notes: Vec::new(),
    })
}

/// How clocks were aligned and what could not be matched.
fn matching_notes(cl: &ClusterSection, cm: &CommSection) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(alignment_note(cl));
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
        let calls: Vec<String> = m
            .mismatch
            .calls
            .iter()
            .map(|c| format!("r{}:{}", c.rank, c.calls))
            .collect();
        notes.push(format!(
            "group {} step {}: {} ({}): not matched",
            m.mismatch.group,
            m.mismatch.step.map_or("-".into(), |s| s.to_string()),
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
    notes
}

/// How many ranks were shifted, and by how much at most.
fn alignment_note(cl: &ClusterSection) -> Option<String> {
    if cl.align != Align::Collective || cl.offsets_ns.len() <= 1 {
        return None;
    }
    let offs: Vec<&Offset> = cl.offsets_ns.iter().filter(|o| o.offset_ns != 0).collect();
    let max = cl
        .offsets_ns
        .iter()
        .map(|o| o.offset_ns.abs())
        .max()
        .unwrap_or(0);
    let unaligned: Vec<RankId> = cl
        .offsets_ns
        .iter()
        .filter(|o| o.via.is_none())
        .map(|o| o.rank)
        .collect();
    Some(format!(
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
    ))
}
