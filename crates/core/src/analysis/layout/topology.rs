//! The job's topology (docs/metrics.md, "Topology"): nodes of `ranks_per_node` consecutive
//! ranks, and the traffic per link type — HCCL's link matrix by transport (HCCS, PCIE, RDMA,
//! SIO) where the profiler wrote one, else the collectives by placement (inside a node: the
//! intra-node link, across: the inter-node one) and the point-to-point transfers — with each
//! type's bandwidth against its peak and its slow links.

use crate::analysis::comm::Comm;
use crate::analysis::comm::link_matrix::LinkStat;
use crate::model::RankId;
use crate::time::Ns;

/// Traffic over one kind of link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkType {
    /// The link (`HCCS`, `RDMA`, `nvlink4 (intra-node)`, `p2p inter-node`).
    pub name: String,
    /// Links (matrix), or collective types and groups (by placement), or rank pairs (p2p).
    pub links: u64,
    /// Σ bytes.
    pub bytes: u64,
    /// Σ transfer time.
    pub time_ns: Ns,
    /// The median bandwidth of its links (bus bandwidth for collectives), GB/s.
    pub median_gbps: Option<f64>,
    /// The link's peak, GB/s, when known.
    pub peak_gbps: Option<f64>,
    /// How many of its links are slow against their peers.
    pub slow: u64,
}

impl LinkType {
    /// Its median bandwidth as a fraction of its peak, when both are known.
    pub fn of_peak(&self) -> Option<f64> {
        match (self.median_gbps, self.peak_gbps) {
            (Some(g), Some(p)) if p > 0.0 => Some(g / p),
            _ => None,
        }
    }
}

/// One slow link, in words and by its ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowLinkRow {
    /// The link type.
    pub kind: String,
    /// `group G: 3 → 5` (communicator ranks) or `rank 3 in group G`.
    pub what: String,
    /// Its bandwidth, GB/s (when measured).
    pub gbps: Option<f64>,
    /// Its peers' median, GB/s.
    pub median_gbps: Option<f64>,
    /// The global rank it names, when known (a rank of the collectives' slow links).
    pub rank: Option<RankId>,
}

/// Nodes and the traffic per link type (the layout pane's topology; the links themselves are
/// [`crate::analysis::comm::links::Topology`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkTraffic {
    /// Ranks per node, and where that came from.
    pub ranks_per_node: u32,
    /// `option`, `deviceProperties` or `default`.
    pub ranks_per_node_from: &'static str,
    /// Per link type.
    pub link_types: Vec<LinkType>,
    /// The slow links, slowest against their peers first.
    pub slow: Vec<SlowLinkRow>,
}

impl LinkTraffic {
    /// The node of a rank.
    pub fn node_of(&self, r: RankId) -> u32 {
        r.0 / self.ranks_per_node.max(1)
    }
}

/// The topology of a job from its communication analysis and HCCL's link matrix.
pub fn topology(comm: &Comm, links: &[LinkStat]) -> LinkTraffic {
    let t = &comm.topology;
    let mut out = LinkTraffic {
        ranks_per_node: t.ranks_per_node.max(1),
        ranks_per_node_from: t.ranks_per_node_from,
        ..LinkTraffic::default()
    };
    if links.is_empty() {
        by_placement(comm, &mut out);
    } else {
        by_transport(links, &mut out);
    }
    p2p(comm, &mut out);
    for s in &comm.slow_links {
        let (kind, what) = match s.peer {
            Some(p) => (
                "point-to-point transit",
                format!("rank {} <-> rank {p} ({})", s.rank, s.group),
            ),
            None => (
                "collective transit",
                format!("rank {} in group {}", s.rank, s.group),
            ),
        };
        out.slow.push(SlowLinkRow {
            kind: kind.into(),
            what,
            gbps: s.busbw_gbps,
            median_gbps: None,
            rank: Some(s.rank),
        });
    }
    out
}

/// HCCL's matrix, per transport.
fn by_transport(links: &[LinkStat], out: &mut LinkTraffic) {
    let mut kinds: Vec<String> = links
        .iter()
        .map(|l| l.transport.as_str().to_string())
        .collect();
    kinds.sort();
    kinds.dedup();
    for k in kinds {
        let of: Vec<&LinkStat> = links.iter().filter(|l| l.transport.as_str() == k).collect();
        let gbps: Vec<f64> = of.iter().filter_map(|l| l.gbps).collect();
        out.link_types.push(LinkType {
            name: k.clone(),
            links: of.len() as u64,
            bytes: of.iter().map(|l| l.bytes).sum(),
            time_ns: of.iter().map(|l| l.time_ns).fold(0, Ns::saturating_add),
            median_gbps: median(gbps),
            peak_gbps: None,
            slow: of.iter().filter(|l| l.slow).count() as u64,
        });
        for l in of.iter().filter(|l| l.slow) {
            out.slow.push(SlowLinkRow {
                kind: k.clone(),
                what: format!("group {}: {} → {}", l.group, l.src, l.dst),
                gbps: l.gbps,
                median_gbps: l.median_gbps,
                rank: None,
            });
        }
    }
}

/// The collectives, by where their groups sit: inside a node, across nodes.
fn by_placement(comm: &Comm, out: &mut LinkTraffic) {
    let t = &comm.topology;
    for (placement, link) in [("intra_node", &t.intra), ("inter_node", &t.inter)] {
        let of: Vec<_> = comm
            .types
            .iter()
            .filter(|c| c.placement == placement && !c.op.is_p2p())
            .collect();
        if of.is_empty() {
            continue;
        }
        let where_ = placement.replace('_', "-");
        out.link_types.push(LinkType {
            name: format!("{} ({where_})", link.name),
            links: of.len() as u64,
            bytes: of
                .iter()
                .filter_map(|c| c.bytes.as_ref())
                .map(|b| b.total)
                .sum(),
            time_ns: of.iter().map(|c| c.transit_ns).fold(0, Ns::saturating_add),
            median_gbps: median(of.iter().filter_map(|c| c.busbw_gbps).collect()),
            peak_gbps: (!t.host_only).then_some(link.peak_gbps),
            slow: comm
                .slow_links
                .iter()
                .filter(|s| of.iter().any(|c| c.group == s.group))
                .count() as u64,
        });
    }
}

/// Point-to-point transfers, inside a node and across.
fn p2p(comm: &Comm, out: &mut LinkTraffic) {
    let rpn = out.ranks_per_node;
    for (inside, name) in [(true, "p2p intra-node"), (false, "p2p inter-node")] {
        let of: Vec<_> = comm
            .p2p
            .iter()
            .filter(|c| (c.src.0 / rpn == c.dst.0 / rpn) == inside)
            .collect();
        if of.is_empty() {
            continue;
        }
        out.link_types.push(LinkType {
            name: name.into(),
            links: of.len() as u64,
            bytes: of.iter().map(|c| c.bytes).sum(),
            time_ns: of.iter().map(|c| c.time_ns).fold(0, Ns::saturating_add),
            median_gbps: median(of.iter().filter_map(|c| c.gbps).collect()),
            peak_gbps: None,
            slow: comm
                .slow_links
                .iter()
                .filter(|s| {
                    s.peer
                        .is_some_and(|p| (s.rank.0 / rpn == p.0 / rpn) == inside)
                })
                .count() as u64,
        });
    }
}

/// The median of some bandwidths (the lower middle of an even count).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len().checked_sub(1)? / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_bandwidth_is_the_lower_middle() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.0));
    }
}
