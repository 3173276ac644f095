//! Link peaks and node placement: achieved bus bandwidth is judged against the link a group
//! crosses — intra-node (NVLink, PCIe) when all its ranks sit on one node, inter-node
//! (InfiniBand, RoCE) otherwise. Ranks map to nodes as `rank / ranks_per_node`.

use crate::analysis::roofline::peaks::{self, Device};
use crate::error::Error;
use crate::model::{Job, RankId};

/// Known links: (name, description, GB/s per direction).
pub const LINKS: &[(&str, &str, f64)] = &[
    ("nvlink4", "NVLink 4 (H100/H200), per direction", 450.0),
    ("nvlink3", "NVLink 3 (A100), per direction", 300.0),
    ("pcie4", "PCIe 4.0 x16", 25.0),
    ("pcie5", "PCIe 5.0 x16", 50.0),
    ("ib-ndr", "InfiniBand NDR 400 Gb/s, per NIC", 50.0),
    ("ib-hdr", "InfiniBand HDR 200 Gb/s, per NIC", 25.0),
    ("roce-200", "RoCE 200 Gb/s, per NIC", 25.0),
    (
        "hccs",
        "HCCS mesh of 8 Ascend 910B: 7 links at msprof-analyze's expected 18 GB/s each",
        126.0,
    ),
];

/// Ranks per node when the traces do not say (`deviceProperties` lists a node's devices).
pub const DEFAULT_RANKS_PER_NODE: u32 = 8;

/// A link and its peak.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Link {
    /// Table name, or `custom`.
    pub name: String,
    /// GB/s (10⁹ B/s) per direction.
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub peak_gbps: f64,
}

