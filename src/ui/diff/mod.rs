//! The diff screen (docs/tui.md "Diff"): two runs compared in the same shell as the trace
//! browser. Three views: the overview (the step time's change, the breakdown before and
//! after side by side, the ranks and findings that changed), the operators and the kernels
//! (sortable by change, before, after, name or count); Enter on an operator opens both runs'
//! timelines of the step pair, one above the other on one time scale, its calls marked.

mod draw;
mod timelines;

use super::shell::keymap::{Action, Keymap};
use super::shell::theme::Theme;
use super::shell::{Click, Ctx, Screen, Shell};
use crate::analysis::diff::OpRow;
use crate::report::diff::DiffReport;
use crate::session::diff::DiffPair;
use ratatui::Frame;
use ratatui::layout::Rect;
pub use timelines::PairTimelines;

/// The diff screen's views, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The change at a glance.
    Overview,
    /// Top-level operators.
    Operators,
    /// Kernels, copies and sets.
    Kernels,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: [View; 3] = [View::Overview, View::Operators, View::Kernels];

    /// Its tab name.
    pub fn name(self) -> &'static str {
        match self {
            View::Overview => "overview",
            View::Operators => "operators",
            View::Kernels => "kernels",
        }
    }
}

/// How the operator lists are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// The largest |change| first.
    Delta,
    /// The most time in the first run first.
    Before,
    /// The most time in the second run first.
    After,
    /// The largest change in calls first.
    Count,
    /// By name.
    Name,
}

impl Sort {
    const ALL: [Sort; 5] = [
        Sort::Delta,
        Sort::Before,
        Sort::After,
        Sort::Count,
        Sort::Name,
    ];

    /// Its name in the list's title.
    pub fn name(self) -> &'static str {
        match self {
            Sort::Delta => "|Δ|",
            Sort::Before => "before",
            Sort::After => "after",
            Sort::Count => "Δ calls",
            Sort::Name => "name",
        }
    }

    fn next(self) -> Sort {
        let k = Sort::ALL.iter().position(|s| *s == self).unwrap_or(0);
        Sort::ALL[(k + 1) % Sort::ALL.len()]
    }

    /// `rows` ordered by this sort (ties by name).
    pub fn order(self, rows: &[OpRow]) -> Vec<usize> {
        let mut ix: Vec<usize> = (0..rows.len()).collect();
        let calls = |r: &OpRow| (r.count_after as i128 - r.count_before as i128).unsigned_abs();
        ix.sort_by(|&a, &b| {
            let (x, y) = (&rows[a], &rows[b]);
            let key = match self {
                Sort::Delta => y
                    .total
                    .delta_ns()
                    .unsigned_abs()
                    .cmp(&x.total.delta_ns().unsigned_abs()),
                Sort::Before => y.total.before_ns.cmp(&x.total.before_ns),
                Sort::After => y.total.after_ns.cmp(&x.total.after_ns),
                Sort::Count => calls(y).cmp(&calls(x)),
                Sort::Name => std::cmp::Ordering::Equal,
            };
            key.then_with(|| x.name.cmp(&y.name))
        });
        ix
    }
}

/// The diff screen's state.
pub struct DiffScreen {
    /// The two runs and their diff.
    pub pair: DiffPair,
    /// The diff's report (titles, per-step means).
    pub report: DiffReport,
    /// The view shown.
    pub view: View,
    /// The lists' order.
    pub sort: Sort,
    /// The selected row of each list view, by position in the sorted list.
    pub selected: [usize; 2],
    /// The sorted rows of the operator and kernel lists (indices into the diff's rows).
    pub order: [Vec<usize>; 2],
    /// Both timelines of the opened operator (Enter), until Back.
    pub opened: Option<Box<PairTimelines>>,
}

impl DiffScreen {
    /// The screen over `pair`.
    pub fn new(pair: DiffPair) -> DiffScreen {
        let report = crate::report::diff::of_pair(&pair);
        let sort = Sort::Delta;
        let order = [
            sort.order(&pair.diff.ops.operators),
            sort.order(&pair.diff.ops.kernels),
        ];
        DiffScreen {
            pair,
            report,
            view: View::Overview,
            sort,
            selected: [0, 0],
            order,
            opened: None,
        }
    }

    /// The list of a list view: its rows and which is selected.
    pub fn list(&self) -> Option<(&[OpRow], &[usize], usize)> {
        let k = self.list_index()?;
        let rows = match self.view {
            View::Kernels => &self.pair.diff.ops.kernels,
            _ => &self.pair.diff.ops.operators,
        };
        Some((rows, &self.order[k], self.selected[k]))
    }

