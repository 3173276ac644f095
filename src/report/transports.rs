//! The transports, links and unaligned-transfers tables: HCCL's traffic per rank and link type
//! (Ascend `communication.json`), per link (`communication_matrix.json`), and its plane tasks
//! whose size is not a multiple of 512 B (trace_view / `COMMUNICATION_TASK_INFO`).

use super::table::Table;
use crate::analysis::comm::link_matrix::LinkStat;
use crate::analysis::comm::transports::TransportStat;
use crate::analysis::comm::unaligned::Unaligned;
use crate::format::human;

/// One row per (rank, transport); `None` when no rank has the file.
pub fn table(t: &[TransportStat]) -> Option<Table> {
    if t.is_empty() {
        return None;
    }
    let rows = t
        .iter()
        .map(|s| {
            vec![
                s.rank.to_string(),
                s.transport.as_str().to_string(),
                s.ops.to_string(),
                crate::format::bytes(s.bytes),
                human(s.time_ns),
                s.gbps.map_or("-".into(), |g| format!("{g:.1} GB/s")),
            ]
        })
        .collect();
    Some(Table {
        title: "Transports (HCCL's per-op traffic): bytes over transfer time per rank".into(),
        header: vec![
            "rank",
            "<transport",
            "ops",
            "bytes",
            "transfer",
            "bandwidth",
        ],
        rows,
        notes: vec![
            "SDMA is the on-node total (HCCS + PCIE + SIO): compare within a transport, never add \
             SDMA to its parts (docs/metrics.md)"
                .into(),
        ],
    })
}

/// Per (group, transport): its links, their median and the slowest; then every slow link.
/// `None` when no rank has a link matrix.
pub fn links(l: &[LinkStat]) -> Option<Table> {
    if l.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    let mut i = 0;
    while i < l.len() {
        let same = |x: &LinkStat| x.group == l[i].group && x.transport == l[i].transport;
        let n = l[i..].iter().take_while(|x| same(x)).count();
        let part = &l[i..i + n];
        let slowest = part
            .iter()
            .filter(|x| x.gbps.is_some())
            .min_by(|a, b| a.gbps.unwrap_or(0.0).total_cmp(&b.gbps.unwrap_or(0.0)));
        rows.push(vec![
            l[i].group.clone(),
            l[i].transport.as_str().to_string(),
            n.to_string(),
            crate::format::bytes(part.iter().map(|x| x.bytes).sum()),
            l[i].median_gbps
                .map_or("-".into(), |g| format!("{g:.1} GB/s")),
            slowest.map_or("-".into(), |x| {
                format!("{}->{} {:.1} GB/s", x.src, x.dst, x.gbps.unwrap_or(0.0))
            }),
            part.iter().filter(|x| x.slow).count().to_string(),
        ]);
        i += n;
    }
    let notes = l
        .iter()
        .filter(|x| x.slow)
        .map(|x| {
            format!(
                "slow: {}->{} {} in group {}: {:.1} GB/s ({} over {}), {} beyond the median",
                x.src,
                x.dst,
                x.transport.as_str(),
                x.group,
                x.gbps.unwrap_or(0.0),
                crate::format::bytes(x.bytes),
                human(x.time_ns),
                human(x.excess_ns())
            )
        })
        .chain([
            "ranks are the group's communicator ranks; a link is slow below its median / 1.5"
                .into(),
        ])
        .collect();
    Some(Table {
        title: "Links (HCCL's per-link totals, communication_matrix.json)".into(),
        header: vec![
            "<group",
            "<transport",
            "links",
            "bytes",
            "median",
            "<slowest",
            "slow",
        ],
        rows,
        notes,
    })
}

/// Ops whose transfers include sizes not a multiple of 512 B, most tail first; `None` when
/// there are none.
pub fn unaligned(u: &Unaligned) -> Option<Table> {
    const SHOWN: usize = 10;
    if u.ops.is_empty() {
        return None;
    }
    let rate = |g: Option<f64>| g.map_or("-".into(), |g| format!("{g:.1} GB/s"));
    let rows = u
        .ops
        .iter()
        .take(SHOWN)
        .map(|o| {
            vec![
                o.rank.to_string(),
                o.step.map_or("-".into(), |s| s.to_string()),
                o.name.clone(),
                format!("{}/{}", o.unaligned, o.transfers),
                o.sizes
                    .iter()
                    .map(|b| b.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                rate(o.unaligned_gbps()),
                rate(o.aligned_gbps()),
                human(o.tail_ns),
            ]
        })
        .collect();
    let mut notes = vec![
        "tail: the time unaligned transfers ran on after every aligned transfer beside them had \
         finished (the most aligning them could save; docs/metrics.md)"
            .into(),
    ];
    if u.ops.len() > SHOWN {
        notes.push(format!(
            "{} more op(s) in the JSON report",
            u.ops.len() - SHOWN
        ));
    }
    Some(Table {
        title: "Unaligned HCCL transfers (SDMA over a link, > 512 B, not a multiple of 512 B)"
            .into(),
        header: vec![
            "rank",
            "step",
            "<op",
            "unaligned",
            "<sizes (B)",
            "unaligned bw",
            "aligned bw",
            "tail",
        ],
        rows,
        notes,
    })
}