impl Link {
    /// A table name (`nvlink4`) or a number of GB/s (`120`).
    pub fn parse(s: &str) -> Result<Link, Error> {
        if let Some((name, _, gbps)) = LINKS.iter().find(|l| l.0.eq_ignore_ascii_case(s)) {
            return Ok(Link {
                name: name.to_string(),
                peak_gbps: *gbps,
            });
        }
        match s.parse::<f64>() {
            Ok(g) if g > 0.0 && g.is_finite() => Ok(Link {
                name: "custom".to_string(),
                peak_gbps: g,
            }),
            _ => Err(Error::usage(
                "",
                format!(
                    "unknown link `{s}`: use GB/s or one of {}",
                    LINKS.iter().map(|l| l.0).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    fn named(name: &str) -> Link {
        Link::parse(name).expect("name from the table")
    }
}

/// Where ranks sit and what connects them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Topology {
    /// Ranks per node.
    pub ranks_per_node: u32,
    /// Where `ranks_per_node` came from (`option`, `deviceProperties`, `default`).
    pub ranks_per_node_from: &'static str,
    /// The link inside a node.
    pub intra: Link,
    /// The link between nodes.
    pub inter: Link,
    /// CPU-only job: transfers go through host memory or TCP; no peak applies.
    pub host_only: bool,
}

/// User overrides of the topology (`--ranks-per-node`, `--intra-link`, `--inter-link`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopologyOptions {
    /// Ranks per node.
    pub ranks_per_node: Option<u32>,
    /// Intra-node link.
    pub intra: Option<Link>,
    /// Inter-node link.
    pub inter: Option<Link>,
}

impl Topology {
    /// The topology of a job: options first, else what the traces say, else defaults
    /// (the device table's `intra_link` of the job's devices — NVLink 3 for A100s — else
    /// NVLink 4 and InfiniBand NDR between nodes; HCCS and RoCE 200 Gb/s for Ascend jobs).
    pub fn of(job: &Job, opts: &TopologyOptions, table: &[Device]) -> Topology {
        // A device list is the node's on some platforms (Kineto's `deviceProperties`); on
        // others a rank names its own device only.
        let devices = job
            .ranks
            .iter()
            .filter(|r| r.source.platform.lists_node_devices)
            .map(|r| r.devices.len())
            .max()
            .unwrap_or(0) as u32;
        // The platform's own links when every rank shares one platform, else the default's.
        let platforms = job.ranks.iter().map(|r| r.source.platform.default_links);
        let (intra_default, inter_default) = match platforms.clone().next() {
            Some(first) if platforms.clone().all(|l| l == first) => first,
            _ => crate::model::Platform::default().default_links,
        };
        let (ranks_per_node, from) = match opts.ranks_per_node {
            Some(n) => (n.max(1), "option"),
            None if devices > 0 => (devices, "deviceProperties"),
            None => (DEFAULT_RANKS_PER_NODE, "default"),
        };
        let table_link = job
            .ranks
            .iter()
            .flat_map(|r| r.devices.iter())
            .find_map(|d| {
                peaks::by_trace_name(table, job.strings.resolve(*d))?
                    .intra_link
                    .clone()
            });
        Topology {
            ranks_per_node,
            ranks_per_node_from: from,
            intra: opts.intra.clone().unwrap_or_else(|| {
                table_link
                    .and_then(|l| Link::parse(&l).ok())
                    .unwrap_or_else(|| Link::named(intra_default))
            }),
            inter: opts
                .inter
                .clone()
                .unwrap_or_else(|| Link::named(inter_default)),
            host_only: job.ranks.iter().all(|r| r.is_cpu_only()),
        }
    }

    /// True when all `ranks` sit on one node.
    pub fn intra_node(&self, ranks: &[RankId]) -> bool {
        let node = |r: &RankId| r.0 / self.ranks_per_node;
        ranks
            .first()
            .is_none_or(|f| ranks.iter().all(|r| node(r) == node(f)))
    }

    /// The link a group of ranks crosses, `None` for CPU-only jobs.
    pub fn link(&self, ranks: &[RankId]) -> Option<&Link> {
        if self.host_only {
            None
        } else if self.intra_node(ranks) {
            Some(&self.intra)
        } else {
            Some(&self.inter)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_parse_by_name_or_number() {
        assert_eq!(Link::parse("NVLink4").unwrap().peak_gbps, 450.0);
        assert_eq!(Link::parse("pcie5").unwrap().peak_gbps, 50.0);
        assert_eq!(
            Link::parse("120").unwrap(),
            Link {
                name: "custom".into(),
                peak_gbps: 120.0
            }
        );
        assert!(Link::parse("-3").is_err());
        assert!(
            Link::parse("carrier pigeon")
                .unwrap_err()
                .to_string()
                .contains("nvlink4")
        );
    }

    /// The links and ranks per node follow the ranks' platform as their reader set it, never
    /// their format: one platform's own links, the default's when platforms differ; device
    /// lists count as a node's only where the platform says they are.
    #[test]
    fn defaults_follow_the_ranks_platform() {
        use crate::model::{Platform, Rank};
        let own = Platform {
            lists_node_devices: false,
            default_links: ("hccs", "roce-200"),
            fused_apis: false,
        };
        let rank = |p: Platform, devices: usize| {
            let mut r = Rank::default();
            r.source.platform = p;
            r.devices = vec![0; devices];
            r
        };
        let of = |ranks: Vec<Rank>| {
            let mut job = Job {
                ranks,
                ..Job::default()
            };
            job.strings.intern("a device of no table");
            Topology::of(&job, &TopologyOptions::default(), &[])
        };
        let t = of(vec![rank(own, 8), rank(own, 8)]);
        assert_eq!(
            (t.intra.name.as_str(), t.inter.name.as_str()),
            ("hccs", "roce-200")
        );
        assert_eq!(
            t.ranks_per_node_from, "default",
            "an own-device list is no node's"
        );
        let t = of(vec![rank(own, 8), rank(Platform::default(), 4)]);
        assert_eq!(t.intra.name, "nvlink4");
        assert_eq!(
            (t.ranks_per_node, t.ranks_per_node_from),
            (4, "deviceProperties")
        );
    }

    #[test]
    fn nodes_split_by_ranks_per_node() {
        let t = Topology {
            ranks_per_node: 4,
            ranks_per_node_from: "option",
            intra: Link::named("nvlink4"),
            inter: Link::named("ib-ndr"),
            host_only: false,
        };
        let ids = |v: &[u32]| v.iter().copied().map(RankId).collect::<Vec<_>>();
        assert!(t.intra_node(&ids(&[0, 1, 2, 3])));
        assert!(!t.intra_node(&ids(&[3, 4])));
        assert_eq!(t.link(&ids(&[4, 7])).unwrap().name, "nvlink4");
        assert_eq!(t.link(&ids(&[0, 8])).unwrap().name, "ib-ndr");
    }
}
