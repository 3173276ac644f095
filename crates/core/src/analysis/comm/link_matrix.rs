//! HCCL's per-link traffic (docs/metrics.md "Link matrix"): for each link of a group, the
//! bytes and transfer time the profiler's matrix summed (`communication_matrix.json`, or
//! `analysis.db` `CommAnalyzerMatrix`) over the steps in scope, its bandwidth, and whether it
//! is slow against the other links of the same transport in the group: below the median by
//! more than [`SLOW_LINK_RATIO`], with at least [`MIN_LINKS`] links to compare.

use super::slow_links::SLOW_LINK_RATIO;
use crate::analysis::stats::median_f64;
use crate::model::{Job, StepNo, Transport};
use crate::time::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// Links of a transport in a group needed to call one slow.
pub const MIN_LINKS: usize = 3;

/// The mean bytes per op a link must move for its bandwidth to be judged: below it a transfer
/// takes about the link's latency (1 MiB at 20 GB/s is 52 µs against a few µs of setup), and
/// its GB/s measures that latency, not the link.
pub const JUDGED_BYTES_PER_OP: u64 = 1 << 20;

/// One link's traffic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkStat {
    /// HCCL's group id.
    pub group: String,
    /// Sender, as its rank in the group's communicator.
    pub src: u32,
    /// Receiver, likewise.
    pub dst: u32,
    /// The link type.
    #[serde(serialize_with = "super::transports::transport_name")]
    pub transport: Transport,
    /// Σ bytes.
    pub bytes: u64,
    /// Σ transfer time.
    pub time_ns: Ns,
    /// bytes / time, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub gbps: Option<f64>,
    /// The median bandwidth of the group's links of this transport.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub median_gbps: Option<f64>,
    /// Slower than the median by more than [`SLOW_LINK_RATIO`].
    pub slow: bool,
    /// The ops whose traffic it sums (what the mean transfer size is over; not in the JSON).
    #[serde(skip)]
    pub ops: u64,
}

impl LinkStat {
    /// Whether its transfers are large enough for their bandwidth to say something of the
    /// link ([`JUDGED_BYTES_PER_OP`]).
    pub fn judged(&self) -> bool {
        self.bytes >= JUDGED_BYTES_PER_OP * self.ops.max(1)
    }
}

impl LinkStat {
    /// The time beyond what the bytes take at the median bandwidth.
    pub fn excess_ns(&self) -> Ns {
        match self.median_gbps {
            Some(m) if m > 0.0 => (self.time_ns - (self.bytes as f64 / m) as Ns).max(0),
            _ => 0,
        }
    }
}

/// Per link over the steps of `step` (all when `None`), in (group, transport, src, dst)
/// order. A link two ranks' files both report is counted once.
pub fn link_matrix(job: &Job, step: Option<StepNo>) -> Vec<LinkStat> {
    type Key = (String, Transport, u32, u32);
    let mut acc: BTreeMap<Key, (u64, Ns, u64)> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in &job.ranks {
        for l in r.links.iter().filter(|l| step.is_none() || l.step == step) {
            // Each rank writes its own sends; a copy of the same file must not double them.
            if !seen.insert((
                l.step,
                l.group.clone(),
                l.src,
                l.dst,
                l.transport,
                l.bytes,
                l.time_ns,
            )) {
                continue;
            }
            let e = acc
                .entry((l.group.clone(), l.transport, l.src, l.dst))
                .or_default();
            *e = (e.0 + l.bytes, e.1 + l.time_ns, e.2 + 1);
        }
    }
    let mut out: Vec<LinkStat> = acc
        .into_iter()
        .map(
            |((group, transport, src, dst), (bytes, time_ns, ops))| LinkStat {
                group,
                src,
                dst,
                transport,
                bytes,
                time_ns,
                gbps: (time_ns > 0).then(|| bytes as f64 / time_ns as f64),
                median_gbps: None,
                slow: false,
                ops,
            },
        )
        .collect();
    judge(&mut out);
    out
}

/// Sets each link's median and slow flag within its (group, transport), over the links whose
/// transfers are large enough to judge.
fn judge(links: &mut [LinkStat]) {
    let mut i = 0;
    while i < links.len() {
        let j = links[i..]
            .iter()
            .position(|l| l.group != links[i].group || l.transport != links[i].transport)
            .map_or(links.len(), |k| i + k);
        let judged = |l: &&LinkStat| l.judged();
        let mut bws: Vec<f64> = links[i..j]
            .iter()
            .filter(judged)
            .filter_map(|l| l.gbps)
            .collect();
        bws.sort_by(f64::total_cmp);
        let median = median_f64(&bws);
        for l in &mut links[i..j] {
            l.median_gbps = median;
            l.slow = bws.len() >= MIN_LINKS
                && l.judged()
                && matches!((l.gbps, median), (Some(g), Some(m)) if g * SLOW_LINK_RATIO < m);
        }
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(src: u32, dst: u32, bytes: u64, time_ns: Ns) -> LinkStat {
        LinkStat {
            group: "g".into(),
            src,
            dst,
            transport: Transport::Hccs,
            bytes,
            time_ns,
            gbps: Some(bytes as f64 / time_ns as f64),
            median_gbps: None,
            slow: false,
            ops: 1,
        }
    }

    #[test]
    fn a_link_below_the_median_by_half_again_is_slow() {
        // 20, 18, 17 and 10 GB/s: median 17.5; 10 × 1.5 = 15 < 17.5 → slow; 17 is not.
        let mut v = vec![
            link(0, 1, 20_000_000, 1_000_000),
            link(0, 2, 18_000_000, 1_000_000),
            link(0, 3, 17_000_000, 1_000_000),
            link(0, 4, 10_000_000, 1_000_000),
        ];
        judge(&mut v);
        let slow: Vec<u32> = v.iter().filter(|l| l.slow).map(|l| l.dst).collect();
        assert_eq!(slow, [4]);
        assert_eq!(v[3].median_gbps, Some(17.5));
        // 10 MB at 17.5 GB/s take 571 428.6 ns: 428 572 ns beyond.
        assert_eq!(v[3].excess_ns(), 428_572);
        // Two links are too few to compare.
        let mut two = vec![
            link(0, 1, 20_000_000, 1_000_000),
            link(0, 2, 1_000_000, 1_000_000),
        ];
        judge(&mut two);
        assert!(two.iter().all(|l| !l.slow));
    }

    #[test]
    fn transfers_of_latency_size_are_not_judged() {
        // The shared GPT-3 sample's HCCS links each move ~100 B per op: their GB/s is the
        // link's latency. 112 B in 4.52 µs is not slow beside 120 B in 1 µs.
        let mut v = vec![
            link(1, 0, 112, 4_520),
            link(1, 2, 120, 1_000),
            link(1, 3, 104, 1_000),
            link(1, 4, 96, 1_000),
        ];
        judge(&mut v);
        assert!(v.iter().all(|l| !l.slow && l.median_gbps.is_none()));
        // A link's mean per op is what counts: 3 MiB over 2 ops is judged, over 4 ops not.
        let mut l = link(0, 1, 3 << 20, 1_000_000);
        l.ops = 2;
        assert!(l.judged());
        l.ops = 4;
        assert!(!l.judged());
    }
}
