//! The layout in the report: its axes and the health of each group along them (docs/metrics.md
//! "Layout" and "Group health").

use super::cluster::ClusterSection;
use super::table::Table;
use crate::analysis::layout::Source;
use crate::format::human;

/// Groups the text report lists (JSON has all).
const HEALTH_ROWS: usize = 12;

/// The axes, with where each comes from.
pub fn layout(cl: &ClusterSection) -> Option<Table> {
    let l = cl.layout.as_ref()?;
    let source = |s: Source| match s {
        Source::DeclaredSize => "declared size (distributed_args)",
        Source::DeclaredGroup => "declared group name",
        Source::InferredStages => "inferred: pipeline stages (send/recv)",
        Source::InferredGroups => "inferred: collective groups",
        Source::InferredRest => "inferred: the rest of the world",
    };
    let mut notes = Vec::new();
    if !l.tiles {
        notes.push(format!(
            "the axes do not place every one of the {} ranks once: positions are approximate",
            l.world
        ));
    }
    Some(Table {
        title: format!("Parallel layout: {} ({} ranks)", l.shape(), l.world),
        header: vec!["<axis", "size", "stride", "<from"],
        rows: l
            .axes
            .iter()
            .map(|a| {
                vec![
                    a.dim.as_str().to_string(),
                    a.size.to_string(),
                    a.stride.to_string(),
                    source(a.source).to_string(),
                ]
            })
            .collect(),
        notes,
    })
}

/// Each group's waiting, exposed communication, skew and slowest member, by dimension.
pub fn group_health(cl: &ClusterSection) -> Option<Table> {
    if cl.group_health.is_empty() {
        return None;
    }
    let mut t = Table {
        title: "Group health (per group over the steps shown; busiest first)".into(),
        header: vec![
            "<group",
            "<dim",
            "ranks",
            "inst",
            "wait",
            "exposed",
            "skew/inst",
            "<last most",
        ],
        ..Table::default()
    };
    for h in cl.group_health.iter().take(HEALTH_ROWS) {
        t.rows.push(vec![
            crate::format::printable(&h.group).into_owned(),
            h.dim.map_or("-", |d| d.as_str()).to_string(),
            h.ranks.len().to_string(),
            h.instances.to_string(),
            human(h.wait_ns),
            human(h.exposed_ns),
            human(h.skew_ns),
            h.slowest
                .map_or("-".into(), |(r, n)| format!("rank {r} ({n}x)")),
        ]);
    }
    if cl.group_health.len() > HEALTH_ROWS {
        t.notes.push(format!(
            "... {} more group(s): --format json lists all",
            cl.group_health.len() - HEALTH_ROWS
        ));
    }
    Some(t)
}
