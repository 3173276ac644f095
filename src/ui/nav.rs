//! Navigation: what `Enter` opens in each view, the advisor's jump to a finding's evidence,
//! the timeline's zoom, pan and next-of-kind moves, and the length of each view's list.

use super::app::{App, Level, Pane};
use super::keymap::Action;
use super::panes::timeline as tlpane;
use crate::analysis::critical_path::Category;
use crate::analysis::timeline::Timeline;
use crate::model::Sym;
use crate::time::Ns;
use std::ops::Range;

/// Ranks per overview row: groups keep the heat map at ≤ 64 rows (a straggler stays a
/// visible stripe: a group shows its worst member).
pub fn rank_groups(n: usize) -> Vec<Range<usize>> {
    let g = n.div_ceil(64).max(1);
    (0..n).step_by(g).map(|a| a..(a + g).min(n)).collect()
}

/// Length of the current view's list.
pub fn list_len(app: &App) -> usize {
    let an = &app.data.analysis;
    match (app.pane, app.level()) {
        (Pane::Overview, Level::Device(_)) => {
            app.cache.device_ops.as_ref().map_or(0, |d| d.1.len())
        }
        (Pane::Overview, _) => rank_groups(app.data.loaded.job.ranks.len()).len(),
        (Pane::Timeline, _) => app
            .timeline()
            .map_or(0, |t| tlpane::display_rows(app, t).len()),
        (Pane::Critical, _) => app.critical().map_or(0, |c| c.ops.len()),
        (Pane::Roofline, _) => an.roofline.ops.len(),
        (Pane::Advisor, _) => an.findings.len(),
        (Pane::Operator, Level::Operator(op)) => app
            .cache
            .op
            .as_ref()
            .filter(|o| o.0 == op)
            .map_or(0, |o| o.2.per_rank.len()),
        (Pane::Operator, _) => op_list(app).len(),
        (Pane::Comm, _) => app.cache.comm_ranks.as_ref().map_or(0, |c| c.1.len()),
    }
}

/// The operator list of the operator pane without an operator: the device's operators at
/// device level, else the job's.
pub fn op_list(app: &App) -> &[crate::analysis::ops::OpStat] {
    match (app.device(), &app.cache.device_ops) {
        (Some(r), Some((cr, ops))) if r == *cr => ops,
        _ => &app.data.analysis.top_ops,
    }
}

/// The rank (index) of an overview row: the group's slowest member in the selected step.
pub fn overview_rank(app: &App, row: usize) -> Option<usize> {
    let job = &app.data.loaded.job;
    let group = rank_groups(job.ranks.len()).into_iter().nth(row)?;
    let step = app.step_number();
    let span = |i: usize| {
        app.data
            .analysis
            .breakdown
            .iter()
            .find(|b| Some(b.step) == step && b.rank == job.ranks[i].id)
            .map_or(0, |b| b.span_ns)
    };
    group.max_by(|&a, &b| span(a).cmp(&span(b)).then(b.cmp(&a)))
}

fn rank_index(app: &App, id: u32) -> Option<usize> {
    app.data.loaded.job.ranks.iter().position(|r| r.id == id)
}

fn sym(app: &App, name: &str) -> Option<Sym> {
    app.data.loaded.job.strings.get(name)
}

/// `Enter`: drill in, expand, or jump, depending on the view.
pub fn enter(app: &mut App) {
    let row = app.selected();
    match (app.pane, app.level()) {
        (Pane::Overview, Level::Cluster) => {
            if let Some(r) = overview_rank(app, row) {
                app.push(Level::Device(r), Pane::Overview);
            }
        }
        (Pane::Overview, _) | (Pane::Operator, Level::Cluster | Level::Device(_)) => {
            let list = if app.pane == Pane::Overview {
                app.cache
                    .device_ops
                    .as_ref()
                    .map(|d| d.1.as_slice())
                    .unwrap_or(&[])
            } else {
                op_list(app)
            };
            if let Some(op) = list.get(row).map(|o| o.name) {
                app.push(Level::Operator(op), Pane::Operator);
            }
        }
        (Pane::Timeline, _) => timeline_enter(app, row),
        (Pane::Critical, _) => {
            let Some(op) = app.critical().and_then(|c| c.ops.get(row)).cloned() else {
                return;
            };
            let Some(name) = sym(app, &op.name) else {
                return;
            };
            let Some(r) = rank_index(app, op.rank) else {
                return;
            };
            let off = app
                .data
                .analysis
                .comm
                .offsets
                .get(r)
                .map_or(0, |o| o.offset_ns);
            let on_device = matches!(op.category, Category::GpuCompute | Category::Communication);
            if !on_device && app.device() != Some(r) {
                app.push(Level::Device(r), Pane::Timeline);
            }
            app.pane = Pane::Timeline;
            app.tl.focus = Some((op.rank, name, op.start_ns + off));
        }
        (Pane::Roofline, _) => {
            let name = app
                .data
                .analysis
                .roofline
                .ops
                .get(row)
                .map(|o| o.op.clone());
            match name.as_deref().and_then(|n| sym(app, n)) {
                Some(s) => app.push(Level::Operator(s), Pane::Operator),
                None => app.status = Some("no operator of that name in the trace".into()),
            }
        }
        (Pane::Advisor, _) => evidence(app, row),
        (Pane::Operator, Level::Operator(op)) => {
            let rank = app
                .cache
                .op
                .as_ref()
                .filter(|o| o.0 == op)
                .and_then(|o| o.2.per_rank.get(row))
                .map(|r| r.rank);
            if let Some(rank) = rank {
                app.pane = Pane::Timeline;
                app.tl.op = Some((op, 0));
                app.tl.focus_rank = Some(rank);
            }
        }
        (Pane::Comm, _) => {
            let rank = app
                .cache
                .comm_ranks
                .as_ref()
                .and_then(|c| c.1.get(row))
                .map(|c| c.rank);
            if let Some(r) = rank.and_then(|id| rank_index(app, id)) {
                app.push(Level::Device(r), Pane::Overview);
            }
        }
    }
}

