//! Host-side work compared by role (docs/metrics.md, "Diff"): the data loader, blocking
//! syncs, GC, the allocator, run-time compiles, pageable copies and graph captures, each by
//! its host time and the device idle it caused, per step — matched by what the work is, not
//! by its name (a loader annotation renamed `_SingleProcessDataLoaderIter` →
//! `_MultiProcessingDataLoaderIter` is one row), and measured on the host, where the device
//! time the operator table compares shows nothing.

use super::others::steps;
use super::parts::Delta;
use crate::analysis::Analysis;
use crate::analysis::host::{CallStat, Host};
use crate::time::Ns;
use serde::Serialize;

/// One role's host work in the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostDelta {
    /// The role (`data_loader`, `sync`, `gc`, `allocator`, `online_compile`,
    /// `pageable_h2d`, `pageable_d2h`, `graph_capture`).
    pub role: &'static str,
    /// Calls per run.
    pub calls: [u64; 2],
    /// Host time per rank and step (Σ ÷ the run's ranks × steps).
    pub host: Delta,
    /// Device idle it caused per rank and step (the same basis).
    pub device_idle: Delta,
}

/// One role's (calls, host time, device idle) in one run's host analysis.
type Measure = fn(&Host) -> (u64, Ns, Ns);

/// A call statistic's (calls, host time, device idle).
fn calls(c: &CallStat) -> (u64, Ns, Ns) {
    (c.count, c.total_ns, c.device_idle_ns)
}

/// The roles compared, each with what it reads of a run.
const ROLES: &[(&str, Measure)] = &[
    ("data_loader", |h| {
        let d = &h.data_loading;
        (d.count, d.total_ns, d.device_idle_ns)
    }),
    ("sync", |h| {
        h.syncs.iter().fold((0, 0, 0), |a, s| {
            (
                a.0 + s.count,
                a.1 + s.blocked_ns,
                a.2 + s.device_idle_after_ns,
            )
        })
    }),
    ("gc", |h| {
        let ns: Ns = h.gc.iter().map(|g| g.dur_ns).sum();
        (h.gc.len() as u64, ns, ns)
    }),
    ("allocator", |h| calls(&h.allocator)),
    ("online_compile", |h| calls(&h.op_dispatch)),
    ("pageable_h2d", |h| calls(&h.pageable_h2d)),
    ("pageable_d2h", |h| calls(&h.pageable_d2h)),
    ("graph_capture", |h| {
        let g = &h.graphs;
        (g.captures, g.capture_ns, g.capture_idle_ns)
    }),
];

/// Every role either run has, per rank and step, the largest change of host time first.
pub fn host(before: &Analysis, after: &Analysis) -> Vec<HostDelta> {
    let per = |a: &Analysis| steps(a).saturating_mul((a.spans.len() as Ns).max(1));
    let (nb, na) = (per(before), per(after));
    let mut out: Vec<HostDelta> = ROLES
        .iter()
        .filter_map(|&(role, of)| {
            let (b, a) = (of(&before.host), of(&after.host));
            (b.0 > 0 || a.0 > 0).then(|| HostDelta {
                role,
                calls: [b.0, a.0],
                host: Delta {
                    before_ns: b.1 / nb,
                    after_ns: a.1 / na,
                },
                device_idle: Delta {
                    before_ns: b.2 / nb,
                    after_ns: a.2 / na,
                },
            })
        })
        .collect();
    out.sort_by_key(|d| std::cmp::Reverse(d.host.delta_ns().unsigned_abs()));
    out
}
