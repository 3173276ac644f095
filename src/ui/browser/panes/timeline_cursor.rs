//! The timeline's cursor: on the selected row it stops at each band and at each stretch no
//! band covers (`w` / `b` walk them in time order; the view follows), and a range runs from a
//! marked instant (`v`) to the cursor. The inspector reads what is under it.

use super::timeline_nav::{display_rows, follow};
pub use crate::analysis::timeline::Stop;
use crate::analysis::timeline::{Row, Timeline};
use crate::time::Ns;
use crate::ui::UiMsg;
use crate::ui::browser::Browser;
use crate::ui::shell::Ctx;

/// The axis of timeline `t`: what [`Row::stops`] runs over.
pub fn axis(t: &Timeline) -> (Ns, Ns) {
    (t.start, t.end)
}

/// The selected row: the first timeline row of the selected display row.
pub fn row<'a>(b: &Browser, t: &'a Timeline, size: (u16, u16)) -> Option<&'a Row> {
    let rows = display_rows(b, t, size);
    t.rows.get(rows.get(b.panes.timeline.view.row)?.start)
}

/// The stop under the cursor: the gap it is on, else the selected operator's band.
pub fn current(b: &Browser, row: &Row, stops: &[Stop]) -> Option<usize> {
    if let Some((a, z)) = b.panes.timeline.view.gap {
        return stops.iter().position(|s| *s == Stop::Gap(a, z));
    }
    let (name, k) = b.panes.timeline.view.op?;
    let (i, _) = row
        .bands
        .iter()
        .enumerate()
        .filter(|(_, x)| x.name == name)
        .nth(k)?;
    stops.iter().position(|s| *s == Stop::Band(i))
}

/// The interval a stop covers.
pub fn span(row: &Row, s: Stop) -> (Ns, Ns) {
    match s {
        Stop::Band(i) => (row.bands[i].start, row.bands[i].end),
        Stop::Gap(a, z) => (a, z),
    }
}

/// `w` / `b`: the next (previous) stop on the selected row — from the first one in view
/// when the cursor is on none — and the view follows it.
pub fn walk(b: &mut Browser, forward: bool, ctx: &mut Ctx<UiMsg>) {
    let Some(t) = b.timeline() else { return };
    let Some(row) = row(b, t, ctx.size) else {
        return;
    };
    let stops = row.stops(axis(t));
    let (w0, w1) = super::timeline_nav::window(b, t);
    let next = match current(b, row, &stops) {
        Some(i) if forward => Some(i + 1),
        Some(i) => i.checked_sub(1),
        None if forward => stops.iter().position(|&s| span(row, s).1 > w0),
        None => stops.iter().rposition(|&s| span(row, s).0 < w1),
    };
    let Some(&stop) = next.and_then(|i| stops.get(i)) else {
        ctx.status = Some("no more bands on this row".into());
        return;
    };
    let (s, e) = span(row, stop);
    match stop {
        Stop::Band(i) => {
            let op = (row.bands[i].name, row.occurrence_index(i));
            b.panes.timeline.view.op = Some(op);
            b.panes.timeline.view.gap = None;
        }
        Stop::Gap(a, z) => b.panes.timeline.view.gap = Some((a, z)),
    }
    follow(b, s, e);
}

/// A click on the selected row at cell `col` of `cols`: the cursor to the band at that time
/// (the shortest of those holding it: the most specific), else the gap there.
pub fn point_at(b: &mut Browser, col: u16, cols: u16, ctx: &mut Ctx<UiMsg>) {
    let Some(t) = b.timeline() else { return };
    let Some(row) = row(b, t, ctx.size) else {
        return;
    };
    let (w0, w1) = super::timeline_nav::window(b, t);
    let cell = |c: u16| w0 + ((w1 - w0) as i128 * i128::from(c) / i128::from(cols.max(1))) as Ns;
    // The cell's middle.
    let at = cell(col) + (cell(col + 1) - cell(col)) / 2;
    let stops = row.stops(axis(t));
    let holds = |s: &Stop| {
        let (a, z) = span(row, *s);
        a <= at && at < z
    };
    let band = stops
        .iter()
        .filter(|s| matches!(s, Stop::Band(_)) && holds(s))
        .min_by_key(|s| {
            let (a, z) = span(row, **s);
            z - a
        });
    match band.or_else(|| stops.iter().find(|s| holds(s))) {
        Some(&Stop::Band(i)) => {
            b.panes.timeline.view.op = Some((row.bands[i].name, row.occurrence_index(i)));
            b.panes.timeline.view.gap = None;
        }
        Some(&Stop::Gap(a, z)) => b.panes.timeline.view.gap = Some((a, z)),
        None => {}
    }
}

