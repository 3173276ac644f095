//! The trace browser, one screen of the shell: the loaded job and its analysis (read-only,
//! shared with background work), where the user is ([`nav::Nav`]: pane, drill-down stack
//! cluster → device → operator, step, evidence jumps), the search, each pane's own state
//! ([`panes::Panes`]) and what several panes share ([`Shared`]). Keys become actions;
//! [`Browser::apply`] changes the state and [`Browser::refresh`] brings the current pane's
//! caches up to date, so drawing only reads. Each pane is a unit in [`panes`].

pub mod args;
mod frame;
pub mod jumps;
pub mod nav;
pub mod panes;
pub mod search;
pub mod setup;
pub mod work;

pub use panes::comm::{CommView, Metric};
pub use panes::{Focus, Pane, SelectedKey, TimelineView};

use super::UiMsg;
use super::shell::keymap::{Action, Key};
use super::shell::{Click, Ctx, Screen};
use crate::analysis::advisor::proof::Target;
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::timeline::Timeline;
use crate::model::{RankIx, StepNo, Sym};
use crate::prose::{self, Words};
use crate::session::Session;
use crate::time::Ns;
use ratatui::Frame;

use ratatui::layout::Rect;
use search::Search;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use work::Task;

/// One level of the drill-down: cluster → device → operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// All ranks.
    Cluster,
    /// One rank.
    Device(RankIx),
    /// One operator.
    Operator(Sym),
}

/// What several panes read, computed once for the job or kept across panes: the findings
/// in words, the overview's heat map, the search's names, timelines and critical paths.
#[derive(Default)]
pub struct Shared {
    /// The findings in words (same order as the findings), worded once: panes draw them
    /// every frame.
    pub words: Vec<Words>,
    /// The overview's rows (rank groups, most own work first) and their heat map: deviation
    /// from the step median per row and step (computed once: they depend on the job alone).
    pub heat: Heat,
    /// Operator names the search matches (device work and host operators, by name).
    pub names: Vec<Sym>,
    /// Each name's count and total duration over the job (what a search result says).
    pub totals: HashMap<Sym, (u64, Ns)>,
    /// Timelines, the current one last; the few most recent are kept so stepping back and
    /// forth does not rebuild them (the timeline, critical-path and inspector read them).
    pub timelines: Vec<KeptTimeline>,
    /// Critical paths per step (the critical pane, the operator's share, the timeline).
    pub critical: HashMap<StepNo, Option<CriticalPath>>,
}

/// A timeline kept in the cache: whose (cluster or one rank) and which step.
pub struct KeptTimeline {
    /// The device level's rank, or the cluster.
    pub rank: Option<RankIx>,
    /// The step (the first one shown).
    pub step: StepNo,
    /// Steps shown after it on the same axis.
    pub more: usize,
    /// The bands.
    pub timeline: Timeline,
}

/// Rows moved by page up/down.
pub const PAGE: usize = 10;

/// The browser's state: the job, where the user is, the search, each pane's own state and
/// what the panes share. A pane's selection, scroll, zoom and caches live in its
/// [`panes::Panes`] entry, never here.
pub struct Browser {
    /// The job (read-only; shared with background work).
    pub data: Arc<Session>,
    /// Pane, drill-down stack, step and the evidence jumps to come back from.
    pub nav: nav::Nav,
    /// Search state.
    pub search: Search,
    /// Each pane's own state and caches.
    pub panes: panes::Panes,
    /// What several panes read.
    pub shared: Shared,
    /// Background work running.
    pub pending: HashSet<Task>,
}

/// The overview's rows and heat map.
#[derive(Debug, Clone, Default)]
pub struct Heat {
    /// Rank groups (positions in `job.ranks`), in row order.
    pub rows: Vec<std::ops::Range<usize>>,
    /// Per row, per step: the deviation.
    pub cells: Vec<Vec<Option<f64>>>,
}

impl Browser {
    /// A browser on the overview of the slowest step.
    pub fn new(data: Session) -> Browser {
        let steps = &data.loaded.job.steps;
        let slowest = data.analysis.slowest_step;
        let step = slowest
            .and_then(|s| steps.iter().position(|x| *x == s))
            .unwrap_or(0);
        let all = crate::analysis::operator::totals(&data.loaded.job);
        let names = all.iter().map(|n| n.name).collect();
        let totals = all
            .iter()
            .map(|n| (n.name, (n.count, n.total_ns)))
            .collect();
        let words = data.analysis.findings.iter().map(prose::words).collect();
        let heat = heat_map(&data);
        let mut b = Browser {
            data: Arc::new(data),
            nav: nav::Nav::at(step),
            search: Search::default(),
            panes: panes::Panes::default(),
            shared: Shared {
                words,
                heat,
                names,
                totals,
                ..Shared::default()
            },
            pending: HashSet::new(),
        };
        // The analysis already walked the slowest step's path (unless --window chose another
        // window): the critical pane opens on it without recomputing.
        if let (None, Some(s)) = (&b.data.opts.window, slowest) {
            let cp = b.data.analysis.critical_path.clone();
            b.shared.critical.insert(s, cp);
        }
        b.panes.rows[Pane::Overview.index()] = cause_row(&b.data, &b.shared.heat.rows);
        b
    }

