//! Evidence jumps and the way back: a jump (a finding's Enter) opens the view its proof
//! names ([`open`]), and remembers the exact place it left — drill-down path, pane, step,
//! selections, timeline and comm views — so Esc at the level the jump landed on restores it,
//! instead of leaving the jump's step and pane behind.

use super::{Browser, CommView, Focus, Level, Pane, TimelineView};
use crate::analysis::advisor::View;
use crate::analysis::advisor::proof::Target;
use crate::model::{EventIx, RankIx, StepNo};
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;

/// A place in the browser to come back to.
#[derive(Debug, Clone)]
pub struct Place {
    stack: Vec<(Level, Pane)>,
    pane: Pane,
    step: usize,
    sel: [usize; Pane::ALL.len()],
    device_row: usize,
    op_row: usize,
    tl: TimelineView,
    comm: CommView,
    /// The drill-down depth the jump landed at: Esc from deeper pops levels first.
    depth: usize,
}

impl Browser {
    /// Where the browser is now (taken before a jump).
    pub fn place(&self) -> Place {
        Place {
            stack: self.nav.stack.clone(),
            pane: self.nav.pane,
            step: self.nav.step,
            sel: self.panes.rows,
            device_row: self.panes.device.row,
            op_row: self.panes.operator.row,
            tl: self.panes.timeline.view.clone(),
            comm: self.panes.comm.view,
            depth: 0,
        }
    }

    /// A jump from `from` has landed: Esc at this depth comes back to it.
    pub fn jumped(&mut self, mut from: Place) {
        from.depth = self.nav.stack.len();
        self.nav.jumps.push(from);
    }

    /// Esc after a jump, at the depth it landed on: back to where it left; false when no jump
    /// is to be undone here.
    pub fn return_from_jump(&mut self) -> bool {
        let Some(p) = self.nav.jumps.last() else {
            return false;
        };
        if self.nav.stack.len() > p.depth {
            return false;
        }
        let p = self.nav.jumps.pop().expect("checked");
        self.nav.stack = p.stack;
        self.nav.pane = p.pane;
        self.nav.step = p.step;
        self.panes.rows = p.sel;
        self.panes.device.row = p.device_row;
        self.panes.operator.row = p.op_row;
        self.panes.timeline.view = p.tl;
        self.panes.comm.view = p.comm;
        true
    }

    /// Selects step number `n` (when the job has it); the timeline shows it whole.
    fn select_step(&mut self, n: Option<StepNo>) {
        if let Some(i) = n.and_then(|n| self.steps().iter().position(|x| *x == n)) {
            self.nav.step = i;
            self.panes.timeline.view.zoom = None;
        }
    }

    /// Rank `r`'s clock offset: what its times add on the aligned clock the timeline draws.
    pub fn offset(&self, r: RankIx) -> crate::time::Ns {
        let offsets = &self.data.analysis.comm.offsets;
        offsets.get(r.get()).map_or(0, |o| o.offset_ns)
    }

    /// A pending timeline selection of rank `r`'s event `e`.
    fn focus_on(&self, r: RankIx, e: EventIx) -> Focus {
        let rank = self.data.loaded.job.rank(r);
        let off = self.offset(r);
        let i = e.index();
        Focus {
            rank: rank.id,
            name: rank.events.name[i],
            start: rank.events.start[i] + off,
            end: rank.events.end(i) + off,
        }
    }
}

/// Opens the view `t` names with its selection, and says in the status line what it shows.
pub fn open(b: &mut Browser, t: Target, ctx: &mut Ctx<UiMsg>) {
    match t {
        Target::RankLanes {
            rank, step, band, ..
        } => {
            b.select_step(Some(step));
            b.nav.stack.truncate(1);
            b.push(Level::Device(rank), Pane::Timeline);
            b.panes.timeline.view.focus = band.map(|e| b.focus_on(rank, e));
        }
        Target::Cluster {
            step,
            rank,
            band,
            gap,
        } => {
            b.select_step(Some(step));
            b.nav.stack.truncate(1);
            b.nav.pane = Pane::Timeline;
            b.panes.timeline.view.expanded = None;
            b.panes.timeline.view.focus = rank.zip(band).map(|(r, e)| b.focus_on(r, e));
            b.panes.timeline.view.gap = gap;
            b.panes.timeline.view.focus_rank = rank.map(|r| b.data.loaded.job.rank(r).id);
        }
        Target::Comm {
            step,
            rank,
            max_bytes,
        } => {
            b.select_step(step);
            b.nav.pane = Pane::Comm;
            b.panes.comm.view.max_bytes = max_bytes;
            // The comm pane selects the rank's row once it has the (possibly new) step's rows.
            b.panes.comm.focus = Some(rank);
        }
        Target::Critical { step } => {
            b.select_step(step);
            b.nav.pane = Pane::Critical;
        }
        Target::Operator { name, step } => {
            b.select_step(step);
            b.push(Level::Operator(name), Pane::Operator);
        }
        Target::Device { rank, step } => {
            b.select_step(step);
            b.push(Level::Device(rank), Pane::Overview);
        }
        Target::View(v) => {
            b.nav.pane = match v {
                View::Roofline => Pane::Roofline,
                View::Overview => Pane::Overview,
            }
        }
    }
    let why = crate::prose::landing(&b.data.loaded.job, &t);
    ctx.status = Some(format!("{why} (Esc: back)"));
}
