//! The trace browser, one screen of the shell: the loaded job and its analysis (read-only,
//! shared with background work), the drill-down stack cluster → device → operator, per-pane
//! selections, and caches of the on-demand analyses the current view needs. Keys become
//! actions; [`Browser::apply`] changes the state and [`Browser::refresh`] fills the caches,
//! so drawing only reads. Each pane is a unit in [`panes`].

pub mod args;
mod frame;
pub mod jumps;
pub mod nav;
pub mod panes;
pub mod search;
pub mod setup;
pub mod work;

pub use panes::Pane;

use super::UiMsg;
use super::shell::keymap::{Action, Key};
use super::shell::{Click, Ctx, Screen};
use crate::analysis::advisor::proof::Target;
use crate::analysis::comm::per_rank::RankComm;
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::operator::OpDetail;
use crate::analysis::ops::OpStat;
use crate::analysis::timeline::{Band, Timeline};
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

/// The comm pane's own state: what the matrix cells show and which collectives the per-rank
/// table counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommView {
    /// Matrix metric.
    pub metric: Metric,
    /// Only collectives of at most this many bytes (a small-messages proof).
    pub max_bytes: Option<u64>,
}

/// What the comm matrix cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// Bytes sent.
    #[default]
    Bytes,
    /// Transfer time.
    Time,
    /// Bandwidth (bytes / transfer time).
    Bandwidth,
}

/// The timeline's view state.
#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// Visible time window (aligned ns); `None`: the whole step.
    pub zoom: Option<(Ns, Ns)>,
    /// Selected row (index into the displayed rows).
    pub row: usize,
    /// The selected operator: name and occurrence in the step.
    pub op: Option<(Sym, usize)>,
    /// Rows shown individually after expanding a group (a range of rows).
    pub expanded: Option<(usize, usize)>,
    /// Pending: select this rank's band of this name nearest this aligned start.
    pub focus: Option<Focus>,
    /// Pending: select this rank's row.
    pub focus_rank: Option<crate::model::RankId>,
    /// The cursor is on this gap of the selected row (aligned start, end) rather than on
    /// the selected operator's band.
    pub gap: Option<(Ns, Ns)>,
    /// A range is marked from this aligned instant to the cursor.
    pub mark: Option<Ns>,
    /// The inspector is hidden.
    pub inspector_off: bool,
    /// Steps shown after the selected one on the same axis.
    pub more_steps: usize,
}

/// A band to select once its timeline is built: a rank's band of a name nearest a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Focus {
    /// The rank.
    pub rank: crate::model::RankId,
    /// The band's name.
    pub name: Sym,
    /// Its aligned start, about.
    pub start: Ns,
    /// Its aligned end: a call nested under the row's top-level band selects that band.
    pub end: Ns,
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

/// What [`Caches::selected_bands`] was computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectedKey {
    /// The device level's rank, or the cluster.
    pub rank: Option<RankIx>,
    /// The step.
    pub step: StepNo,
    /// The operator's name.
    pub name: Sym,
    /// Its occurrence.
    pub k: usize,
    /// The timeline row it was picked on.
    pub row: usize,
}

/// Results computed on demand for the current view.
#[derive(Default)]
pub struct Caches {
    /// Timelines, the current one last; the few most recent are kept so stepping back and
    /// forth does not rebuild them.
    pub timelines: Vec<KeptTimeline>,
    /// Critical paths per step.
    pub critical: HashMap<StepNo, Option<CriticalPath>>,
    /// Operator detail of (name, step: its critical-path share is the step's).
    pub op: Option<(Sym, StepNo, OpDetail)>,
    /// Args of the operator's longest occurrence: (key, value) or why not.
    pub op_args: Option<args::Args>,
    /// A rank's operators by device time.
    pub device_ops: Option<(RankIx, Vec<OpStat>)>,
    /// Per-rank collectives of a step (at most so many bytes).
    pub comm_ranks: Option<(StepNo, Option<u64>, Vec<RankComm>)>,
    /// The timeline's selected operator on every row, for this key.
    pub selected: Option<SelectedKey>,
    /// Its occurrences, one per timeline row.
    pub selected_bands: Vec<Option<Band>>,
    /// The args of the inspector's band, read in the background.
    pub band_args: Option<(crate::model::EventRef, args::Args)>,
    /// Steps measured and replayed, by (step, fix row); `None`: no events in the step.
    pub replay: HashMap<(StepNo, usize), Option<crate::analysis::whatif::bands::StepBands>>,
    /// What the inspector says, for the cursor it was computed at.
    pub inspected: Option<(panes::inspector::Key, panes::inspector::Inspected)>,
}

