//! Navigation: what each action does in the browser — panes, drill-down, steps, selections —
//! handing the active pane what is its own (Enter, zoom); the overview's rank groups; moving
//! a timeline selection to a row.

use super::panes;
use super::{Browser, Pane};
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Action;

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
            b.search.open(&b.names, strings);
        }
        Action::NextMatch | Action::PrevMatch => {
            let forward = a == Action::NextMatch;
            // On the timeline, the current result's occurrences come first, in time order.
            if b.pane == Pane::Timeline && panes::timeline::next_hit(b, forward, ctx) {
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
            b.pane = Pane::ALL[(b.pane.index() + by) % n];
        }
        Action::Pane(i) => {
            if let Some(&p) = Pane::ALL.get(usize::from(i)) {
                b.pane = p;
            }
        }
        Action::Enter => {
            let row = b.selected();
            panes::view(b.pane).enter(b, row, ctx);
        }
        Action::Back => back(b, ctx),
        Action::PrevStep | Action::NextStep => step(b, a == Action::NextStep),
        Action::Up => b.move_sel(-1, ctx),
        Action::Down => b.move_sel(1, ctx),
        Action::PageUp | Action::PageDown => {
            let by = if a == Action::PageUp { -1 } else { 1 };
            if !panes::view(b.pane).page(b, by, ctx) {
                b.move_sel(by * super::PAGE as isize, ctx);
            }
        }
        Action::Top => b.move_sel(isize::MIN / 2, ctx),
        Action::Bottom => b.move_sel(isize::MAX / 2, ctx),
        other => panes::view(b.pane).act(b, other, ctx),
    }
}

/// Esc: collapse an expanded timeline group, else back from an evidence jump, else one level
/// up.
fn back(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    if panes::view(b.pane).back(b, ctx) {
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
        (b.step + 1).min(n.saturating_sub(1))
    } else {
        b.step.saturating_sub(1)
    };
    if next != b.step {
        b.step = next;
        b.tl.zoom = None;
    }
}
