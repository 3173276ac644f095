//! Evidence jumps and the way back: a jump (a finding's Enter) remembers the exact place it
//! left — drill-down path, pane, step, selections, timeline view — and Esc at the level the
//! jump landed on restores it, instead of leaving the jump's step and pane behind.

use super::{Browser, Level, Pane, TimelineView};

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
    /// The drill-down depth the jump landed at: Esc from deeper pops levels first.
    depth: usize,
}

impl Browser {
    /// Where the browser is now (taken before a jump).
    pub fn place(&self) -> Place {
        Place {
            stack: self.stack.clone(),
            pane: self.pane,
            step: self.step,
            sel: self.sel,
            device_row: self.device_row,
            op_row: self.op_row,
            tl: self.tl.clone(),
            depth: 0,
        }
    }

    /// A jump from `from` has landed: Esc at this depth comes back to it.
    pub fn jumped(&mut self, mut from: Place) {
        from.depth = self.stack.len();
        self.jumps.push(from);
    }

    /// Esc after a jump, at the depth it landed on: back to where it left; false when no jump
    /// is to be undone here.
    pub fn return_from_jump(&mut self) -> bool {
        let Some(p) = self.jumps.last() else {
            return false;
        };
        if self.stack.len() > p.depth {
            return false;
        }
        let p = self.jumps.pop().expect("checked");
        self.stack = p.stack;
        self.pane = p.pane;
        self.step = p.step;
        self.sel = p.sel;
        self.device_row = p.device_row;
        self.op_row = p.op_row;
        self.tl = p.tl;
        true
    }
}
