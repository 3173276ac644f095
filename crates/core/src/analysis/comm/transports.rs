//! Traffic per rank and transport as HCCL summed it (`communication.json`, docs/metrics.md
//! "Transports"): bytes and transfer time over the ops in scope, and their ratio. `SDMA` is
//! the on-node total (HCCS + PCIe + SIO): it is shown beside its parts, never added to them —
//! msprof-analyze's cluster view adds them and doubles the on-node volume.

use crate::model::{Job, RankId, StepNo, Transport};
use crate::time::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// One rank's traffic on one transport.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransportStat {
    /// Rank id.
    pub rank: RankId,
    /// The link type (`HCCS`, `SDMA`, `RDMA`, …).
    #[serde(serialize_with = "transport_name")]
    pub transport: Transport,
    /// Ops with traffic on it.
    pub ops: u64,
    /// Σ bytes.
    pub bytes: u64,
    /// Σ transfer time.
    pub time_ns: Ns,
    /// bytes / time, GB/s (10⁹ B/s); `None` without time.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub gbps: Option<f64>,
}

/// `serialize_with` for a [`Transport`]: HCCL's name.
pub(super) fn transport_name<S: serde::Serializer>(t: &Transport, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.as_str())
}

/// Per (rank, transport), over the ops of `step` (all steps when `None`), in rank then
/// transport order.
pub fn transports(job: &Job, step: Option<StepNo>) -> Vec<TransportStat> {
    let mut acc: BTreeMap<(RankId, Transport), (u64, u64, Ns)> = BTreeMap::new();
    for r in &job.ranks {
        for u in r
            .transports
            .iter()
            .filter(|u| step.is_none() || u.step == step)
        {
            let e = acc.entry((r.id, u.transport)).or_default();
            *e = (e.0 + 1, e.1 + u.bytes, e.2 + u.time_ns);
        }
    }
    acc.into_iter()
        .map(|((rank, transport), (ops, bytes, time_ns))| TransportStat {
            rank,
            transport,
            ops,
            bytes,
            time_ns,
            gbps: (time_ns > 0).then(|| bytes as f64 / time_ns as f64),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Rank, TransportUse};

    #[test]
    fn sums_per_rank_and_transport_in_scope() {
        let use_ = |step, t, bytes, time_ns| TransportUse {
            step: Some(StepNo(step)),
            op: "hcom_allReduce__1_0_1".into(),
            transport: t,
            bytes,
            time_ns,
        };
        let rank = Rank {
            transports: vec![
                use_(1, Transport::Hccs, 3_000, 2_000),
                use_(1, Transport::Hccs, 1_000, 2_000),
                use_(2, Transport::Hccs, 9_000, 1_000),
                use_(1, Transport::Sdma, 4_000, 4_000),
            ],
            ..Rank::default()
        };
        let job = Job {
            ranks: vec![rank],
            ..Job::default()
        };
        let t = transports(&job, Some(StepNo(1)));
        assert_eq!(t.len(), 2);
        // SDMA (the on-node total) and HCCS (its part) stay apart: 4 000 B each, not 8 000.
        assert_eq!(
            (t[0].transport, t[0].ops, t[0].bytes),
            (Transport::Sdma, 1, 4_000)
        );
        assert_eq!(
            (t[1].transport, t[1].ops, t[1].bytes),
            (Transport::Hccs, 2, 4_000)
        );
        assert_eq!(t[1].gbps, Some(1.0));
        assert_eq!(transports(&job, None)[1].bytes, 13_000);
    }
}
