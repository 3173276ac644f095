//! The timeline's moves: the operator a fresh timeline selects, zoom and pan, the next
//! operator of a kind, jumps from other panes (a critical stretch, an operator's rank), the
//! rows shown when ranks outnumber the lines, and the selected operator on every row.

use crate::analysis::timeline::{Band, BandKind, Timeline};
use crate::model::{RankIx, StepNo, Sym};
use crate::time::Ns;
use crate::ui::UiMsg;
use crate::ui::browser::{Browser, Focus, SelectedKey};
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;
use std::ops::Range;

/// Lines above the rows (info, ruler) and below (legend), inside the timeline's block.
pub const CHROME: u16 = 3;

/// Rows available for axes at a terminal size, below which the inspector takes `inspector`
/// lines.
pub fn capacity(size: (u16, u16), inspector: u16) -> usize {
    // header + tabs + footer + block borders + chrome.
    size.1.saturating_sub(3 + 2 + CHROME + inspector).max(1) as usize
}

/// Lines the inspector takes under the rows (borders included) when shown.
const INSPECTOR: u16 = 7;
/// The smallest terminal height that shows the inspector.
const INSPECTOR_MIN_ROWS: u16 = 20;

/// Lines the inspector takes at terminal `size` (0: hidden, or no room).
pub fn inspector_height(b: &Browser, size: (u16, u16)) -> u16 {
    if b.panes.timeline.view.inspector_off || size.1 < INSPECTOR_MIN_ROWS {
        0
    } else {
        INSPECTOR
    }
}

/// The displayed rows: single timeline rows, or groups when they exceed the capacity.
pub fn display_rows(b: &Browser, t: &Timeline, size: (u16, u16)) -> Vec<Range<usize>> {
    let base = b
        .panes
        .timeline
        .view
        .expanded
        .map_or(0..t.rows.len(), |(a, e)| a..e.min(t.rows.len()));
    let n = base.len();
    let g = n.div_ceil(capacity(size, inspector_height(b, size))).max(1);
    base.clone()
        .step_by(g)
        .map(|a| a..(a + g).min(base.end))
        .collect()
}

/// The selected operator on every row: for a collective on the cluster timeline, the bands
/// of its matched instance (`first` is the row it was picked on); otherwise, or when the
/// call is unmatched, its k-th same-named band on each row.
fn selected_bands(
    t: &Timeline,
    comm: &crate::analysis::comm::Comm,
    rank: Option<RankIx>,
    first: usize,
    s: Sym,
    k: usize,
) -> Vec<Option<Band>> {
    let picked = t.rows.get(first).and_then(|r| r.occurrence(s, k));
    match picked {
        Some(band)
            if rank.is_none()
                && !matches!(
                    band.kind,
                    BandKind::Compute | BandKind::Memory | BandKind::Host
                ) =>
        {
            t.instance_occurrences(comm, first, band)
                .unwrap_or_else(|| t.occurrences(s, k))
        }
        _ => t.occurrences(s, k),
    }
}

/// Brings the timeline of (the device level's rank or the cluster, the selected step) into
/// the cache as the current one (reused, or built here), keeps the selection valid, resolves
/// pending jumps, and finds the selected operator on every row.
pub fn prepare(b: &mut Browser, step: StepNo, ctx: &mut Ctx<UiMsg>) {
    let rank = b.device();
    let more = more_steps(b);
    let current = b.shared.timelines.last().map(|t| (t.rank, t.step, t.more));
    if current != Some((rank, step, more)) {
        let kept = &mut b.shared.timelines;
        let t = match kept
            .iter()
            .position(|t| (t.rank, t.step, t.more) == (rank, step, more))
        {
            Some(i) => kept.remove(i).timeline,
            None => build(b, rank, more),
        };
        b.panes.timeline.view.row = b
            .panes
            .timeline
            .view
            .row
            .min(t.rows.len().saturating_sub(1));
        if b.panes
            .timeline
            .view
            .op
            .is_none_or(|(s, k)| !t.rows.iter().any(|r| r.occurrence(s, k).is_some()))
        {
            b.panes.timeline.view.op = default_op(&t);
        }
        b.keep_timeline(rank, step, more, t);
    }
    resolve_focus(b, ctx);
    let rows = b
        .timeline()
        .map_or(0, |t| display_rows(b, t, ctx.size).len());
    b.panes.timeline.view.row = b.panes.timeline.view.row.min(rows.saturating_sub(1));
    let first = b.timeline().map_or(0, |t| {
        display_rows(b, t, ctx.size)
            .get(b.panes.timeline.view.row)
            .map_or(0, |r| r.start)
    });
    let key = b.panes.timeline.view.op.map(|(name, k)| SelectedKey {
        rank,
        step,
        name,
        k,
        row: first,
    });
    if key != b.panes.timeline.selected {
        let data = b.data.clone();
        b.panes.timeline.bands = match (b.panes.timeline.view.op, b.timeline()) {
            (Some((s, k)), Some(t)) => selected_bands(t, &data.analysis.comm, rank, first, s, k),
            _ => Vec::new(),
        };
        b.panes.timeline.selected = key;
    }
}

