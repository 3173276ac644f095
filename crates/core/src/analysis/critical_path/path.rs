//! From the longest path's edges to what a reader sees: stretches in path order (consecutive
//! edges of one event merged), time per category, and operators ranked by time on the path.

use super::graph::Graph;
use super::{Category, CriticalOp, PathOp};
use crate::model::Job;
use crate::time::Ns;
use std::collections::BTreeMap;

/// The stretches of `path` (edge indices of `g`) and the time per category.
pub(super) fn stretches(
    g: &Graph,
    job: &Job,
    path: &[u32],
) -> (Vec<PathOp>, BTreeMap<Category, Ns>) {
    let mut by_category: BTreeMap<Category, Ns> = Category::ALL.iter().map(|c| (*c, 0)).collect();
    let mut ops: Vec<PathOp> = Vec::new();
    let mut last = None;
    for &e in path {
        let e = g.edges[e as usize];
        let Some(cat) = e.cat else { continue };
        if e.w == 0 && cat != Category::Wait {
            continue;
        }
        *by_category.get_mut(&cat).expect("all categories") += e.w;
        if last == Some((e.rank, e.event, cat)) {
            if let Some(op) = ops.last_mut() {
                op.dur_ns += e.w;
            }
            continue;
        }
        last = Some((e.rank, e.event, cat));
        let rank = job.rank(e.rank);
        let i = e.event.0 as usize;
        ops.push(PathOp {
            rank: rank.id,
            lane: job
                .strings
                .resolve(rank.lanes[rank.events.lane[i] as usize].name)
                .to_string(),
            name: job.strings.resolve(rank.events.name[i]).to_string(),
            start_ns: g.nodes[e.from as usize].1,
            dur_ns: e.w,
            category: cat,
            data_loader: job.role(rank.events.name[i]).data_loader,
        });
    }
    (ops, by_category)
}

/// Operators by time on the path (ties: by name).
pub(super) fn top_ops(ops: &[PathOp]) -> Vec<CriticalOp> {
    let mut agg: BTreeMap<(&str, Category), (u64, Ns, bool)> = BTreeMap::new();
    for o in ops {
        let a = agg.entry((o.name.as_str(), o.category)).or_default();
        a.0 += 1;
        a.1 += o.dur_ns;
        a.2 |= o.data_loader;
    }
    let mut top: Vec<CriticalOp> = agg
        .into_iter()
        .map(
            |((name, category), (count, total_ns, data_loader))| CriticalOp {
                name: name.to_string(),
                category,
                count,
                total_ns,
                data_loader,
            },
        )
        .collect();
    top.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    top
}
