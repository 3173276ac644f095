//! Slow links (docs/metrics.md, "Communication"): a rank whose transfers in a collective
//! group take longer than its peers', and a point-to-point link (a rank pair exchanging
//! pipeline activations and gradients) that moves data slower than the job's other pairs.

use super::TimedInstance;
use super::links::Topology;
use super::matching::Instance;
use super::op::bus_factor;
use super::stats::Matched;
use crate::analysis::stats::median_sorted;
use crate::model::RankId;
use crate::time::{Ns, mul_div};
use std::collections::BTreeMap;

/// A rank's (or pair's) transfer time is an outlier above this z-score …
pub const SLOW_LINK_Z: f64 = 3.0;
/// … or above this multiple of the median.
pub const SLOW_LINK_RATIO: f64 = 1.5;

/// A rank whose transfer time in a group is an outlier, or a point-to-point link (`peer`
/// set) slower than the job's other pairs.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SlowLink {
    /// Group name.
    pub group: String,
    /// The rank whose transit is an outlier (of a pair: the lower rank).
    pub rank: RankId,
    /// The other end of a point-to-point link.
    pub peer: Option<RankId>,
    /// Its mean transit over the group's instances (the pair's transfers).
    pub transit_ns: Ns,
    /// Median of the members' mean transits (of a pair: its mean transfer's bytes at the
    /// median pair's speed).
    pub group_median_ns: Ns,
    /// z-score of its mean transit among the members (of its speed among the pairs).
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub z: f64,
    /// Its busbw from its mean transit and the mean instance size, GB/s.
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub busbw_gbps: Option<f64>,
}

/// The slow links of the matched calls: rank outliers in each collective group, then
/// point-to-point pairs, each compared with the pairs of its own kind of link (within a node,
/// or between nodes, as `topology` places the ranks): a pair that crosses nodes is not slow
/// for being slower than pairs inside one.
pub fn slow_links(m: &Matched, topology: &Topology) -> Vec<SlowLink> {
    let mut out = group_outliers(m);
    let mut pairs: [BTreeMap<(RankId, RankId), Pair>; 2] = Default::default();
    for (key, pair) in pairs_of(m) {
        pairs[usize::from(topology.intra_node(&[key.0, key.1]))].insert(key, pair);
    }
    let name = |g: u32| m.calls.groups[g as usize].name.clone();
    for class in pairs {
        out.extend(pair_outliers(class, &name));
    }
    out
}