fn timeline_enter(app: &mut App, row: usize) {
    let Some(t) = app.timeline() else { return };
    let rows = tlpane::display_rows(app, t);
    let Some(range) = rows.get(row).cloned() else {
        return;
    };
    if range.len() > 1 {
        app.tl.expanded = Some((range.start, range.end));
        app.tl.row = 0;
        return;
    }
    let r = &t.rows[range.start];
    match app.device() {
        None => {
            let (idx, rank) = (r.rank_index as usize, r.rank);
            app.push(Level::Device(idx), Pane::Timeline);
            app.tl.focus_rank = Some(rank);
        }
        Some(_) => {
            if let Some((op, _)) = app.tl.op {
                app.push(Level::Operator(op), Pane::Operator);
            }
        }
    }
}

/// Rules whose evidence is best seen in the comm view.
const COMM_RULES: [&str; 6] = [
    "slow_link",
    "low_bandwidth",
    "small_messages",
    "misaligned_sizes",
    "comm_wait_dominated",
    "poor_overlap",
];

/// The advisor's `Enter`: opens the finding's evidence — its operator, its rank and step, or
/// the view its rule is about.
pub fn evidence(app: &mut App, row: usize) {
    let Some(f) = app.data.analysis.findings.get(row) else {
        return;
    };
    let (rule, ev) = (f.rule, f.evidence.clone());
    if let Some(s) = ev
        .steps
        .first()
        .and_then(|s| app.data.steps.iter().position(|x| x == s))
    {
        app.step = s;
    }
    let op = ev.ops.iter().find_map(|o| sym(app, o));
    let rank = ev.ranks.first().and_then(|&id| rank_index(app, id));
    if COMM_RULES.contains(&rule) {
        app.pane = Pane::Comm;
        app.refresh(); // the per-rank rows of the (possibly new) step
        if let Some(id) = ev.ranks.first() {
            let at = app
                .cache
                .comm_ranks
                .as_ref()
                .and_then(|c| c.1.iter().position(|x| x.rank == *id));
            app.sel[Pane::Comm.index()] = at.unwrap_or(0);
        }
    } else if rule == "critical_path_host" {
        app.pane = Pane::Critical;
    } else if let Some(op) = op {
        app.push(Level::Operator(op), Pane::Operator);
    } else if let Some(r) = rank {
        app.push(Level::Device(r), Pane::Overview);
    } else if rule.starts_with("roofline") || rule.contains("gemm") {
        app.pane = Pane::Roofline;
    } else {
        app.pane = Pane::Overview;
    }
}

/// The first collective of the step (else the first band): the operator a fresh timeline
/// highlights.
pub fn default_op(t: &Timeline) -> Option<(Sym, usize)> {
    use crate::analysis::timeline::BandKind;
    let pick = |want: Option<BandKind>| {
        t.rows.iter().find_map(|r| {
            let i = r
                .bands
                .iter()
                .position(|b| want.is_none_or(|k| b.kind == k))?;
            Some((r.bands[i].name, r.occurrence_index(i)))
        })
    };
    pick(Some(BandKind::Collective)).or_else(|| pick(None))
}

/// The visible window of the timeline.
pub fn window(app: &App, t: &Timeline) -> (Ns, Ns) {
    app.tl.zoom.unwrap_or((t.start, t.end.max(t.start + 1)))
}

