//! The structural check of a draft read from a model file: every index it holds points
//! where a reader's would (names into its table, events into its columns, lanes and steps
//! into theirs), and its events are grouped by lane in start order. Times are checked after,
//! as every reader's are (`bounds.rs`). A file that passes cannot make an analysis index out
//! of bounds.

use crate::ingest::RankDraft;
use crate::model::{EventIx, NO_STEP, Rank, Sym};

/// `Ok` when every index of `d` holds; else the first that does not.
pub(super) fn draft(d: &RankDraft) -> Result<(), String> {
    let names = d.strings.len();
    let r = &d.rank;
    columns(r)?;
    lanes(r, names)?;
    events(r, names)?;
    side_tables(r, names)
}

/// Every event column as long as the first.
fn columns(r: &Rank) -> Result<(), String> {
    let e = &r.events;
    let lens = [
        e.dur.len(),
        e.name.len(),
        e.lane.len(),
        e.kind.len(),
        e.step.len(),
        e.link.len(),
        e.op.len(),
        e.raw.len(),
    ];
    if lens.iter().any(|&l| l != e.len()) {
        return Err("the event columns differ in length".into());
    }
    Ok(())
}

/// A name index in range.
fn name(s: Sym, names: usize, what: &str) -> Result<(), String> {
    if (s as usize) < names {
        Ok(())
    } else {
        Err(format!("{what} names string {s} of {names}"))
    }
}

/// An optional name in range.
fn opt_name(s: Option<Sym>, names: usize, what: &str) -> Result<(), String> {
    s.map_or(Ok(()), |s| name(s, names, what))
}

/// An event index in range (`NONE` when `none` allows it).
fn event(e: EventIx, n: usize, none: bool, what: &str) -> Result<(), String> {
    if (none && e.is_none()) || (e.0 as usize) < n {
        Ok(())
    } else {
        Err(format!("{what} refers to event {} of {n}", e.0))
    }
}

/// Lanes partition the events in order, each event on its lane, in start order.
fn lanes(r: &Rank, names: usize) -> Result<(), String> {
    let e = &r.events;
    if r.lanes.len() > u16::MAX as usize + 1 {
        return Err(format!("{} lanes", r.lanes.len()));
    }
    let mut next = 0usize;
    for (k, l) in r.lanes.iter().enumerate() {
        for s in [l.pid, l.tid, l.name] {
            name(s, names, "a lane")?;
        }
        let end = next + l.count as usize;
        if l.first as usize != next || end > e.len() {
            return Err(format!("lane {k} does not follow the lane before it"));
        }
        let on_lane = e.lane[next..end].iter().all(|&x| x as usize == k);
        let ordered = e.start[next..end].windows(2).all(|w| w[0] <= w[1]);
        if !on_lane || !ordered {
            return Err(format!("lane {k}'s events are not its own in start order"));
        }
        next = end;
    }
    if next != e.len() {
        return Err(format!("{} events on no lane", e.len() - next));
    }
    if r.stepping_lane.is_some_and(|l| l as usize >= r.lanes.len()) {
        return Err("the stepping lane is not a lane".into());
    }
    Ok(())
}

/// Each event's name, step, link and operator in range.
fn events(r: &Rank, names: usize) -> Result<(), String> {
    let e = &r.events;
    let n = e.len();
    if let Some(&s) = e.name.iter().find(|&&s| s as usize >= names) {
        return name(s, names, "an event");
    }
    let steps = r.steps.len();
    if let Some(&s) = e
        .step
        .iter()
        .find(|&&s| s != NO_STEP && s as usize >= steps)
    {
        return Err(format!("an event is in step {s} of {steps}"));
    }
    for (col, what) in [(&e.link, "a launch link"), (&e.op, "an operator link")] {
        if let Some(&x) = col.iter().find(|x| !x.is_none() && x.0 as usize >= n) {
            return event(x, n, true, what);
        }
    }
    Ok(())
}

/// The tables beside the events: their events and names in range, in event order.
fn side_tables(r: &Rank, names: usize) -> Result<(), String> {
    let n = r.events.len();
    for &s in &r.devices {
        name(s, names, "a device")?;
    }
    for &(s, _) in &r.unknown_categories {
        name(s, names, "a category")?;
    }
    for c in &r.collectives {
        event(c.event, n, false, "a collective")?;
        for s in [c.name, c.dtype, c.group, c.group_ranks] {
            opt_name(s, names, "a collective")?;
        }
    }
    for o in &r.shapes {
        event(o.event, n, false, "an operator shape")?;
        opt_name(o.dims, names, "an operator shape")?;
        opt_name(o.types, names, "an operator shape")?;
    }
    for t in &r.tasks {
        event(t.event, n, false, "a task")?;
        for s in [t.op_type, t.input_shapes, t.input_types] {
            opt_name(s, names, "a task")?;
        }
    }
    pre_window(r)?;
    for w in &r.peer_waits {
        event(w.event, n, false, "a peer wait")?;
    }
    for t in &r.transfers {
        event(t.event, n, false, "a transfer")?;
    }
    Ok(())
}

/// The device work queued before the trace window, as a reader measures it: its end one of
/// the rank's event ends (within their span), its busy time at most theirs in sum. Analyses
/// start the first step there, so a value from nowhere would stretch every span.
fn pre_window(r: &Rank) -> Result<(), String> {
    let e = &r.events;
    let p = &r.pre_window;
    if let Some(end) = p.end {
        let lo = e.start.iter().copied().min();
        let hi = (0..e.len())
            .map(|i| e.start[i].saturating_add(e.dur[i]))
            .max();
        if !matches!((lo, hi), (Some(lo), Some(hi)) if lo <= end && end <= hi) {
            return Err(format!(
                "the work before the trace window ends at {end} ns, outside the rank's events"
            ));
        }
    }
    let busy = e.dur.iter().fold(0i64, |a, &d| a.saturating_add(d.max(0)));
    if p.busy_ns < 0 || p.busy_ns > busy {
        return Err(format!(
            "the work before the trace window is busy {} ns: out of range",
            p.busy_ns
        ));
    }
    Ok(())
}
