//! The collectives of two runs side by side (docs/metrics.md, "Diff"): per (operation,
//! group), over the matched instances of the aligned steps only, calls, call time, waiting
//! for the last member and transit, summed over the members and divided by the number of
//! step pairs — the same steps and the same divisor on both sides.

use super::parts::Delta;
use super::steps::StepPair;
use crate::analysis::Analysis;
use crate::model::StepNo;
use crate::time::Ns;
use serde::Serialize;

/// One collective type in one group, per aligned step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollDelta {
    /// The operation (`all_reduce`, `send_recv`, ...).
    pub op: &'static str,
    /// Its group (the first run's name; the second's when only it has the group).
    pub group: String,
    /// Calls over all members per step, each run.
    pub calls: [u64; 2],
    /// Σ call time over the members per step.
    pub time: Delta,
    /// Σ waiting for the last member per step.
    pub wait: Delta,
    /// Σ transit (all members in) per step.
    pub transit: Delta,
    /// Median bus bandwidth of the type over the run, GB/s, each run.
    pub busbw_gbps: [Option<f64>; 2],
}

/// Σs of one (operation, group) over the matched instances of some steps.
#[derive(Debug, Clone, Default)]
struct Sums {
    op: &'static str,
    group: String,
    size: u32,
    calls: u64,
    time: Ns,
    wait: Ns,
    transit: Ns,
}

/// The collectives: matched by (operation, group), else by (operation, group size).
pub fn collectives(before: &Analysis, after: &Analysis, pairs: &[StepPair]) -> Vec<CollDelta> {
    let n = (pairs.len() as Ns).max(1);
    let b = sums(before, pairs.iter().map(|p| p.before).collect());
    let a = sums(after, pairs.iter().map(|p| p.after).collect());
    let mut used = vec![false; a.len()];
    let mut out = Vec::new();
    for x in &b {
        let same = |y: &Sums| y.op == x.op && y.group == x.group;
        let like = |y: &Sums| y.op == x.op && y.size == x.size;
        let k = (0..a.len())
            .find(|&k| !used[k] && same(&a[k]))
            .or_else(|| (0..a.len()).find(|&k| !used[k] && like(&a[k])));
        if let Some(k) = k {
            used[k] = true;
        }
        out.push(delta(Some(x), k.map(|k| &a[k]), n, [before, after]));
    }
    for (_, y) in a.iter().enumerate().filter(|(k, _)| !used[*k]) {
        out.push(delta(None, Some(y), n, [before, after]));
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.time.delta_ns().unsigned_abs()));
    out
}

/// Per (operation, group), the Σs over the matched instances in `steps`, by key.
fn sums(a: &Analysis, mut steps: Vec<StepNo>) -> Vec<Sums> {
    steps.sort_unstable();
    let mut out: Vec<Sums> = Vec::new();
    for (inst, t) in a.comm.instances() {
        if inst.step.is_none_or(|s| steps.binary_search(&s).is_err()) {
            continue;
        }
        let group = a
            .comm
            .calls
            .groups
            .get(inst.group as usize)
            .map_or("", |g| g.name.as_str());
        let op = inst.op.as_str();
        let k = match out.iter().position(|s| s.op == op && s.group == group) {
            Some(k) => k,
            None => {
                out.push(Sums {
                    op,
                    group: group.to_string(),
                    size: a.comm.group_size(inst.group),
                    ..Sums::default()
                });
                out.len() - 1
            }
        };
        let s = &mut out[k];
        for m in &t.members {
            s.calls += 1;
            s.time += m.end_ns - m.start_ns;
            s.wait += m.wait_ns;
            s.transit += m.transit_ns;
        }
    }
    out.sort_by(|x, y| (x.op, &x.group).cmp(&(y.op, &y.group)));
    out
}

/// The row of a type in each run (per step: Σ / `n`), with each run's bus bandwidth.
fn delta(b: Option<&Sums>, a: Option<&Sums>, n: Ns, runs: [&Analysis; 2]) -> CollDelta {
    let per = |s: Option<&Sums>, f: fn(&Sums) -> Ns| s.map_or(0, |s| f(s) / n);
    let both = |f: fn(&Sums) -> Ns| Delta {
        before_ns: per(b, f),
        after_ns: per(a, f),
    };
    let busbw = |s: Option<&Sums>, run: &Analysis| {
        let s = s?;
        run.comm
            .types
            .iter()
            .find(|t| t.op.as_str() == s.op && t.group == s.group)
            .and_then(|t| t.busbw_gbps)
    };
    let named = b.or(a).expect("a row of either run");
    CollDelta {
        op: named.op,
        group: named.group.clone(),
        calls: [b, a].map(|s| s.map_or(0, |s| s.calls / n as u64)),
        time: both(|s| s.time),
        wait: both(|s| s.wait),
        transit: both(|s| s.transit),
        busbw_gbps: [busbw(b, runs[0]), busbw(a, runs[1])],
    }
}