/// Positions of the outliers of `costs` (z > [`SLOW_LINK_Z`], or above [`SLOW_LINK_RATIO`] ×
/// the median `median`) with their z-scores.
fn outliers(costs: &[f64], median: f64) -> Vec<(usize, f64)> {
    let n = costs.len() as f64;
    let mean = costs.iter().sum::<f64>() / n;
    let sd = (costs.iter().map(|&x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    costs
        .iter()
        .enumerate()
        .filter_map(|(k, &x)| {
            let z = if sd > 0.0 { (x - mean) / sd } else { 0.0 };
            (z > SLOW_LINK_Z || (median > 0.0 && x > SLOW_LINK_RATIO * median)).then_some((k, z))
        })
        .collect()
}

/// Ranks whose mean transit in a (non-p2p) group is an outlier. Groups need three members
/// present to compare.
fn group_outliers(m: &Matched) -> Vec<SlowLink> {
    let calls = m.calls;
    // group → rank → (Σ transit, n, Σ bus bytes)
    let mut per: BTreeMap<u32, BTreeMap<RankId, (Ns, u64, f64)>> = BTreeMap::new();
    for (inst, t) in m.each() {
        if inst.op.is_p2p() {
            continue;
        }
        let size = calls.groups[inst.group as usize].members.len() as u32;
        let (num, den) = bus_factor(inst.op, size);
        let g = per.entry(inst.group).or_default();
        for x in &t.members {
            let e = g.entry(x.rank).or_default();
            e.0 += x.transit_ns;
            e.1 += 1;
            e.2 += inst.bytes.unwrap_or(0) as f64 * num as f64 / den as f64;
        }
    }
    let mut out = Vec::new();
    for (g, ranks) in per {
        if ranks.len() < 3 {
            continue;
        }
        let means: Vec<(RankId, Ns, f64)> = ranks
            .iter()
            .map(|(&r, &(t, n, b))| (r, t / n as Ns, b / n as f64))
            .collect();
        let mut sorted: Vec<Ns> = means.iter().map(|m| m.1).collect();
        sorted.sort_unstable();
        let median = median_sorted(&sorted);
        let costs: Vec<f64> = means.iter().map(|m| m.1 as f64).collect();
        for (k, z) in outliers(&costs, median as f64) {
            let (rank, transit, bus_bytes) = means[k];
            out.push(SlowLink {
                group: calls.groups[g as usize].name.clone(),
                rank,
                peer: None,
                transit_ns: transit,
                group_median_ns: median,
                z,
                busbw_gbps: (transit > 0 && bus_bytes > 0.0).then(|| bus_bytes / transit as f64),
            });
        }
    }
    out
}

/// One rank pair's point-to-point transfers: Σ transit, count, Σ bytes, and a group.
#[derive(Clone, Copy)]
struct Pair {
    transit: Ns,
    n: u64,
    bytes: u64,
    group: u32,
}

/// The two ranks of a point-to-point instance, lower first (`None`: one end not loaded).
fn ends(inst: &Instance, t: &TimedInstance) -> Option<(RankId, RankId)> {
    if let Some(p) = inst.p2p {
        return (p.src != p.dst).then(|| (p.src.min(p.dst), p.src.max(p.dst)));
    }
    let lo = t.members.iter().map(|x| x.rank).min()?;
    let hi = t.members.iter().map(|x| x.rank).max()?;
    (lo != hi).then_some((lo, hi))
}

/// Each rank pair's point-to-point transfers. A transfer's time is its instance's transit
/// (the last arriver's duration: nobody left to wait for), so a receive posted early does
/// not make its link look slow.
fn pairs_of(m: &Matched) -> BTreeMap<(RankId, RankId), Pair> {
    let mut per: BTreeMap<(RankId, RankId), Pair> = BTreeMap::new();
    for (inst, t) in m.each() {
        if !inst.op.is_p2p() {
            continue;
        }
        let Some(key) = ends(inst, t) else { continue };
        let e = per.entry(key).or_insert(Pair {
            transit: 0,
            n: 0,
            bytes: 0,
            group: inst.group,
        });
        e.transit = e.transit.saturating_add(t.timing.transit_ns);
        e.n += 1;
        e.bytes = e.bytes.saturating_add(inst.bytes.unwrap_or(0));
    }
    per
}

/// Rank pairs whose transfers are outliers among `per`'s pairs: by time per byte where every
/// pair's sizes are known, else by time per transfer. Needs three pairs to compare.
fn pair_outliers(
    per: BTreeMap<(RankId, RankId), Pair>,
    name: &dyn Fn(u32) -> String,
) -> Vec<SlowLink> {
    if per.len() < 3 {
        return Vec::new();
    }
    let pairs: Vec<((RankId, RankId), Pair)> = per.into_iter().collect();
    let sized = pairs.iter().all(|(_, p)| p.bytes > 0);
    // A pair's cost as an exact ratio: ns per byte, or per transfer.
    let unit = |p: &Pair| i128::from(if sized { p.bytes } else { p.n });
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&pairs[a].1, &pairs[b].1);
        (i128::from(x.transit) * unit(y)).cmp(&(i128::from(y.transit) * unit(x)))
    });
    let median = &pairs[order[order.len() / 2]].1;
    let cost = |p: &Pair| p.transit as f64 / unit(p).max(1) as f64;
    let costs: Vec<f64> = pairs.iter().map(|(_, p)| cost(p)).collect();
    outliers(&costs, cost(median))
        .into_iter()
        .map(|(k, z)| {
            let ((lo, hi), p) = pairs[k];
            let transit = p.transit / p.n.max(1) as Ns;
            // This pair's mean transfer (its mean bytes, or one transfer) at the median
            // pair's speed.
            let own = if sized { p.bytes / p.n.max(1) } else { 1 };
            let at_median = mul_div(median.transit, i128::from(own), unit(median));
            SlowLink {
                group: name(p.group),
                rank: lo,
                peer: Some(hi),
                transit_ns: transit,
                group_median_ns: at_median,
                z,
                busbw_gbps: (p.transit > 0 && p.bytes > 0)
                    .then(|| p.bytes as f64 / p.transit as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(transit: Ns, n: u64, bytes: u64) -> Pair {
        Pair {
            transit,
            n,
            bytes,
            group: 0,
        }
    }

    fn pairs(v: &[Pair]) -> BTreeMap<(RankId, RankId), Pair> {
        v.iter()
            .enumerate()
            .map(|(k, &p)| ((RankId(k as u32), RankId(k as u32 + 10)), p))
            .collect()
    }

    #[test]
    fn a_pair_slower_per_byte_than_the_others_is_a_slow_link() {
        let name = |g: u32| format!("pp{g}");
        // Four transfers each: 8 MiB in 66 µs on three pairs; the fourth moves 4 MiB a
        // transfer in 660 µs (20× slower per byte), the fifth 16 MiB in 132 µs (as fast).
        let mib = 1 << 20;
        let v = [
            pair(4 * 66_000, 4, 4 * 8 * mib),
            pair(4 * 66_000, 4, 4 * 8 * mib),
            pair(4 * 66_000, 4, 4 * 8 * mib),
            pair(4 * 660_000, 4, 4 * 4 * mib),
            pair(4 * 132_000, 4, 4 * 16 * mib),
        ];
        let slow = pair_outliers(pairs(&v), &name);
        assert_eq!(slow.len(), 1);
        let s = &slow[0];
        assert_eq!((s.rank, s.peer), (RankId(3), Some(RankId(13))));
        assert_eq!(s.transit_ns, 660_000);
        // 4 MiB at the median pair's 66 µs per 8 MiB.
        assert_eq!(s.group_median_ns, 33_000);
        // Two pairs are too few to tell which is slow.
        assert!(pair_outliers(pairs(&v[2..4]), &name).is_empty());
        // Sizes unknown: compared per transfer.
        let no_sizes = [
            pair(100, 1, 0),
            pair(100, 1, 0),
            pair(110, 1, 0),
            pair(400, 2, 0),
        ];
        let slow = pair_outliers(pairs(&no_sizes), &name);
        assert_eq!(slow.len(), 1);
        assert_eq!((slow[0].transit_ns, slow[0].group_median_ns), (200, 110));
    }

    #[test]
    fn outliers_are_above_the_ratio_or_the_z_score() {
        assert!(outliers(&[1.0, 1.0, 1.0, 1.4], 1.0).is_empty());
        assert_eq!(outliers(&[1.0, 1.0, 1.0, 1.6], 1.0).len(), 1);
        // Equal costs: no outlier, no division by a zero deviation.
        assert!(outliers(&[2.0; 5], 2.0).is_empty());
    }
}
