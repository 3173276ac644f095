//! Navigation: what each action does in the browser — panes, drill-down, steps, selections —
//! handing the active pane what is its own (Enter, zoom); the overview's rank groups; moving
//! a timeline selection to a row.

use super::jumps::Place;
use super::panes;
use super::{Browser, Level, Pane};
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;

/// Where the user is: the pane, the drill-down path to it, the step, and the evidence jumps
/// to come back from.
#[derive(Debug, Clone)]
pub struct Nav {
    /// Current pane.
    pub pane: Pane,
    /// Drill-down stack; the bottom is always the cluster. Each entry remembers the pane to
    /// return to.
    pub stack: Vec<(Level, Pane)>,
    /// Selected step (index into `job.steps`).
    pub step: usize,
    /// Evidence jumps not yet come back from, newest last.
    pub jumps: Vec<Place>,
}

impl Nav {
    /// The cluster's overview of step `step` (an index into `job.steps`).
    pub fn at(step: usize) -> Nav {
        Nav {
            pane: Pane::Overview,
            stack: vec![(Level::Cluster, Pane::Overview)],
            step,
            jumps: Vec::new(),
        }
    }
}

/// Actions every pane takes (the rest are panes' own commands): one `Pane(n)` per pane.
pub fn global() -> Vec<Action> {
    let mut v = vec![
        Action::Quit,
        Action::Help,
        Action::Search,
        Action::NextMatch,
        Action::PrevMatch,
        Action::NextPane,
        Action::PrevPane,
    ];
    v.extend((0..Pane::ALL.len()).filter_map(|i| u8::try_from(i).ok().map(Action::Pane)));
    v.extend([
        Action::Enter,
        Action::Back,
        Action::PrevStep,
        Action::NextStep,
    ]);
    v.extend(Action::LIST_MOVES);
    v
}

/// Applies one action.
pub fn apply(b: &mut Browser, a: Action, ctx: &mut Ctx<UiMsg>) {
    match a {
        Action::Quit | Action::Help => {}
        Action::Search => {
            let strings = &b.data.loaded.job.strings;
            b.search.open(&b.shared.names, strings);
        }
        Action::NextMatch | Action::PrevMatch => {
            let forward = a == Action::NextMatch;
            // On the timeline, the current result's occurrences come first, in time order.
            if b.nav.pane == Pane::Timeline && panes::timeline::next_hit(b, forward, ctx) {
                return;
            }
            let by = if forward { 1 } else { -1 };
            match b.search.step(by) {
                Some(s) => b.select_op(s, ctx),
                None => ctx.status = Some("no search results: press / to search".into()),
            }
        }
        Action::NextPane | Action::PrevPane => {
            let n = Pane::ALL.len();
            let by = if a == Action::NextPane { 1 } else { n - 1 };
            b.nav.pane = Pane::ALL[(b.nav.pane.index() + by) % n];
        }
        Action::Pane(i) => {
            if let Some(&p) = Pane::ALL.get(usize::from(i)) {
                b.nav.pane = p;
            }
        }
        Action::Enter => {
            let row = b.selected();
            panes::view(b.nav.pane).enter(b, row, ctx);
        }
        Action::Back => back(b, ctx),
        Action::PrevStep | Action::NextStep => step(b, a == Action::NextStep),
        Action::Up => b.move_sel(-1, ctx),
        Action::Down => b.move_sel(1, ctx),
        Action::PageUp | Action::PageDown => {
            let by = if a == Action::PageUp { -1 } else { 1 };
            if !panes::view(b.nav.pane).page(b, by, ctx) {
                b.move_sel(by * super::PAGE as isize, ctx);
            }
        }
        Action::Top => b.move_sel(isize::MIN / 2, ctx),
        Action::Bottom => b.move_sel(isize::MAX / 2, ctx),
        other => panes::view(b.nav.pane).act(b, other, ctx),
    }
}

/// Esc: collapse an expanded timeline group, else back from an evidence jump, else one level
/// up.
fn back(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    if panes::view(b.nav.pane).back(b, ctx) {
        return;
    }
    if b.return_from_jump() {
        ctx.status = Some("back from the evidence".into());
    } else if !b.pop() {
        ctx.status = Some("at the cluster level (q quits)".into());
    }
}

/// `[` / `]`: the previous or next step (clamped); the timeline shows it whole.
fn step(b: &mut Browser, forward: bool) {
    let n = b.steps().len();
    let next = if forward {
        (b.nav.step + 1).min(n.saturating_sub(1))
    } else {
        b.nav.step.saturating_sub(1)
    };
    if next != b.nav.step {
        b.nav.step = next;
        b.panes.timeline.view.zoom = None;
    }
}