/// Steps shown after the selected one: as asked, within the job's last step.
fn more_steps(b: &Browser) -> usize {
    b.panes
        .timeline
        .view
        .more_steps
        .min(b.steps().len().saturating_sub(b.nav.step + 1))
}

/// The timeline of the selected step and `more` after it, on one axis: each step's from the
/// cache when kept there, else built.
fn build(b: &Browser, rank: Option<RankIx>, more: usize) -> Timeline {
    let parts: Vec<Timeline> = b.steps()[b.nav.step..=b.nav.step + more]
        .iter()
        .map(|&s| {
            b.shared
                .timelines
                .iter()
                .find(|t| (t.rank, t.step, t.more) == (rank, s, 0))
                .map_or_else(
                    || super::super::work::build_timeline(&b.data, rank, s),
                    |t| t.timeline.clone(),
                )
        })
        .collect();
    crate::analysis::timeline::join(parts)
}

/// `}` / `{`: one step more (fewer) on the axis; the view shows them whole.
pub fn widen(b: &mut Browser, more: bool, ctx: &mut Ctx<UiMsg>) {
    let room = b.steps().len().saturating_sub(b.nav.step + 1);
    let now = more_steps(b);
    let next = if more {
        (now + 1).min(room).min(MAX_MORE)
    } else {
        now.saturating_sub(1)
    };
    if more && next == now {
        ctx.status = Some(if now == room {
            "no later step to add".into()
        } else {
            format!("at most {} steps on one axis", MAX_MORE + 1)
        });
    }
    b.panes.timeline.view.more_steps = next;
    b.panes.timeline.view.zoom = None;
}

/// Steps added after the selected one, at most.
const MAX_MORE: usize = 7;

/// Selects the display row holding timeline row `ri`.
pub fn select_row(b: &mut Browser, ri: usize, size: (u16, u16)) {
    let Some(t) = b.timeline() else { return };
    let rows = display_rows(b, t, size);
    b.panes.timeline.view.row = rows.iter().position(|r| r.contains(&ri)).unwrap_or(0);
}

