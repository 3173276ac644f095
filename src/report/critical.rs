//! The critical-path table of the text and markdown reports.

use super::table::Table;
use crate::analysis::critical_path::CriticalPath;
use crate::format::{human, join, pct};

/// Critical operators listed.
pub const CRITICAL_OPS: usize = 10;

/// The critical path as the report carries it: the [`super::JSON_PATH_OPS`] longest
/// stretches, in path order, and as many critical operators (a big trace's path has 10⁵
/// stretches; `ops_total` says how many).
pub fn for_json(c: &CriticalPath) -> CriticalPath {
    let mut keep: Vec<usize> = (0..c.ops.len()).collect();
    keep.sort_by_key(|&i| (std::cmp::Reverse(c.ops[i].dur_ns), i));
    keep.truncate(super::JSON_PATH_OPS);
    keep.sort_unstable();
    // Field by field: `..c.clone()` would copy the whole path only to drop it.
    CriticalPath {
        window: c.window.clone(),
        ranks: c.ranks.clone(),
        total_ns: c.total_ns,
        by_category: c.by_category.clone(),
        ops: keep.into_iter().map(|i| c.ops[i].clone()).collect(),
        ops_total: c.ops_total,
        through: c.through.clone(),
        top_ops: c
            .top_ops
            .iter()
            .take(super::JSON_PATH_OPS)
            .cloned()
            .collect(),
        graph: c.graph,
    }
}

/// The critical path as a table: its length, time by category, and the operators on it.
/// Counts come from the whole path (`ops_total`, `through`), not from the cut `ops`.
pub fn table(c: &CriticalPath) -> Table {
    // Categories by name, as the JSON writes them.
    let mut by_name: Vec<(&str, i64)> = c
        .by_category
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    by_name.sort_unstable();
    let cats: Vec<String> = by_name
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k} {} ({})", human(*v), pct(c.share(*v))))
        .collect();
    Table {
        title: format!(
            "Critical path of {}: {} through rank(s) {} ({} ops on the path)",
            c.window,
            human(c.total_ns),
            join(&c.through),
            c.ops_total
        ),
        header: vec!["<operator", "<category", "count", "on path", "share"],
        rows: c
            .top_ops
            .iter()
            .take(CRITICAL_OPS)
            .map(|o| {
                vec![
                    o.name.clone(),
                    o.category.as_str().to_string(),
                    o.count.to_string(),
                    human(o.total_ns),
                    pct(c.share(o.total_ns)),
                ]
            })
            .collect(),
        notes: vec![format!("by category: {}", cats.join(", "))],
    }
}