    /// Drops every result computed on demand (shared timelines and critical paths, each
    /// pane's): the next refresh computes what the view needs afresh.
    pub fn forget_computed(&mut self) {
        self.shared.timelines.clear();
        self.shared.critical.clear();
        self.panes.forget_computed();
    }

    /// The current drill-down level.
    pub fn level(&self) -> Level {
        self.nav.stack.last().map_or(Level::Cluster, |l| l.0)
    }

    /// The device level's rank, also under an operator opened from it.
    pub fn device(&self) -> Option<RankIx> {
        self.nav.stack.iter().rev().find_map(|(l, _)| match l {
            Level::Device(r) => Some(*r),
            _ => None,
        })
    }

    /// The operator of the operator level.
    pub fn operator(&self) -> Option<Sym> {
        match self.level() {
            Level::Operator(s) => Some(s),
            _ => None,
        }
    }

    /// Every step number of the job.
    pub fn steps(&self) -> &[StepNo] {
        &self.data.loaded.job.steps
    }

    /// The selected step number.
    pub fn step_number(&self) -> Option<StepNo> {
        self.steps().get(self.nav.step).copied()
    }

    /// A name's text.
    pub fn name(&self, s: Sym) -> &str {
        self.data.name(s)
    }

    /// The critical path of the selected step (computed by `refresh`).
    pub fn critical(&self) -> Option<&CriticalPath> {
        self.step_number()
            .and_then(|s| self.shared.critical.get(&s))
            .and_then(Option::as_ref)
    }

    /// The current timeline (computed by `refresh`).
    pub fn timeline(&self) -> Option<&Timeline> {
        self.shared.timelines.last().map(|t| &t.timeline)
    }

    /// Pushes a drill-down level, remembering the pane to return to.
    pub fn push(&mut self, level: Level, pane: Pane) {
        if self.level() == level {
            self.nav.pane = pane;
            return;
        }
        let mut back = self.nav.pane;
        // One operator replaces another (search, roofline rows): the stack stays a path.
        if let (Level::Operator(_), Level::Operator(_)) = (self.level(), level) {
            back = self.nav.stack.pop().expect("above the cluster").1;
        }
        self.nav.stack.push((level, back));
        self.nav.pane = pane;
        match level {
            Level::Device(_) => self.panes.device.row = 0,
            Level::Operator(_) => self.panes.operator.row = 0,
            Level::Cluster => {}
        }
        self.panes.timeline.view.expanded = None;
        self.panes.timeline.view.row = 0;
    }

    /// Pops one level; returns false at the cluster.
    pub fn pop(&mut self) -> bool {
        if self.nav.stack.len() <= 1 {
            return false;
        }
        let (_, pane) = self.nav.stack.pop().expect("checked");
        self.nav.pane = pane;
        self.panes.timeline.view.row = 0;
        self.panes.timeline.view.expanded = None;
        true
    }

    /// Makes `s` the selected operator: in the timeline, its first occurrence; elsewhere, the
    /// operator view.
    pub fn select_op(&mut self, s: Sym, ctx: &mut Ctx<UiMsg>) {
        if self.nav.pane != Pane::Timeline {
            self.push(Level::Operator(s), Pane::Operator);
            return;
        }
        let row = self
            .timeline()
            .and_then(|t| t.rows.iter().position(|r| r.occurrence(s, 0).is_some()));
        match row {
            Some(r) => {
                self.panes.timeline.view.op = Some((s, 0));
                self.panes.timeline.view.zoom = None;
                self.panes.timeline.view.expanded = None;
                panes::timeline::select_row(self, r, ctx.size);
            }
            // Not drawn here (a host operator on the cluster timeline, or another step's):
            // the lanes of the rank where it ran longest, this step first.
            None => match search::longest_run(&self.data.loaded.job, s, self.step_number()) {
                Some((rank, step, band)) => {
                    let t = Target::RankLanes {
                        rank,
                        step,
                        band: Some(band),
                        call: None,
                    };
                    jumps::open(self, t, ctx);
                }
                None => ctx.status = Some(format!("{} runs in no profiled step", self.name(s))),
            },
        }
    }

    /// Moves the current list's selection by `by` rows (clamped).
    pub fn move_sel(&mut self, by: isize, ctx: &Ctx<UiMsg>) {
        let view = panes::view(self.nav.pane);
        let max = view.list_len(self, ctx).saturating_sub(1) as isize;
        let slot = view.selection(self);
        *slot = (*slot as isize).saturating_add(by).clamp(0, max.max(0)) as usize;
    }

    /// The selected row of a pane's list (cluster level).
    pub fn row_of(&self, p: Pane) -> usize {
        self.panes.rows[p.index()]
    }

    /// The current view's selected row.
    pub fn selected(&self) -> usize {
        panes::view(self.nav.pane).selected(self)
    }
}

