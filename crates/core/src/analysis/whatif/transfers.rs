//! What a collective's transfer would take at its type's typical or best measured speed
//! (docs/metrics.md, "Replay"): the targets of the slow-link, median-communication and
//! fusion transforms. Speeds are kept as measured (bytes, ns) pairs so that targets are
//! exact integer ratios.

use crate::analysis::comm::Comm;
use crate::analysis::comm::op::bus_factor;
use crate::model::CollOp;
use crate::time::Ns;
use std::collections::BTreeMap;

pub use crate::time::mul_div;

/// The measured speeds of the job's collectives.
#[derive(Debug, Default)]
pub struct Speeds {
    /// Per (type, group): the median transit, and the smallest (the fixed cost of a call).
    transit: BTreeMap<(CollOp, u32), (Ns, Ns)>,
    /// Per type: the median instance's (bytes, transit) by algorithm bandwidth.
    median_bw: BTreeMap<CollOp, (u64, Ns)>,
    /// Per type: a call's cost as a fixed part plus bus bytes at a bandwidth ([`Line`]).
    line: BTreeMap<CollOp, Line>,
}

/// A call's transfer modelled as `fixed + bus_bytes × ns / bytes`: what a fused call pays
/// once (the fixed part) and per byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// The fixed cost of a call (latency, launch), ns.
    pub fixed: Ns,
    /// ns per `bytes` bus bytes: (ns, bytes).
    pub per: (i128, i128),
}

impl Line {
    /// The model of calls measured as (bus bytes, transit): with two or more sizes, the line
    /// through the smallest and the largest size's median transits; with one size, the bus
    /// bytes at the link's peak (`peak_gbps`, when known) and the rest of each call fixed;
    /// `None` otherwise.
    fn fit(mut calls: Vec<(i128, Ns)>, peak_gbps: Option<f64>) -> Option<Line> {
        calls.sort_unstable();
        let median_at = |b: i128| {
            let v: Vec<Ns> = calls.iter().filter(|c| c.0 == b).map(|c| c.1).collect();
            v[v.len() / 2]
        };
        let (lo, hi) = (calls.first()?.0, calls.last()?.0);
        if hi > lo {
            let (x1, x2) = (median_at(lo), median_at(hi));
            if x2 > x1 {
                let per = (i128::from(x2 - x1), hi - lo);
                let fixed = x1 - mul_div_i(lo, per.0, per.1);
                return Some(Line {
                    fixed: fixed.max(0),
                    per,
                });
            }
        }
        let peak = peak_gbps.filter(|p| p.is_finite() && *p > 0.0)?;
        // GB/s is bytes per ns: ns per 10⁶ bytes at the peak, rounded.
        let per = (((1e6 / peak).round() as i128).max(1), 1_000_000);
        let mut rest: Vec<Ns> = calls
            .iter()
            .map(|&(b, x)| (x - mul_div_i(b, per.0, per.1)).max(0))
            .collect();
        rest.sort_unstable();
        Some(Line {
            fixed: rest[rest.len() / 2],
            per,
        })
    }
}

/// `a × num / den` as ns (saturating).
fn mul_div_i(a: i128, num: i128, den: i128) -> Ns {
    if den == 0 {
        return 0;
    }
    Ns::try_from(a.saturating_mul(num) / den).unwrap_or(Ns::MAX)
}

impl Speeds {
    /// Over every matched instance of the job with a transit.
    pub fn of(comm: &Comm) -> Speeds {
        let mut transits: BTreeMap<(CollOp, u32), Vec<Ns>> = BTreeMap::new();
        let mut bw: BTreeMap<CollOp, Vec<(u64, Ns)>> = BTreeMap::new();
        let mut bus: BTreeMap<CollOp, Vec<(i128, Ns)>> = BTreeMap::new();
        for (inst, t) in comm.instances() {
            let x = t.timing.transit_ns;
            if x <= 0 {
                continue;
            }
            transits.entry((inst.op, inst.group)).or_default().push(x);
            let Some(b) = inst.bytes.filter(|&b| b > 0) else {
                continue;
            };
            bw.entry(inst.op).or_default().push((b, x));
            let bb = bus_bytes(inst.op, comm.group_size(inst.group), b);
            bus.entry(inst.op).or_default().push((bb, x));
        }
        let peak = |op: CollOp| {
            comm.types
                .iter()
                .filter(|t| t.op == op)
                .filter_map(|t| t.peak_gbps)
                .fold(None, |a: Option<f64>, p| Some(a.map_or(p, |a| a.min(p))))
        };
        let line = bus
            .into_iter()
            .filter_map(|(op, v)| Some((op, Line::fit(v, peak(op))?)))
            .collect();
        let transit = transits
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_unstable();
                (k, (v[v.len() / 2], v[0]))
            })
            .collect();
        let median_bw = bw
            .into_iter()
            .map(|(k, mut v)| {
                // By bytes per ns, cross-multiplied.
                v.sort_by(|a, b| {
                    (i128::from(a.0) * i128::from(b.1)).cmp(&(i128::from(b.0) * i128::from(a.1)))
                });
                (k, v[v.len() / 2])
            })
            .collect();
        Speeds {
            transit,
            median_bw,
            line,
        }
    }

    /// Instance `k`'s transfer at its type's median speed: its bytes at the median
    /// algorithm bandwidth when sizes are known, else its (type, group)'s median transit.
    pub fn median(&self, comm: &Comm, k: usize) -> Option<Ns> {
        let (inst, _) = comm.instance(k)?;
        match (inst.bytes.filter(|&b| b > 0), self.median_bw.get(&inst.op)) {
            (Some(b), Some(&(mb, mt))) => Some(mul_div(mt, i128::from(b), i128::from(mb))),
            _ => self.transit.get(&(inst.op, inst.group)).map(|x| x.0),
        }
    }

    /// Instance `k`'s transfer fused with the `m` small calls of its type and group in the
    /// step into one: its bus bytes at the type's [`Line`] plus `1/m` of the line's fixed
    /// cost when sizes are known; else its transit less the fixed cost of a call (the
    /// group's fastest transit), which the fused call pays once. Never more than measured.
    pub fn fused(&self, comm: &Comm, k: usize, m: u64) -> Option<Ns> {
        let (inst, t) = comm.instance(k)?;
        let x = t.timing.transit_ns;
        let m = Ns::try_from(m.max(1)).unwrap_or(Ns::MAX);
        if let (Some(b), Some(line)) = (inst.bytes.filter(|&b| b > 0), self.line.get(&inst.op)) {
            let own = bus_bytes(inst.op, comm.group_size(inst.group), b);
            return Some((mul_div_i(own, line.per.0, line.per.1) + line.fixed / m).min(x));
        }
        let fixed = self.transit.get(&(inst.op, inst.group))?.1;
        Some(((x - fixed).max(0) + fixed / m).min(x))
    }
}

/// Bytes moved over the bus by one call: bytes × NCCL's bus factor.
fn bus_bytes(op: CollOp, n: u32, bytes: u64) -> i128 {
    let (num, den) = bus_factor(op, n);
    i128::from(bytes) * i128::from(num) / i128::from(den.max(1))
}