/// The first collective of the step (else the first band): the operator a fresh timeline
/// highlights.
pub fn default_op(t: &Timeline) -> Option<(Sym, usize)> {
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
pub fn window(b: &Browser, t: &Timeline) -> (Ns, Ns) {
    b.panes.timeline.view.zoom.unwrap_or(full(t))
}

/// The whole step: never empty.
fn full(t: &Timeline) -> (Ns, Ns) {
    (t.start, t.end.max(t.start.saturating_add(1)))
}

/// Zoom and pan.
pub fn zoom(b: &mut Browser, a: Action, size: (u16, u16)) {
    let Some(t) = b.timeline() else { return };
    let (a0, b0) = window(b, t);
    let center = b
        .panes
        .timeline
        .view
        .op
        .and_then(|(s, k)| selected_band(b, t, s, k, size))
        .map(|(s, e)| s + (e - s) / 2)
        .filter(|c| (a0..=b0).contains(c));
    b.panes.timeline.view.zoom = zoomed(a, (a0, b0), center, full(t));
}

/// The window after a zoom or pan of `(a0, b0)` around `center` (default: the middle),
/// kept inside `full`; `None` when it covers all of it. Saturating: windows near the ends of
/// the time range stay windows.
pub fn zoomed(
    a: Action,
    (a0, b0): (Ns, Ns),
    center: Option<Ns>,
    full: (Ns, Ns),
) -> Option<(Ns, Ns)> {
    let w = b0.saturating_sub(a0).max(1);
    let center = center.unwrap_or(a0.saturating_add(w / 2));
    let (na, nb) = match a {
        Action::ZoomIn => {
            let nw = (w / 2).max(1_000);
            let na = center.saturating_sub(nw / 2);
            (na, na.saturating_add(nw))
        }
        Action::ZoomOut => (center.saturating_sub(w), center.saturating_add(w)),
        Action::PanLeft => (a0.saturating_sub(w / 4), b0.saturating_sub(w / 4)),
        Action::PanRight => (a0.saturating_add(w / 4), b0.saturating_add(w / 4)),
        _ => full,
    };
    clamp(na, nb, full.0, full.1)
}

/// A window inside the step (shifted back in when panned out); `None` when it covers it.
fn clamp(a: Ns, b: Ns, full_a: Ns, full_b: Ns) -> Option<(Ns, Ns)> {
    let w = b.saturating_sub(a);
    if w >= full_b.saturating_sub(full_a) {
        return None;
    }
    let a = a.max(full_a).min(full_b - w);
    Some((a, a + w))
}

/// Start and end of the selected operator on the selected row (or the first row having it).
pub fn selected_band(
    b: &Browser,
    t: &Timeline,
    s: Sym,
    k: usize,
    size: (u16, u16),
) -> Option<(Ns, Ns)> {
    let rows = display_rows(b, t, size);
    let first = rows.get(b.panes.timeline.view.row).map_or(0, |r| r.start);
    let band = t
        .rows
        .get(first)
        .and_then(|r| r.occurrence(s, k))
        .or_else(|| t.rows.iter().find_map(|r| r.occurrence(s, k)))?;
    Some((band.start, band.end))
}

/// `>` / `<`: the next (previous) operator of the selected operator's kind on the selected
/// row; the view follows it.
pub fn next_of_kind(b: &mut Browser, forward: bool, ctx: &mut Ctx<UiMsg>) {
    let Some(t) = b.timeline() else { return };
    let rows = display_rows(b, t, ctx.size);
    let Some(row) = rows
        .get(b.panes.timeline.view.row)
        .and_then(|r| t.rows.get(r.start))
    else {
        return;
    };
    let (a0, _) = window(b, t);
    let cur = b.panes.timeline.view.op.and_then(|(s, k)| {
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
        ctx.status = Some("no more operators of this kind on this row".into());
        return;
    };
    let band = row.bands[j];
    let k = row.occurrence_index(j);
    b.panes.timeline.view.op = Some((band.name, k));
    b.panes.timeline.view.gap = None;
    follow(b, band.start, band.end);
}

/// Pans (widening only when it is longer than the window) so that `[s, e)` is in view.
pub fn follow(b: &mut Browser, s: Ns, e: Ns) {
    let Some(t) = b.timeline() else { return };
    let (full_a, full_b) = (t.start, t.end.max(t.start + 1));
    let (wa, wb) = window(b, t);
    if s < wa || e > wb {
        let w = (wb - wa).max(e - s);
        let c = s + (e - s) / 2;
        b.panes.timeline.view.zoom = clamp(c - w / 2, c - w / 2 + w, full_a, full_b);
    }
}

/// The band a focus selects: on the rank's rows, the band of its name nearest its start, else
/// (a call nested under a top-level operator) the band that holds its interval. Returns the
/// row, the band's occurrence index and the band.
fn focus_band(t: &Timeline, f: &Focus) -> Option<(usize, usize, Band)> {
    let rows = || t.rows.iter().enumerate().filter(|(_, r)| r.rank == f.rank);
    let named = rows()
        .filter_map(|(ri, r)| {
            let (i, x) = r
                .bands
                .iter()
                .enumerate()
                .filter(|(_, x)| x.name == f.name)
                .min_by_key(|(_, x)| (x.start - f.start).abs())?;
            Some(((x.start - f.start).abs(), ri, i))
        })
        .min_by_key(|x| x.0);
    let (_, ri, i) = named.or_else(|| {
        rows().find_map(|(ri, r)| {
            let i = r
                .bands
                .iter()
                .position(|x| x.start <= f.start && f.end <= x.end)?;
            Some((0, ri, i))
        })
    })?;
    let r = &t.rows[ri];
    Some((ri, r.occurrence_index(i), r.bands[i]))
}

/// Resolves a pending focus (critical path jump, operator → rank): selects the row and the
/// band and zooms around it.
pub fn resolve_focus(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    if let Some(focus) = b.panes.timeline.view.focus.take() {
        let Some(t) = b.timeline() else { return };
        let (t0, t1) = (t.start, t.end.max(t.start + 1));
        match focus_band(t, &focus) {
            Some((ri, k, band)) => {
                // The selection on every row: a collective's members joined across ranks
                // are in view, so the slant of their edges (the wait) shows.
                let joined = b.device().is_none()
                    && matches!(
                        band.kind,
                        BandKind::Collective | BandKind::Send | BandKind::Recv
                    );
                let all = if joined {
                    selected_bands(t, &b.data.analysis.comm, None, ri, band.name, k)
                } else {
                    Vec::new()
                };
                let (s, e) = all
                    .iter()
                    .flatten()
                    .fold((band.start, band.end), |(s, e), x| {
                        (s.min(x.start), e.max(x.end))
                    });
                let d = (e - s).max((t1 - t0) / 200).max(1_000) / 2;
                b.panes.timeline.view.zoom = clamp(s - d, e + d, t0, t1);
                b.panes.timeline.view.op = Some((band.name, k));
                b.panes.timeline.view.gap = None;
                b.panes.timeline.view.expanded = None;
                select_row(b, ri, ctx.size);
            }
            None => ctx.status = Some("that operator is not on this rank's timeline rows".into()),
        }
    }
    if let Some(rank) = b.panes.timeline.view.focus_rank.take() {
        if let Some(ri) = b.timeline().and_then(|t| t.row_of_rank(rank)) {
            b.panes.timeline.view.expanded = None;
            select_row(b, ri, ctx.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::strategies::instant;
    use proptest::prelude::*;

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            Just(Action::ZoomIn),
            Just(Action::ZoomOut),
            Just(Action::PanLeft),
            Just(Action::PanRight),
            Just(Action::ZoomReset),
        ]
    }

    proptest! {
        /// Any sequence of zooms and pans over any step in the time range keeps a non-empty
        /// window inside the step, or the whole step.
        #[test]
        fn zoom_and_pan_stay_inside_the_step(
            a in instant(),
            b in instant(),
            center in proptest::option::of(instant()),
            moves in proptest::collection::vec(action(), 1..30),
        ) {
            let full = (a.min(b), a.max(b).max(a.min(b) + 1));
            let mut win = full;
            for m in moves {
                let c = center.filter(|c| (win.0..=win.1).contains(c));
                match zoomed(m, win, c, full) {
                    Some((x, y)) => {
                        prop_assert!(full.0 <= x && x < y && y <= full.1, "{:?}", (x, y, full));
                        win = (x, y);
                    }
                    None => win = full,
                }
            }
        }
    }

    #[test]
    fn zooming_in_halves_the_window_around_its_centre() {
        let full = (0, 1_000_000);
        assert_eq!(
            zoomed(Action::ZoomIn, full, None, full),
            Some((250_000, 750_000))
        );
        assert_eq!(
            zoomed(Action::ZoomIn, full, Some(0), full),
            Some((0, 500_000))
        );
        assert_eq!(
            zoomed(Action::ZoomOut, (250_000, 750_000), None, full),
            None
        );
        assert_eq!(
            zoomed(Action::PanRight, (0, 400_000), None, full),
            Some((100_000, 500_000))
        );
        assert_eq!(
            zoomed(Action::PanLeft, (0, 400_000), None, full),
            Some((0, 400_000))
        );
    }
}