/// The overview's rows and heat map of a session.
fn heat_map(data: &Session) -> Heat {
    use crate::analysis::deviation;
    let job = &data.loaded.job;
    let ids: Vec<_> = job.ranks.iter().map(|r| r.id).collect();
    let rows = deviation::rows_by_own_work(&data.analysis.breakdown, &ids);
    let cells = deviation::grid(&data.analysis.breakdown, &ids, &job.steps, &rows);
    Heat { rows, cells }
}

impl Screen for Browser {
    type Msg = UiMsg;

    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<UiMsg>) {
        frame::draw(f, area, self, ctx);
    }

    fn overlay_area(&self, area: Rect) -> Rect {
        frame::body(area)
    }

    fn hints(&self) -> Vec<Action> {
        let mut v = vec![Action::Help, Action::Quit, Action::NextPane, Action::Search];
        v.extend_from_slice(panes::view(self.nav.pane).hints());
        if self.nav.stack.len() > 1 || self.panes.timeline.view.expanded.is_some() {
            v.insert(2, Action::Back);
        }
        v
    }

    /// The keys that work here: the global ones and the current pane's own.
    fn commands(&self) -> Vec<Action> {
        let mut all: Vec<Action> = nav::global();
        all.extend_from_slice(panes::view(self.nav.pane).commands());
        Action::ALL
            .iter()
            .copied()
            .filter(|a| all.contains(a))
            .collect()
    }

    fn take_key(&mut self, key: Key, ctx: &mut Ctx<UiMsg>) -> bool {
        if !self.search.typing {
            return false;
        }
        search::key(self, key, ctx);
        true
    }

    fn apply(&mut self, a: Action, ctx: &mut Ctx<UiMsg>) {
        nav::apply(self, a, ctx);
    }

    fn click(&mut self, c: Click, ctx: &mut Ctx<UiMsg>) -> bool {
        match c {
            Click::Tab(t) => {
                self.nav.pane = Pane::ALL[t.min(Pane::ALL.len() - 1)];
                true
            }
            Click::Row(row) => {
                if row >= panes::view(self.nav.pane).list_len(self, ctx) {
                    return false;
                }
                if self.selected() == row {
                    nav::apply(self, Action::Enter, ctx);
                } else {
                    *panes::view(self.nav.pane).selection(self) = row;
                }
                true
            }
            Click::RowAt(row, col, cols) => {
                if row >= panes::view(self.nav.pane).list_len(self, ctx) {
                    return false;
                }
                *panes::view(self.nav.pane).selection(self) = row;
                panes::timeline::point_at(self, col, cols, ctx);
                true
            }
        }
    }

    fn scroll(&mut self, by: isize, ctx: &mut Ctx<UiMsg>) {
        self.move_sel(by, ctx);
    }

    fn receive(&mut self, m: UiMsg, _ctx: &mut Ctx<UiMsg>) -> bool {
        let UiMsg::Work(d) = m else {
            return false;
        };
        self.pending.remove(&d.task());
        self.store(d);
        true
    }

    fn refresh(&mut self, ctx: &mut Ctx<UiMsg>) {
        let Some(step) = self.step_number() else {
            return;
        };
        panes::view(self.nav.pane).prepare(self, ctx);
        // The operator view's task computes the path itself when it is missing.
        if let Some(op) = self.operator() {
            if self
                .panes
                .operator
                .detail
                .as_ref()
                .is_none_or(|o| (o.0, o.1) != (op, step))
            {
                self.need(Task::Op(op, step), ctx);
            }
        }
        if let Some(r) = self.device() {
            if self.panes.device.ops.as_ref().is_none_or(|d| d.0 != r) {
                let job = &self.data.loaded.job;
                let scope = crate::analysis::ops::Scope {
                    rank: Some(job.rank(r).id),
                    step: None,
                };
                self.panes.device.ops = Some((r, crate::analysis::ops::top_ops(job, scope).1));
            }
        }
    }

    fn after_frame(&mut self, ctx: &mut Ctx<UiMsg>) {
        // Debug builds only: lets the end-to-end test check that the panic path restores the
        // terminal (release builds have no such switch).
        #[cfg(debug_assertions)]
        if std::env::var_os("STEPSCOPE_TEST_PANIC").is_some() {
            panic!("STEPSCOPE_TEST_PANIC: a panic after the first frame");
        }
        panes::view(self.nav.pane).after_frame(self, ctx);
    }
}

/// The overview row of the rank the first finding names (its group's row when ranks are
/// grouped), so that Enter on the overview drills into the cause; else the first row.
fn cause_row(data: &Session, rows: &[std::ops::Range<usize>]) -> usize {
    let ranks = &data.loaded.job.ranks;
    let Some(at) = data
        .analysis
        .findings
        .first()
        .and_then(|f| f.evidence.ranks.first())
        .and_then(|id| ranks.iter().position(|r| r.id == *id))
    else {
        return 0;
    };
    rows.iter().position(|g| g.contains(&at)).unwrap_or(0)
}