/// `n` / `N` on the timeline: the next (previous) occurrence in time, over every row, of the
/// search result the cursor is on; false when the cursor is not on it or it has no further
/// occurrence (the search moves on to the next result).
pub fn next_hit(b: &mut Browser, forward: bool, ctx: &mut Ctx<UiMsg>) -> bool {
    let (Some(name), Some((sel, k))) = (b.search.current(), b.panes.timeline.view.op) else {
        return false;
    };
    let Some(t) = b.timeline() else { return false };
    if sel != name || b.panes.timeline.view.gap.is_some() {
        return false;
    }
    let rows = display_rows(b, t, ctx.size);
    let Some(cur_row) = rows.get(b.panes.timeline.view.row).map(|r| r.start) else {
        return false;
    };
    // Every occurrence: (start, row, k, end), in time order.
    let mut hits: Vec<(Ns, usize, usize, Ns)> = Vec::new();
    for (ri, r) in t.rows.iter().enumerate() {
        let named = r.bands.iter().filter(|x| x.name == name);
        hits.extend(named.enumerate().map(|(k, x)| (x.start, ri, k, x.end)));
    }
    hits.sort_unstable();
    let Some(at) = hits.iter().position(|h| (h.1, h.2) == (cur_row, k)) else {
        return false;
    };
    let next = if forward {
        at + 1
    } else {
        match at.checked_sub(1) {
            Some(i) => i,
            None => return false,
        }
    };
    let Some(&(start, ri, k, end)) = hits.get(next) else {
        return false;
    };
    let total: Ns = hits.iter().map(|h| h.3 - h.0).sum();
    let n = hits.len();
    super::timeline_nav::select_row(b, ri, ctx.size);
    b.panes.timeline.view.op = Some((name, k));
    follow(b, start, end);
    ctx.status = Some(format!(
        "hit {} of {n} on this axis, {} together: {}",
        next + 1,
        crate::format::human(total),
        crate::format::fit_name(b.name(name), 50)
    ));
    true
}

/// `v`: marks a range from the cursor's start, or clears the one marked.
pub fn mark(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    if b.panes.timeline.view.mark.take().is_some() {
        ctx.status = Some("range cleared".into());
        return;
    }
    let Some(t) = b.timeline() else { return };
    let at = row(b, t, ctx.size).and_then(|r| {
        let stops = r.stops(axis(t));
        current(b, r, &stops).map(|i| span(r, stops[i]).0)
    });
    b.panes.timeline.view.mark = Some(at.unwrap_or(super::timeline_nav::window(b, t).0));
    ctx.status = Some("range marked: move the cursor (w, b) to widen it; v clears".into());
}

/// The marked range: from the mark to the far end of the stop under the cursor.
pub fn range(b: &Browser, t: &Timeline, row: &Row) -> Option<(Ns, Ns)> {
    let m = b.panes.timeline.view.mark?;
    let stops = row.stops(axis(t));
    let (s, e) = current(b, row, &stops).map_or((m, m), |i| span(row, stops[i]));
    Some((m.min(s), m.max(e)))
}

/// Drops a gap that is not on the selected row any more (the row or the step changed).
pub fn keep_valid(b: &mut Browser, size: (u16, u16)) {
    let Some(g) = b.panes.timeline.view.gap else {
        return;
    };
    let ok = b.timeline().is_some_and(|t| {
        row(b, t, size).is_some_and(|r| r.stops(axis(t)).contains(&Stop::Gap(g.0, g.1)))
    });
    if !ok {
        b.panes.timeline.view.gap = None;
    }
}
