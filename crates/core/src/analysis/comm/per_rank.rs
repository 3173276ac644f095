//! Collective communication per rank (the comm view's rank column): instances a rank took part
//! in, its total wait and transit, and the median of its own bus bandwidth, where a member's
//! busbw = bytes × bus factor / its transit (own end − the last arrival): the rate at which
//! data left through this rank's links once everyone had arrived.

use super::Comm;
use super::op::bus_factor;
use super::waits::Unions;
use crate::model::{RankId, StepNo};
use crate::time::Ns;

/// One rank's collectives.
#[derive(Debug, Clone, PartialEq)]
pub struct RankComm {
    /// Rank id.
    pub rank: RankId,
    /// Instances (point-to-point excluded).
    pub instances: u64,
    /// Σ over steps of the union of its waits for the last arriver ([`super::waits`]).
    pub wait_ns: Ns,
    /// Σ over steps of the union of its transits.
    pub transit_ns: Ns,
    /// Median member busbw over instances with a size and a transit, GB/s.
    pub busbw_gbps: Option<f64>,
    /// Listed among the slow links.
    pub slow_link: bool,
}

/// Per-rank collective summary over the instances of `step` (all steps: `None`) of at most
/// `max_bytes` (any size: `None`; an instance of unknown size is then left out), rank order.
pub fn per_rank(comm: &Comm, step: Option<StepNo>, max_bytes: Option<u64>) -> Vec<RankComm> {
    let mut acc: std::collections::BTreeMap<RankId, (u64, Ns, Ns, Vec<f64>)> = Default::default();
    let (mut wait, mut transit) = (Unions::default(), Unions::default());
    for (inst, t) in comm.instances() {
        if inst.op.is_p2p() || step.is_some_and(|s| inst.step != Some(s)) {
            continue;
        }
        if max_bytes.is_some_and(|m| inst.bytes.is_none_or(|b| b > m)) {
            continue;
        }
        let (num, den) = bus_factor(inst.op, comm.group_size(inst.group));
        for m in &t.members {
            let a = acc.entry(m.rank).or_default();
            a.0 += 1;
            let last = m.start_ns + m.wait_ns;
            wait.add((), m.rank, inst.step, m.start_ns, last);
            transit.add((), m.rank, inst.step, last, last + m.transit_ns);
            if let Some(b) = inst.bytes {
                if m.transit_ns > 0 {
                    a.3.push(b as f64 * num as f64 / den as f64 / m.transit_ns as f64);
                }
            }
        }
    }
    for (((), rank), w) in wait.per_rank() {
        acc.entry(rank).or_default().1 = w;
    }
    for (((), rank), w) in transit.per_rank() {
        acc.entry(rank).or_default().2 = w;
    }
    acc.into_iter()
        .map(|(rank, (instances, wait_ns, transit_ns, mut bw))| {
            bw.sort_by(f64::total_cmp);
            RankComm {
                rank,
                instances,
                wait_ns,
                transit_ns,
                busbw_gbps: (!bw.is_empty()).then(|| bw[(bw.len() - 1) / 2]),
                slow_link: comm.slow_links.iter().any(|l| l.rank == rank),
            }
        })
        .collect()
}