/// Rows moved by page up/down.
pub const PAGE: usize = 10;

/// The browser's state.
pub struct Browser {
    /// The job (read-only; shared with background work).
    pub data: Arc<Session>,
    /// Current pane.
    pub pane: Pane,
    /// Drill-down stack; the bottom is always the cluster. Each entry remembers the pane to
    /// return to.
    pub stack: Vec<(Level, Pane)>,
    /// Selected step (index into `job.steps`).
    pub step: usize,
    /// Selected row per pane (device view and operator detail have their own).
    pub sel: [usize; Pane::ALL.len()],
    /// Device view op table row.
    pub device_row: usize,
    /// Operator detail per-rank row.
    pub op_row: usize,
    /// Timeline state.
    pub tl: TimelineView,
    /// Search state.
    pub search: Search,
    /// Evidence jumps not yet come back from, newest last.
    pub jumps: Vec<jumps::Place>,
    /// The comm pane's state.
    pub comm: CommView,
    /// The layout pane's metric, cell grouping and view.
    pub layout: panes::layout_view::LayoutView,
    /// The advisor's detail scroll: (finding row it is for, lines scrolled).
    pub advisor_scroll: (usize, u16),
    /// The what-if pane shows the replayed step alone (Enter toggles).
    pub whatif_zoom: bool,
    /// The operator view's shapes-and-args scroll: (operator it is for, lines scrolled).
    pub op_scroll: (Option<Sym>, u16),
    /// On-demand results.
    pub cache: Caches,
    /// Background work running.
    pub pending: HashSet<Task>,
    /// Operator names the search matches (device work and host operators, by name).
    pub names: Vec<Sym>,
    /// Each name's count and total duration over the job (what a search result says).
    pub totals: HashMap<Sym, (u64, Ns)>,
    /// The findings in words (same order as the findings), worded once: panes draw them
    /// every frame.
    pub words: Vec<Words>,
    /// The overview's rows (rank groups, most own work first) and their heat map: deviation
    /// from the step median per row and step (computed once: they depend on the job alone).
    pub heat: Heat,
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
            pane: Pane::Overview,
            stack: vec![(Level::Cluster, Pane::Overview)],
            step,
            sel: [0; Pane::ALL.len()],
            device_row: 0,
            op_row: 0,
            tl: TimelineView::default(),
            search: Search::default(),
            jumps: Vec::new(),
            comm: CommView::default(),
            layout: Default::default(),
            advisor_scroll: (0, 0),
            whatif_zoom: false,
            op_scroll: (None, 0),
            cache: Caches::default(),
            pending: HashSet::new(),
            names,
            totals,
            words,
            heat,
        };
        // The analysis already walked the slowest step's path (unless --window chose another
        // window): the critical pane opens on it without recomputing.
        if let (None, Some(s)) = (&b.data.opts.window, slowest) {
            let cp = b.data.analysis.critical_path.clone();
            b.cache.critical.insert(s, cp);
        }
        b.sel[Pane::Overview.index()] = cause_row(&b.data, &b.heat.rows);
        b
    }

    /// The current drill-down level.
    pub fn level(&self) -> Level {
        self.stack.last().map_or(Level::Cluster, |l| l.0)
    }

    /// The device level's rank, also under an operator opened from it.
    pub fn device(&self) -> Option<RankIx> {
        self.stack.iter().rev().find_map(|(l, _)| match l {
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
        self.steps().get(self.step).copied()
    }

    /// A name's text.
    pub fn name(&self, s: Sym) -> &str {
        self.data.name(s)
    }

    /// The critical path of the selected step (computed by `refresh`).
    pub fn critical(&self) -> Option<&CriticalPath> {
        self.step_number()
            .and_then(|s| self.cache.critical.get(&s))
            .and_then(Option::as_ref)
    }

    /// The current timeline (computed by `refresh`).
    pub fn timeline(&self) -> Option<&Timeline> {
        self.cache.timelines.last().map(|t| &t.timeline)
    }

    /// Pushes a drill-down level, remembering the pane to return to.
    pub fn push(&mut self, level: Level, pane: Pane) {
        if self.level() == level {
            self.pane = pane;
            return;
        }
        let mut back = self.pane;
        // One operator replaces another (search, roofline rows): the stack stays a path.
        if let (Level::Operator(_), Level::Operator(_)) = (self.level(), level) {
            back = self.stack.pop().expect("above the cluster").1;
        }
        self.stack.push((level, back));
        self.pane = pane;
        match level {
            Level::Device(_) => self.device_row = 0,
            Level::Operator(_) => self.op_row = 0,
            Level::Cluster => {}
        }
        self.tl.expanded = None;
        self.tl.row = 0;
    }

    /// Pops one level; returns false at the cluster.
    pub fn pop(&mut self) -> bool {
        if self.stack.len() <= 1 {
            return false;
        }
        let (_, pane) = self.stack.pop().expect("checked");
        self.pane = pane;
        self.tl.row = 0;
        self.tl.expanded = None;
        true
    }

    /// Makes `s` the selected operator: in the timeline, its first occurrence; elsewhere, the
    /// operator view.
    pub fn select_op(&mut self, s: Sym, ctx: &mut Ctx<UiMsg>) {
        if self.pane != Pane::Timeline {
            self.push(Level::Operator(s), Pane::Operator);
            return;
        }
        let row = self
            .timeline()
            .and_then(|t| t.rows.iter().position(|r| r.occurrence(s, 0).is_some()));
        match row {
            Some(r) => {
                self.tl.op = Some((s, 0));
                self.tl.zoom = None;
                self.tl.expanded = None;
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
        let view = panes::view(self.pane);
        let max = view.list_len(self, ctx).saturating_sub(1) as isize;
        let slot = view.selection(self);
        *slot = (*slot as isize).saturating_add(by).clamp(0, max.max(0)) as usize;
    }

    /// The selected row of a pane's list (cluster level).
    pub fn row_of(&self, p: Pane) -> usize {
        self.sel[p.index()]
    }

    /// The current view's selected row.
    pub fn selected(&self) -> usize {
        panes::view(self.pane).selected(self)
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
        v.extend_from_slice(panes::view(self.pane).hints());
        if self.stack.len() > 1 || self.tl.expanded.is_some() {
            v.insert(2, Action::Back);
        }
        v
    }

    /// The keys that work here: the global ones and the current pane's own.
    fn commands(&self) -> Vec<Action> {
        let mut all: Vec<Action> = nav::global();
        all.extend_from_slice(panes::view(self.pane).commands());
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
                self.pane = Pane::ALL[t.min(Pane::ALL.len() - 1)];
                true
            }
            Click::Row(row) => {
                if row >= panes::view(self.pane).list_len(self, ctx) {
                    return false;
                }
                if self.selected() == row {
                    nav::apply(self, Action::Enter, ctx);
                } else {
                    *panes::view(self.pane).selection(self) = row;
                }
                true
            }
            Click::RowAt(row, col, cols) => {
                if row >= panes::view(self.pane).list_len(self, ctx) {
                    return false;
                }
                *panes::view(self.pane).selection(self) = row;
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
        panes::view(self.pane).prepare(self, ctx);
        // The operator view's task computes the path itself when it is missing.
        if let Some(op) = self.operator() {
            if self
                .cache
                .op
                .as_ref()
                .is_none_or(|o| (o.0, o.1) != (op, step))
            {
                self.need(Task::Op(op, step), ctx);
            }
        }
        if let Some(r) = self.device() {
            if self.cache.device_ops.as_ref().is_none_or(|d| d.0 != r) {
                let job = &self.data.loaded.job;
                let scope = crate::analysis::ops::Scope {
                    rank: Some(job.rank(r).id),
                    step: None,
                };
                self.cache.device_ops = Some((r, crate::analysis::ops::top_ops(job, scope).1));
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
        panes::view(self.pane).after_frame(self, ctx);
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
