//! Where `stepscope snapshot` (and the pane tests) put the browser before drawing it: a pane,
//! a step, a rank or an operator drilled into, then keys pressed as a user would.

use super::{Browser, Level, Pane};
use crate::model::{RankId, StepNo};
use crate::ui::shell::Shell;
use crate::ui::shell::keymap::Key;

/// What to show before drawing.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The pane.
    pub view: Option<Pane>,
    /// Step number to select.
    pub step: Option<StepNo>,
    /// Rank id to drill into.
    pub rank: Option<RankId>,
    /// Operator name to open.
    pub op: Option<String>,
    /// Keys pressed after that.
    pub keys: Vec<Key>,
}

/// Applies a setup to a fresh browser; errors name what does not exist.
pub fn prepare(shell: &mut Shell<Browser>, s: &Setup) -> Result<(), String> {
    let b = &mut shell.screen;
    let view = s.view.unwrap_or(Pane::Overview);
    b.nav.pane = view;
    if let Some(n) = s.step {
        b.nav.step = b
            .steps()
            .iter()
            .position(|x| *x == n)
            .ok_or_else(|| format!("no step {n}"))?;
    }
    if let Some(r) = s.rank {
        let i = b
            .data
            .loaded
            .job
            .rank_ix(r)
            .ok_or_else(|| format!("no rank {r}"))?;
        b.push(Level::Device(i), view);
    }
    if let Some(name) = &s.op {
        let sym = b
            .data
            .loaded
            .job
            .strings
            .get(name)
            .filter(|s| b.shared.names.contains(s));
        let sym =
            sym.ok_or_else(|| format!("no operator named `{name}` (search with / in the TUI)"))?;
        b.push(Level::Operator(sym), view);
    }
    shell.refresh();
    for k in &s.keys {
        shell.key(*k);
        if shell.ctx.quit {
            break;
        }
    }
    Ok(())
}