/// Zoom and pan.
pub fn zoom(app: &mut App, a: Action) {
    let Some(t) = app.timeline() else { return };
    let (full_a, full_b) = (t.start, t.end.max(t.start + 1));
    let (a0, b0) = window(app, t);
    let w = b0 - a0;
    let center = app
        .tl
        .op
        .and_then(|(s, k)| selected_band(app, t, s, k))
        .map(|(s, e)| s + (e - s) / 2)
        .filter(|c| (a0..=b0).contains(c))
        .unwrap_or(a0 + w / 2);
    let (na, nb) = match a {
        Action::ZoomIn => {
            let nw = (w / 2).max(1_000);
            (center - nw / 2, center - nw / 2 + nw)
        }
        Action::ZoomOut => (center - w, center + w),
        Action::PanLeft => (a0 - w / 4, b0 - w / 4),
        Action::PanRight => (a0 + w / 4, b0 + w / 4),
        _ => (full_a, full_b),
    };
    app.tl.zoom = clamp(na, nb, full_a, full_b);
}

/// A window inside the step (shifted back in when panned out); `None` when it covers it.
fn clamp(a: Ns, b: Ns, full_a: Ns, full_b: Ns) -> Option<(Ns, Ns)> {
    let w = b - a;
    if w >= full_b - full_a {
        return None;
    }
    let a = a.max(full_a).min(full_b - w);
    Some((a, a + w))
}

/// Start and end of the selected operator on the selected row (or the first row having it).
pub fn selected_band(app: &App, t: &Timeline, s: Sym, k: usize) -> Option<(Ns, Ns)> {
    let rows = tlpane::display_rows(app, t);
    let first = rows.get(app.tl.row).map_or(0, |r| r.start);
    let b = t
        .rows
        .get(first)
        .and_then(|r| r.occurrence(s, k))
        .or_else(|| t.rows.iter().find_map(|r| r.occurrence(s, k)))?;
    Some((b.start, b.end))
}

/// `>` / `<`: the next (previous) operator of the selected operator's kind on the selected
/// row; the view follows it.
pub fn next_of_kind(app: &mut App, forward: bool) {
    let Some(t) = app.timeline() else { return };
    let rows = tlpane::display_rows(app, t);
    let Some(row) = rows.get(app.tl.row).and_then(|r| t.rows.get(r.start)) else {
        return;
    };
    let (a0, _) = window(app, t);
    let cur = app.tl.op.and_then(|(s, k)| {
        let mut seen = 0;
        row.bands.iter().position(|b| {
            let hit = b.name == s && seen == k;
            seen += usize::from(b.name == s);
            hit
        })
    });
    let kind = cur.map(|i| row.bands[i].kind);
    let start = cur.unwrap_or_else(|| row.bands.partition_point(|b| b.start < a0));
    let same = |i: &usize| kind.is_none_or(|k| row.bands[*i].kind == k);
    let next = if forward {
        (start + usize::from(cur.is_some())..row.bands.len()).find(same)
    } else {
        (0..start).rev().find(same)
    };
    let Some(j) = next else {
        app.status = Some("no more operators of this kind on this row".into());
        return;
    };
    let b = row.bands[j];
    let k = row.occurrence_index(j);
    let (full_a, full_b) = (t.start, t.end.max(t.start + 1));
    let (wa, wb) = window(app, t);
    app.tl.op = Some((b.name, k));
    if b.start < wa || b.end > wb {
        let w = (wb - wa).max(b.end - b.start);
        let c = b.start + (b.end - b.start) / 2;
        app.tl.zoom = clamp(c - w / 2, c - w / 2 + w, full_a, full_b);
    }
}

/// Resolves a pending focus (critical path jump, operator → rank): selects the row and the
/// band and zooms around it.
pub fn resolve_focus(app: &mut App) {
    if let Some((rank, name, start)) = app.tl.focus.take() {
        let Some(t) = app.timeline() else { return };
        let (t0, t1) = (t.start, t.end.max(t.start + 1));
        let found = t
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.rank == rank)
            .find_map(|(ri, r)| {
                let i = r
                    .bands
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.name == name)
                    .min_by_key(|(_, b)| (b.start - start).abs())?
                    .0;
                Some((ri, r.occurrence_index(i), r.bands[i]))
            });
        match found {
            Some((ri, k, b)) => {
                app.tl.op = Some((name, k));
                let d = (b.end - b.start).max((t1 - t0) / 200).max(1_000);
                app.tl.zoom = clamp(b.start - 2 * d, b.end + 2 * d, t0, t1);
                app.tl.expanded = None;
                select_row(app, ri);
            }
            None => app.status = Some("that operator is not on this rank's timeline rows".into()),
        }
    }
    if let Some(rank) = app.tl.focus_rank.take() {
        if let Some(ri) = app.timeline().and_then(|t| t.row_of_rank(rank)) {
            app.tl.expanded = None;
            select_row(app, ri);
        }
    }
}

/// Selects the display row holding timeline row `ri`.
pub fn select_row(app: &mut App, ri: usize) {
    let Some(t) = app.timeline() else { return };
    let rows = tlpane::display_rows(app, t);
    app.tl.row = rows.iter().position(|r| r.contains(&ri)).unwrap_or(0);
}
