//! The transports table: HCCL's traffic per rank and link type (Ascend `communication.json`).

use super::table::Table;
use crate::analysis::comm::transports::TransportStat;
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
