//! Breakdown parts as the overview and the device view draw them: a row's parts in order,
//! a glyph per part (shapes stay apart without colour), and the row of a (step, rank).

use crate::analysis::breakdown::{Breakdown, Part};
use crate::model::{RankId, StepNo};
use crate::ui::browser::Browser;
use crate::ui::shell::theme::Theme;

/// A breakdown row's parts in [`Part::ALL`] order.
pub fn parts(b: &Breakdown) -> [u64; 6] {
    Part::ALL.map(|p| b.part(p).max(0) as u64)
}

/// The glyph of a part: solid in colour, distinct shades without.
pub fn part_glyph(theme: &Theme, i: usize) -> char {
    if theme.mono {
        ['█', '▓', '▒', '░', '▚', '·'][i]
    } else {
        '█'
    }
}

/// The breakdown row of (step, rank id).
pub fn row_of(b: &Browser, step: StepNo, rank: RankId) -> Option<&Breakdown> {
    let rows = &b.data.analysis.breakdown;
    rows.binary_search_by_key(&(step, rank), |b| (b.step, b.rank))
        .ok()
        .map(|i| &rows[i])
}