    fn list_index(&self) -> Option<usize> {
        match self.view {
            View::Overview => None,
            View::Operators => Some(0),
            View::Kernels => Some(1),
        }
    }

    fn move_by(&mut self, by: isize) {
        if let Some(k) = self.list_index() {
            let n = self.order[k].len();
            if n > 0 {
                self.selected[k] =
                    (self.selected[k] as isize + by).clamp(0, n as isize - 1) as usize;
            }
        }
    }

    fn cycle_sort(&mut self) {
        self.sort = self.sort.next();
        let ops = &self.pair.diff.ops;
        self.order = [
            self.sort.order(&ops.operators),
            self.sort.order(&ops.kernels),
        ];
        self.selected = [0, 0];
    }

    fn open(&mut self) {
        let Some((rows, order, sel)) = self.list() else {
            return;
        };
        let Some(row) = order.get(sel).map(|&i| &rows[i]) else {
            return;
        };
        self.opened = Some(Box::new(timelines::build(&self.pair, row)));
    }

    /// Moves the opened timelines by `steps` step pairs and `ranks` rank pairs.
    fn shift_opened(&mut self, steps: isize, ranks: isize) {
        if let Some(o) = &self.opened {
            let step = o.step.saturating_add_signed(steps);
            let rank = o.rank.saturating_add_signed(ranks);
            self.opened = Some(Box::new(timelines::at(&self.pair, &o.row, step, rank)));
        }
    }

    fn show(&mut self, v: View) {
        self.view = v;
        self.opened = None;
    }
}

impl Screen for DiffScreen {
    type Msg = ();

    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<()>) {
        draw::screen(f, area, self, ctx);
    }

    fn hints(&self) -> Vec<Action> {
        match (self.view, &self.opened) {
            (_, Some(_)) => vec![
                Action::PrevStep,
                Action::NextStep,
                Action::Down,
                Action::Up,
                Action::Back,
                Action::Help,
                Action::Quit,
            ],
            (View::Overview, None) => vec![Action::NextPane, Action::Help, Action::Quit],
            _ => vec![
                Action::Up,
                Action::Down,
                Action::Enter,
                Action::CycleSort,
                Action::NextPane,
                Action::Help,
                Action::Quit,
            ],
        }
    }

    fn commands(&self) -> Vec<Action> {
        let mut v = vec![
            Action::NextPane,
            Action::PrevPane,
            Action::Pane(0),
            Action::Pane(1),
            Action::Pane(2),
            Action::PrevStep,
            Action::NextStep,
        ];
        v.extend(Action::LIST_MOVES);
        v.extend([
            Action::Enter,
            Action::Back,
            Action::CycleSort,
            Action::Help,
            Action::Quit,
        ]);
        v
    }

    fn apply(&mut self, a: Action, _ctx: &mut Ctx<()>) {
        let at = View::ALL.iter().position(|v| *v == self.view).unwrap_or(0);
        let n = View::ALL.len();
        match a {
            Action::NextPane => self.show(View::ALL[(at + 1) % n]),
            Action::PrevPane => self.show(View::ALL[(at + n - 1) % n]),
            Action::Pane(k) if (k as usize) < n => self.show(View::ALL[k as usize]),
            Action::PrevStep => self.shift_opened(-1, 0),
            Action::NextStep => self.shift_opened(1, 0),
            Action::Up if self.opened.is_some() => self.shift_opened(0, -1),
            Action::Down if self.opened.is_some() => self.shift_opened(0, 1),
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-10),
            Action::PageDown => self.move_by(10),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Enter if self.opened.is_none() => self.open(),
            Action::Back => self.opened = None,
            Action::CycleSort if self.opened.is_none() => self.cycle_sort(),
            _ => {}
        }
    }

    fn click(&mut self, c: Click, _ctx: &mut Ctx<()>) -> bool {
        match c {
            Click::Tab(k) if k < View::ALL.len() => {
                self.show(View::ALL[k]);
                true
            }
            Click::Row(i) => match self.list_index() {
                Some(k) if i < self.order[k].len() && self.opened.is_none() => {
                    if self.selected[k] == i {
                        self.open();
                    }
                    self.selected[k] = i;
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn scroll(&mut self, by: isize, _ctx: &mut Ctx<()>) {
        self.move_by(by);
    }
}

/// A diff screen without a terminal (`snapshot --view diff`, tests).
pub fn headless(
    pair: DiffPair,
    keymap: Keymap,
    theme: Theme,
    ascii: bool,
    size: (u16, u16),
) -> Shell<DiffScreen> {
    Shell::new(DiffScreen::new(pair), keymap, theme, ascii, size)
}
